"""The LSP-framed front door: lifecycle, `session/*` and `userQuestions/*` (protocol.md v1).

Handlers translate, the host and the core decide: each handler parses its
params once (pydantic → -32602 with `data.errors`), calls the host, and
returns the wire result. Errors become wire errors in one place, the RPC
connection (`rpc.py`). Host events reach the client as `session/update` and
`userQuestions/didChange` notifications.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from askbridge import __version__
from askbridge.host.agent.session import Session
from askbridge.host.asking.external_followers import follow_external
from askbridge.host.asking.question_log import log_claim
from askbridge.host.host import Host
from askbridge.host.options import merge_settings, session_settings
from askbridge.jsonrpc import Connection
from askbridge.protocol.parsing import parse_params
from askbridge.protocol.questions import (
    AnswerParams,
    AttachWaitParams,
    ListParams,
    WithdrawReplyParams,
)
from askbridge.protocol.session import (
    InitializationOptions,
    SessionCancelParams,
    SessionLoadParams,
    SessionNewParams,
    SessionPromptParams,
    lsp_client_renders_questions,
    server_experimental_capabilities,
)

from .relay import LspRelay

log = logging.getLogger("askbridge.lsp")

SERVER_NOT_INITIALIZED = -32002


class LspServer:
    def __init__(
        self,
        host: Host,
        conn: Connection,
        on_exit: Callable[[], None] | None = None,
        env: Mapping[str, str] | None = None,
        defaults: dict[str, Any] | None = None,
    ) -> None:
        self.host = host
        self._on_exit = on_exit
        self.conn = conn
        self.relay = LspRelay(conn, host)
        self.client = host.attach(self.relay, env, "lsp")
        self.relay.client = self.client
        self.shutdown_requested = False
        self.exit_code: int | None = None
        # S9: this client's `session/prompt` requests still running, by session; each
        # event is set when its handler returns, i.e. as its reply is queued.
        self._prompts: dict[str, list[asyncio.Event]] = {}
        self._flags: dict[str, Any] = defaults or {}  # the front door's flags
        self._defaults: dict[str, Any] = {}  # this client's initializationOptions
        for method, handler in {
            "initialize": self.initialize,
            "shutdown": self.shutdown,
            "session/new": self.session_new,
            "session/load": self.session_load,
            "session/list": self.session_list,
            "session/prompt": self.session_prompt,
            "userQuestions/attachWait": self.attach_wait,
            "userQuestions/answer": self.answer,
            "userQuestions/withdrawReply": self.withdraw_reply,
            "userQuestions/list": self.list_view,
        }.items():
            conn.on_request(method, handler)
        conn.on_notification("initialized", self._ignore)
        conn.on_notification("exit", self.exit)
        conn.on_notification("session/cancel", self.session_cancel)

    # -- lifecycle ------------------------------------------------------------------------

    async def initialize(self, params: Any) -> Any:
        params = params if isinstance(params, dict) else {}
        caps = _object(params.get("capabilities"))
        self.relay.renders_questions = lsp_client_renders_questions(caps.get("experimental"))
        self.relay.work_done_progress = _object(caps.get("window")).get("workDoneProgress") is True
        if self.relay.renders_questions:
            # M1: every external (MCP) session — once the InitializeResult is queued: its
            # open cards are asked at once, and LSP allows no server request before it.
            asyncio.get_running_loop().call_soon(self._follow_external)
        options = params.get("initializationOptions")
        if options is not None:
            opts = parse_params(
                InitializationOptions, options, field_prefix="initializationOptions"
            )
            self._defaults = session_settings(opts.model, opts.ask_user_question)
        return {
            "capabilities": {"experimental": server_experimental_capabilities()},
            "serverInfo": {"name": "askbridge", "version": __version__},
        }

    def _follow_external(self) -> None:
        if self.client.attached and not self.shutdown_requested:
            follow_external(self.host, self.client)

    async def shutdown(self, params: Any) -> None:
        """After shutdown every outstanding question request is cancelled ($/cancelRequest).

        S9: every `session/prompt` still running is answered first: its turn ends
        `cancelled` as when the client leaves (M6) and shutdown's result waits for that.
        The connection queues a handler's reply in the same step the handler returns,
        so the prompt's reply is written before this one.
        """
        self.shutdown_requested = True
        self.conn.refuse_requests("the server is shutting down: only exit is accepted")  # S9
        self.relay.cancel_outstanding()
        running = [(sid, done) for sid, events in self._prompts.items() for done in events]
        for session_id in {sid for sid, _ in running}:
            try:
                # As when the client goes (M6): the turn ends `cancelled`, its open
                # questions stay answerable (continued, P3) instead of being aborted.
                (await self._session(session_id)).abandon()
            except Exception as exc:  # the prompt answers by itself; shutdown still does
                log.warning("cancelling session %s at shutdown: %s", session_id, exc)
        for _, done in running:
            await done.wait()
        return None

    async def exit(self, params: Any) -> None:
        self.exit_code = 0 if self.shutdown_requested else 1
        if self._on_exit is not None:
            self._on_exit()

    async def _ignore(self, params: Any) -> None:
        return None

    # -- sessions -------------------------------------------------------------------------

    async def _session(self, session_id: str) -> Session:
        """The session, loaded first if needed; this client follows it from now on (M1)."""
        return await self.host.get_session(session_id, self.client)

    async def session_new(self, params: Any) -> Any:
        p = parse_params(SessionNewParams, params if params is not None else {})
        given = session_settings(p.model, p.ask_user_question)
        settings = merge_settings(self._flags, self._defaults, given)
        session = await self.host.new_session(self.client, cwd=p.cwd, **settings)
        return {"sessionId": session.id}

    async def session_load(self, params: Any) -> Any:
        p = parse_params(SessionLoadParams, params)
        await self.host.load_session(p.session_id, self.client)  # sends the snapshot (S2)
        return {}

    async def session_list(self, params: Any) -> Any:
        sessions = []
        for info in await self.host.list_sessions():
            entry: dict[str, Any] = {
                "sessionId": info.session_id,
                "createdAt": info.created_at,
                "origin": info.origin,
            }
            if info.title:
                entry["title"] = info.title
            sessions.append(entry)
        return {"sessions": sessions}

    async def session_prompt(self, params: Any) -> Any:
        p = parse_params(SessionPromptParams, params)
        content = [c.dump() for c in p.prompt]
        done = asyncio.Event()
        running = self._prompts.setdefault(p.session_id, [])
        running.append(done)
        try:
            return {"stopReason": await self.host.prompt(p.session_id, content, self.client)}
        finally:
            running.remove(done)
            if not running:
                del self._prompts[p.session_id]
            done.set()

    async def session_cancel(self, params: Any) -> None:
        try:
            p = parse_params(SessionCancelParams, params)
            (await self._session(p.session_id)).cancel()
        except Exception as exc:  # a notification has no reply: log and go on
            log.warning("session/cancel ignored: %s", exc)

    # -- questions ------------------------------------------------------------------------

    async def attach_wait(self, params: Any) -> None:
        """C1–C5: one `$/progress {remainingMs}`, then held open until the wait ends."""
        p = parse_params(AttachWaitParams, params)
        session = await self._session(p.session_id)
        team = self.host.team
        if team is not None and team.claims.holds(session):  # G7: its owner's deadline

            def progress(remaining_ms: int) -> None:
                log_claim(p.call_id, self.client.id, claimed=True)
                value = {"remainingMs": remaining_ms}
                self.conn.notify("$/progress", {"token": p.partial_result_token, "value": value})

            try:
                await team.claims.hold(session, p.call_id, self.client, progress)
            finally:
                log_claim(p.call_id, self.client.id, claimed=False)
            return None
        stream = self.host.service.attach_wait(session.agent.id, p.call_id, self.client.gone)
        claimed = stream.claimed
        if claimed:  # S12: who holds the wait, and when it lets go
            log_claim(p.call_id, self.client.id, claimed=True)
        try:
            async with stream:
                async for frame in stream:
                    self.conn.notify(
                        "$/progress", {"token": p.partial_result_token, "value": frame.dump()}
                    )
        finally:
            if claimed:
                log_claim(p.call_id, self.client.id, claimed=False)
        return None

    async def answer(self, params: Any) -> bool:
        p = parse_params(AnswerParams, params)
        return await self.host.late_answers.answer_reply(
            p.session_id, p.call_id, p.answer, self.client
        )

    async def withdraw_reply(self, params: Any) -> bool:
        p = parse_params(WithdrawReplyParams, params)
        return await self.host.withdraw_reply(p.session_id, p.call_id, self.client)

    async def list_view(self, params: Any) -> Any:
        p = parse_params(ListParams, params)
        return (await self._session(p.session_id)).projection.view_dict()

    def close(self) -> None:
        """The client is gone (exit or end of input): the host lets it go (M4, M6)."""
        self.host.detach(self.client)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


__all__ = ["LspServer"]
