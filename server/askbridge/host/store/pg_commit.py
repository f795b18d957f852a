"""A group commit on the team store: one statement, one round trip, written exactly once (G3).

`Commit.of(batches, next_seq, epochs, host, uses)` lays the events of several sessions
out as arrays: the sessions in id order with the next sequence number the writer
expects for each, how many events it gets and the epoch of the writer's lease, the
events' bodies (and types) in that order, and the answers they consume;
`attempt(conn, retried)` sends `APPEND` with them as binary parameters (`%b`: quoting
text arrays made a 64-session commit 3x slower in a prototype). Each array costs the
client ~23 us to dump for 64 sessions, so each event's session and number are
worked out by the server from the per-session arrays rather than sent.

The statement, in one implicit transaction:
1. locks the sessions' rows in id order (`locked`): batches from two hosts lock
   their common rows in the same order, so they queue instead of deadlocking; then
   the answers it consumes, in (session, call) order;
2. fences every session: its owner must be the writer's host under the writer's
   epoch, else `askbridge.not_owner` raises NOT_OWNER naming the owner (G4: a
   paused or cut-off host that lost its lease writes nothing); its stored next_seq
   must be the expected one, else `askbridge.fenced` raises FENCED (NO_SESSION for a
   session that is gone); and every answer it consumes must be live and unconsumed,
   else ANSWER_SPENT. The check is a MATERIALIZED CTE that the INSERT's one-time
   filter reads before the first row is written, and that counts every session: a
   check placed where the planner may skip it (a select list, a join that sees an
   empty side first) silently writes nothing, or too much;
3. moves each session's next_seq past its events, marks the answers consumed at the
   sequence number of the event that uses them (G6: an acknowledged answer is
   consumed exactly once, in the commit of the event that carries it), inserts the
   events in (session, seq) order, each with its epoch and the database's
   `clock_timestamp()` as `committed_at`, and notifies `askbridge` with "session
   last_seq" per session (G5: followers read what is new; no text in the payload;
   PostgreSQL delivers it only once the transaction commits).

Exactly once: a commit whose connection is lost before its reply may or may not have
been committed. Its retry (`retried`) sends the same statement; if the first one did
commit, a fence now fails, and `already_written` finds the very events at the very
sequence numbers: the commit is done, and nothing was written twice. Any other
refusal is what it says, and nothing was written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from .pg_connections import Conn
from .pg_schema import FENCED, NO_SESSION
from .pg_team_schema import ANSWER_SPENT, NOT_OWNER

# The statement (module docstring), built with or without the answers it consumes: most
# commits consume none, and the answers' part costs a 64-session commit ~4% of its CPU.
_USES = """
), uses AS (
    SELECT * FROM unnest(%(use_ids)b::text[], %(use_calls)b::text[], %(use_seqs)b::int8[])
        AS u (session_id, call_id, seq)
), usable AS (
    SELECT a.session_id, a.call_id, a.consumed_seq FROM askbridge.answers a
    JOIN uses u ON a.session_id = u.session_id AND a.call_id = u.call_id
    WHERE a.withdrawn_at IS NULL
    ORDER BY a.session_id, a.call_id
    FOR UPDATE OF a"""
_USES_FENCE = """
    + (SELECT count(*) FROM uses u
        LEFT JOIN usable a ON a.session_id = u.session_id AND a.call_id = u.call_id
        WHERE CASE WHEN a.call_id IS NULL OR a.consumed_seq IS NOT NULL
            THEN askbridge.answer_spent(u.session_id, u.call_id)
            ELSE false END)"""
_USED = """
), used AS (
    UPDATE askbridge.answers a SET consumed_seq = u.seq
    FROM uses u WHERE a.session_id = u.session_id AND a.call_id = u.call_id
        AND a.withdrawn_at IS NULL AND a.consumed_seq IS NULL"""
_APPEND = """
WITH batch AS (
    SELECT * FROM unnest(%(ids)b::text[], %(expected)b::int8[], %(counts)b::int8[],
        %(epochs)b::int8[]) WITH ORDINALITY AS b (session_id, expected, n, epoch, ord)
), locked AS (
    SELECT s.id, s.next_seq, s.owner_host, s.owner_epoch FROM askbridge.sessions s
    WHERE s.id = ANY (%(ids)b::text[])
    ORDER BY s.id
    FOR UPDATE{uses}
), fence AS MATERIALIZED (
    SELECT b.session_id, b.expected, b.n, b.epoch, l.next_seq AS stored, l.owner_host,
        l.owner_epoch
    FROM batch b LEFT JOIN locked l ON l.id = b.session_id
), fenced AS MATERIALIZED (
    SELECT (SELECT count(*) FROM fence f WHERE CASE
        WHEN f.stored IS NULL THEN askbridge.fenced(f.session_id, NULL, f.expected)
        WHEN f.owner_epoch IS DISTINCT FROM f.epoch OR f.owner_host IS DISTINCT FROM %(host)s
        THEN askbridge.not_owner(f.session_id, f.owner_host)
        WHEN f.stored IS DISTINCT FROM f.expected
        THEN askbridge.fenced(f.session_id, f.stored, f.expected)
        ELSE false END){uses_fence} AS n
), moved AS (
    UPDATE askbridge.sessions s SET next_seq = f.expected + f.n
    FROM fence f WHERE s.id = f.session_id
    RETURNING pg_notify('askbridge', s.id || ' ' || (f.expected + f.n - 1)){used}
), slots AS (
    SELECT b.session_id, b.expected + i AS seq, b.epoch,
        row_number() OVER (ORDER BY b.ord, i) AS ord
    FROM batch b CROSS JOIN LATERAL generate_series(0, b.n - 1) AS i
)
INSERT INTO askbridge.events (session_id, seq, body, type, epoch)
SELECT s.session_id, s.seq, e.body::json, e.type, s.epoch
FROM unnest(%(bodies)b::text[], %(types)b::text[]) WITH ORDINALITY AS e (body, type, ord)
JOIN slots s ON s.ord = e.ord
WHERE (SELECT n FROM fenced) = 0
ORDER BY s.ord
"""
APPEND = _APPEND.format(uses="", uses_fence="", used="")
APPEND_USING = _APPEND.format(uses=_USES, uses_fence=_USES_FENCE, used=_USED)

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


class NotOwner(Exception):
    """The writer's epoch for `session_id` is stale (NOT_OWNER, G4): `owner` (a host id, or
    None when nobody holds it) named `owner_name` owns it now."""

    def __init__(self, session_id: str, owner: str | None, owner_name: str | None) -> None:
        super().__init__(f"session {session_id!r} is owned by {owner_name or owner}")
        self.session_id = session_id
        self.owner = owner
        self.owner_name = owner_name


class AnswerSpent(Exception):
    """An answer the commit consumes is withdrawn, missing or consumed already (G6)."""

    def __init__(self, session_id: str, call_id: str) -> None:
        super().__init__(f"no unconsumed answer to call {call_id!r} of session {session_id!r}")
        self.session_id = session_id
        self.call_id = call_id


# An answer the commit consumes: (session, call, index of the event that uses it among
# that session's events in the commit, in the order given).
Use = tuple[str, str, int]


@dataclass(frozen=True)
class Commit:
    ids: list[str]  # the sessions, in id order
    expected: list[int]  # each one's next_seq before this commit
    counts: list[int]  # and how many events it gets
    epochs: list[int]  # the lease's epoch its writer holds (G4)
    bodies: list[str]  # the events, in (session, seq) order
    types: list[str | None]
    host: str  # the writer's host id
    uses: list[tuple[str, str, int]]  # (session, call, seq), in (session, call) order

    @classmethod
    def of(
        cls,
        batches: Sequence[tuple[str, Sequence[str]]],
        next_seq: Mapping[str, int],
        epochs: Mapping[str, int],
        host: str,
        uses: Sequence[Use] = (),
    ) -> Commit:
        """The commit of `batches` (sessions without events left out; a session named twice
        gets its events in the order given), numbered from `next_seq`, consuming `uses`."""
        merged: dict[str, list[str]] = {}
        for session_id, bodies in batches:
            if bodies:
                merged.setdefault(session_id, []).extend(bodies)
        ids = sorted(merged)
        bodies = [body for session_id in ids for body in merged[session_id]]
        numbered = []
        for session_id, call_id, index in uses:
            if not 0 <= index < len(merged.get(session_id, ())):
                raise ValueError(f"answer {call_id!r} is used by no event of {session_id!r}")
            numbered.append((session_id, call_id, next_seq[session_id] + index))
        return cls(
            ids,
            [next_seq[session_id] for session_id in ids],
            [len(merged[session_id]) for session_id in ids],
            [epochs[session_id] for session_id in ids],
            bodies,
            [event_type(body) for body in bodies],
            host,
            sorted(numbered),
        )

    @property
    def after(self) -> list[int]:
        """Each session's next_seq once this commit is in."""
        return [first + n for first, n in zip(self.expected, self.counts, strict=True)]

    def params(self) -> dict[str, Any]:
        params = {
            "ids": self.ids,
            "expected": self.expected,
            "counts": self.counts,
            "epochs": self.epochs,
            "bodies": self.bodies,
            "types": self.types,
            "host": self.host,
        }
        if self.uses:
            params["use_ids"] = [use[0] for use in self.uses]
            params["use_calls"] = [use[1] for use in self.uses]
            params["use_seqs"] = [use[2] for use in self.uses]
        return params

    async def attempt(self, conn: Conn, retried: bool) -> None:
        """Send the commit (module docstring); KeyError for a session that is gone, Fenced
        when another writer moved one on, NotOwner when the writer's epoch is stale,
        AnswerSpent when an answer it consumes cannot be."""
        try:
            await conn.execute(APPEND_USING if self.uses else APPEND, self.params())
        except psycopg.Error as exc:
            state, diag = exc.sqlstate, exc.diag
            if state == NO_SESSION:
                raise KeyError(diag.message_detail or "?") from None
            if state not in (FENCED, NOT_OWNER, ANSWER_SPENT):
                raise
            # A retry whose first attempt did commit meets its own writes in every fence.
            if retried and await self.already_written(conn):
                return
            session_id = diag.message_detail or "?"
            if state == NOT_OWNER:
                owner, _, name = (diag.message_hint or "").partition(" ")
                raise NotOwner(session_id, owner or None, name or None) from None
            if state == ANSWER_SPENT:
                raise AnswerSpent(session_id, diag.message_hint or "?") from None
            raise Fenced(session_id, diag.message_primary or "") from None

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
