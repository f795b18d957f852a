"""Claims on timed waits across hosts (G7, C1-C5): a window on any host pauses the deadline,
which fires on the session's owner only.

- Claimant's side (`hold`): a window here claims a question of a replica (another host
  runs its session). The claim is a row in the store (`team.claims`, pg_claims.py), held
  while the window holds its request and released on `$/cancelRequest`, on disconnect
  (C4) or when the card here ends (answered, or its wait ended: the owner settled it).
  The store renews it with this host's leases; when this host dies it lapses after 10 s
  in the database's time (G7).
- Owner's side (`serve`): every claim hint (NOTIFY) for a session run here re-reads the
  question's live claims. While any is live (C5) the local wait holds one claim of its
  own for all of them, so its timer is stopped exactly as for a local window's claim;
  when none is left it is released (TW5: re-armed for max(0, deadline - now), so a
  release after the deadline makes the question pending at once). A lapse notifies
  nobody, so the owner re-reads once more when the last claim's lease ends
  (`Claims.until`, mapped to its own clock by db_clock.py).

remainingMs (C3): the claimant has no deadline of its own, and the owner's is not logged.
The claimant answers the deadline as the owner's log tells it: the question's tool/call
commit plus its timeout (the call's `timeout` argument, else the session's default),
less the database's now (`ClaimStore.remaining_ms`, G7). The owner starts its wait as
it commits that event, so this is its deadline to within a commit's latency; time spent
claimed is not credited back, as on the owner (TW5).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

import anyio

from askbridge.core import AbortSignal, UserQuestionService
from askbridge.core.timed_wait import WaitClaim
from askbridge.process.log_lines import field
from askbridge.protocol.defaults import ASK_TIMEOUT_DEFAULT_SECONDS

from .agent.session import Session
from .asking.clients import Client
from .team_questions import Asking

log = logging.getLogger("askbridge.host")

Progress = Callable[[int], None]  # the one `{remainingMs}` frame (C3)


class Claiming(Asking, Protocol):
    """What this module needs of host.py's Host."""

    @property
    def service(self) -> UserQuestionService: ...


class TeamClaims:
    def __init__(self, host: Claiming, team: Any, is_replica: Callable[[str], bool]) -> None:
        self._host = host
        self._team = team  # pg_team.Team: its claims and the database's clock
        self._is_replica = is_replica
        self._held: dict[tuple[str, str], WaitClaim] = {}  # the owner's claim for remote ones
        self._cards: dict[tuple[str, str], AbortSignal] = {}  # a replica's card: ended

    # -- the claimant's side ------------------------------------------------------------

    def shown(self, session_id: str, call_id: str) -> None:
        """A replica's question got a card here."""
        self._cards[(session_id, call_id)] = AbortSignal()

    def ended(self, session_id: str, call_id: str) -> None:
        """Its card here ended: every claim held on it from here ends (TW10)."""
        card = self._cards.pop((session_id, call_id), None)
        if card is not None:
            card.abort()

    def holds(self, session: Session) -> bool:
        return self._is_replica(session.id)

    async def remaining_ms(self, session: Session, call_id: str) -> float | None:
        """The owner's deadline less the database's now (C3), or None: not a timed wait."""
        remaining: float | None = await self._team.claims.remaining_ms(
            session.id, call_id, _timeout_s(session)
        )
        return remaining

    async def hold(
        self, session: Session, call_id: str, client: Client, progress: Progress
    ) -> None:
        """C1-C4 for a replica's question: claim it in the store, send the one frame, hold
        until the request is cancelled, the client leaves or the card ends."""
        card_ended = self._cards.get((session.id, call_id))
        if card_ended is None or client.gone.aborted:
            return  # C1: no wait here to claim
        claims = self._team.claims
        remaining = await self.remaining_ms(session, call_id)
        if remaining is None:
            return  # C1: not a timed wait (no timeout), or not logged
        key = str(client.id)
        await claims.claim(session.id, call_id, key)
        try:
            progress(max(0, round(remaining)))
            ended = anyio.Event()
            removers = [signal.on_abort(ended.set) for signal in (client.gone, card_ended)]
            try:
                await ended.wait()
            finally:
                for remove in removers:
                    remove()
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    await claims.release(session.id, call_id, key)  # C4
                except Exception as exc:  # its lease lapses instead (G7)
                    log.warning("releasing the claim on %s failed: %s", call_id, field(exc))

    # -- the owner's side ---------------------------------------------------------------

    async def serve(self) -> None:
        async for session_id, call_id in self._team.claims.hints.stream():
            session = self._host.sessions.get(session_id)
            if session is None or self._is_replica(session_id):
                continue
            calls = [call_id] if call_id is not None else _open_calls(session)
            for call in calls:
                try:
                    await self._reread(session, call)
                except Exception as exc:  # the next hint, or the lease's end, reads again
                    log.warning("reading the claims on %s failed: %s", call, field(exc))

    async def _reread(self, session: Session, call_id: str) -> None:
        key = (session.id, call_id)
        live = await self._team.claims.claims(session.id, call_id)
        wait = self._host.service.find_wait(session.agent.id, call_id)
        held = self._held.get(key)
        if held is not None and (not held.held or wait is None or not live.claims):
            del self._held[key]
            held.release()  # TW5: pending at once when the deadline passed meanwhile
            log.info("question %s released by every other host", field(call_id))
        if wait is None or not live.claims:
            return
        if key not in self._held:
            claim = wait.claim()  # C2: None when its deadline already passed, unclaimed
            if claim is None:
                return
            self._held[key] = claim
            claim.ended.on_abort(lambda: self._forget(key, claim))  # the wait ended (TW10)
            hosts = sorted({c.host for c in live.claims})
            log.info("question %s claimed from host %s", field(call_id), ", ".join(hosts))
        self._reread_at(key, live.until)

    def _forget(self, key: tuple[str, str], claim: WaitClaim) -> None:
        if self._held.get(key) is claim:
            del self._held[key]

    def _reread_at(self, key: tuple[str, str], until: Any) -> None:
        """A lapse writes nothing: read again when the last lease ends (G7)."""
        db_clock = self._team.db_clock
        try:
            at = db_clock.local_ms(until)
        except ValueError:  # the database's clock not read yet: a lease from now
            at = db_clock.clock.now() + self._team.claims.lease_s * 1000
        db_clock.clock.call_at(at + 1, lambda: self._team.claims.hints.tell(key))


def _open_calls(session: Session) -> list[str]:
    return [q.call_id for q in session.projection.view().active if q.state == "open"]


def _timeout_s(session: Session) -> float:
    """The session's default timeout (seconds) for a call that names none."""
    ask = session.header.get("askUserQuestion")
    timeout = ask.get("timeout") if isinstance(ask, dict) else None
    return float(timeout) if isinstance(timeout, int | float) else ASK_TIMEOUT_DEFAULT_SECONDS
