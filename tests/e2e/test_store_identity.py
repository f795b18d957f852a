"""S6: a data directory that had a store refuses a database that is gone or emptied.

A real server creates a session and stops; then its `askbridge.db` is truncated
to 0 bytes, deleted, or replaced by an empty SQLite file. The next start, in each
host mode, must be refused with one line naming the database (exit 1), not come
up as a fresh store that lists no sessions. An untouched directory still opens
with its session, and a directory that never had a store still starts fresh.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from askbridge.testing.wire import RawServer, serve_command

pytestmark = pytest.mark.timeout(90)


def truncate(db: Path) -> None:
    db.write_bytes(b"")


def delete(db: Path) -> None:
    for name in (db.name, db.name + "-wal", db.name + "-shm"):
        (db.parent / name).unlink(missing_ok=True)


def replace_by_empty_sqlite(db: Path) -> None:
    delete(db)
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (x)")  # a real one-page SQLite file ...
    conn.execute("DROP TABLE t")  # ... that holds no table at all
    conn.commit()
    conn.close()
    os.chmod(db, 0o600)
    assert db.stat().st_size > 0


async def make_store(data_dir: Path) -> str:
    async with RawServer.start(data_dir) as server:
        await server.initialize()
        created = await server.call("session/new", {})
        session_id: str = created["result"]["sessionId"]
        assert await server.shutdown_and_exit() == 0
    return session_id


def start_refused(data_dir: Path) -> str:
    done = subprocess.run(
        serve_command(data_dir), input=b"", capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 1, done
    assert done.stdout == b""
    err = done.stderr.decode()
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(
    ("damage", "what"),
    [
        (truncate, "is empty (0 bytes)"),
        (delete, "is missing"),
        (replace_by_empty_sqlite, "holds no askbridge data"),
    ],
    ids=["truncated", "deleted", "replaced"],
)
async def test_S6_a_lost_database_is_refused_at_start(
    tmp_path: Path, damage: Callable[[Path], None], what: str
) -> None:
    data_dir = tmp_path / "data"
    await make_store(data_dir)
    identity = data_dir / "askbridge.store"
    assert stat.S_IMODE(identity.stat().st_mode) == 0o600
    db = data_dir / "askbridge.db"
    damage(db)
    err = start_refused(data_dir)
    assert f"the event store {db} {what}, but {data_dir} held a store" in err, err
    # Refusing changed nothing: the same start is refused again, the identity is kept.
    assert start_refused(data_dir) == err
    assert identity.exists()


async def test_S6_an_intact_store_opens_with_its_sessions(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    session_id = await make_store(data_dir)
    identity = (data_dir / "askbridge.store").read_bytes()
    async with RawServer.start(data_dir) as server:
        await server.initialize()
        listed = await server.call("session/list", {})
        assert [s["sessionId"] for s in listed["result"]["sessions"]] == [session_id]
        assert await server.shutdown_and_exit() == 0
    assert (data_dir / "askbridge.store").read_bytes() == identity  # written once


async def test_S6_a_store_from_before_the_identity_file_gets_one(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    session_id = await make_store(data_dir)
    (data_dir / "askbridge.store").unlink()  # as an older askbridge left it
    async with RawServer.start(data_dir) as server:
        await server.initialize()
        listed = await server.call("session/list", {})
        assert [s["sessionId"] for s in listed["result"]["sessions"]] == [session_id]
        assert await server.shutdown_and_exit() == 0
    assert (data_dir / "askbridge.store").exists()
    truncate(data_dir / "askbridge.db")
    assert "is empty (0 bytes)" in start_refused(data_dir)
