"""`_askbridge/attachWait` / `releaseWait`: this client's claims on timed waits (C1–C5).

ACP has no progress tokens, so a claim is not tied to an open request as in
the LSP door: `attach` takes the claim and returns the wait's remaining time,
and the claim stays held until `release`, the end of the wait, or the client
disconnecting (`client_gone`). One claim per client per wait: attaching again
returns the current remaining time and adds no second claim.

A replica's question (G7: another host of the team runs its session) has no
wait here: the claim is the team's (`team.claims.hold`), held by one task in
the door's task group until `release` (its scope is cancelled), the client
leaving, or the card here ending, so the owner's deadline stays held as for
an LSP window on this host.
"""

from __future__ import annotations

import anyio
from anyio.abc import TaskGroup, TaskStatus

from askbridge.core import ClaimStream
from askbridge.host.agent.session import Session
from askbridge.host.asking.clients import Client
from askbridge.host.host import Host
from askbridge.host.team_claims import TeamClaims


class _TeamClaim:
    """One held `team.claims.hold`: cancelled to release, `done` once the store let go."""

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()
        self.done = anyio.Event()


class ClientClaims:
    def __init__(self, host: Host, client: Client, tasks: TaskGroup) -> None:
        self._host = host
        self._client = client
        self._tasks = tasks
        self._held: dict[tuple[str, str], ClaimStream] = {}
        self._team: dict[tuple[str, str], _TeamClaim] = {}  # G7: replicas' questions

    def _prune(self) -> None:
        for key, stream in list(self._held.items()):
            if not stream.claimed:  # released elsewhere, or its wait ended
                del self._held[key]

    async def attach(self, session: Session, call_id: str) -> int | None:
        """The wait's remaining milliseconds with this client's claim held, or None (no wait)."""
        team = self._host.team
        if team is not None and team.claims.holds(session):  # G7: the owner's deadline
            return await self._attach_team(team.claims, session, call_id)
        self._prune()
        service = self._host.service
        key = (session.agent.id, call_id)
        if key in self._held:
            wait = service.find_wait(session.agent.id, call_id)
            return wait.remaining_ms() if wait is not None else None
        stream = service.attach_wait(session.agent.id, call_id, self._client.gone)
        if not stream.claimed:
            return None  # C1, C2: no wait, already ended, or expired now
        self._held[key] = stream
        frame = await anext(stream)  # C3: exactly one frame, available at once
        return frame.remaining_ms

    async def _attach_team(self, claims: TeamClaims, session: Session, call_id: str) -> int | None:
        key = (session.id, call_id)
        if key in self._team:  # one claim per client per wait: the time left, again
            remaining = await claims.remaining_ms(session, call_id)
            return None if remaining is None else max(0, round(remaining))
        remaining_ms: int | None = await self._tasks.start(self._hold, claims, session, call_id)
        return remaining_ms

    async def _hold(
        self,
        claims: TeamClaims,
        session: Session,
        call_id: str,
        *,
        task_status: TaskStatus[int | None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """C1-C4 across hosts: started with the one remainingMs (None: nothing claimed)."""
        key = (session.id, call_id)
        held = _TeamClaim()
        started = False

        def progress(remaining_ms: int) -> None:
            nonlocal started
            started = True
            self._team[key] = held
            task_status.started(remaining_ms)

        try:
            with held.scope:
                await claims.hold(session, call_id, self._client, progress)
        finally:
            if self._team.get(key) is held:
                del self._team[key]
            held.done.set()
        if not started:
            task_status.started(None)  # C1: no card here, or not a timed wait

    async def release(self, session: Session, call_id: str) -> bool:
        """True when this client held a claim on the wait and has now let it go (TW5)."""
        held = self._team.pop((session.id, call_id), None)
        if held is not None:
            held.scope.cancel()
            await held.done.wait()  # the store let go: the owner may go pending at once
            return True
        stream = self._held.pop((session.agent.id, call_id), None)
        if stream is None or not stream.claimed:
            return False
        stream.release()
        return True

    @property
    def held(self) -> int:
        self._prune()
        return len(self._held) + len(self._team)
