"""The `session/update` payloads the host publishes (protocol.md "Sessions").

Front doors forward these dicts: the LSP door as they are, the ACP door
translated to ACP's own update kinds. `text` of a tool result is exactly what
the model receives.
"""

from __future__ import annotations

from typing import Any

Update = dict[str, Any]


def turn_started(turn_id: str, cause: str) -> Update:
    return {"sessionUpdate": "turn_started", "turnId": turn_id, "cause": cause}


def turn_ended(turn_id: str, stop_reason: str) -> Update:
    return {"sessionUpdate": "turn_ended", "turnId": turn_id, "stopReason": stop_reason}


def agent_message_chunk(text: str) -> Update:
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}


def user_message(content: list[dict[str, Any]], source: dict[str, Any] | None) -> Update:
    update: Update = {"sessionUpdate": "user_message", "content": content}
    if source is not None:
        update["source"] = source
    return update


def tool_call(call_id: str, name: str, raw_input: Any) -> Update:
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": name,
        "status": "in_progress",
        "rawInput": raw_input,
    }


def tool_call_update(
    call_id: str, text: str, *, is_error: bool, error: dict[str, str] | None
) -> Update:
    update: Update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "status": "failed" if is_error else "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": text}}],
    }
    if error is not None:
        update["error"] = error
    return update
