"""A group commit on the team store: one statement, one round trip, written exactly once (G3).

`Commit.of(batches, next_seq)` lays the events of several sessions out as arrays,
sessions in id order and each session's events in order, numbered from the next
sequence number the writer expects for that session; `attempt(conn, retried)` sends
`APPEND` with them as binary parameters (`%b`: quoting text arrays made a 64-session
commit 3x slower in a prototype). The statement, in one implicit transaction:

1. locks the sessions' rows in id order (`locked`): batches from two hosts lock
   their common rows in the same order, so they queue instead of deadlocking;
2. fences every session (`fence`): its stored next_seq must be the expected one,
   else `askbridge.fence` raises FENCED (NO_SESSION for a session that is gone). The
   fence is a MATERIALIZED CTE that the INSERT's one-time filter aggregates whole
   before the first row is written, so it is always scanned, for every session: a
   check placed where the planner may skip it (a select list, a join that sees an
   empty side first) silently writes nothing, or too much;
3. moves each session's next_seq past its events and inserts the events, each with
   the database's `clock_timestamp()` as `committed_at`.

Exactly once: a commit whose connection is lost before its reply may or may not have
been committed. Its retry (`retried`) sends the same statement; if the first one did
commit, the fence now fails, and `already_written` finds the very events at the very
sequence numbers: the commit is done, and nothing was written twice. Any other
FENCED is another writer's: a StoreError, nothing written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from .event_rows import columns
from .pg_connections import Conn
from .pg_schema import FENCED, NO_SESSION

APPEND = """
WITH batch AS (
    SELECT * FROM unnest(%(ids)b::text[], %(expected)b::int8[], %(after)b::int8[])
        AS b (session_id, expected, next_seq)
), locked AS (
    SELECT s.id, s.next_seq FROM askbridge.sessions s
    WHERE s.id = ANY (%(ids)b::text[])
    ORDER BY s.id
    FOR UPDATE
), fence AS MATERIALIZED (
    SELECT b.session_id, b.next_seq, askbridge.fence(b.session_id, l.next_seq, b.expected) AS ok
    FROM batch b LEFT JOIN locked l ON l.id = b.session_id
), moved AS (
    UPDATE askbridge.sessions s SET next_seq = f.next_seq
    FROM fence f WHERE s.id = f.session_id
)
INSERT INTO askbridge.events (session_id, seq, body, type, head)
SELECT e.session_id, e.seq, e.body::json, e.type, e.head
FROM unnest(%(sessions)b::text[], %(seqs)b::int8[], %(bodies)b::text[], %(types)b::text[],
            %(heads)b::text[]) AS e (session_id, seq, body, type, head)
WHERE (SELECT bool_and(ok) FROM fence)
"""

_WRITTEN = """
SELECT e.session_id, e.seq, e.body::text
FROM unnest(%b::text[], %b::int8[]) AS k (session_id, seq)
JOIN askbridge.events e ON e.session_id = k.session_id AND e.seq = k.seq
"""


class Fenced(Exception):
    """Another writer moved a session on (FENCED): `session_id` names it."""

    def __init__(self, session_id: str, message: str) -> None:
        super().__init__(message)
        self.session_id = session_id


@dataclass(frozen=True)
class Commit:
    ids: list[str]  # the sessions, in id order
    expected: list[int]  # each one's next_seq before this commit
    after: list[int]  # and after it
    sessions: list[str]  # per event, in (session, seq) order
    seqs: list[int]
    bodies: list[str]
    types: list[str | None]
    heads: list[str | None]

    @classmethod
    def of(
        cls, batches: Sequence[tuple[str, Sequence[str]]], next_seq: Mapping[str, int]
    ) -> Commit:
        """The commit of `batches` (sessions without events left out; a session named twice
        gets its events in the order given), numbered from `next_seq`."""
        merged: dict[str, list[str]] = {}
        for session_id, bodies in batches:
            if bodies:
                merged.setdefault(session_id, []).extend(bodies)
        commit = cls([], [], [], [], [], [], [], [])
        for session_id in sorted(merged):
            bodies = merged[session_id]
            first = next_seq[session_id]
            commit.ids.append(session_id)
            commit.expected.append(first)
            commit.after.append(first + len(bodies))
            for seq, body in enumerate(bodies, first):
                kind, head = columns(body)
                commit.sessions.append(session_id)
                commit.seqs.append(seq)
                commit.bodies.append(body)
                commit.types.append(kind)
                commit.heads.append(head)
        return commit

    def params(self) -> dict[str, Any]:
        return {
            "ids": self.ids,
            "expected": self.expected,
            "after": self.after,
            "sessions": self.sessions,
            "seqs": self.seqs,
            "bodies": self.bodies,
            "types": self.types,
            "heads": self.heads,
        }

    async def attempt(self, conn: Conn, retried: bool) -> None:
        """Send the commit (module docstring); KeyError for a session that is gone, Fenced
        when another writer moved one on."""
        try:
            await conn.execute(APPEND, self.params())
        except psycopg.Error as exc:
            if exc.sqlstate == NO_SESSION:
                raise KeyError(exc.diag.message_detail or "?") from None
            if exc.sqlstate != FENCED:
                raise
            if retried and await self.already_written(conn):
                return
            raise Fenced(exc.diag.message_detail or "?", exc.diag.message_primary or "") from None

    async def already_written(self, conn: Conn) -> bool:
        """Whether every event of this commit is stored, as it is, where it was numbered."""
        cur = await conn.execute(_WRITTEN, (self.sessions, self.seqs))
        stored = {(session_id, seq): body for session_id, seq, body in await cur.fetchall()}
        keys = zip(self.sessions, self.seqs, strict=True)
        return all(stored.get(key) == body for key, body in zip(keys, self.bodies, strict=True))
