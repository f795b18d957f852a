"""Reading one session's rows from the events table, checked whole (S6) before any of
them is decoded (event_rows.py): the SQLite store's side of `load` and `load_lazily`.

A session's rows are numbered 0..n-1 (`seq`, 0 for its header) and it has a row in
`sessions`; anything else is StoreDamaged naming what is missing, never an empty or
unknown session. The checks read the primary key's index only, so a sound session
costs one extra query that touches no body.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from .store_api import StoreDamaged

Damaged = Callable[[str], StoreDamaged]  # the error naming the file and session, for a problem

_SELECT = "SELECT {} FROM events WHERE session_id = ? ORDER BY seq"


def listed(conn: sqlite3.Connection, session_id: str) -> bool:
    """The session has its row in `sessions`."""
    row = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return row is not None


def session_rows(
    conn: sqlite3.Connection, session_id: str, what: str, damaged: Damaged
) -> list[Any]:
    """`SELECT <what>` of each of the session's rows, in order: KeyError if it has none
    and no row in `sessions`, StoreDamaged if they or that row are not all there. Call it
    inside one read transaction, so the checks and the rows see one state."""
    count, first, last = conn.execute(
        "SELECT count(*), min(seq), max(seq) FROM events WHERE session_id = ?", (session_id,)
    ).fetchone()
    is_listed = listed(conn, session_id)
    if not count:
        if is_listed:
            raise damaged("it is listed but has no events")
        raise KeyError(session_id)
    # seq is unique per session, so it runs 0..n-1 without gaps iff its ends do.
    if first != 0 or last != count - 1:
        seqs = conn.execute(_SELECT.format("seq"), (session_id,)).fetchall()
        raise damaged(gap([seq for (seq,) in seqs]))
    if not is_listed:
        raise damaged("it has events but no row in the sessions table")
    return conn.execute(_SELECT.format(what), (session_id,)).fetchall()


def event_body(conn: sqlite3.Connection, session_id: str, seq: int) -> object:
    """The stored body of one event (None if there is no such row)."""
    row = conn.execute(
        "SELECT body FROM events WHERE session_id = ? AND seq = ?", (session_id, seq)
    ).fetchone()
    return row[0] if row is not None else None


def gap(seqs: Sequence[int]) -> str:
    """Which sequence numbers are missing (slow path, damaged files only)."""
    index, seq = next((i, seq) for i, seq in enumerate(seqs) if seq != i)
    if seq < index:
        return f"event {index} is numbered {seq}"
    missing = f"event {index} is" if seq == index + 1 else f"events {index}..{seq - 1} are"
    return ("its header is missing: " if index == 0 else "") + f"{missing} missing"
