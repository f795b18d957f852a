"""The Host: a data directory's sessions, the clients attached to them, the question service.

One Host per data directory (H1); every front door attaches its clients to it
(`attach(link, env)`; clients.py). Clients create, list and load any root
session (M1) and follow the sessions they created or loaded; the host tells
followers what each commit changed (`publish`, host/log/updates.py), asks them the
session's questions (fanout.py, M2–M4), and takes late replies from any of
them (L, M5). When a session's last follower leaves it behaves as at end of
input: its turn ends, open questions stay answerable (M6); a session nobody
follows and no turn runs is unloaded after `unload_after` seconds (S10).

Use it as an async context manager: its task group owns every turn. Leaving
it first ends every turn as if its followers had left (results recorded,
questions continued), then cancels what is left and closes every wait.
`add_listener` registers an observer of every root session's updates and view
changes (embedders, tests); `on_fatal` is called once with exit status 1 when
the data directory is lost under the host (S5).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

import anyio
from anyio.abc import TaskGroup

from askbridge.core import (
    Clock,
    SessionError,
    StoreLost,
    UserQuestionError,
    UserQuestionService,
    check_answer,
    tool_outcome_unknown,
)
from askbridge.protocol.defaults import ASK_MODE_DEFAULT, ASK_TIMEOUT_DEFAULT_SECONDS
from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.vocabulary import Answer, AnswerItem, ProjectionView, QuestionItem

from .agent.agents import Agent, AgentRegistry, new_id
from .agent.models.base import Model
from .agent.session import Session
from .agent.tools import AskUserQuestionTool, ToolOutcome, reply_text
from .asking.clients import Client, ClientLink, Subscribers, publish
from .asking.fanout import QuestionFanout
from .log import events as ev
from .options import merge_settings
from .store.commits import GroupCommit
from .store.store_api import EventStore, SessionInfo

log = logging.getLogger("askbridge.host")

UNLOAD_AFTER_S = 60.0
# How long leaving the host waits for turns to record their end (M6) before cancelling.
STOP_GRACE_S = 5.0


class HostListener(Protocol):
    def on_update(self, session_id: str, update: dict[str, Any]) -> None: ...

    def on_view_changes(self, session_id: str, changes: list[dict[str, Any]]) -> None: ...


def make_model(spec: dict[str, Any], env: Mapping[str, str]) -> Model:
    """`models.factory.make_model`, imported on first use: the OpenAI adapter pulls in
    httpx, which `askbridge serve` should not pay for before answering `initialize`."""
    from .agent.models.factory import make_model as make

    return make(spec, env)


def _now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class Host:
    def __init__(
        self,
        store: EventStore,
        *,
        model: dict[str, Any] | None = None,
        ask_user_question: dict[str, Any] | None = None,
        clock: Clock | None = None,
        max_turn_requests: int = 1000,
        unload_after: float = UNLOAD_AFTER_S,
    ) -> None:
        self.store = store
        self.commits = GroupCommit(store, self.store_lost)
        self.default_model: dict[str, Any] = model or {"kind": "none"}  # UnconfiguredModel
        self.default_ask: dict[str, Any] = ask_user_question or {
            "mode": ASK_MODE_DEFAULT,
            "timeout": ASK_TIMEOUT_DEFAULT_SECONDS,
        }
        self.max_turn_requests = max_turn_requests
        self.unload_after = unload_after
        self.registry = AgentRegistry()
        self.service = UserQuestionService(self.registry, clock)
        self.service.set_late_reply_handler(self)
        self.sessions: dict[str, Session] = {}
        self.clients: dict[int, Client] = {}
        self.subscribers = Subscribers()
        self.fanout = QuestionFanout(self)
        self.service.register_soon(self.fanout.ask_soon)  # first: every ask is a record
        self.on_fatal: Callable[[int], None] | None = None
        self._listeners: list[HostListener] = []
        self._idle_since: dict[str, float] = {}
        self._lost = False
        self._turns_done: anyio.Event | None = None  # set while leaving, once no turn runs
        self._ending: set[Session] = set()  # turns ended by a detach, not yet recorded
        self._ended = anyio.Event()
        self._tg: TaskGroup | None = None

    # -- lifecycle ------------------------------------------------------------------------

    async def __aenter__(self) -> Host:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._unload_idle_sessions)
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        assert self._tg is not None
        # As at end of input (M6): every turn ends, recording its cut-off asks as
        # outcome-unknown (continued, P3); what does not end in time is cancelled, and
        # the next load repairs it the same way (P7).
        for client in list(self.clients.values()):
            self.detach(client)
        for session in list(self.sessions.values()):
            session.abandon()
        if any(s.running for s in self.sessions.values()):
            self._turns_done = anyio.Event()
            with anyio.move_on_after(STOP_GRACE_S, shield=True):
                await self._turns_done.wait()
        self._tg.cancel_scope.cancel()
        for session in list(self.sessions.values()):
            session.release_prompts()  # callers awaiting `prompt` live outside our task group
        self.service.shutdown()
        try:
            return await self._tg.__aexit__(*exc)
        finally:
            self._tg = None
            self.commits.flush()  # what the last turns logged is durable before we return

    def spawn(self, fn: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        if self._tg is None:
            raise RuntimeError("the host is not running (use `async with Host(...)`)")
        self._tg.start_soon(fn)

    def store_lost(self, exc: StoreLost) -> None:
        """S5: the data directory is gone: stop acknowledging, tell every client, exit 1."""
        if self._lost:
            return
        self._lost = True
        log.critical("%s", exc.message)
        for client in list(self.clients.values()):
            client.link.notify_fatal(exc)
        if self.on_fatal is not None:
            self.on_fatal(1)

    # -- clients (M1–M7) ------------------------------------------------------------------

    def attach(
        self, link: ClientLink, env: Mapping[str, str] | None = None, door: str = "lsp"
    ) -> Client:
        client = Client(link, dict(os.environ) if env is None else env, door)
        self.clients[client.id] = client
        log.info("client %s attached (%s)", client.id, door)
        from .asking.external import follow_external

        follow_external(self, client)  # M1/X1; a door that learns later (LSP) calls it then
        return client

    def detach(self, client: Client) -> None:
        """The client is gone: its claims end (M4); sessions it was the last to follow end
        their turns as at end of input (M6)."""
        if self.clients.pop(client.id, None) is None:
            return
        client.gone.abort("detached")
        for session_id in list(client.sessions):
            if self.subscribers.remove(client, session_id):
                session = self.sessions.get(session_id)
                if session is not None:
                    session.abandon()
                    self._mark_idle(session)
                    if session.running:
                        self._ending.add(session)
        log.info("client %s detached", client.id)

    async def settle(self) -> None:
        """Wait (at most STOP_GRACE_S) until the turns ended by detaches have recorded their
        end, so that what a departed client caused is durable before its front door exits."""
        with anyio.move_on_after(STOP_GRACE_S, shield=True):
            while self._ending:
                self._ended = anyio.Event()
                await self._ended.wait()

    def subscribe(self, client: Client | None, session: Session, *, snapshot: bool = True) -> None:
        """`client` follows `session` from now on: its view's snapshot first (S2), then
        every question open in it (M3)."""
        if client is None or not client.attached or not session.is_root:
            return
        if not self.subscribers.add(client, session.id):
            return
        self._idle_since.pop(session.id, None)
        if snapshot:
            client.link.send_view_changes(session.id, session.projection.snapshot())
        self.fanout.offer(client, session.id)

    def publish(
        self, session: Session, events: Sequence[ev.Event], changes: list[dict[str, Any]]
    ) -> None:
        from .log.updates import updates_for

        updates = updates_for(events)
        if not updates and not changes:
            return
        publish(self.subscribers.of(session.id), session, updates, changes)
        for listener in list(self._listeners):
            if changes:
                listener.on_view_changes(session.id, changes)
            for update in updates:
                listener.on_update(session.id, update)

    def add_listener(self, listener: HostListener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # -- sessions -------------------------------------------------------------------------

    def new_session(
        self,
        client: Client | None = None,
        *,
        cwd: str | None = None,
        model: dict[str, Any] | None = None,
        ask_user_question: dict[str, Any] | None = None,
        origin: str = "root",
        parent: Session | None = None,
        parent_agent: Agent | None = None,
        max_turn_requests: int | None = None,
    ) -> Session:
        """Create a session; its header is committed before this returns (D1)."""
        spec = model or self.default_model
        ask = merge_settings(
            {"ask_user_question": self.default_ask}, {"ask_user_question": ask_user_question}
        )["ask_user_question"]
        env = client.env if client is not None else os.environ
        model_obj = make_model(spec, env)
        check = getattr(model_obj, "check", None)
        if callable(check):
            check()  # ModelError (MODEL_ERROR) for a missing API key
        session_id, agent_id = new_id("s"), new_id("a")
        header = ev.session_header(
            session_id=session_id,
            agent_id=agent_id,
            origin="subagent" if origin == "subagent" else "root",
            cwd=cwd or os.getcwd(),
            model=spec,
            ask_user_question=ask,
            created_at=_now_iso(),
            parent_session_id=parent.id if parent else None,
            parent_agent_id=parent_agent.id if parent_agent else None,
        )
        tool = AskUserQuestionTool(
            self.service,
            ask.get("mode", ASK_MODE_DEFAULT),
            ask.get("timeout", ASK_TIMEOUT_DEFAULT_SECONDS),
        )
        self.store.create_session(header)
        agent = Agent(
            agent_id, session_id, header["origin"], parent_agent.id if parent_agent else None
        )
        session = Session(self, header, [header], agent, model_obj, tool)
        session.max_turn_requests = max_turn_requests or self.max_turn_requests
        self.registry.register(agent)
        self.sessions[session_id] = session
        self.subscribe(client, session, snapshot=False)  # nothing to show yet
        return session

    def get_session(self, session_id: str, client: Client | None = None) -> Session:
        """The session, loaded first if needed (lazy loading); `client` follows it (M1)."""
        session = self.sessions.get(session_id)
        if session is None:
            session = self.load_session(session_id, client)
        else:
            self.subscribe(client, session)
        return session

    def load_session(
        self, session_id: str, client: Client | None = None, *, subscribe: bool = True
    ) -> Session:
        """Resume a stored root session: P7 repair, then re-admit queued replies (L5)."""
        loaded = self.sessions.get(session_id)
        if loaded is not None:
            if subscribe:
                self.subscribe(client, loaded)
            return loaded
        if not self.store.exists(session_id):
            raise SessionError.unknown(session_id)
        events = self.store.load(session_id)
        header = events[0]
        if header.get("origin") not in ev.ROOT_ORIGINS:
            raise SessionError.unknown(session_id)
        session: Session
        if header["origin"] == ev.EXTERNAL_ORIGIN:  # no model to build, no turn to run (X1)
            from .asking.external import load_external_session

            session = load_external_session(self, header, events)
        else:
            ask = header.get("askUserQuestion") or self.default_ask
            mode = ask.get("mode", ASK_MODE_DEFAULT)
            timeout = ask.get("timeout", ASK_TIMEOUT_DEFAULT_SECONDS)
            tool = AskUserQuestionTool(self.service, mode, timeout)
            env = client.env if client is not None else os.environ
            # A fresh instance: origin decides, so a resumed root agent asks normally (A4).
            agent = Agent(header["agentId"], session_id, "root")
            session = Session(self, header, events, agent, make_model(header["model"], env), tool)
            session.max_turn_requests = self.max_turn_requests
            self.registry.register(agent)
            self.sessions[session_id] = session
        repairs: list[ev.Event] = []
        for call_id, name in session.unanswered_calls():
            failure = ToolOutcome.failure(tool_outcome_unknown())
            repairs.append(
                ev.tool_result(call_id, name, failure.content, is_error=True, error=failure.error)
            )
        open_turn = session.open_turn
        if open_turn is not None:
            repairs.append(ev.turn_end(open_turn, "cancelled"))
        if repairs:
            # No client follows the session yet: whoever loads it gets the snapshot next.
            session.log(*repairs, publish=False)
        if subscribe:
            self.subscribe(client, session)
        session.wake()
        if client is None:
            self._mark_idle(session)
        return session

    def list_sessions(self) -> list[SessionInfo]:
        return [info for info in self.store.list_sessions() if info.origin in ev.ROOT_ORIGINS]

    def session_idle(self, session: Session) -> None:
        """A session's turns are done: unload it later if nobody follows it (S10)."""
        if self.subscribers.count(session.id) == 0:
            self._mark_idle(session)
        if self._turns_done is not None and not any(s.running for s in self.sessions.values()):
            self._turns_done.set()
        if session in self._ending:
            self._ending.discard(session)
            self._ended.set()

    def _mark_idle(self, session: Session) -> None:
        self._idle_since.setdefault(session.id, time.monotonic())

    async def _unload_idle_sessions(self) -> None:
        """S10, and S5 while idle: a deleted data directory is noticed within a second."""
        check_not_lost = getattr(self.store, "check_not_lost", None)
        while True:
            await anyio.sleep(min(1.0, max(0.05, self.unload_after / 2)))
            if check_not_lost is not None:
                try:
                    check_not_lost()
                except StoreLost as exc:
                    self.store_lost(exc)
            now = time.monotonic()
            for session_id, since in list(self._idle_since.items()):
                session = self.sessions.get(session_id)
                if session is None or self.subscribers.count(session_id) or session.running:
                    self._idle_since.pop(session_id, None)
                    continue
                if now - since >= self.unload_after:
                    self._unload(session)

    def _unload(self, session: Session) -> None:
        self._idle_since.pop(session.id, None)
        if session.running or self.subscribers.count(session.id):
            return
        self.registry.unregister(session.agent)
        del self.sessions[session.id]
        log.debug("unloaded session %s", session.id)

    # -- external sessions (X1, host/asking/external.py) -----------------------------------------

    # -- prompts --------------------------------------------------------------------------

    async def prompt(
        self, session_id: str, content: list[dict[str, Any]], client: Client | None = None
    ) -> str:
        session = self.get_session(session_id, client)
        queued = session.enqueue_prompt(content, client)
        await queued.done.wait()
        if queued.error is not None:
            raise queued.error
        return queued.stop_reason

    def steer(self, session_id: str, text: str, client: Client | None = None) -> None:
        """Steer the running agent: a user message admitted at its next step boundary
        (durable as an inbox event); an idle agent wakes into a new turn for it."""
        self.get_session(session_id, client).steer(text, client)

    def cancel(self, session_id: str, client: Client | None = None) -> None:
        self.get_session(session_id, client).cancel()

    # -- late replies (L1–L6) -------------------------------------------------------------

    async def answer(
        self, agent_id: str, session_id: str, call_id: str, batch: Sequence[AnswerItem]
    ) -> bool:
        session = self.get_session(session_id)
        if session.agent.id != agent_id:
            return False
        active = session.projection.entry(call_id)
        if active is None or active.state != "continued":
            return False  # L1
        if session.inbox.queued_reply(call_id) is not None:
            raise UserQuestionError.of(ErrorCode.REPLY_QUEUED)  # L2, before BAD_ANSWER
        questions = [QuestionItem.model_validate(q) for q in active.questions]
        checked = check_answer(questions, Answer(answers=list(batch)), call_id)  # L3, V8
        text = reply_text(
            call_id, [q.dump() for q in questions], [a.dump() for a in checked.answers]
        )
        session.enqueue_reply(call_id, text)  # L4: committed before True
        return True

    async def answer_reply(
        self, session_id: str, call_id: str, answer: Answer, client: Client | None = None
    ) -> bool:
        session = self.get_session(session_id, client)
        # Decided here, where the session is: not through the core and back (L1–L6).
        accepted = await self.answer(session.agent.id, session_id, call_id, answer.answers)
        log.info(  # S12: who answered a pending question, and whether it was taken
            "late reply to %s from %s %s",
            call_id,
            f"client {client.id}" if client is not None else "a caller",
            "taken" if accepted else "dropped (not pending: answered, withdrawn or unknown)",
        )
        if accepted and client is not None:
            session.inbox_client = client  # the turn it wakes asks through this client's fallback
        return accepted

    def late_answer(self, client: Client, session_id: str, call_id: str, answer: Answer) -> None:
        """L7: a client answered a card the server had withdrawn; a late reply if the
        question went pending and the answer is valid, else dropped and logged."""

        async def deliver() -> None:
            try:
                accepted = await self.answer_reply(session_id, call_id, answer, client)
            except UserQuestionError as exc:
                log.info("late answer to %s dropped: %s", call_id, exc.message)
                return
            log.info(
                "late answer to %s %s", call_id, "taken as a late reply" if accepted else "dropped"
            )

        if self._tg is not None:
            self.spawn(deliver)

    def withdraw_reply(self, session_id: str, call_id: str, client: Client | None = None) -> bool:
        return self.get_session(session_id, client).withdraw_reply(call_id)  # L5

    def view(self, session_id: str, client: Client | None = None) -> ProjectionView:
        return self.get_session(session_id, client).projection.view()

    # -- delegate (T7, T8) ----------------------------------------------------------------

