"""`AcpServer`: one ACP client on one connection, attached to the host.

Handlers translate; the host and the core decide. The connection is the one
JSON-RPC core of every door (`askbridge.jsonrpc`, newline framing, ACP's
`$/cancel_request`), so failures become wire errors in one place, the same
as the LSP door's (-32602 for bad params and invalid session settings, -32000
`{name, code}` for domain errors — a missing API key is MODEL_ERROR, as on
the LSP door), and any line that is not a JSON-RPC object is -32700/-32600
while the connection keeps serving (S8). ACP's own methods are parsed with
the SDK's schema models; `_askbridge/*` with askbridge's wire models. Every
handler receives the raw params: only `_meta.askbridge` of `session/new` is
read, and no `_meta` key is ever merged into the parameters.

Order on the wire is the order things happen: a turn's updates are queued
before its `session/prompt` result; `session/load` queues the replay, then the
view's snapshot, then `{}`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

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
from anyio.abc import TaskGroup
from pydantic import ValidationError

from askbridge import __version__
from askbridge.core import HarnessError
from askbridge.host.agent.session import Session
from askbridge.host.asking.external_followers import follow_external
from askbridge.host.asking.question_log import log_claim
from askbridge.host.host import Host
from askbridge.host.options import merge_settings, session_settings
from askbridge.jsonrpc import Connection
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
from askbridge.protocol.methods import (
    ASKBRIDGE_ANSWER,
    ASKBRIDGE_ATTACH_WAIT,
    ASKBRIDGE_LIST,
    ASKBRIDGE_RELEASE_WAIT,
    ASKBRIDGE_WITHDRAW_REPLY,
    INITIALIZE,
    SESSION_CANCEL,
    SESSION_LOAD,
    SESSION_NEW,
    SESSION_PROMPT,
)
from askbridge.protocol.parsing import InvalidParams, parse_params
from askbridge.protocol.session import SERVER_NAME

from .claims import ClientClaims
from .relay import AcpRelay
from .updates import replay

log = logging.getLogger("askbridge.acp")

ACP_PROTOCOL_VERSION = 1
Handler = Callable[[Any], Awaitable[Any]]


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
    def __init__(
        self,
        host: Host,
        conn: Connection,
        env: Mapping[str, str] | None = None,
        defaults: dict[str, Any] | None = None,
        *,
        tasks: TaskGroup,
    ):
        self.host = host
        self._flags: dict[str, Any] = defaults or {}  # the front door's flags
        self.conn = conn
        self.relay = AcpRelay(conn, host)
        self.client = host.attach(self.relay, env, "acp")
        self.relay.client = self.client
        self.claims = ClientClaims(host, self.client, tasks)
        for method, handler in {
            INITIALIZE: self.initialize,
            SESSION_NEW: self.session_new,
            SESSION_LOAD: self.session_load,
            SESSION_PROMPT: self.session_prompt,
            ASKBRIDGE_ATTACH_WAIT: self.attach_wait,
            ASKBRIDGE_RELEASE_WAIT: self.release_wait,
            ASKBRIDGE_ANSWER: self.answer,
            ASKBRIDGE_WITHDRAW_REPLY: self.withdraw_reply,
            ASKBRIDGE_LIST: self.list_view,
        }.items():
            conn.on_request(method, handler)
        conn.on_notification(SESSION_CANCEL, self.session_cancel)

    def add_extension(self, wire_method: str, handler: Handler) -> None:
        """Serve one more extension request (an `_`-prefixed wire name); embedders and tests."""
        self.conn.on_request(wire_method, handler)

    def close(self) -> None:
        """The client is gone: the host lets it go (M4, M6)."""
        self.host.detach(self.client)

    # -- lifecycle and sessions -----------------------------------------------------------

    async def initialize(self, params: Any) -> Any:
        request = InitializeRequest.model_validate(params)
        caps = request.client_capabilities
        if caps is not None:
            self.relay.renders_questions = acp_client_renders_questions(caps.field_meta)
            elicitation = caps.elicitation
            self.relay.elicitation_form = elicitation is not None and elicitation.form is not None
        if self.relay.renders_questions:
            follow_external(self.host, self.client)  # M1: every external (MCP) session
        return {
            "protocolVersion": ACP_PROTOCOL_VERSION,
            "agentCapabilities": {"loadSession": True, "_meta": agent_capabilities_meta()},
            "agentInfo": {"name": SERVER_NAME, "version": __version__},
        }

    async def _session(self, session_id: str) -> Session:
        """Session-scoped methods load a stored session first (no replay); this client
        follows it from now on (M1)."""
        return await self.host.get_session(session_id, self.client)

    async def session_new(self, params: Any) -> Any:
        request = NewSessionRequest.model_validate(params)
        given = session_settings_from_meta(request.field_meta)  # only _meta.askbridge
        settings = merge_settings(
            self._flags, session_settings(given.model, given.ask_user_question)
        )
        try:
            session = await self.host.new_session(self.client, cwd=request.cwd, **settings)
        except ValueError as exc:  # a model spec the factory refuses
            raise InvalidParams([{"field": "_meta.askbridge.model", "message": str(exc)}]) from exc
        return {"sessionId": session.id}

    async def session_load(self, params: Any) -> Any:
        request = LoadSessionRequest.model_validate(params)
        # P7 repair and L5 re-admission happen in the load; the replay and then the
        # view's snapshot (subscribe) go out before `{}`.
        session = await self.host.load_session(request.session_id, self.client, subscribe=False)
        for method, body in replay(session.id, await session.history()):
            self.conn.notify(method, body)
        self.host.subscribe(self.client, session)
        return {}

    async def session_prompt(self, params: Any) -> Any:
        request = PromptRequest.model_validate(params)
        content = prompt_content(request)
        return {"stopReason": await self.host.prompt(request.session_id, content, self.client)}

    async def session_cancel(self, params: Any) -> None:
        try:
            request = CancelNotification.model_validate(params)
            self.relay.withdraw_forms(request.session_id)  # F4
            (await self._session(request.session_id)).cancel()
        except (ValidationError, HarnessError) as exc:  # a notification has no reply
            log.warning("session/cancel ignored: %s", exc)

    # -- _askbridge/* ---------------------------------------------------------------------

    async def attach_wait(self, params: Any) -> Any:
        p = parse_params(AcpAttachWaitParams, params)
        session = await self._session(p.session_id)
        remaining = await self.claims.attach(session, p.call_id)
        if remaining is not None:  # S12: who holds the wait
            log_claim(p.call_id, self.client.id, claimed=True)
        return AttachWaitResult(remaining_ms=remaining).dump()

    async def release_wait(self, params: Any) -> Any:
        p = parse_params(ReleaseWaitParams, params)
        session = await self._session(p.session_id)
        released = await self.claims.release(session, p.call_id)
        if released:
            log_claim(p.call_id, self.client.id, claimed=False)
        return ReleaseWaitResult(released=released).dump()

    async def answer(self, params: Any) -> Any:
        p = parse_params(AcpAnswerParams, params)
        accepted = await self.host.late_answers.answer_reply(
            p.session_id, p.call_id, p.answer, self.client
        )
        return AnswerResult(accepted=accepted).dump()

    async def withdraw_reply(self, params: Any) -> Any:
        p = parse_params(AcpWithdrawReplyParams, params)
        withdrawn = await self.host.withdraw_reply(p.session_id, p.call_id, self.client)
        return WithdrawReplyResult(withdrawn=withdrawn).dump()

    async def list_view(self, params: Any) -> Any:
        p = parse_params(AcpListParams, params)
        return (await self._session(p.session_id)).projection.view_dict()
