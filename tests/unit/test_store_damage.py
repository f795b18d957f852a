"""S6: a damaged store is reported, never mistaken for an empty one.

Each test writes a real store, damages the file the way a crash, a bad copy
or a stray tool would (raw `sqlite3` edits, truncation, garbage bytes), and
checks that the store says STORE_DAMAGED naming the file (and the session),
where an unknown session stays KeyError. The last test does the same through
a real `askbridge serve`: `session/load` of a damaged session is -32000
STORE_DAMAGED, not UNKNOWN_SESSION.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from store_helpers import header

from askbridge.host.log import events as ev
from askbridge.host.store.datadir import DB_FILE_NAME, open_store
from askbridge.host.store.store_api import StoreDamaged
from askbridge.testing.wire import RawServer


async def written_store(data_dir: Path, events: int = 5, pad: int = 0) -> Path:
    """A closed store with session s1 of `events` events after its header, and s2 intact."""
    store = open_store(data_dir)
    await store.create_session(header("s1"))
    await store.append("s1", [{"type": "x", "n": n, "pad": "p" * pad} for n in range(events)])
    await store.create_session(header("s2"))
    await store.close()
    return data_dir / DB_FILE_NAME


def tamper(db: Path, *statements: str) -> None:
    with sqlite3.connect(db, isolation_level=None) as conn:  # foreign keys off, as any tool
        for statement in statements:
            conn.execute(statement)
    conn.close()


@pytest.mark.parametrize(
    ("statements", "problem"),
    [
        (["DELETE FROM events WHERE session_id = 's1' AND seq = 0"], "its header is missing"),
        (["DELETE FROM events WHERE session_id = 's1' AND seq = 2"], "event 2 is missing"),
        (
            ["DELETE FROM events WHERE session_id = 's1' AND seq IN (2, 3, 4)"],
            "events 2..4 are missing",
        ),
        (["DELETE FROM events WHERE session_id = 's1'"], "it is listed but has no events"),
        (
            ["DELETE FROM sessions WHERE id = 's1'"],
            "it has events but no row in the sessions table",
        ),
        (
            ["UPDATE events SET body = '{\"type\": \"x\"}' WHERE session_id = 's1' AND seq = 0"],
            "its event 0 is not a session/header",
        ),
        (["UPDATE events SET body = 'null' WHERE seq = 3"], "event 3 is not a JSON object"),
        (["UPDATE events SET body = '[' WHERE seq = 1"], "event 1 is not a JSON object"),
    ],
)
async def test_S6_a_session_whose_events_cannot_be_read_is_damaged_not_unknown(
    tmp_path: Path, statements: list[str], problem: str
) -> None:
    db = await written_store(tmp_path / "data")
    tamper(db, *statements)
    store = open_store(tmp_path / "data")
    try:
        assert await store.exists("s1")  # known, so the host will not call it UNKNOWN_SESSION
        with pytest.raises(StoreDamaged) as caught:
            await store.load("s1")
        assert caught.value.code == "STORE_DAMAGED"
        assert caught.value.name == "StoreError"
        assert str(caught.value).startswith(f"{db} is damaged: session 's1': {problem}")
        # The rest of the store is untouched and usable; the unknown stays unknown.
        assert await store.load("s2") == [header("s2")]
        await store.append("s2", [ev.turn_start("t1", "prompt")])
        assert not await store.exists("nope")
        with pytest.raises(KeyError):
            await store.load("nope")
    finally:
        await store.close()


async def test_S6_appending_to_a_listed_session_without_events_is_damaged(tmp_path: Path) -> None:
    db = await written_store(tmp_path / "data")
    tamper(db, "DELETE FROM events WHERE session_id = 's1'")
    store = open_store(tmp_path / "data")
    try:
        with pytest.raises(StoreDamaged, match="'s1': it is listed but has no events"):
            await store.append("s1", [ev.turn_start("t1", "prompt")])
    finally:
        await store.close()


@pytest.mark.parametrize("keep", [0.5, 0.9, 0.25])
async def test_S6_a_truncated_database_file_is_damaged_at_open(tmp_path: Path, keep: float) -> None:
    db = await written_store(tmp_path / "data", events=300, pad=2000)
    data = db.read_bytes()
    assert not db.with_name(DB_FILE_NAME + "-wal").exists()  # a clean close checkpointed it
    db.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(StoreDamaged) as caught:
        open_store(tmp_path / "data")
    assert str(caught.value) == (
        f"{db} is damaged: it has {int(len(data) * keep)} bytes where its header says "
        f"{len(data)} (a truncated copy?)"
    )
    assert db.stat().st_size == int(len(data) * keep)  # reported, not "repaired"


def test_S6_garbage_bytes_are_damaged_at_open(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    (data_dir / DB_FILE_NAME).write_bytes(b"this is not a database\x00\xff" * 300)
    with pytest.raises(StoreDamaged) as caught:
        open_store(data_dir)
    assert caught.value.code == "STORE_DAMAGED"
    assert str(caught.value).startswith(f"{data_dir / DB_FILE_NAME} is damaged")


async def test_S6_corrupt_event_pages_name_the_file_and_the_session(tmp_path: Path) -> None:
    """Pages smashed inside a file of the right length: SQLite finds it when reading."""
    db = await written_store(tmp_path / "data", events=300, pad=2000)
    data = bytearray(db.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    # The schema and the small tables sit in the first pages; s1's bodies fill the rest.
    data[page_size * 8 :] = b"\xa5" * (len(data) - page_size * 8)
    db.write_bytes(bytes(data))
    store = open_store(tmp_path / "data")
    try:
        with pytest.raises(StoreDamaged) as caught:
            await store.load("s1")
    finally:
        await store.close()
    message = str(caught.value)
    assert message.startswith(f"{db} is damaged")
    assert "session 's1'" in message


async def test_S6_session_load_of_a_damaged_session_is_store_damaged_over_the_wire(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    async with RawServer.start(data_dir) as server:
        await server.initialize()
        sid = (await server.call("session/new", {}))["result"]["sessionId"]
        assert await server.shutdown_and_exit() == 0
    tamper(data_dir / DB_FILE_NAME, f"DELETE FROM events WHERE session_id = '{sid}' AND seq = 0")
    async with RawServer.start(data_dir) as server:
        await server.initialize()
        damaged = await server.call("session/load", {"sessionId": sid})
        assert damaged["error"]["code"] == -32000, damaged
        assert damaged["error"]["data"] == {"name": "StoreError", "code": "STORE_DAMAGED"}
        assert damaged["error"]["message"].startswith(
            f"{data_dir / DB_FILE_NAME} is damaged: session '{sid}': it is listed but has no events"
        )
        unknown = await server.call("session/load", {"sessionId": "s-none"})
        assert unknown["error"]["data"] == {"name": "SessionError", "code": "UNKNOWN_SESSION"}
        # The server is still there for everything else.
        assert "sessionId" in (await server.call("session/new", {}))["result"]
        assert await server.shutdown_and_exit() == 0


async def test_S6_a_damaged_message_body_is_store_damaged_at_session_load(tmp_path: Path) -> None:
    """A session loads lazily (its messages' bodies are read when needed), but a body that
    is not an object is still found at `session/load`, naming the event: not a load that
    succeeds and a turn that fails later, or never (a script model reads no history)."""
    data_dir = tmp_path / "data"
    async with RawServer.start(data_dir) as server:
        await server.initialize()
        sid = (await server.call("session/new", {}))["result"]["sessionId"]
        assert await server.shutdown_and_exit() == 0
    db = data_dir / DB_FILE_NAME
    store = open_store(data_dir)
    await store.append(sid, [ev.user_message(ev.text_content("hello"))])
    await store.close()
    tamper(db, f"UPDATE events SET body = '[' WHERE session_id = '{sid}' AND seq = 1")
    async with RawServer.start(data_dir) as server:
        await server.initialize()
        damaged = await server.call("session/load", {"sessionId": sid})
        assert damaged["error"]["data"] == {"name": "StoreError", "code": "STORE_DAMAGED"}
        assert damaged["error"]["message"] == (
            f"{db} is damaged: session '{sid}': event 1 is not a JSON object"
        )
        assert await server.shutdown_and_exit() == 0
