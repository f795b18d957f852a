"""`AcpServer`: one ACP client on one connection, mapped onto the host.

Handlers translate; the host and the core decide. Each handler parses its
params once (ACP's own methods with the SDK's schema models, `_askbridge/*`
with askbridge's wire models) and returns the wire result; `rpc_errors` maps
failures to JSON-RPC errors in one place (-32602 for bad params and invalid
session settings, -32000 `{name, code}` for domain errors).

Routing is the SDK's `MessageRouter`, but every handler receives the raw
params: the SDK's own agent router would merge `_meta` keys into the handler's
keyword arguments, letting `_meta.cwd` override `cwd`. Here only
`_meta.askbridge` of `session/new` is read.

Host events reach the client through the `Outbox` in order; see updates.py
for the shapes. Questions go through `QuestionRelay` (relay.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from acp.connection import Connection
from acp.exceptions import RequestError
from acp.router import MessageRouter, Route
from acp.schema import (
    CancelNotification,
    EmbeddedResourceContentBlock,
    InitializeRequest,
    LoadSessionRequest,
    NewSessionRequest,
    PromptRequest,
    ResourceContentBlock,
    TextContentBlock,
)
from pydantic import ValidationError

from askbridge import __version__
from askbridge.core import AbortSignal, HarnessError
from askbridge.host.host import Host
from askbridge.host.session import Session
from askbridge.protocol.acp import (
    AcpAnswerParams,
    AcpAttachWaitParams,
    AcpListParams,
    AcpWithdrawReplyParams,
    AnswerResult,
    AttachWaitResult,
    ReleaseWaitParams,
    ReleaseWaitResult,
    WithdrawReplyResult,
    acp_client_renders_questions,
    agent_capabilities_meta,
    session_settings_from_meta,
)
from askbridge.protocol.errors import RpcErrorCode
from askbridge.protocol.methods import (
    ASKBRIDGE_ANSWER,
    ASKBRIDGE_ATTACH_WAIT,
    ASKBRIDGE_DID_CHANGE,
    ASKBRIDGE_LIST,
    ASKBRIDGE_RELEASE_WAIT,
    ASKBRIDGE_WITHDRAW_REPLY,
    INITIALIZE,
    SESSION_CANCEL,
    SESSION_LOAD,
    SESSION_NEW,
    SESSION_PROMPT,
    wire_ext_name,
)
from askbridge.protocol.model_spec import AskUserQuestionConfig
from askbridge.protocol.parsing import InvalidParams, parse_params, validation_errors
from askbridge.protocol.session import SERVER_NAME

from .claims import ClientClaims
from .outbox import Outbox
from .relay import CancelLedger, QuestionRelay
from .updates import notifications, replay

log = logging.getLogger("askbridge.acp")

ACP_PROTOCOL_VERSION = 1
Handler = Callable[[Any], Awaitable[Any]]


def rpc_errors(handler: Handler) -> Handler:
    """The one place the ACP door turns failures into JSON-RPC errors."""

    async def guarded(params: Any) -> Any:
        try:
            return await handler(params)
        except InvalidParams as exc:
            raise RequestError(RpcErrorCode.INVALID_PARAMS, exc.message, exc.data()) from exc
        except ValidationError as exc:
            bad = InvalidParams(validation_errors(exc, data=params))
            raise RequestError(RpcErrorCode.INVALID_PARAMS, bad.message, bad.data()) from exc
        except HarnessError as exc:
            raise RequestError(RpcErrorCode.DOMAIN_ERROR, exc.message, exc.to_data()) from exc

    return guarded


def prompt_content(request: PromptRequest) -> list[dict[str, Any]]:
    """ACP prompt blocks as the host's text blocks (text and resource links; ACP's baseline)."""
    out: list[dict[str, Any]] = []
    for index, block in enumerate(request.prompt):
        if isinstance(block, TextContentBlock):
            out.append({"type": "text", "text": block.text})
        elif isinstance(block, ResourceContentBlock):
            out.append({"type": "text", "text": f"[{block.name}]({block.uri})"})
        elif isinstance(block, EmbeddedResourceContentBlock) and hasattr(block.resource, "text"):
            out.append({"type": "text", "text": str(block.resource.text)})
        else:
            message = f"{block.type} content is not supported; send text"
            raise InvalidParams([{"field": f"prompt.{index}", "message": message}])
    return out


class AcpServer:
    def __init__(self, host: Host, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.host = host
        self._extensions: dict[str, Handler] = {}
        self.conn = Connection(self._build_router(), writer, reader, listening=False)
        self.outbox = Outbox(self.conn)
        self.cancels = CancelLedger()
        self.relay = QuestionRelay(self.conn, self.outbox, self.cancels)
        self.client_gone = AbortSignal()  # releases every claim when the client leaves (C4)
        self.claims = ClientClaims(host.service, self.client_gone)
        self._loading: set[str] = set()
        self._disposers = [host.service.register(self.relay.listener), host.add_listener(self)]

    def _build_router(self) -> MessageRouter:
        router = MessageRouter()
        for method, handler in {
            INITIALIZE: self.initialize,
            SESSION_NEW: self.session_new,
            SESSION_LOAD: self.session_load,
            SESSION_PROMPT: self.session_prompt,
        }.items():
            router.add_route(Route(method=method, func=rpc_errors(handler), kind="request"))
        router.add_route(
            Route(method=SESSION_CANCEL, func=self.session_cancel, kind="notification")
        )
        for method, handler in {
            ASKBRIDGE_ATTACH_WAIT: self.attach_wait,
            ASKBRIDGE_RELEASE_WAIT: self.release_wait,
            ASKBRIDGE_ANSWER: self.answer,
            ASKBRIDGE_WITHDRAW_REPLY: self.withdraw_reply,
            ASKBRIDGE_LIST: self.list_view,
        }.items():
            self.add_extension(method, handler)
        router.handle_extension_request(self._extension_request)
        router.handle_extension_notification(self._extension_notification)
        return router

    def add_extension(self, wire_method: str, handler: Handler) -> None:
        """Serve one more extension request (an `_`-prefixed wire name); embedders and tests."""
        self._extensions[wire_method] = rpc_errors(handler)

    async def _extension_request(self, sdk_name: str, params: dict[str, Any]) -> Any:
        method = wire_ext_name(sdk_name)  # the SDK strips the leading underscore
        handler = self._extensions.get(method)
        if handler is None:
            raise RequestError.method_not_found(method)
        return await handler(params)

    async def _extension_notification(self, sdk_name: str, params: dict[str, Any]) -> None:
        return None  # no client → server extension notifications; unknown ones are ignored

    def close(self) -> None:
        self.client_gone.abort("disconnected")
        for dispose in self._disposers:
            dispose()

    # -- host events → client -------------------------------------------------------------

    def on_update(self, session_id: str, update: dict[str, Any]) -> None:
        # Called inside the host's turn: a shape we cannot translate must not end the turn.
        try:
            translated = notifications(session_id, update)
        except (KeyError, TypeError, ValidationError):
            log.exception("cannot send session update %r", update)
            return
        for method, params in translated:
            self.outbox.post(method, params)

    def on_view_changes(self, session_id: str, changes: list[dict[str, Any]]) -> None:
        if session_id not in self._loading:  # session/load sends the view after its replay
            self.outbox.post(ASKBRIDGE_DID_CHANGE, {"sessionId": session_id, "changes": changes})

    def send_snapshot(self, session: Session) -> None:
        """The first didChange of a session this client just subscribed to (S2)."""
        self.on_view_changes(session.id, session.projection.snapshot())

    # -- lifecycle and sessions -----------------------------------------------------------

    async def initialize(self, params: Any) -> Any:
        request = InitializeRequest.model_validate(params)
        caps = request.client_capabilities
        if caps is not None:
            self.relay.renders_questions = acp_client_renders_questions(caps.field_meta)
            elicitation = caps.elicitation
            self.relay.elicitation_form = elicitation is not None and elicitation.form is not None
        return {
            "protocolVersion": ACP_PROTOCOL_VERSION,
            "agentCapabilities": {"loadSession": True, "_meta": agent_capabilities_meta()},
            "agentInfo": {"name": SERVER_NAME, "version": __version__},
        }

    def _session(self, session_id: str) -> Session:
        """Session-scoped methods load a stored session first; that sends the view, no replay."""
        loaded = session_id in self.host.sessions
        session = self.host.get_session(session_id)
        if not loaded:
            self.send_snapshot(session)
        return session

    async def session_new(self, params: Any) -> Any:
        request = NewSessionRequest.model_validate(params)
        settings = session_settings_from_meta(request.field_meta)  # only _meta.askbridge
        model = ask = None
        if settings.model is not None:
            model = settings.model.model_dump(mode="json", by_alias=True, exclude_none=True)
        if settings.ask_user_question is not None:
            default = AskUserQuestionConfig.model_validate(self.host.default_ask)
            ask = settings.ask_user_question.merged_over(default).dump()
        try:
            session = self.host.new_session(cwd=request.cwd, model=model, ask_user_question=ask)
        except ValueError as exc:  # a model spec the factory refuses; a missing key is MODEL_ERROR
            raise InvalidParams([{"field": "_meta.askbridge.model", "message": str(exc)}]) from exc
        return {"sessionId": session.id}

    async def session_load(self, params: Any) -> Any:
        request = LoadSessionRequest.model_validate(params)
        self._loading.add(request.session_id)
        try:
            session = self.host.load_session(request.session_id)  # P7 repair, L5 re-admission
            for method, body in replay(session.id, list(session.events)):
                self.outbox.post(method, body)
        finally:
            self._loading.discard(request.session_id)
        self.send_snapshot(session)
        await self.outbox.flush()  # the replay and the view go out before `{}`
        return {}

    async def session_prompt(self, params: Any) -> Any:
        request = PromptRequest.model_validate(params)
        content = prompt_content(request)
        self._session(request.session_id)
        stop = await self.host.prompt(request.session_id, content)
        await self.outbox.flush()  # the turn's updates go out before its stopReason
        return {"stopReason": stop}

    async def session_cancel(self, params: Any) -> None:
        try:
            request = CancelNotification.model_validate(params)
            self.cancels.record(request.session_id)  # before any await: see relay._cancelled
            self._session(request.session_id).cancel()
        except (ValidationError, HarnessError) as exc:  # a notification has no reply
            log.warning("session/cancel ignored: %s", exc)

    # -- _askbridge/* ---------------------------------------------------------------------

    async def attach_wait(self, params: Any) -> Any:
        p = parse_params(AcpAttachWaitParams, params)
        session = self._session(p.session_id)
        remaining = await self.claims.attach(session.agent.id, p.call_id)
        return AttachWaitResult(remaining_ms=remaining).dump()

    async def release_wait(self, params: Any) -> Any:
        p = parse_params(ReleaseWaitParams, params)
        session = self._session(p.session_id)
        return ReleaseWaitResult(released=self.claims.release(session.agent.id, p.call_id)).dump()

    async def answer(self, params: Any) -> Any:
        p = parse_params(AcpAnswerParams, params)
        self._session(p.session_id)
        accepted = await self.host.answer_reply(p.session_id, p.call_id, p.answer)
        return AnswerResult(accepted=accepted).dump()

    async def withdraw_reply(self, params: Any) -> Any:
        p = parse_params(AcpWithdrawReplyParams, params)
        self._session(p.session_id)
        return WithdrawReplyResult(
            withdrawn=self.host.withdraw_reply(p.session_id, p.call_id)
        ).dump()

    async def list_view(self, params: Any) -> Any:
        p = parse_params(AcpListParams, params)
        return self._session(p.session_id).projection.view_dict()
