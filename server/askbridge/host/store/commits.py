"""Group commit: what every session logs in one event-loop turn goes into one transaction.

A commit costs the same for one event as for a hundred, so the host does not
commit per step: `Session.log_grouped` hands its events here, and at the end of
the current loop turn (one `call_soon` callback) everything handed over since
is written by one `EventStore.append_encoded` — the tool result of one
session, the next step of another, the asks of sixty others. Only then are the
events folded into each session's state and told to its followers
(`Session.committed_events`), so nothing derived from an event reaches a client
before it is durable (D1), and a session's state is always what its committed
log says. Whoever must know that its events are durable before going on (the
turn loop, before it asks) awaits `wait(session)`.

What a commit tells (its followers' updates, the asks its callbacks start) is
queued on the doors' connections; with an `outbox` (the doors' writers, wired by
daemon/bootstrap.py) it is written when the commit is done with it, in the same
loop turn, instead of one turn later: a batch is open from the fold until the
last callback has run.

`flush()` commits at once; `Session.log` (the synchronous way, for the rare
writes whose caller must know at once: a late reply before `answer` returns
True, the end of a turn) adds its events and flushes.

Failures (S4, S5): a failed group is retried session by session, so a write
that only one session's batch breaks fails only that session. Each failed
session gets its StoreError — raised to whoever awaits `wait`, and kept on the
session (`Session.commit_error`) until its next log or wait raises it, so a
turn never goes on past events that were not stored. StoreLost (the data
directory is gone) fails everyone and stops the host (`on_lost`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
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

    def raise_commit_error(self) -> None: ...

    def committed_events(self, chunks: list[Chunk]) -> None: ...


# What `after` calls once a session's events are committed: with None, or its StoreError.
AfterCommit = Callable[[StoreError | None], None]


class Outbox(Protocol):
    """Where what a commit tells is queued (jsonrpc/flushing.py's `Flushes`, which the
    store may not import): held while the batch is open, written when it closes.
    `close_batch` does not raise: a writer that fails is logged there and the others
    are still written."""

    def open_batch(self) -> None: ...

    def close_batch(self) -> None: ...


class _Part:
    """One session's events in the pending group."""

    __slots__ = ("after", "chunks", "future", "texts")

    def __init__(self) -> None:
        self.chunks: list[Chunk] = []
        self.texts: list[str] = []
        self.future: asyncio.Future[None] | None = None
        self.after: list[AfterCommit] | None = None


class GroupCommit:
    def __init__(self, store: EventStore, on_lost: Callable[[StoreLost], None]) -> None:
        self._store = store
        self._on_lost = on_lost
        self._parts: dict[Session, _Part] = {}  # in the order sessions first logged
        self._scheduled = False
        # Turns woken to log their next step (step.py `Step.__call__`) that have not run yet.
        self._woken: set[Session] = set()
        self._deferred = False
        self.outbox: Outbox | None = None

    def pending(self, session: Session) -> bool:
        return session in self._parts

    def add(
        self, session: Session, events: list[ev.Event], texts: list[str], publish: bool
    ) -> None:
        """Queue `session`'s events (already encoded); committed by the end of this loop turn."""
        part = self._parts.get(session)
        if part is None:
            part = self._parts[session] = _Part()
        part.chunks.append((events, publish))
        part.texts.extend(texts)
        if not self._scheduled:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no event loop (a synchronous caller): nothing to wait for
                self.flush()
                return
            self._scheduled = True
            loop.call_soon(self._flush_scheduled)

    async def wait(self, session: Session) -> None:
        """Return once everything `session` logged is committed; its StoreError if not."""
        part = self._parts.get(session)
        if part is not None:
            if part.future is None:
                part.future = asyncio.get_running_loop().create_future()
            try:
                await part.future
            except StoreError:
                session.commit_error = None  # raised here, once
                raise
        session.raise_commit_error()

    def after(self, session: Session, callback: AfterCommit) -> None:
        """`wait` as a callback: `callback(None)` once everything `session` logged is
        committed (folded and published, after every session of the group), or
        `callback(its StoreError)`, raised nowhere else then. At once when nothing is
        pending. The turn loop starts a step's asks from it, without waking in between."""
        part = self._parts.get(session)
        if part is None:
            error, session.commit_error = session.commit_error, None
            callback(error)
            return
        if part.after is None:
            part.after = []
        part.after.append(callback)

    def woken(self, session: Session) -> None:
        """`session`'s turn was woken to log its next step (its result is logged now): a
        flush queued before that wake-up waits for it, so the two share one commit."""
        self._woken.add(session)

    def resumed(self, session: Session) -> None:
        """`session`'s woken turn runs (and logs, unless it waits for something else)."""
        self._woken.discard(session)

    def _flush_scheduled(self) -> None:
        if self._woken and not self._deferred:
            # Turns woken after this flush was queued (other sessions' answers read in the
            # same loop turn) run just after it: go after them, once. Their steps then join
            # their results' commit instead of one of their own a loop turn later. Once:
            # what is woken meanwhile, or a turn that logs nothing, delays no commit more.
            self._woken.clear()
            self._deferred = True
            asyncio.get_running_loop().call_soon(self._flush_scheduled)
            return
        self._scheduled = self._deferred = False
        self.flush()

    def flush(self) -> None:
        """Commit everything pending now, then fold and publish it session by session."""
        parts, self._parts = self._parts, {}
        if not parts:
            return
        failures = self._commit(parts)
        outbox = self.outbox
        if outbox is None:
            self._tell(parts, failures)
            return
        outbox.open_batch()
        try:
            self._tell(parts, failures)
        finally:
            outbox.close_batch()  # the card leaves now, in its commit's loop turn

    def _tell(self, parts: dict[Session, _Part], failures: dict[Session, StoreError]) -> None:
        """Fold and publish each session's committed events, wake its waiters, then run the
        callbacks."""
        after: list[tuple[AfterCommit, StoreError | None]] = []
        for session, part in parts.items():
            error = failures.get(session)
            if error is None:
                try:
                    session.committed_events(part.chunks)
                except Exception:  # a listener's bug must not cost the other sessions
                    log.exception("telling the followers of %s failed", session.id)
            else:
                session.commit_error = error
            future = part.future
            if future is not None and not future.done():
                if error is None:
                    future.set_result(None)
                else:
                    future.set_exception(error)
            if part.after is not None:
                if error is not None:
                    session.commit_error = None  # given to the callbacks, once
                after.extend((callback, error) for callback in part.after)
        # Once every session of the group is folded and published: what a callback starts
        # (a step's asks) follows all of it, as a woken waiter would.
        for callback, error in after:
            try:
                callback(error)
            except Exception:
                log.exception("a commit callback failed")

    def _commit(self, parts: dict[Session, _Part]) -> dict[Session, StoreError]:
        """Write `parts` in one transaction; when that fails, each session alone."""
        try:
            self._store.append_encoded([(s.id, part.texts) for s, part in parts.items()])
            return {}
        except StoreLost as exc:
            self._on_lost(exc)
            return dict.fromkeys(parts, exc)
        except Exception as exc:
            if len(parts) == 1:
                return dict.fromkeys(parts, _as_store_error(exc))
        failures: dict[Session, StoreError] = {}
        for session, part in parts.items():
            try:
                self._store.append_encoded([(session.id, part.texts)])
            except StoreLost as exc:
                self._on_lost(exc)
                failures[session] = exc
            except Exception as exc:
                failures[session] = _as_store_error(exc)
        return failures


def _as_store_error(exc: Exception) -> StoreError:
    """A StoreError as it is; anything else (a bug: an unknown session) as one naming it."""
    if isinstance(exc, StoreError):
        return exc
    log.error("group commit failed: %r", exc)
    error = StoreError(f"cannot write to the event store: {exc!r}")
    error.__cause__ = exc
    return error
