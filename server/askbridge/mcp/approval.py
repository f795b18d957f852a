"""`approval_prompt`: Claude Code's `--permission-prompt-tool` contract as one question (X5).

Input `{tool_name, input, tool_use_id?}`. The user is asked one blocking
question:

- `approval` intent (V3): subject `{name: tool_name}`, options "Allow" and
  "Deny", detail = the input as markdown — a Bash command as a shell block
  (with its description above it), a file edit as its path plus a diff
  (Edit, MultiEdit) or its content (Write), anything else as a JSON block;
- for `ExitPlanMode`, the `plan-review` intent: detail = `input.plan`, options
  "Approve plan" and "Keep planning", free text taken as feedback; without a
  plan the detail says "The agent gave no plan text".

Result text: `{"behavior":"allow","updatedInput":<input>}` only when the user
picked the approving option without typing anything; otherwise
`{"behavior":"deny","message":…}` with the user's text or "The user denied
this <tool_name> call.". No answerer, a cancel, any failure: deny with the
reason. It never allows by itself. The MCP result is that one text and
nothing else (mcp/tools.py). A detail longer than S1 allows is cut
(the question must fit, or the user could not be asked at all).

What the card shows is what will run (S17), in every client, because it is made
so here: a code block's fence is longer than any backtick run inside it, so no
line of the command can close it; the description above it is one line that
opens no block; a path is a code span that no backtick inside can end; and bidi
controls, zero-width and other invisible characters in the tool's name, the
detail and the plan are spelled out (`<U+202E>`, protocol.text.visible).
"""

from __future__ import annotations

import json
import re
from typing import Any

from askbridge.core.limits import MAX_DETAIL, MAX_QUESTION
from askbridge.core.question import Option, Question
from askbridge.protocol.text import visible
from askbridge.protocol.vocabulary import Answer, ApprovalIntent, IntentSubject, PlanReviewIntent

APPROVAL_TOOL = "approval_prompt"
PLAN_TOOL = "ExitPlanMode"
ALLOW, DENY = "Allow", "Deny"
APPROVE_PLAN, KEEP_PLANNING = "Approve plan", "Keep planning"
QUESTION_ID = "approval"
MAX_NAME = 200
NO_PLAN = "The agent gave no plan text"

_LANGUAGES = {".py": "python", ".js": "javascript", ".ts": "typescript", ".sh": "sh"}
_LANGUAGES |= {".json": "json", ".md": "markdown", ".rs": "rust", ".go": "go", ".lua": "lua"}


def fenced(text: str, language: str = "") -> str:
    """`text` in a code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def code_span(text: str) -> str:
    """`text` as inline code that no backtick inside ends, on one line."""
    text = text.replace("\n", "<U+000A>")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def one_line(text: str) -> str:
    """`text` as one line that opens no block running past it: a code fence or an HTML
    block (a heading or a list item ends with its line). Its first character is escaped."""
    line = " ".join(text.split())
    return "\\" + line if line[:1] in ("`", "~", "<") else line


def _diff(old: str, new: str) -> str:
    lines = [f"-{line}" for line in old.splitlines()] + [f"+{line}" for line in new.splitlines()]
    return "\n".join(lines)


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def render_input(tool_name: str, tool_input: dict[str, Any]) -> str:
    """The markdown the user reads before deciding."""
    command = _string(tool_input.get("command"))
    if tool_name == "Bash" and command is not None:
        description = _string(tool_input.get("description"))
        block = fenced(command, "sh")
        return f"{one_line(description)}\n\n{block}" if description else block
    path = _string(tool_input.get("file_path")) or _string(tool_input.get("notebook_path"))
    if path is not None:
        old, new = _string(tool_input.get("old_string")), _string(tool_input.get("new_string"))
        if old is not None and new is not None:
            return f"{code_span(path)}\n\n{fenced(_diff(old, new), 'diff')}"
        edits = tool_input.get("edits")
        if isinstance(edits, list) and edits and all(isinstance(e, dict) for e in edits):
            diffs = [
                _diff(_string(e.get("old_string")) or "", _string(e.get("new_string")) or "")
                for e in edits
            ]
            return f"{code_span(path)}\n\n{fenced(chr(10).join(diffs), 'diff')}"
        content = _string(tool_input.get("content")) or _string(tool_input.get("new_source"))
        if content is not None:
            suffix = re.search(r"\.[A-Za-z0-9]+$", path)
            language = _LANGUAGES.get(suffix.group(0).lower(), "") if suffix else ""
            return f"{code_span(path)}\n\n{fenced(content, language)}"
    return fenced(json.dumps(tool_input, indent=2, ensure_ascii=False), "json")


def _fit(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    note = f"\n\n… ({len(text) - limit} more characters not shown)"
    return text[: limit - len(note)] + note


def approval_question(tool_name: str, tool_input: dict[str, Any]) -> Question:
    """The one question X5 asks for this call."""
    name = visible(tool_name[:MAX_NAME])
    if tool_name == PLAN_TOOL:
        plan = tool_input.get("plan")
        # Claude Code >= 2.1 passes the plan only when the model wrote its plan file.
        detail = visible(plan) if isinstance(plan, str) and plan.strip() else NO_PLAN
        return Question(
            id=QUESTION_ID,
            header="Plan",
            question="Approve this plan?",
            detail=_fit(detail, MAX_DETAIL),
            options=(Option(label=APPROVE_PLAN), Option(label=KEEP_PLANNING)),
            intent=PlanReviewIntent(kind="plan-review", approve=APPROVE_PLAN),
        )
    return Question(
        id=QUESTION_ID,
        header="Permission",
        question=_fit(f"Allow {name}?", MAX_QUESTION),
        detail=_fit(visible(render_input(tool_name[:MAX_NAME], tool_input)), MAX_DETAIL),
        options=(Option(label=ALLOW), Option(label=DENY)),
        intent=ApprovalIntent(
            kind="approval", approve=ALLOW, reject=DENY, subject=IntentSubject(name=name)
        ),
    )


def allow(tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"behavior": "allow", "updatedInput": tool_input}


def deny(message: str) -> dict[str, Any]:
    return {"behavior": "deny", "message": message}


def decision(
    question: Question, tool_name: str, tool_input: dict[str, Any], answer: Answer
) -> dict[str, Any]:
    """Allow only the approving option picked without free text; the text is feedback."""
    item = next((a for a in answer.answers if a.id == question.id), None)
    intent = question.intent
    approve = intent.approve if isinstance(intent, ApprovalIntent | PlanReviewIntent) else None
    if item is not None and item.custom is None and item.selected == [approve]:
        return allow(tool_input)
    if item is not None and item.custom and item.custom.strip():
        return deny(item.custom)
    return deny(f"The user denied this {tool_name[:MAX_NAME]} call.")


def failed(tool_name: str, reason: str) -> dict[str, Any]:
    """Nobody could be asked, or asking failed: never an allow."""
    return deny(
        f"askbridge could not get the user's decision on this {tool_name[:MAX_NAME]} call: {reason}"
    )
