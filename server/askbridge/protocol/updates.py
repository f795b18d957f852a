"""`session/update` notification payloads of the LSP door, tagged on `sessionUpdate`.

`turn_started`, `agent_message_chunk`, `user_message` (an admitted late reply),
`tool_call`, `tool_call_update` (its `text` is exactly what the model received)
and `turn_ended`. The ACP door uses ACP's own update kinds instead (see acp.py).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from .base import WireModel
from .common import (
    ErrorData,
    MessageSource,
    NullKeepingModel,
    StopReason,
    TextContent,
    TurnCause,
    TurnError,
)


class TurnStarted(WireModel):
    """`cause` is `inbox` when a late reply woke an idle agent."""

    session_update: Literal["turn_started"] = "turn_started"
    turn_id: str
    cause: TurnCause


class AgentMessageChunk(WireModel):
    session_update: Literal["agent_message_chunk"] = "agent_message_chunk"
    content: TextContent


class UserMessage(WireModel):
    """A queued message (a late reply, L4) admitted into the conversation."""

    session_update: Literal["user_message"] = "user_message"
    content: list[TextContent]
    source: MessageSource | None = None


class ToolCall(NullKeepingModel):
    """A tool call the model made; `rawInput` is its arguments as given (any JSON value)."""

    _keep_null = ("raw_input",)

    session_update: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    title: str
    status: Literal["in_progress"] = "in_progress"
    raw_input: Any


class ToolCallContent(WireModel):
    """`{type: "content", content: {type: "text", text}}` (ACP's tool-call content shape)."""

    type: Literal["content"] = "content"
    content: TextContent


class ToolCallUpdate(WireModel):
    """A tool call's result; `error` (`{name, code}`) only on failures."""

    session_update: Literal["tool_call_update"] = "tool_call_update"
    tool_call_id: str
    status: Literal["completed", "failed"]
    content: list[ToolCallContent]
    error: ErrorData | None = None

    @classmethod
    def of_text(
        cls,
        tool_call_id: str,
        text: str,
        *,
        failed: bool = False,
        error: ErrorData | None = None,
    ) -> ToolCallUpdate:
        """The update for a result the model saw as `text`; `error` implies failed."""
        return cls(
            tool_call_id=tool_call_id,
            status="failed" if failed or error is not None else "completed",
            content=[ToolCallContent(content=TextContent(text=text))],
            error=error,
        )


class TurnEnded(WireModel):
    """The end of a turn; `error` when it failed. A failure is reported there, once: not
    also as agent text, so a client that prompted shows its prompt's error and
    any other window, or a turn a late reply woke, shows this one."""

    session_update: Literal["turn_ended"] = "turn_ended"
    turn_id: str
    stop_reason: StopReason
    error: TurnError | None = None


SessionUpdate = Annotated[
    TurnStarted | AgentMessageChunk | UserMessage | ToolCall | ToolCallUpdate | TurnEnded,
    Field(discriminator="session_update"),
]
SESSION_UPDATE_ADAPTER: TypeAdapter[
    TurnStarted | AgentMessageChunk | UserMessage | ToolCall | ToolCallUpdate | TurnEnded
] = TypeAdapter(SessionUpdate)


class SessionUpdateParams(WireModel):
    """`session/update` notification params: `{sessionId, update}`."""

    session_id: str
    update: SessionUpdate
