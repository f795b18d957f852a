"""The SQLite file itself: persistence, group commit, schema migrations, damaged files.

All against real files in a temp directory; raw `sqlite3` connections stand
in for "what is actually on disk" and for older or foreign databases.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from store_helpers import header

from askbridge.host.log import events as ev
from askbridge.host.store.datadir import DB_FILE_NAME, DataDirLock, open_store
from askbridge.host.store.store_api import StoreDamaged, StoreError
from askbridge.host.store.store_sqlite import SCHEMA_VERSION, SQLiteEventStore


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def schema_version(path: Path) -> int:
    with raw(path) as conn:
        (version,) = conn.execute("SELECT version FROM schema_version").fetchone()
    return int(version)


async def test_D1_events_survive_close_and_reopen(tmp_path: Path) -> None:
    """D1: what `append` returned for is on disk for the next process."""
    store = open_store(tmp_path)
    await store.create_session(header("s1", title="Title"))
    await store.append("s1", [ev.turn_start("t1", "prompt"), ev.turn_end("t1", "end_turn")])
    await store.close()
    reopened = open_store(tmp_path)
    try:
        assert (await reopened.load("s1"))[1:] == [
            ev.turn_start("t1", "prompt"),
            ev.turn_end("t1", "end_turn"),
        ]
        assert [s.title for s in await reopened.list_sessions()] == ["Title"]
    finally:
        await reopened.close()


async def test_D1_append_is_one_transaction_visible_to_other_readers(tmp_path: Path) -> None:
    """D1 group commit: one append of many events is exactly one BEGIN…COMMIT, and a
    separate connection sees all of it as soon as `append` returns."""
    store = SQLiteEventStore(tmp_path / DB_FILE_NAME)
    await store.create_session(header("s1"))
    statements: list[str] = []
    store._conn.set_trace_callback(statements.append)
    await store.append("s1", [ev.turn_start(f"t{n}", "prompt") for n in range(50)])
    store._conn.set_trace_callback(None)
    assert [s for s in statements if s.startswith(("BEGIN", "COMMIT"))] == [
        "BEGIN IMMEDIATE",
        "COMMIT",
    ]
    with raw(tmp_path / DB_FILE_NAME) as reader:
        seqs = [s for (s,) in reader.execute("SELECT seq FROM events ORDER BY seq")]
    assert seqs == list(range(51))
    await store.close()


async def test_D2_journal_is_wal_with_normal_sync(tmp_path: Path) -> None:
    """D2: WAL + synchronous=NORMAL is what makes a commit survive kill -9."""
    store = SQLiteEventStore(tmp_path / DB_FILE_NAME)
    assert store._conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert store._conn.execute("PRAGMA synchronous").fetchone() == (1,)  # 1 = NORMAL
    await store.close()


async def test_a_new_file_gets_the_current_schema(tmp_path: Path) -> None:
    await SQLiteEventStore(tmp_path / DB_FILE_NAME).close()
    assert schema_version(tmp_path / DB_FILE_NAME) == SCHEMA_VERSION == 3
    with raw(tmp_path / DB_FILE_NAME) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(sessions)")]
        event_columns = [row[1] for row in conn.execute("PRAGMA table_info(events)")]
    assert columns == ["id", "created_at", "origin", "parent_session_id", "title"]
    assert event_columns == ["session_id", "seq", "body", "type", "head"]


# The first release's schema, spelled out here on purpose: this test must keep
# describing version 1 even after store_sqlite.py moves on.
V1_SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1);
CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at TEXT NOT NULL,
    origin TEXT NOT NULL, parent_session_id TEXT);
CREATE TABLE events (session_id TEXT NOT NULL REFERENCES sessions(id),
    seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session_id, seq));
"""


async def test_a_version_1_file_is_migrated_to_the_current_schema(tmp_path: Path) -> None:
    path = tmp_path / DB_FILE_NAME
    titled, untitled = header("old", title="Old work"), header("older")
    with raw(path) as conn:
        conn.executescript(V1_SCHEMA)
        for first in (titled, untitled):
            conn.execute(
                "INSERT INTO sessions VALUES (?, ?, 'root', NULL)",
                (first["sessionId"], first["createdAt"]),
            )
            conn.execute(
                "INSERT INTO events VALUES (?, 0, ?)", (first["sessionId"], json.dumps(first))
            )
        conn.execute(
            "INSERT INTO events VALUES ('old', 1, ?)", (json.dumps(ev.turn_start("t1", "prompt")),)
        )

    store = SQLiteEventStore(path)
    assert {s.session_id: s.title for s in await store.list_sessions()} == {
        "old": "Old work",
        "older": None,
    }
    await store.append("old", [ev.turn_end("t1", "end_turn")])
    assert await store.load("old") == [
        titled,
        ev.turn_start("t1", "prompt"),
        ev.turn_end("t1", "end_turn"),
    ]
    await store.close()

    assert schema_version(path) == SCHEMA_VERSION
    with raw(path) as conn:
        indexes = {
            name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")
        }
    assert "sessions_by_created_at" in indexes


async def test_a_newer_schema_version_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / DB_FILE_NAME
    await SQLiteEventStore(path).close()
    with raw(path) as conn:
        conn.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(StoreError) as caught:
        SQLiteEventStore(path)
    message = str(caught.value)
    assert str(path) in message
    assert "schema version 99" in message and "newer" in message
    assert schema_version(path) == 99


def test_garbage_bytes_are_reported_as_a_damaged_file(tmp_path: Path) -> None:
    path = tmp_path / DB_FILE_NAME
    path.write_bytes(b"this is not a database\x00\xff" * 300)
    with pytest.raises(StoreError) as caught:
        open_store(tmp_path)
    assert str(caught.value).startswith(f"{path} is damaged or not an SQLite database")
    # The failed open let go of the directory lock.
    with DataDirLock(tmp_path):
        pass


async def test_damaged_pages_inside_a_valid_file_are_reported(tmp_path: Path) -> None:
    path = tmp_path / DB_FILE_NAME
    store = SQLiteEventStore(path)
    await store.create_session(header("s1"))
    await store.append("s1", [{"type": "x", "pad": "p" * 3000, "n": n} for n in range(200)])
    await store.close()
    data = bytearray(path.read_bytes())
    # Keep the 100-byte file header and the first page (schema); smash everything after.
    page_size = int.from_bytes(data[16:18], "big")
    data[page_size:] = b"\xa5" * (len(data) - page_size)
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="damaged") as caught:
        reopened = SQLiteEventStore(path)
        try:
            await reopened.load("s1")
        finally:
            await reopened.close()
    assert str(path) in str(caught.value)


def test_a_foreign_sqlite_database_is_not_taken_over(tmp_path: Path) -> None:
    path = tmp_path / DB_FILE_NAME
    with raw(path) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    with pytest.raises(StoreError, match="not an askbridge database"):
        SQLiteEventStore(path)
    with raw(path) as conn:
        assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("notes",)]


@pytest.mark.parametrize("rows", [[], [("two",)], [(1,), (2,)]])
def test_an_unreadable_schema_version_is_reported(
    tmp_path: Path, rows: list[tuple[object]]
) -> None:
    path = tmp_path / DB_FILE_NAME
    with raw(path) as conn:
        conn.execute("CREATE TABLE schema_version (version)")
        conn.executemany("INSERT INTO schema_version VALUES (?)", rows)
    with pytest.raises(StoreError, match="unreadable schema version"):
        SQLiteEventStore(path)


@pytest.mark.parametrize("bad_body", ['{"type": "x"', "[1, 2]", '{"a": 1}, {"b": 2}', "7"])
async def test_S6_a_stored_event_that_is_not_one_json_object_is_named(
    tmp_path: Path, bad_body: str
) -> None:
    path = tmp_path / DB_FILE_NAME
    store = SQLiteEventStore(path)
    await store.create_session(header("s1"))
    await store.append("s1", [ev.turn_start("t1", "prompt"), ev.turn_end("t1", "end_turn")])
    with raw(path) as conn:
        conn.execute("UPDATE events SET body = ? WHERE seq = 1", (bad_body,))
    with pytest.raises(StoreDamaged) as caught:
        await store.load("s1")
    assert str(caught.value) == f"{path} is damaged: session 's1': event 1 is not a JSON object"
    assert caught.value.code == "STORE_DAMAGED"
    await store.close()
