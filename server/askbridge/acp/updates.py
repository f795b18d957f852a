"""Host session updates and logged events as ACP notifications (live and on `session/load`).

The host publishes the LSP door's `session/update` shapes (host/log/updates.py) (`turn_started`,
`agent_message_chunk`, `user_message`, `tool_call`, `tool_call_update`,
`turn_ended`). ACP clients get only ACP's own update kinds:

| host update          | ACP notification                                                 |
|----------------------|------------------------------------------------------------------|
| agent_message_chunk  | `session/update` agent_message_chunk                             |
| user_message         | one user_message_chunk per text block, `_meta.askbridge.source`  |
| tool_call            | `session/update` tool_call (status in_progress, rawInput)        |
| tool_call_update     | `session/update` tool_call_update, `_meta.askbridge.error`       |
| turn_started / ended | `_askbridge/turn {sessionId, turnId, event, cause? / stopReason?}` |

`replay(session_id, events)` rebuilds the conversation from a session's event
log for `session/load`: prompts and admitted late replies as
user_message_chunk, agent text, every tool call with its result (repaired
results included). Turn boundaries are not replayed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    ContentToolCallContent,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)
from pydantic import BaseModel

from askbridge.host.log import events as ev
from askbridge.host.log.updates import replay_updates
from askbridge.protocol.acp import (
    TurnEndedNotification,
    TurnStartedNotification,
    update_meta,
)
from askbridge.protocol.common import ErrorData, MessageSource
from askbridge.protocol.methods import ASKBRIDGE_TURN, SESSION_UPDATE

Notification = tuple[str, dict[str, Any]]


def _session_update(session_id: str, update: BaseModel) -> Notification:
    body = update.model_dump(mode="json", by_alias=True, exclude_none=True)
    return SESSION_UPDATE, {"sessionId": session_id, "update": body}


def _text(block: Any) -> str | None:
    if isinstance(block, dict) and block.get("type") == "text":
        text = block.get("text")
        return text if isinstance(text, str) else None
    return None


def _user_chunks(session_id: str, update: dict[str, Any]) -> list[Notification]:
    source = update.get("source")
    meta = update_meta(source=MessageSource.model_validate(source)) if source else None
    out = []
    for block in update.get("content") or []:
        text = _text(block)
        if text is not None:
            chunk = UserMessageChunk(
                session_update="user_message_chunk",
                content=TextContentBlock(type="text", text=text),
                field_meta=meta,
            )
            out.append(_session_update(session_id, chunk))
    return out


def _tool_call(session_id: str, update: dict[str, Any]) -> Notification:
    start = ToolCallStart(
        session_update="tool_call",
        tool_call_id=update["toolCallId"],
        title=update.get("title") or update["toolCallId"],
        status="in_progress",
        raw_input=update.get("rawInput"),
    )
    return _session_update(session_id, start)


def _tool_call_update(session_id: str, update: dict[str, Any]) -> Notification:
    error = update.get("error")
    content = [
        ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))
        for item in update.get("content") or []
        if isinstance(item, dict) and (text := _text(item.get("content"))) is not None
    ]
    progress = ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=update["toolCallId"],
        status=update.get("status"),
        content=content,
        field_meta=update_meta(error=ErrorData.model_validate(error)) if error else None,
    )
    return _session_update(session_id, progress)


def notifications(session_id: str, update: dict[str, Any]) -> list[Notification]:
    """The ACP notifications for one host session update (none for an unknown kind)."""
    kind = update.get("sessionUpdate")
    if kind == "turn_started":
        started = TurnStartedNotification(
            session_id=session_id, turn_id=update["turnId"], cause=update["cause"]
        )
        return [(ASKBRIDGE_TURN, started.dump())]
    if kind == "turn_ended":
        ended = TurnEndedNotification(
            session_id=session_id, turn_id=update["turnId"], stop_reason=update["stopReason"]
        )
        return [(ASKBRIDGE_TURN, ended.dump())]
    if kind == "agent_message_chunk":
        text = _text(update.get("content"))
        if text is None:
            return []
        chunk = AgentMessageChunk(
            session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text)
        )
        return [_session_update(session_id, chunk)]
    if kind == "user_message":
        return _user_chunks(session_id, update)
    if kind == "tool_call":
        return [_tool_call(session_id, update)]
    if kind == "tool_call_update":
        return [_tool_call_update(session_id, update)]
    return []


def replay(session_id: str, events: Iterable[ev.Event]) -> list[Notification]:
    """`session/load`: the conversation in the log as ACP `session/update` notifications,
    through the host's one event → update mapping (host/log/updates.py)."""
    out: list[Notification] = []
    for update in replay_updates(events):
        out.extend(notifications(session_id, update))
    return out
