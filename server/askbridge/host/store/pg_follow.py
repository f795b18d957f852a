"""Following sessions on the team store: hints of new events, and reading them (G5).

Every append notifies `askbridge` with "session last_seq" (pg_commit.py): the
session and the number of its last new event, never any text, so what a host reads
is always what the database holds, through the reader's own permissions (G9). A
`Follower` turns those notifications into hints for the sessions this host follows:
`follow(session_id, after_seq)` starts from what the caller already has, and a hint
(session_id, seq) is given only when `seq` is beyond every hint given for that
session before, so hints for a session only move forward. The caller reads with
`load_since(session_id, cursor)` (the store's, on `events_since`) and moves its cursor to the
last event read: no gap (a hint is the floor of what a read returns, and a read
returns every event after the cursor) and no duplicate (a read starts after the
cursor).

A notification is a hint, not the data: one sent while this host's listening
connection was down is lost for good, so `catch_up` reads the followed sessions'
next_seq (one statement) and hints what moved. pg_presence.py calls it every second
while the connection is down and once it listens again (G5: "polls every second and
catches up in full after reconnecting").

`Hints` is how hints are handed on, to callbacks (`subscribe`) and to async iterators
(`stream()`); an iterator coalesces what its reader has not taken yet per key (the
latest seq of each session), so a slow reader costs memory per session, not per
commit.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Hashable
from typing import Any, Generic, TypeVar

import anyio

from .pg_connections import Conn, Connections
from .pg_rows import next_seqs

log = logging.getLogger("askbridge.store")
T = TypeVar("T")

_SINCE = """
SELECT seq, body::text FROM askbridge.events WHERE session_id = %s AND seq > %s ORDER BY seq
"""


def session_call(payload: str) -> tuple[str, str] | None:
    """The `[session, call]` a notification on a question's channel (answers, claims)
    carries, or None for a payload that is not one."""
    try:
        session_id, call_id = json.loads(payload)
    except (ValueError, TypeError):
        return None
    return str(session_id), str(call_id)


class Hints(Generic[T]):
    """Hints handed to every subscriber; `key` says which hints a newer one replaces."""

    def __init__(self, key: Callable[[T], Hashable]) -> None:
        self._key = key
        self._callbacks: list[Callable[[T], None]] = []

    def subscribe(self, callback: Callable[[T], None]) -> Callable[[], None]:
        """Call `callback(hint)` for every hint from now on; returns the unsubscribe."""
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None

    def tell(self, hint: T) -> None:
        for callback in list(self._callbacks):
            try:
                callback(hint)
            except Exception:  # a subscriber's bug must not stop the listening (nor others)
                log.exception("a subscriber of the team store's hints failed")

    async def stream(self) -> AsyncIterator[T]:
        """Every hint from now on, coalesced per key while not taken, until cancelled."""
        pending: dict[Hashable, T] = {}
        woken = anyio.Event()

        def add(hint: T) -> None:
            nonlocal woken
            key = self._key(hint)
            pending.pop(key, None)  # a newer hint goes to the back
            pending[key] = hint
            woken.set()

        unsubscribe = self.subscribe(add)
        try:
            while True:
                if not pending:
                    woken = anyio.Event()
                    await woken.wait()
                key = next(iter(pending))
                yield pending.pop(key)
        finally:
            unsubscribe()


def _session_of(hint: tuple[str, int]) -> str:
    return hint[0]


class Follower:
    def __init__(self, db: Connections) -> None:
        self._db = db
        self._seen: dict[str, int] = {}  # each followed session's highest seq hinted
        self.hints: Hints[tuple[str, int]] = Hints(_session_of)

    @property
    def followed(self) -> list[str]:
        return list(self._seen)

    def follow(self, session_id: str, after_seq: int) -> None:
        """Hint `session_id`'s events after `after_seq` (the last one the caller has; -1
        for none). Following a followed session again only ever moves it forward."""
        self._seen[session_id] = max(after_seq, self._seen.get(session_id, after_seq))

    def unfollow(self, session_id: str) -> None:
        self._seen.pop(session_id, None)

    def notified(self, payload: str) -> None:
        """A notification on `askbridge`: "session last_seq"."""
        session_id, _, seq = payload.rpartition(" ")
        if session_id in self._seen:
            try:
                self.saw(session_id, int(seq))
            except ValueError:
                return  # not ours

    def saw(self, session_id: str, seq: int) -> None:
        """`session_id` has events up to `seq`: hinted if that is news."""
        if session_id in self._seen and seq > self._seen[session_id]:
            self._seen[session_id] = seq
            self.hints.tell((session_id, seq))

    async def catch_up(self) -> None:
        """Read the followed sessions' next_seq and hint every one that moved on."""
        followed = self.followed
        if not followed:
            return

        async def read(conn: Conn, _: bool) -> dict[str, int]:
            return await next_seqs(conn, followed)

        for session_id, next_seq in (await self._db.run("read", read)).items():
            self.saw(session_id, next_seq - 1)


async def events_since(conn: Conn, session_id: str, after_seq: int) -> list[tuple[Any, ...]]:
    """(seq, body) of every event of `session_id` after `after_seq`, in order."""
    cur = await conn.execute(_SINCE, (session_id, after_seq))
    return await cur.fetchall()
