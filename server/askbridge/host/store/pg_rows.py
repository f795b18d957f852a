"""Reading the team store: each read one statement (one snapshot), a session's rows
checked whole (S6) as session_rows.py checks SQLite's, and decoded all at once or
lazily (event_rows.py).

A session's events are numbered 0..n-1 and its `sessions` row says n is next; a
listed session without events, a gap, a missing tail (next_seq beyond the last
event) or events without a row is StoreDamaged naming what is missing, never an
empty or unknown session. `lazy_events` leaves the bodies its folds do not read
undecoded but holds their text: a lazy read must not wait on the network.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..log.events import SESSION_HEADER, Event
from .event_rows import LAZY_TYPES, BadEvent, columns, decode, decode_lazily, json_object
from .pg_connections import Conn
from .session_rows import gap
from .store_api import SessionInfo, StoreDamaged, session_infos_of

Damaged = Callable[[str], StoreDamaged]  # the error naming the store and session, for a problem
Row = tuple[Any, ...]

# The session's next_seq (as text, in the row numbered -1), then its events in order.
_LOAD = """
SELECT -1::int8, NULL::text, (SELECT next_seq::text FROM askbridge.sessions WHERE id = %(id)s)
UNION ALL
SELECT seq, type, body::text FROM askbridge.events WHERE session_id = %(id)s
ORDER BY 1
"""
_HEADER = "SELECT body::text FROM askbridge.events WHERE session_id = %s AND seq = 0"
_NEXT_SEQ = "SELECT id, next_seq FROM askbridge.sessions WHERE id = ANY (%b::text[])"
_EXISTS = """
SELECT EXISTS (SELECT 1 FROM askbridge.sessions WHERE id = %(id)s)
    OR EXISTS (SELECT 1 FROM askbridge.events WHERE session_id = %(id)s)
"""
_LIST = """
SELECT id, created_at, origin, title, parent_session_id FROM askbridge.sessions
ORDER BY created_at, created_order
"""
_LAZY = frozenset(LAZY_TYPES)


async def session_rows(conn: Conn, session_id: str, damaged: Damaged) -> list[Row]:
    """The session's events as (seq, type, body) rows: KeyError if it has neither events
    nor a row, StoreDamaged if they are not all there."""
    cur = await conn.execute(_LOAD, {"id": session_id})
    (_, _, next_seq), *rows = await cur.fetchall()
    if not rows:
        if next_seq is not None:
            raise damaged("it is listed but has no events")
        raise KeyError(session_id)
    # seq is unique per session, so it runs 0..n-1 without gaps iff its ends do.
    if rows[0][0] != 0 or rows[-1][0] != len(rows) - 1:
        raise damaged(gap([seq for seq, _, _ in rows]))
    if next_seq is None:
        raise damaged("it has events but no row in the sessions table")
    if int(next_seq) != len(rows):
        raise damaged(f"events {len(rows)}..{int(next_seq) - 1} are missing")
    return rows


def events(rows: list[Row], bad_event: BadEvent, damaged: Damaged) -> list[Event]:
    """Every row's body as its event."""
    return _headed(decode([body for _, _, body in rows], bad_event), damaged)


def lazy_events(rows: list[Row], bad_event: BadEvent, damaged: Damaged) -> list[Event]:
    """`events`, the bodies of LAZY_TYPES decoded on first use (from the text held here)."""
    texts: list[str] = []
    held: dict[int, str] = {}
    for index, (_, kind, body) in enumerate(rows):
        head = columns(body)[1] if kind in _LAZY else None
        if head is None:
            texts.append(body)
        else:
            texts.append(head)
            held[index] = body

    def read(index: int) -> Event:
        event = json_object(held.pop(index, None))
        if event is None:
            raise bad_event(index)
        return event

    return _headed(decode_lazily(texts, bad_event, read), damaged)


def _headed(loaded: list[Event], damaged: Damaged) -> list[Event]:
    if loaded[0].get("type") != SESSION_HEADER:
        raise damaged(f"its event 0 is not a {SESSION_HEADER}")
    return loaded


async def next_seqs(conn: Conn, session_ids: list[str]) -> dict[str, int]:
    """The next sequence number of each of `session_ids` that exists."""
    cur = await conn.execute(_NEXT_SEQ, (session_ids,))
    return {session_id: int(next_seq) for session_id, next_seq in await cur.fetchall()}


async def header_of(conn: Conn, session_id: str) -> str | None:
    cur = await conn.execute(_HEADER, (session_id,))
    row = await cur.fetchone()
    return None if row is None else str(row[0])


async def exists(conn: Conn, session_id: str) -> bool:
    cur = await conn.execute(_EXISTS, {"id": session_id})
    row = await cur.fetchone()
    return bool(row and row[0])


async def session_infos(conn: Conn) -> list[SessionInfo]:
    cur = await conn.execute(_LIST)
    return session_infos_of(await cur.fetchall())
