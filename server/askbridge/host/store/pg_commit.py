"""A group commit on the team store: one statement, one round trip, written exactly once (G3).

`Commit.of(batches, next_seq)` lays the events of several sessions out as arrays:
the sessions in id order with the next sequence number the writer expects for each
and how many events it gets, and the events' bodies (and types) in that order;
`attempt(conn, retried)` sends `APPEND` with them as binary parameters (`%b`: quoting
text arrays made a 64-session commit 3x slower in a prototype). Each array costs the
client ~23 us to dump for 64 sessions, so each event's session and number are
worked out by the server from the per-session arrays rather than sent.

The statement, in one implicit transaction:
1. locks the sessions' rows in id order (`locked`): batches from two hosts lock
   their common rows in the same order, so they queue instead of deadlocking;
2. fences every session: its stored next_seq must be the expected one, else
   `askbridge.fenced` raises FENCED (NO_SESSION for a session that is gone). The
   check is a MATERIALIZED CTE that the INSERT's one-time filter reads before the
   first row is written, and that counts every session: a check placed where the
   planner may skip it (a select list, a join that sees an empty side first)
   silently writes nothing, or too much;
3. moves each session's next_seq past its events and inserts the events in
   (session, seq) order, each with the database's `clock_timestamp()` as
   `committed_at`.

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

from .pg_connections import Conn
from .pg_schema import FENCED, NO_SESSION

APPEND = """
WITH batch AS (
    SELECT * FROM unnest(%(ids)b::text[], %(expected)b::int8[], %(counts)b::int8[])
        WITH ORDINALITY AS b (session_id, expected, n, ord)
), locked AS (
    SELECT s.id, s.next_seq FROM askbridge.sessions s
    WHERE s.id = ANY (%(ids)b::text[])
    ORDER BY s.id
    FOR UPDATE
), fence AS MATERIALIZED (
    SELECT b.session_id, b.expected, b.n, l.next_seq AS stored
    FROM batch b LEFT JOIN locked l ON l.id = b.session_id
), fenced AS MATERIALIZED (
    SELECT count(*) AS n FROM fence f WHERE CASE
        WHEN f.stored IS DISTINCT FROM f.expected
        THEN askbridge.fenced(f.session_id, f.stored, f.expected)
        ELSE false END
), moved AS (
    UPDATE askbridge.sessions s SET next_seq = f.expected + f.n
    FROM fence f WHERE s.id = f.session_id
), slots AS (
    SELECT b.session_id, b.expected + i AS seq, row_number() OVER (ORDER BY b.ord, i) AS ord
    FROM batch b CROSS JOIN LATERAL generate_series(0, b.n - 1) AS i
)
INSERT INTO askbridge.events (session_id, seq, body, type)
SELECT s.session_id, s.seq, e.body::json, e.type
FROM unnest(%(bodies)b::text[], %(types)b::text[]) WITH ORDINALITY AS e (body, type, ord)
JOIN slots s ON s.ord = e.ord
WHERE (SELECT n FROM fenced) = 0
ORDER BY s.ord
"""

_WRITTEN = """
SELECT e.session_id, e.seq, e.body::text
FROM unnest(%b::text[], %b::int8[]) AS k (session_id, seq)
JOIN askbridge.events e ON e.session_id = k.session_id AND e.seq = k.seq
"""
_TYPE_AT = len('{"type":"')


def event_type(body: str) -> str | None:
    """A stored body's `type` column: its leading `type` key's string, None when the body
    does not start with one or the string holds an escape (event_rows.columns' type)."""
    if not body.startswith('{"type":"'):
        return None
    end = body.find('"', _TYPE_AT)
    kind = body[_TYPE_AT:end]
    return None if end < 0 or "\\" in kind else kind


class Fenced(Exception):
    """Another writer moved a session on (FENCED): `session_id` names it."""

    def __init__(self, session_id: str, message: str) -> None:
        super().__init__(message)
        self.session_id = session_id


@dataclass(frozen=True)
class Commit:
    ids: list[str]  # the sessions, in id order
    expected: list[int]  # each one's next_seq before this commit
    counts: list[int]  # and how many events it gets
    bodies: list[str]  # the events, in (session, seq) order
    types: list[str | None]

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
        ids = sorted(merged)
        bodies = [body for session_id in ids for body in merged[session_id]]
        return cls(
            ids,
            [next_seq[session_id] for session_id in ids],
            [len(merged[session_id]) for session_id in ids],
            bodies,
            [event_type(body) for body in bodies],
        )

    @property
    def after(self) -> list[int]:
        """Each session's next_seq once this commit is in."""
        return [first + n for first, n in zip(self.expected, self.counts, strict=True)]

    def params(self) -> dict[str, Any]:
        return {
            "ids": self.ids,
            "expected": self.expected,
            "counts": self.counts,
            "bodies": self.bodies,
            "types": self.types,
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
        keys = [
            (session_id, first + i)
            for session_id, first, n in zip(self.ids, self.expected, self.counts, strict=True)
            for i in range(n)
        ]
        cur = await conn.execute(_WRITTEN, ([key[0] for key in keys], [key[1] for key in keys]))
        stored = {(session_id, seq): body for session_id, seq, body in await cur.fetchall()}
        return all(stored.get(key) == body for key, body in zip(keys, self.bodies, strict=True))
