"""Reading the parts of logged events the `userQuestions` projection cares about (P1–P4).

The projection (projection.py) folds whatever the log holds, including what a
model or a crash produced, so every reader here is total: malformed input
yields None (or `()` for reply texts, P4), never an exception. Results are
normalized to the wire vocabulary (V1, V2, V4) and are safe to build a
`ProjectionView` from: question ids are non-empty strings, option labels are
non-empty strings, `selected` holds strings.

- `declares_timed_tool(tools)` — P1: a request/header's tools include
  `ask_user_question` whose JSON Schema `parameters.properties` has `timeout`.
- `parse_questions(arguments)` — P2: the question items of a tool/call, in
  view form (`multi_select` becomes `multiSelect`, other keys are dropped).
- `read_tool_outcome(event)` — P3: CONTINUED, the answer batch, or None (drop).
- `read_reply_answers(content)` — P4: the batch inside a late reply's text.
"""

from __future__ import annotations

import json
from enum import Enum
from typing import Any, Final, Literal

from askbridge.protocol.errors import ErrorCode

ASK_USER_QUESTION: Final = "ask_user_question"

# A question or answer item in wire form; stored read-only, copied when a view is built.
Questions = tuple[dict[str, Any], ...]
Answers = tuple[dict[str, Any], ...]


class Continued(Enum):
    """P3: the call returned pending or its outcome is unknown; it stays answerable."""

    CONTINUED = "continued"


CONTINUED: Final = Continued.CONTINUED


def declares_timed_tool(tools: Any) -> bool:
    if not isinstance(tools, list):
        return False
    for tool in tools:
        if isinstance(tool, dict) and tool.get("name") == ASK_USER_QUESTION:
            parameters = tool.get("parameters")
            properties = parameters.get("properties") if isinstance(parameters, dict) else None
            return isinstance(properties, dict) and "timeout" in properties
    return False


def _loads(text: Any) -> Any:
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # bad JSON, huge numbers, absurd nesting
        return None


def _option(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    label = raw.get("label")
    if not isinstance(label, str) or not label:
        return None
    option: dict[str, Any] = {"label": label}
    description = raw.get("description")
    if isinstance(description, str):
        option["description"] = description
    return option


def _question(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    qid, text = raw.get("id"), raw.get("question")
    if not isinstance(qid, str) or not qid or not isinstance(text, str):
        return None
    question: dict[str, Any] = {"id": qid, "question": text}
    header = raw.get("header")
    if isinstance(header, str):
        question["header"] = header
    # Optional fields that do not fit the vocabulary are left out, not fatal:
    # P2 asks only for string ids and questions, and the tool reports bad input.
    raw_options = raw.get("options")
    if isinstance(raw_options, list):
        options = [_option(o) for o in raw_options]
        if all(o is not None for o in options):
            question["options"] = options
    multi = raw.get("multi_select")
    if isinstance(multi, bool):
        question["multiSelect"] = multi
    return question


def parse_questions(arguments: Any) -> Questions | None:
    """P2: the question items of an ask_user_question call, or None when unparseable."""
    if isinstance(arguments, str):  # some adapters log the model's raw JSON text
        arguments = _loads(arguments)
    if not isinstance(arguments, dict):
        return None
    raw = arguments.get("questions")
    if not isinstance(raw, list) or not raw:
        return None
    questions = tuple(_question(q) for q in raw)
    if any(q is None for q in questions):
        return None
    return questions  # type: ignore[return-value]  # None ruled out just above


def _answer_item(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    qid, selected = raw.get("id"), raw.get("selected")
    if not isinstance(qid, str) or not isinstance(selected, list):
        return None
    if not all(isinstance(label, str) for label in selected):
        return None
    item: dict[str, Any] = {"id": qid, "selected": tuple(selected)}
    custom = raw.get("custom")
    if isinstance(custom, str):
        item["custom"] = custom
    elif custom is not None:
        return None
    return item


def read_answers(payload: Any) -> Answers | None:
    """The V4 batch of `{"answers": [...]}`, or None when it is not one."""
    if not isinstance(payload, dict):
        return None
    raw = payload.get("answers")
    if not isinstance(raw, list):
        return None
    items = tuple(_answer_item(a) for a in raw)
    if any(item is None for item in items):
        return None
    return items  # type: ignore[return-value]  # None ruled out just above


def read_tool_outcome(event: dict[str, Any]) -> Literal[Continued.CONTINUED] | Answers | None:
    """P3: CONTINUED (pending, or outcome unknown), the answer batch, or None (drop the call)."""
    error = event.get("error")
    if isinstance(error, dict) and error.get("code") == ErrorCode.TOOL_OUTCOME_UNKNOWN:
        return CONTINUED  # P7's synthetic result after a crash
    if event.get("isError"):
        return None
    payload = _loads(event.get("content"))
    if isinstance(payload, dict) and payload.get("pending") is True:
        return CONTINUED
    return read_answers(payload)


def read_reply_answers(content: Any) -> Answers:
    """P4: the batch in a late reply's text blocks (L4), or `()` when none is readable."""
    if not isinstance(content, list):
        return ()
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            answers = read_answers(_loads(block.get("text")))
            if answers is not None:
                return answers
    return ()
