"""Small shapes shared by several payloads of protocol.md (both front doors).

Text content blocks, the `{name, code}` error data of domain failures, the
source of an admitted late reply, stop reasons, the `{version: 1}` capability
both doors advertise, and `NullKeepingModel` for the few fields whose `null`
must stay on the wire (`WireModel.dump()` otherwise drops None fields).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import SerializationInfo, SerializerFunctionWrapHandler, model_serializer

from .base import WireModel

# The user-questions protocol version a client or server declares (protocol.md).
QUESTIONS_PROTOCOL_VERSION = 1

StopReason = Literal["end_turn", "cancelled", "max_turn_requests"]
TurnCause = Literal["prompt", "inbox"]


class NullKeepingModel(WireModel):
    """A WireModel whose `_keep_null` fields are written as `null` instead of left out.

    Needed where protocol.md gives `null` a meaning (`{remainingMs: null}`) or
    where a field is required and any JSON value, null included, is allowed
    (`rawInput`, tool-call `arguments`): dropping it would change the payload.
    """

    _keep_null: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _write_kept_nulls(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        data = handler(self)
        if info.exclude_none and isinstance(data, dict):
            fields = type(self).model_fields
            for name in self._keep_null:
                if getattr(self, name) is None:
                    alias = fields[name].alias
                    data[alias if info.by_alias and alias else name] = None
        return data


class TextContent(WireModel):
    """A text content block `{type: "text", text}` (prompts, messages, tool output)."""

    type: Literal["text"] = "text"
    text: str


class ErrorData(WireModel):
    """`data` of a domain error (-32000) and of a client's ASK_* error reply: `{name, code}`."""

    name: str
    code: str


class TurnError(WireModel):
    """`error` of a `turn_ended` whose turn failed (MODEL_ERROR, STORE_ERROR): `{name, code,
    message}`, the same error its `session/prompt` (if any) was answered with."""

    name: str
    code: str
    message: str


class MessageSource(WireModel):
    """Where an admitted user message came from (L4).

    e.g. `{kind: "user-question-reply", callId, outcome: "answered"}`.
    """

    kind: str
    call_id: str
    outcome: str


class QuestionsCapability(WireModel):
    """`{version: 1}`: LSP `experimental.userQuestions` and ACP `_meta.askbridge` capability."""

    version: int = QUESTIONS_PROTOCOL_VERSION


def declares_questions_capability(container: Any, key: str) -> bool:
    """True when `container[key]` is `{version: n}` with an integer n >= 1.

    `container` is a client's LSP `capabilities.experimental` or ACP
    `clientCapabilities._meta` as received (any JSON value), so this never raises.
    """
    if not isinstance(container, dict):
        return False
    declared = container.get(key)
    if not isinstance(declared, dict):
        return False
    version = declared.get("version")
    return isinstance(version, int) and not isinstance(version, bool) and version >= 1


class EmptyParams(WireModel):
    """Params of a method that takes none (`session/list`); any fields are ignored."""


class EmptyResult(WireModel):
    """The `{}` result (`session/load`)."""


class SessionScoped(WireModel):
    """Params that name only a session: `{sessionId}`."""

    session_id: str


class CallScoped(WireModel):
    """Params that name a question call of a session: `{sessionId, callId}`."""

    session_id: str
    call_id: str
