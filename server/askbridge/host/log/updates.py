"""What clients hear of a session: its committed events as `session/update` payloads.

The log is the only writer (architecture.md): a session changes by appending
events, and this is the one mapping from events to the updates the front
doors forward, applied after the commit (D1). The LSP door sends these shapes
as they are; the ACP door translates them to ACP's update kinds
(acp/updates.py), for live updates and for the replay of `session/load` alike.

| event | update(s) |
|---|---|
| turn/start | turn_started {turnId, cause} |
| assistant/message with text | agent_message_chunk {content: {type: text, text}} |
| tool/call | tool_call {toolCallId, title, status: in_progress, rawInput} |
| tool/result | tool_call_update {toolCallId, status, content, error?} — text as the model got it |
| user/message admitted from the inbox (inboxId) | user_message {content, source?} |
| turn/end | turn_ended {turnId, stopReason, error?: {name, code, message}} |

A prompt's own user/message is not sent: its client knows it. Every other
event (request headers, inbox bookkeeping) is not a client's concern.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from . import events as ev

Update = dict[str, Any]


def turn_started(turn_id: str, cause: str) -> Update:
    return {"sessionUpdate": "turn_started", "turnId": turn_id, "cause": cause}


def turn_ended(turn_id: str, stop_reason: str, error: dict[str, str] | None = None) -> Update:
    update: Update = {"sessionUpdate": "turn_ended", "turnId": turn_id, "stopReason": stop_reason}
    if error is not None:
        update["error"] = error
    return update


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
    status = "failed" if is_error else "completed"
    update: Update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "status": status,
        "content": [{"type": "content", "content": {"type": "text", "text": text}}],
    }
    if error is not None:
        update["error"] = error
    return update


def _turn_start(event: ev.Event) -> list[Update]:
    return [turn_started(event["turnId"], event["cause"])]


def _assistant(event: ev.Event) -> list[Update]:
    text = event.get("text")
    return [agent_message_chunk(text)] if text else []


def _tool_call(event: ev.Event) -> list[Update]:
    return [tool_call(event["callId"], event.get("name", ""), event.get("arguments"))]


def _tool_result(event: ev.Event) -> list[Update]:
    return [
        tool_call_update(
            event["callId"],
            event.get("content", ""),
            is_error=bool(event.get("isError")),
            error=event.get("error"),
        )
    ]


def _user_message(event: ev.Event) -> list[Update]:
    if "inboxId" not in event:
        return []  # a prompt: the client that sent it has it
    return [user_message(event.get("content") or [], event.get("source"))]


def _turn_end(event: ev.Event) -> list[Update]:
    # A failed turn is told once, on turn_ended, never also as agent text:
    # the model did not say it, and a client that prompted already shows the prompt's error.
    error = event.get("error")
    if not (isinstance(error, dict) and error.get("message")):
        return [turn_ended(event["turnId"], event["stopReason"])]
    detail = {k: str(error.get(k, "")) for k in ("name", "code", "message")}
    return [turn_ended(event["turnId"], event["stopReason"], detail)]


_MAPPING: dict[str, Callable[[ev.Event], list[Update]]] = {
    ev.TURN_START: _turn_start,
    ev.ASSISTANT_MESSAGE: _assistant,
    ev.TOOL_CALL: _tool_call,
    ev.TOOL_RESULT: _tool_result,
    ev.USER_MESSAGE: _user_message,
    ev.TURN_END: _turn_end,
}


def updates_for(events: Iterable[ev.Event]) -> list[Update]:
    """The updates a client hears for `events`, in order."""
    out: list[Update] = []
    for event in events:
        mapper = _MAPPING.get(event.get("type", ""))
        if mapper is not None:
            out.extend(mapper(event))
    return out


def replay_updates(events: Iterable[ev.Event]) -> list[Update]:
    """A stored conversation for a client that loads it (ACP `session/load`): the same
    mapping, plus the prompts, without the turn boundaries."""
    out: list[Update] = []
    for event in events:
        kind = event.get("type")
        if kind in (ev.TURN_START, ev.TURN_END):
            continue
        if kind == ev.USER_MESSAGE and "inboxId" not in event:
            out.append(user_message(event.get("content") or [], event.get("source")))
            continue
        out.extend(updates_for([event]))
    return out
