"""A host's sessions on the team store: the ones it runs, and replicas of the others (G4, G5).

Only a Host whose store is the team store (it can `own` a session and `serve` its
listening: store_postgres.py) has one; on SQLite nothing here runs.

- `serve` runs the store's listening and lease renewal (pg_team.py) in the host's task
  group, and reads what every hint says is new in a replica (`load_since`).
- `open(session_id)`: a window loads a session. This host takes its lease first (G4:
  the host that opens a session runs it), then folds and repairs it as after a restart
  (P7). When another live host holds the lease, the session opens as a read-only
  replica: folded as stored, never repaired, no turn runs here; every event the owner
  commits later is read after its hint and folded and published to this host's
  followers exactly as a commit of its own (M1-M3, G5). Prompt, cancel and steer on
  a replica are refused with SessionFenced naming the host that runs it (`refuse`).
- `own(session)`: a session this host created is its own (G4), and it hears when it is
  lost.
- Lost (another host took the session over after its lease lapsed): its turn ends as at
  end of input (M6), each follower is told in one line which host runs it now, and it
  is unloaded; a window that loads it again gets a replica.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from askbridge.core import SessionError

from .agent.opening import open_folded, repair
from .agent.ports import SessionHost
from .agent.session import Session
from .asking.clients import Subscribers
from .log import events as ev
from .log.updates import agent_message_chunk
from .store.team_records import Ownership, SessionFenced
from .team_claims import TeamClaims
from .team_questions import Asking, TeamQuestions

log = logging.getLogger("askbridge.host")

Lost = Callable[[SessionFenced], None]  # pg_leases.Lost, named without the driver (G1)


class Hosting(Asking, SessionHost, Protocol):
    """What this module needs of host.py's Host."""

    @property
    def subscribers(self) -> Subscribers: ...

    def unload(self, session: Session) -> None: ...


class TeamStore(Protocol):
    """What this module needs of the team store (store_postgres.PostgresEventStore)."""

    team: Any  # pg_team.Team: its follower's hints
    where: str  # the store, as messages name it (no password)

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None] = ...) -> None: ...

    async def own(self, session_id: str, lost: Lost | None = None) -> Ownership: ...

    async def release(self, session_id: str) -> None: ...

    async def load_since(self, session_id: str, after_seq: int) -> list[ev.Event]: ...


def team_store_of(store: object) -> TeamStore | None:
    """The store as a team store, or None for a solo one (SQLite, memory)."""
    has = all(callable(getattr(store, name, None)) for name in ("serve", "own", "load_since"))
    return store if has and hasattr(store, "team") else None  # type: ignore[return-value]


@dataclass(eq=False)
class Replica:
    """A session another host runs, followed here: who runs it, and the last event read."""

    session: Session
    owner: SessionFenced
    cursor: int
    reading: anyio.Lock = field(default_factory=anyio.Lock)


class TeamSessions:
    def __init__(self, host: Hosting, store: TeamStore) -> None:
        self._host = host
        self._store = store
        self.replicas: dict[str, Replica] = {}
        # G6: answers from any host's windows, decided by the store.
        self.questions = TeamQuestions(host, store.team.answers, self.replicas.__contains__)
        # G7: claims from any host's windows pause the owner's deadline.
        self.claims = TeamClaims(host, store.team, self.replicas.__contains__)
        self.questions.cards = self.claims

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """The store's listening and renewal, and the replicas' reading, until cancelled."""
        async with anyio.create_task_group() as tasks:
            await tasks.start(self._store.serve)
            tasks.start_soon(self._follow)
            tasks.start_soon(self.questions.serve)
            tasks.start_soon(self.claims.serve)
            task_status.started()

    async def _follow(self) -> None:
        """G5: read what each hint says is new in a replica; one reader, so a replica's
        events are folded in order and once."""
        async for session_id, _ in self._store.team.follower.hints.stream():
            await self.catch_up(session_id)

    async def own(self, session: Session) -> None:
        """`session` (just created here) is this host's: hear when it is lost (G4)."""
        await self._store.own(session.id, self._lost)

    async def open(
        self, session_id: str, env: Mapping[str, str], default_ask: Mapping[str, Any]
    ) -> Session:
        """The stored session, run here (its lease taken, P7 repair) or a replica (G4, G5)."""
        try:
            await self._store.own(session_id, self._lost)
        except KeyError:
            raise SessionError.unknown(session_id) from None
        except SessionFenced as fenced:
            return await self._open_replica(session_id, env, default_ask, fenced)
        try:
            session, _ = await open_folded(self._host, session_id, env, default_ask)
        except SessionError:
            await self._store.release(session_id)  # a delegated child's: not a root to run
            raise
        await repair(session)
        await self.questions.taken_over(session_id)
        return session

    async def _open_replica(
        self,
        session_id: str,
        env: Mapping[str, str],
        default_ask: Mapping[str, Any],
        owner: SessionFenced,
    ) -> Session:
        follower = self._store.team.follower
        follower.follow(session_id, -1)  # hints from now on: none is missed while it loads
        try:
            session, last_seq = await open_folded(self._host, session_id, env, default_ask)
        except BaseException:
            follower.unfollow(session_id)
            raise
        session.runs_turns = False  # another host runs its turns
        self.replicas[session_id] = Replica(session, owner, last_seq)
        log.info("session %s: a replica (%s)", session_id, owner.message)
        await self.catch_up(session_id)  # what was committed while it loaded
        self.questions.sync(session)
        return session

    def refuse(self, session: Session) -> None:
        """Prompt, cancel and steer are the owner's (G4): on a replica, SessionFenced naming
        the host that runs the session."""
        replica = self.replicas.get(session.id)
        if replica is not None and replica.session is session:
            owner = replica.owner
            raise SessionFenced(session.id, owner.owner_host, owner.owner_name, self._store.where)

    async def catch_up(self, session_id: str) -> None:
        """Fold and publish the replica's events committed since the last read (G5)."""
        replica = self.replicas.get(session_id)
        if replica is None:
            return
        if self._host.sessions.get(session_id) is not replica.session:  # unloaded (S10)
            self._forget(session_id)
            return
        async with replica.reading:
            try:
                events = await self._store.load_since(session_id, replica.cursor)
            except Exception as exc:  # the next hint (or a poll) tries again
                log.warning("session %s: reading the replica failed: %s", session_id, exc)
                return
            if events and self.replicas.get(session_id) is replica:
                replica.cursor += len(events)
                replica.session.committed_events([(events, True)])
                self.questions.sync(replica.session)

    def _forget(self, session_id: str) -> None:
        self.replicas.pop(session_id, None)
        self._store.team.follower.unfollow(session_id)
        self.questions.forget(session_id)

    def _lost(self, fenced: SessionFenced) -> None:
        """Another host took the session over (G4): stop running it here, tell its
        followers in one line where it runs now, unload it."""
        host = self._host
        session = host.sessions.get(fenced.session_id)
        if session is None or fenced.session_id in self.replicas:
            return
        session.abandon()  # its turn ends as at end of input (M6); it writes nothing more
        line = f"askbridge: {fenced.message}"
        for client in host.subscribers.of(session.id):
            client.link.send_updates(session.id, [agent_message_chunk(line)])
            host.subscribers.remove(client, session.id)
        host.unload(session)
