"""Which payload type each method of protocol.md carries, for both front doors.

`LSP_METHODS` and `ACP_EXT_METHODS` map a wire method name to its params and
result types: a front door parses with `parse_params(LSP_METHODS[m].params, ...)`,
and `schema.py` writes one JSON Schema per entry. `OTHER_PAYLOADS` lists the
payloads that are not a method's params or result (capabilities, `_meta`
objects, error data, the ModelSpec on its own).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from . import methods as m
from .acp import (
    AcpAttachWaitParams,
    AcpSessionNewMeta,
    AcpUpdateMeta,
    AnswerResult,
    AskbridgeCapabilityMeta,
    AttachWaitResult,
    CancelAskParams,
    ReleaseWaitParams,
    ReleaseWaitResult,
    TurnNotification,
    WithdrawReplyResult,
)
from .common import ErrorData
from .model_spec import AskUserQuestionArguments, ModelSpec
from .parsing import InvalidParamsData
from .questions import (
    AnswerParams,
    AttachWaitParams,
    DidChangeParams,
    ListParams,
    UserQuestionsAskParams,
    WaitProgressParams,
    WithdrawReplyParams,
)
from .session import (
    ExperimentalCapabilities,
    InitializationOptions,
    ServerInfo,
    SessionCancelParams,
    SessionListParams,
    SessionListResult,
    SessionLoadParams,
    SessionLoadResult,
    SessionNewParams,
    SessionNewResult,
    SessionPromptParams,
    SessionPromptResult,
)
from .updates import SessionUpdateParams
from .vocabulary import Answer, ProjectionView

Direction = Literal["client-to-server", "server-to-client"]
C2S: Direction = "client-to-server"
S2C: Direction = "server-to-client"


@dataclass(frozen=True)
class MethodPayloads:
    """A method's params type and, for requests, its result type (`type(None)` for `null`)."""

    params: Any
    direction: Direction
    result: Any = None
    notification: bool = False


def _request(params: Any, result: Any, direction: Direction = C2S) -> MethodPayloads:
    return MethodPayloads(params=params, direction=direction, result=result)


def _notification(params: Any, direction: Direction) -> MethodPayloads:
    return MethodPayloads(params=params, direction=direction, notification=True)


NULL = type(None)

LSP_METHODS: dict[str, MethodPayloads] = {
    m.SESSION_NEW: _request(SessionNewParams, SessionNewResult),
    m.SESSION_LOAD: _request(SessionLoadParams, SessionLoadResult),
    m.SESSION_LIST: _request(SessionListParams, SessionListResult),
    m.SESSION_PROMPT: _request(SessionPromptParams, SessionPromptResult),
    m.SESSION_CANCEL: _notification(SessionCancelParams, C2S),
    m.SESSION_UPDATE: _notification(SessionUpdateParams, S2C),
    m.USER_QUESTIONS_ASK: _request(UserQuestionsAskParams, Answer, S2C),
    m.USER_QUESTIONS_DID_CHANGE: _notification(DidChangeParams, S2C),
    m.USER_QUESTIONS_ATTACH_WAIT: _request(AttachWaitParams, NULL),
    m.USER_QUESTIONS_ANSWER: _request(AnswerParams, bool),
    m.USER_QUESTIONS_WITHDRAW_REPLY: _request(WithdrawReplyParams, bool),
    m.USER_QUESTIONS_LIST: _request(ListParams, ProjectionView),
}

ACP_EXT_METHODS: dict[str, MethodPayloads] = {
    m.ASKBRIDGE_ASK: _request(UserQuestionsAskParams, Answer, S2C),
    m.ASKBRIDGE_CANCEL_ASK: _notification(CancelAskParams, S2C),
    m.ASKBRIDGE_ATTACH_WAIT: _request(AcpAttachWaitParams, AttachWaitResult),
    m.ASKBRIDGE_RELEASE_WAIT: _request(ReleaseWaitParams, ReleaseWaitResult),
    m.ASKBRIDGE_ANSWER: _request(AnswerParams, AnswerResult),
    m.ASKBRIDGE_WITHDRAW_REPLY: _request(WithdrawReplyParams, WithdrawReplyResult),
    m.ASKBRIDGE_LIST: _request(ListParams, ProjectionView),
    m.ASKBRIDGE_DID_CHANGE: _notification(DidChangeParams, S2C),
    m.ASKBRIDGE_TURN: _notification(TurnNotification, S2C),
}

# Payloads that are neither params nor result of a method, by schema file stem.
OTHER_PAYLOADS: dict[str, Any] = {
    "ModelSpec": ModelSpec,
    "tool.ask_user_question.arguments": AskUserQuestionArguments,
    "initialize.initializationOptions": InitializationOptions,
    "initialize.capabilities.experimental": ExperimentalCapabilities,
    "initialize.serverInfo": ServerInfo,
    "userQuestions.attachWait.progress": WaitProgressParams,
    "error.data": ErrorData,
    "error.invalidParams.data": InvalidParamsData,
    "acp.capabilities._meta": AskbridgeCapabilityMeta,
    "acp.session.new._meta": AcpSessionNewMeta,
    "acp.session.update._meta": AcpUpdateMeta,
}


def payload_stems() -> dict[str, Any]:
    """Every payload by schema file stem: `session.new.params`, `_askbridge.list.result`, …"""
    stems: dict[str, Any] = {}
    for table in (LSP_METHODS, ACP_EXT_METHODS):
        for method, payloads in table.items():
            base = method.replace("/", ".")
            stems[f"{base}.params"] = payloads.params
            if not payloads.notification:
                stems[f"{base}.result"] = payloads.result
    stems.update(OTHER_PAYLOADS)
    return stems
