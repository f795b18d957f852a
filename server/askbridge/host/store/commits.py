"""Group commit: what every session logs in one event-loop turn goes into one transaction,
with one commit in flight and the next batch filling meanwhile.

A commit costs the same for one event as for a hundred, so the host does not
commit per step: a session hands its events to `add`, and at the end of the
current loop turn everything handed over since is written by one
`EventStore.append_encoded` — the tool result of one session, the next step of
another, the asks of sixty others. Only once it returned are the events folded
into each session's state and told to its followers (`Session.committed_events`):
nothing derived from an event reaches a client before it is durable (D1), and a
session's state is always what its committed log says.

While a commit is awaited (a PostgreSQL round trip), what sessions log goes into
the next batch, which starts once the commit in flight is told: one commit at a
time, so each session's events reach the store in the order they were logged.
A store that commits inline (SQLite) never has a batch filling behind one in
flight; for it everything happens as if the commit were a plain call.

The API, which the agent room's Session alone calls:
- `add(session, events, texts, publish)`: join the batch now filling.
- `after(session, callback)`: `callback(None)` once everything `session` added is
  durable, or `callback(its StoreError)`; the turn loop starts a step's asks from it.
- `await flush()`: commit what is pending now, not at the end of the loop turn
  (the rare writes whose caller must know at once: a late reply before `answer`
  returns True, the start and end of a turn); after the commit in flight, if any.
- `expect(session)`: `session`'s task was just woken and adds its next events when
  it runs (a turn whose ask was answered): a commit due before then waits one loop
  turn for it, once, so that the two share one transaction. Its next `add` ends it.
- `pending(session)`: whether it has events not committed yet.
The host runs `run` (the committer) in its task group and `close` on its way out.

What a commit tells (its followers' updates, the asks its callbacks start) is
queued on the doors' connections. `frames` (jsonrpc/flushing.py's Flushes, which
daemon/bootstrap.py hands the Host) holds those frames while the commit is told
and writes them when telling ends: a card leaves in its commit's loop turn, not
one turn later.

Failures (S4, S5): a failed group is retried session by session, so a write
that only one session's batch breaks fails only that session. Each failed
session gets its StoreError — given to `after`'s callbacks, or kept on the
session (`Session.commit_error`) until its next log (or the log whose `flush`
it was) raises it, so a turn never goes on past events that were not stored.
Events a failed session added while its commit was in flight fail with it: they
are never stored after a gap. StoreLost (the data directory is gone) fails
everyone and stops the host (`on_lost`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from askbridge.core import StoreError, StoreLost

from ..log import events as ev
from .store_api import EventStore

log = logging.getLogger("askbridge.host")

Chunk = tuple[list[ev.Event], bool]  # events logged together, and whether to publish them


class Session(Protocol):
    """What the group commit needs of a session (agent/session.py's Session): the store
    may not import the agent room (test_layers.py), so it names the shape it calls."""

    @property
    def id(self) -> str: ...

    commit_error: StoreError | None

    def committed_events(self, chunks: list[Chunk]) -> None: ...


# What `after` calls once a session's events are committed: with None, or its StoreError.
AfterCommit = Callable[[StoreError | None], None]


class FrameBatch(Protocol):
    """The doors' frame writers as one batch (jsonrpc/flushing.py's `Flushes`, which the
    store may not import): what is queued between `open_batch` and `close_batch` is
    written at `close_batch`, at once. `close_batch` does not raise: a writer that fails
    is logged there and the others are still written."""

    def open_batch(self) -> None: ...

    def close_batch(self) -> None: ...


class _Part:
    """One session's events in a batch."""

    __slots__ = ("after", "chunks", "texts")

    def __init__(self) -> None:
        self.chunks: list[Chunk] = []
        self.texts: list[str] = []
        self.after: list[AfterCommit] | None = None


Batch = dict[Session, _Part]  # in the order sessions first added to it


class GroupCommit:
    def __init__(
        self,
        store: EventStore,
        on_lost: Callable[[StoreLost], None],
        frames: FrameBatch | None = None,
    ) -> None:
        self._store = store
        self._on_lost = on_lost
        self.frames = frames
        self._filling: Batch = {}
        self._flying: Batch = {}  # the batch whose commit is awaited
        # While a commit is in flight: who waits for it to be told (else None).
        self._in_flight: list[asyncio.Future[None]] | None = None
        self._wake: asyncio.Future[None] | None = None  # the idle committer waits on it
        self._running = False
        self._closing = False
        self._stopped: asyncio.Event | None = None
        self._expected: set[Session] = set()  # woken, adding their next events soon

    def pending(self, session: Session) -> bool:
        """Whether `session` has events not committed yet."""
        return session in self._filling or session in self._flying

    def add(
        self, session: Session, events: list[ev.Event], texts: list[str], publish: bool
    ) -> None:
        """Queue `session`'s events (already encoded) in the batch filling now; committed by
        the end of this loop turn, or once the commit in flight is told."""
        part = self._filling.get(session)
        if part is None:
            part = self._filling[session] = _Part()
        part.chunks.append((events, publish))
        part.texts.extend(texts)
        self._expected.discard(session)
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(None)  # the committer runs once this loop turn's callbacks have

    def expect(self, session: Session) -> None:
        """`session`'s task was just woken and adds its next events when it runs: a commit
        due before then waits one loop turn for it (once)."""
        self._expected.add(session)

    def after(self, session: Session, callback: AfterCommit) -> None:
        """`callback(None)` once everything `session` added is committed (folded and
        published, after every session of the batch), or `callback(its StoreError)`,
        raised nowhere else then. At once when nothing is pending. The turn loop starts a
        step's asks from it, without waking in between."""
        part = self._filling.get(session) or self._flying.get(session)
        if part is None:
            error, session.commit_error = session.commit_error, None
            callback(error)
            return
        if part.after is None:
            part.after = []
        part.after.append(callback)

    async def flush(self) -> None:
        """Commit everything added so far now (after the commit in flight), then fold and
        publish it session by session."""
        await self._commit_filling()

    async def run(self) -> None:
        """The committer: commits each batch at the end of the loop turn that filled it, one
        at a time, until `close`. Runs in the host's task group."""
        loop = asyncio.get_running_loop()
        self._running, self._stopped = True, asyncio.Event()
        try:
            while True:
                if self._filling:
                    # Added while the last commit was in flight or told: the loop turn that
                    # added it ends first, as for a batch that filled while idle.
                    await asyncio.sleep(0)
                elif self._closing:
                    return
                else:
                    self._wake = loop.create_future()
                    try:
                        await self._wake
                    finally:
                        self._wake = None
                if self._expected:
                    # Tasks woken after this commit came due (other sessions' answers read in
                    # the same loop turn) run just after it: go after them, once. Their steps
                    # join this commit instead of one of their own a loop turn later. Once:
                    # what is woken meanwhile, or a task that adds nothing, delays no more.
                    self._expected.clear()
                    await asyncio.sleep(0)
                try:
                    await self._commit_filling()
                except Exception:  # a bug: it must not stop every later commit
                    log.exception("the group commit failed")
        finally:
            self._running = False
            self._stopped.set()

    async def close(self) -> None:
        """Commit what is pending and stop the committer (the host's way out). What is added
        after this waits for a `flush`."""
        self._closing = True
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(None)
        if self._running and self._stopped is not None:
            await self._stopped.wait()
        await self.flush()

    async def _commit_filling(self) -> None:
        """Commit the batch filling now, once the commit in flight (if any) is told."""
        while self._in_flight is not None:
            waiter = asyncio.get_running_loop().create_future()
            self._in_flight.append(waiter)
            await waiter
        batch, self._filling = self._filling, {}
        if not batch:
            return
        self._flying, self._in_flight = batch, []
        try:
            try:
                try:
                    await self._store.append_encoded([(s.id, p.texts) for s, p in batch.items()])
                    failures: dict[Session, StoreError] = {}
                except Exception as exc:
                    failures = await self._failed(batch, exc)
            except BaseException:
                # Cancelled while the store awaited (the host never does that): whether the
                # batch is stored is unknown, so everyone waiting for it hears it failed.
                error = StoreError("the commit was cancelled; its events may not be stored")
                self._tell_batch(batch, dict.fromkeys(batch, error))
                raise
            self._tell_batch(batch, failures)
        finally:
            waiters, self._in_flight, self._flying = self._in_flight, None, {}
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    def _tell_batch(self, batch: Batch, failures: dict[Session, StoreError]) -> None:
        """Tell `batch`, in one frame batch when the doors' writers are wired. A failed
        session's events added meanwhile fail with it: never stored after a gap."""
        parts: Iterable[tuple[Session, _Part]] = batch.items()
        if failures:
            parts = [*parts, *self._failed_later(failures)]
        frames = self.frames
        if frames is None:
            self._tell(parts, failures)
            return
        frames.open_batch()
        try:
            self._tell(parts, failures)
        finally:
            frames.close_batch()  # the card leaves now, in its commit's loop turn

    def _failed_later(self, failures: dict[Session, StoreError]) -> Iterator[tuple[Session, _Part]]:
        for session in failures:
            later = self._filling.pop(session, None)
            if later is not None:
                yield session, later

    def _tell(
        self, parts: Iterable[tuple[Session, _Part]], failures: dict[Session, StoreError]
    ) -> None:
        """Fold and publish each session's committed events, then run the callbacks."""
        after: list[tuple[AfterCommit, StoreError | None]] = []
        for session, part in parts:
            error = failures.get(session)
            if error is None:
                try:
                    session.committed_events(part.chunks)
                except Exception:  # a listener's bug must not cost the other sessions
                    log.exception("telling the followers of %s failed", session.id)
            elif part.after is None:
                session.commit_error = error  # until its next log raises it
            else:
                session.commit_error = None  # given to the callbacks, once
            if part.after is not None:
                after.extend((callback, error) for callback in part.after)
        # Once every session of the batch is folded and published: what a callback starts
        # (a step's asks) follows all of it, as a woken waiter would.
        for callback, error in after:
            try:
                callback(error)
            except Exception:
                log.exception("a commit callback failed")

    async def _failed(self, batch: Batch, exc: Exception) -> dict[Session, StoreError]:
        """The sessions of `batch`, whose transaction raised `exc`, that cannot be written:
        all of them when the store is lost, else those failing again alone."""
        if isinstance(exc, StoreLost):
            self._on_lost(exc)
            return dict.fromkeys(batch, exc)
        if len(batch) == 1:
            return dict.fromkeys(batch, _as_store_error(exc))
        failures: dict[Session, StoreError] = {}
        for session, part in batch.items():
            try:
                await self._store.append_encoded([(session.id, part.texts)])
            except StoreLost as lost:
                self._on_lost(lost)
                failures[session] = lost
            except Exception as alone:
                failures[session] = _as_store_error(alone)
        return failures


def _as_store_error(exc: Exception) -> StoreError:
    """A StoreError as it is; anything else (a bug: an unknown session) as one naming it."""
    if isinstance(exc, StoreError):
        return exc
    log.error("group commit failed: %r", exc)
    error = StoreError(f"cannot write to the event store: {exc!r}")
    error.__cause__ = exc
    return error
