"""Payloads of the ACP front door that askbridge owns (protocol.md "ACP front door").

ACP's own methods (`initialize`, `session/new`, `session/update`, …) are shaped
by the `acp` SDK; askbridge adds only:
- `_meta.askbridge` objects: the capability `{version: 1}` (agent and client
  capabilities), session settings on `session/new` (`session_settings_from_meta`),
  and `{source?, error?}` on `user_message_chunk` / `tool_call_update` updates;
- the `_askbridge/*` extension methods. Requests all return objects:
  `{accepted}`, `{released}`, `{withdrawn}`, `{remainingMs: int|null}`;
  `_askbridge/ask`, `/answer`, `/withdrawReply`, `/list`, `/didChange` reuse the
  LSP door's `userQuestions/*` shapes.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from .base import WireModel
from .common import (
    QUESTIONS_PROTOCOL_VERSION,
    CallScoped,
    ErrorData,
    MessageSource,
    NullKeepingModel,
    QuestionsCapability,
    StopReason,
    TurnCause,
    declares_questions_capability,
)
from .parsing import parse_params
from .questions import (
    AnswerParams,
    DidChangeParams,
    ListParams,
    UserQuestionsAskParams,
    WithdrawReplyParams,
)
from .session import SessionSettings
from .vocabulary import Answer, ProjectionView

# The key askbridge uses inside every ACP `_meta` object.
META_KEY = "askbridge"


class AskbridgeCapabilityMeta(WireModel):
    """`agentCapabilities._meta` / `clientCapabilities._meta`: `{askbridge: {version: 1}}`."""

    askbridge: QuestionsCapability


def agent_capabilities_meta() -> dict[str, Any]:
    """The server's `agentCapabilities._meta`."""
    meta = AskbridgeCapabilityMeta(
        askbridge=QuestionsCapability(version=QUESTIONS_PROTOCOL_VERSION)
    )
    return meta.dump()


def acp_client_renders_questions(client_meta: Any) -> bool:
    """True when `clientCapabilities._meta` declares `askbridge: {version: 1}` (tier 1)."""
    return declares_questions_capability(client_meta, META_KEY)


class AcpSessionSettings(SessionSettings):
    """`session/new` `_meta.askbridge`: overrides `--model`/`--ask-mode`/`--ask-timeout`."""


class AcpSessionNewMeta(WireModel):
    """The part of `session/new` `_meta` askbridge reads; every other key is ignored."""

    askbridge: AcpSessionSettings | None = None


def session_settings_from_meta(meta: Any) -> AcpSessionSettings:
    """The askbridge settings in a `session/new` `_meta` (empty when absent).

    Raises InvalidParams (-32602) naming fields as `_meta.askbridge.<field>`
    when `_meta.askbridge` is present but invalid.
    """
    if not isinstance(meta, dict) or meta.get(META_KEY) is None:
        return AcpSessionSettings()
    return parse_params(AcpSessionSettings, meta[META_KEY], field_prefix="_meta.askbridge")


class AskbridgeUpdateMeta(WireModel):
    """`_meta.askbridge` of a `session/update`: `source` on an admitted late reply's
    `user_message_chunk`, `error` (`{name, code}`) on a failed `tool_call_update`."""

    source: MessageSource | None = None
    error: ErrorData | None = None


class AcpUpdateMeta(WireModel):
    """The whole `_meta` object askbridge puts on an ACP `session/update`."""

    askbridge: AskbridgeUpdateMeta


def update_meta(
    *, source: MessageSource | None = None, error: ErrorData | None = None
) -> dict[str, Any]:
    """`{"askbridge": {source?, error?}}` for an ACP update's `_meta`."""
    return AcpUpdateMeta(askbridge=AskbridgeUpdateMeta(source=source, error=error)).dump()


# -- extension requests the server sends ------------------------------------------------

AcpAskParams = UserQuestionsAskParams
AcpAskResult = Answer


class CancelAskParams(WireModel):
    """`_askbridge/cancelAsk`: the server no longer wants the answer; later replies are ignored."""

    session_id: str
    call_id: str | None = None


# -- extension requests a client sends ---------------------------------------------------


class AcpAttachWaitParams(CallScoped):
    """Claim a timed wait; held until `_askbridge/releaseWait`, the end of the ask, or
    disconnect. Attaching again adds no second claim."""


class AttachWaitResult(NullKeepingModel):
    """`{remainingMs: n}`, or `{remainingMs: null}` (kept on the wire) when there is no wait."""

    _keep_null = ("remaining_ms",)

    remaining_ms: int | None


class ReleaseWaitParams(CallScoped):
    pass


class ReleaseWaitResult(WireModel):
    released: bool


AcpAnswerParams = AnswerParams


class AnswerResult(WireModel):
    accepted: bool


AcpWithdrawReplyParams = WithdrawReplyParams


class WithdrawReplyResult(WireModel):
    withdrawn: bool


AcpListParams = ListParams
AcpListResult = ProjectionView
AcpDidChangeParams = DidChangeParams


# -- `_askbridge/turn`: turn boundaries (a late reply can start a turn no prompt awaits) ----


class TurnStartedNotification(WireModel):
    session_id: str
    turn_id: str
    event: Literal["started"] = "started"
    cause: TurnCause


class TurnEndedNotification(WireModel):
    session_id: str
    turn_id: str
    event: Literal["ended"] = "ended"
    stop_reason: StopReason


TurnNotification = Annotated[
    TurnStartedNotification | TurnEndedNotification, Field(discriminator="event")
]
TURN_NOTIFICATION_ADAPTER: TypeAdapter[TurnStartedNotification | TurnEndedNotification] = (
    TypeAdapter(TurnNotification)
)
