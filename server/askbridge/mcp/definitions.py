"""What the MCP door's agent sees of its tools: their definitions (X2, X4, X5) and the
pending message of an external session's timed ask, which points at `get_answers` (X2).

Kept apart from mcp/tools.py, which runs the calls: this is the door's fixed text.
"""

from __future__ import annotations

from typing import Any

from askbridge.host.agent.tools import ASK_TOOL, AskUserQuestionTool

from .approval import APPROVAL_TOOL

GET_ANSWERS_TOOL = "get_answers"


def external_pending_message(call_id: str) -> str:
    """X2: T5's message, pointing at get_answers instead of a user message."""
    return (
        "No answer batch arrived before the timeout. This is pending, not a skipped answer: "
        "continue with useful work that does not depend on it. The user can still answer; "
        f'call get_answers (with callIds ["{call_id}"], or without arguments) later to receive '
        "the reply with the original questions. Do not treat this as permission."
    )


def tool_definitions(ask: AskUserQuestionTool) -> list[dict[str, Any]]:
    """What the agent sees, in the hosted `request/header` shape {name, description, parameters};
    `ask_user_question` takes the hosted timed schema's parameters (T2, P1)."""
    default = "no timeout" if ask.timeout == -1 else f"{ask.timeout} seconds"
    parameters = ask.schema()["parameters"]
    return [
        {
            "name": ASK_TOOL,
            "description": (
                "Ask the user one or more structured questions; they answer in their editor "
                "(or here). Each answer names the question id and the selected option labels, "
                f"or custom text. The wait defaults to {default}. If no answer arrives in time "
                'the result is {"pending": true, "callId": …}: the question stays open, and the '
                "reply comes later through get_answers. Pending is never an answer, a refusal "
                "or permission."
            ),
            "parameters": parameters,
        },
        {
            "name": GET_ANSWERS_TOOL,
            "description": (
                "Collect the user's answers to questions that returned pending. Returns "
                '{"answers": [{callId, questions, answers}], "pending": [callId…]}; each '
                "answer is returned once. Without callIds, every answer that arrived."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "callIds": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Only these pending calls (default: all).",
                    }
                },
            },
        },
        {
            "name": APPROVAL_TOOL,
            "description": (
                "Ask the user to allow or deny a tool call (Claude Code's "
                '--permission-prompt-tool). Returns {"behavior": "allow", "updatedInput": …} '
                'or {"behavior": "deny", "message": …}; ExitPlanMode asks for plan approval.'
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "tool_name": {"type": "string"},
                    "input": {"type": "object"},
                    "tool_use_id": {"type": "string"},
                },
                "required": ["tool_name", "input"],
            },
        },
    ]
