"""The session event log's vocabulary.

Each session is an append-only list of events; an event is a JSON object
whose `type` names it. Events are plain dicts (parsed JSON) on purpose: the
projection folds millions of them and must not pay for model validation.
The constructors below are the only place events are shaped; read them to
know every key an event can carry.

| type | keys |
|---|---|
| session/header | sessionId, agentId, origin ("root"/"subagent"/"mcp"), parentSessionId?, |
|   | parentAgentId?, cwd, model (ModelSpec), askUserQuestion {mode, timeout}, |
|   | createdAt (ISO 8601 UTC), title? |
| turn/start | turnId, cause ("prompt"/"inbox") |
| request/header | tools [{name, description, parameters}] — exactly what the model saw |
| assistant/message | text, toolCalls [{id, name, arguments}] |
| tool/call | callId, name, arguments |
| tool/result | callId, name, content (text the model gets), isError, error? {name, code}, |
|   | outcome? ("answered"/"pending"), answers? (answered: the checked batch) |
| user/message | content [{type: "text", text}], source? {kind, callId, outcome}, inboxId?, |
|   | answers? (a late reply: the checked batch answering `source.callId`) |
| agent/inbox/inserted | inboxId, delivery ("next-turn"/"next-step"), message {content, source?, |
|   | answers?} (what its user/message will carry) |
| agent/inbox/claimed | inboxId |
| agent/inbox/discarded | inboxId, reason |
| turn/end | turnId, stopReason, error? {name, code, message} |
"""

from __future__ import annotations

from typing import Any, Final, Literal

Event = dict[str, Any]

SESSION_HEADER = "session/header"
TURN_START = "turn/start"
REQUEST_HEADER = "request/header"
ASSISTANT_MESSAGE = "assistant/message"
TOOL_CALL = "tool/call"
TOOL_RESULT = "tool/result"
USER_MESSAGE = "user/message"
INBOX_INSERTED = "agent/inbox/inserted"
INBOX_CLAIMED = "agent/inbox/claimed"
INBOX_DISCARDED = "agent/inbox/discarded"
TURN_END = "turn/end"

REPLY_SOURCE_KIND = "user-question-reply"

# tool/result `outcome` values (the others are not written: see `tool_result`)
OUTCOME_ANSWERED: Final = "answered"
OUTCOME_PENDING: Final = "pending"

# An external agent's session (X1, host/agent/external_sessions.py): a root session in all
# but its origin.
EXTERNAL_ORIGIN: Final = "mcp"
ROOT_ORIGINS = ("root", EXTERNAL_ORIGIN)


def session_header(
    *,
    session_id: str,
    agent_id: str,
    origin: Literal["root", "subagent", "mcp"],
    cwd: str,
    model: dict[str, Any],
    ask_user_question: dict[str, Any],
    created_at: str,
    parent_session_id: str | None = None,
    parent_agent_id: str | None = None,
    title: str | None = None,
) -> Event:
    event: Event = {
        "type": SESSION_HEADER,
        "sessionId": session_id,
        "agentId": agent_id,
        "origin": origin,
        "cwd": cwd,
        "model": model,
        "askUserQuestion": ask_user_question,
        "createdAt": created_at,
    }
    optional = {
        "parentSessionId": parent_session_id,
        "parentAgentId": parent_agent_id,
        "title": title,
    }
    event.update((key, value) for key, value in optional.items() if value is not None)
    return event


def turn_start(turn_id: str, cause: Literal["prompt", "inbox"]) -> Event:
    return {"type": TURN_START, "turnId": turn_id, "cause": cause}


def request_header(tools: list[dict[str, Any]]) -> Event:
    return {"type": REQUEST_HEADER, "tools": tools}


def assistant_message(text: str, tool_calls: list[dict[str, Any]]) -> Event:
    return {"type": ASSISTANT_MESSAGE, "text": text, "toolCalls": tool_calls}


def message_tool_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    """An assistant message's tool call {id, name, arguments}."""
    return {"id": call_id, "name": name, "arguments": arguments}


def tool_call(call_id: str, name: str, arguments: Any) -> Event:
    return {"type": TOOL_CALL, "callId": call_id, "name": name, "arguments": arguments}


def tool_result(
    call_id: str,
    name: str,
    content: str,
    *,
    is_error: bool = False,
    error: dict[str, str] | None = None,
    outcome: str | None = None,
    answers: list[dict[str, Any]] | None = None,
) -> Event:
    """`outcome` says what an ask came to, so that no reader parses `content` back (P3):
    "answered" (with `answers`) or "pending". A failure needs none: `isError` and its
    `error.code` say it all. Any other outcome (another tool's own text) is not written.
    Logs written before `outcome` existed carry only the text (projection_outcomes.py)."""
    event: Event = {
        "type": TOOL_RESULT,
        "callId": call_id,
        "name": name,
        "content": content,
        "isError": is_error,
    }
    if error is not None:
        event["error"] = error
    if outcome == OUTCOME_ANSWERED:
        event["outcome"] = outcome
        event["answers"] = answers
    elif outcome == OUTCOME_PENDING:
        event["outcome"] = outcome
    return event


def text_content(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


def user_message(
    content: list[dict[str, Any]],
    *,
    source: dict[str, Any] | None = None,
    inbox_id: str | None = None,
    answers: list[dict[str, Any]] | None = None,
) -> Event:
    """`answers`: a late reply's checked batch (L4), so that no reader parses `content` back
    (P4); the call it answers is `source.callId`. Logs written before replies carried it
    have only the text (projection_outcomes.py)."""
    event: Event = {"type": USER_MESSAGE, "content": content}
    if source is not None:
        event["source"] = source
    if inbox_id is not None:
        event["inboxId"] = inbox_id
    if answers is not None:
        event["answers"] = answers
    return event


def inbox_inserted(
    inbox_id: str,
    delivery: Literal["next-turn", "next-step"],
    content: list[dict[str, Any]],
    source: dict[str, Any] | None = None,
    answers: list[dict[str, Any]] | None = None,
) -> Event:
    """`message` is what the item's user/message carries when it is admitted (`answers`
    as in `user_message`)."""
    message: dict[str, Any] = {"content": content}
    if source is not None:
        message["source"] = source
    if answers is not None:
        message["answers"] = answers
    return {"type": INBOX_INSERTED, "inboxId": inbox_id, "delivery": delivery, "message": message}


def inbox_claimed(inbox_id: str) -> Event:
    return {"type": INBOX_CLAIMED, "inboxId": inbox_id}


def inbox_discarded(inbox_id: str, reason: str) -> Event:
    return {"type": INBOX_DISCARDED, "inboxId": inbox_id, "reason": reason}


def turn_end(turn_id: str, stop_reason: str, error: dict[str, str] | None = None) -> Event:
    """`error` {name, code, message}: why the turn failed (a model or store failure)."""
    event: Event = {"type": TURN_END, "turnId": turn_id, "stopReason": stop_reason}
    if error is not None:
        event["error"] = error
    return event


def reply_source(call_id: str) -> dict[str, str]:
    return {"kind": REPLY_SOURCE_KIND, "callId": call_id, "outcome": "answered"}
