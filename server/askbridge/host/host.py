"""The Host: a data directory's sessions, the clients attached to them, the question service.

One Host per data directory (H1); every front door attaches its clients to it
(`attach(link, env)`; asking/clients.py). Clients create, list and load any root
session (M1) and follow the sessions they created or loaded; the host tells
followers what each commit changed (asking/publishing.py), asks them the
session's questions (asking/fanout.py, M2–M4), and takes late replies from any of
them (L, M5: asking/late_answers.py; agent/late_replies.py decides). When a
session's last follower leaves it behaves as at end of input: its turn ends, open
questions stay answerable (M6); a session nobody follows and no turn runs is
unloaded after `unload_after` seconds (S10, agent/unloading.py). An MCP
connection's session is a Session that runs no turn, inside an agent/external_sessions.py
ExternalSession (`externals`); the MCP door opens it and has it followed.

The host wires the rooms: the agent room reaches it through agent/ports.py's
SessionHost, the asking room through the protocols and callables it is given
(the fan-out's `asks_here` and `requester`, asking/external_followers.py's Subscribes,
late_answers.py's `take`); neither room imports the other.

Use it as an async context manager: its task group owns every turn and the
group commit's committer (store/commits.py; `frames` are the doors' writers it
holds while telling a commit, daemon/bootstrap.py). Leaving it first ends every
turn as if its followers had left (results recorded, questions continued),
stops the committer once it has committed what is pending, then cancels what is
left, closes every wait and commits what they logged.
`publisher.add_listener` registers an observer of every root session's updates and
view changes (embedders, tests); `on_fatal` is called once with exit status 1 when
the data directory is lost under the host (S5).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

import anyio
from anyio.abc import TaskGroup

from askbridge.core import Clock, StoreLost, UserQuestionService
from askbridge.protocol.defaults import ASK_MODE_DEFAULT, ASK_TIMEOUT_DEFAULT_SECONDS
from askbridge.protocol.vocabulary import ProjectionView

from .agent.agents import Agent, AgentRegistry
from .agent.delegation import DelegationLimits
from .agent.external_sessions import ExternalSessions
from .agent.late_replies import LateReplies
from .agent.opening import create_session, new_header, open_stored
from .agent.session import Session
from .agent.turn_ends import TurnEnds
from .agent.unloading import Unloader
from .asking.clients import Client, ClientLink, Subscribers
from .asking.external_followers import follow_external
from .asking.fanout import QuestionFanout
from .asking.late_answers import LateAnswers
from .asking.publishing import Publisher
from .log import events as ev
from .options import merge_settings
from .store.commits import FrameBatch, GroupCommit
from .store.store_api import EventStore, SessionInfo
from .team_sessions import TeamSessions, team_store_of

log = logging.getLogger("askbridge.host")

UNLOAD_AFTER_S = 60.0


class Host:
    def __init__(
        self,
        store: EventStore,
        *,
        model: dict[str, Any] | None = None,
        ask_user_question: dict[str, Any] | None = None,
        clock: Clock | None = None,
        max_turn_requests: int = 1000,
        delegation: dict[str, int] | None = None,
        unload_after: float = UNLOAD_AFTER_S,
        frames: FrameBatch | None = None,
    ) -> None:
        self.store = store
        self.commits = GroupCommit(store, self.store_lost, frames)
        self.default_model: dict[str, Any] = model or {"kind": "none"}  # UnconfiguredModel
        self.default_ask: dict[str, Any] = ask_user_question or {
            "mode": ASK_MODE_DEFAULT,
            "timeout": ASK_TIMEOUT_DEFAULT_SECONDS,
        }
        self.max_turn_requests = max_turn_requests
        self.delegation_limits = DelegationLimits.of(delegation)  # S16
        self.registry = AgentRegistry()
        self.service = UserQuestionService(self.registry, clock)
        self.late_replies = LateReplies(self.get_session)
        self.service.set_late_reply_handler(self.late_replies)
        self.sessions: dict[str, Session] = {}
        self.externals = ExternalSessions(self)  # MCP connections
        self.clients: dict[int, Client] = {}
        self.subscribers = Subscribers()
        self.publisher = Publisher(self.subscribers)
        self.late_answers = LateAnswers(
            self.late_replies.take, self.spawn, lambda: self._tg is not None
        )
        self.fanout = QuestionFanout(self.subscribers, self._asks_here, self._requester, self.spawn)
        self.service.register(self.fanout.listener)  # first: the host answers every ask
        self.on_fatal: Callable[[int], None] | None = None
        self.unloader = Unloader(self.sessions, self.registry, self.subscribers.count, unload_after)
        self._lost = False
        self.turn_ends = TurnEnds(self.sessions)
        self._loading: dict[str, anyio.Event] = {}  # sessions being read from the store
        self._tg: TaskGroup | None = None
        # On the team store: the sessions this host runs and the replicas of others' (G4, G5).
        team_store = team_store_of(store)
        self.team = TeamSessions(self, team_store) if team_store is not None else None

    # -- lifecycle ------------------------------------------------------------------------

    async def __aenter__(self) -> Host:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self.commits.run)
        self._tg.start_soon(self._every_second)
        if self.team is not None:  # listening and lease renewal, before any session opens
            await self._tg.start(self.team.serve)
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
        await self.turn_ends.all_done()
        with anyio.CancelScope(shield=True):  # never cancelled while a commit is awaited
            await self.commits.close()
        self._tg.cancel_scope.cancel()
        for session in list(self.sessions.values()):
            session.release_prompts()  # callers awaiting `prompt` live outside our task group
        self.service.shutdown()
        try:
            return await self._tg.__aexit__(*exc)
        finally:
            self._tg = None
            with anyio.CancelScope(shield=True):
                await self.commits.flush()  # what the last turns logged is durable now

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
                    self.unloader.idle(session)
                    self.turn_ends.ending(session)
        log.info("client %s detached", client.id)

    def subscribe(self, client: Client | None, session: Session, *, snapshot: bool = True) -> None:
        """`client` follows `session` from now on: its view's snapshot first (S2), then
        every question open in it (M3)."""
        if client is None or not client.attached or not session.is_root:
            return
        if not self.subscribers.add(client, session.id):
            return
        self.unloader.busy(session.id)
        if snapshot:
            client.link.send_view_changes(session.id, session.projection.snapshot())
        self.fanout.offer(client, session.id)

    def _asks_here(self, session_id: str) -> bool:
        session = self.sessions.get(session_id)
        return session is not None and session.is_root

    def _requester(self, session_id: str) -> Client | None:
        """Whose prompt (or late reply) started the session's running turn, if a client's."""
        session = self.sessions.get(session_id)
        client = session.turn_client if session is not None else None
        return client if isinstance(client, Client) else None

    # -- sessions -------------------------------------------------------------------------

    async def new_session(
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
        delegation: dict[str, int] | None = None,
    ) -> Session:
        """Create a session; its header is committed before this returns (D1)."""
        spec = model or self.default_model
        ask = merge_settings(
            {"ask_user_question": self.default_ask}, {"ask_user_question": ask_user_question}
        )["ask_user_question"]
        header = new_header(
            model=spec, ask=ask, cwd=cwd, origin=origin, parent=parent, parent_agent=parent_agent
        )
        env = client.env if client is not None else os.environ
        session = await create_session(self, header, env)
        if self.team is not None:
            await self.team.own(session)  # G4: its creator runs it
        session.max_turn_requests = max_turn_requests or self.max_turn_requests
        if delegation is not None:  # a front door's --delegation-limits
            session.delegation_limits = DelegationLimits.of(delegation)
        self.subscribe(client, session, snapshot=False)  # nothing to show yet
        return session

    async def get_session(self, session_id: str, client: Client | None = None) -> Session:
        """The session, loaded first if needed (lazy loading); `client` follows it (M1)."""
        session = self.sessions.get(session_id)
        if session is None or session_id in self._loading:
            return await self.load_session(session_id, client)
        self.subscribe(client, session)
        return session

    async def load_session(
        self, session_id: str, client: Client | None = None, *, subscribe: bool = True
    ) -> Session:
        """Resume a stored root session: P7 repair, then re-admit queued replies (L5). One
        load of a session at a time: another caller meanwhile gets the same Session."""
        while (loading := self._loading.get(session_id)) is not None:
            await loading.wait()
        loaded = self.sessions.get(session_id)
        if loaded is not None:
            if subscribe:
                self.subscribe(client, loaded)
            return loaded
        env = client.env if client is not None else os.environ
        self._loading[session_id] = loading = anyio.Event()
        try:
            if self.team is not None:  # G4, G5: run here, or a replica of another host's
                session = await self.team.open(session_id, env, self.default_ask)
            else:
                session = await open_stored(self, session_id, env, self.default_ask)
        finally:
            del self._loading[session_id]
            loading.set()
        if subscribe:
            self.subscribe(client, session)
        session.wake()
        if client is None:
            self.unloader.idle(session)
        return session

    async def list_sessions(self) -> list[SessionInfo]:
        stored = await self.store.list_sessions()
        return [info for info in stored if info.origin in ev.ROOT_ORIGINS]

    def unload(self, session: Session) -> None:
        """Forget a loaded session now: the next method that names it loads it again."""
        self.registry.unregister(session.agent)
        if self.sessions.get(session.id) is session:
            del self.sessions[session.id]

    def session_idle(self, session: Session) -> None:
        """A session's turns are done: unload it later if nobody follows it (S10)."""
        if self.subscribers.count(session.id) == 0:
            self.unloader.idle(session)
        self.turn_ends.idle(session)

    async def _every_second(self) -> None:
        """S10, and S5 while idle: a deleted data directory is noticed within a second."""
        check_not_lost = getattr(self.store, "check_not_lost", None)
        while True:
            await anyio.sleep(self.unloader.interval)
            if check_not_lost is not None:
                try:
                    check_not_lost()
                except StoreLost as exc:
                    self.store_lost(exc)
            self.unloader.sweep()

    # -- prompts --------------------------------------------------------------------------

    async def prompt(
        self, session_id: str, content: list[dict[str, Any]], client: Client | None = None
    ) -> str:
        session = await self._runnable(session_id, client)
        queued = session.enqueue_prompt(content, client)
        await queued.done.wait()
        if queued.error is not None:
            raise queued.error
        return queued.stop_reason

    async def steer(self, session_id: str, text: str, client: Client | None = None) -> None:
        """Steer the running agent: a user message admitted at its next step boundary
        (durable as an inbox event); an idle agent wakes into a new turn for it."""
        await (await self._runnable(session_id, client)).steer(text, client)

    async def cancel(self, session_id: str, client: Client | None = None) -> None:
        (await self._runnable(session_id, client)).cancel()

    async def _runnable(self, session_id: str, client: Client | None) -> Session:
        """The session, for prompt, steer or cancel: SessionFenced naming the host that runs
        it when it is another host's replica here (G4)."""
        session = await self.get_session(session_id, client)
        if self.team is not None:
            self.team.refuse(session)
        return session

    # -- late replies (L5; taking them: asking/late_answers.py) ---------------------------

    async def withdraw_reply(
        self, session_id: str, call_id: str, client: Client | None = None
    ) -> bool:
        session = await self.get_session(session_id, client)
        return await session.withdraw_reply(call_id)  # L5

    async def view(self, session_id: str, client: Client | None = None) -> ProjectionView:
        return (await self.get_session(session_id, client)).projection.view()
