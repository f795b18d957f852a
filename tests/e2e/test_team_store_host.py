"""A host on the team store (G1–G3, G8) as a client sees it, in both host modes: real
`askbridge serve` processes on a real PostgreSQL, the URL given as `--store` or
ASKBRIDGE_STORE.

What one host on PostgreSQL must do as on SQLite: a question asked and answered, the
session's log in the database (not in the data directory's SQLite), a restart that
resumes the session from the database, `host --status` naming the store without its
password, and a front door given another store refused by the running host in one line
naming both (G1).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_scripts import SQLITE, ask_step, script, text_step

from askbridge.testing.wire import RawServer
from postgres import PASSWORD, Database

pytestmark = pytest.mark.timeout(120)


def store_env(url: str) -> dict[str, str]:
    return {"ASKBRIDGE_STORE": url}


async def test_G1_G3_a_question_on_a_host_whose_store_is_postgresql(
    askbridge_client: Any, pg_database: Database, tmp_path: Path
) -> None:
    """G3: the session and its question live in the team store; the data directory holds no
    SQLite log. A second start on the same data dir and store resumes the session (G8)."""
    data = tmp_path / "data"
    model = script(ask_step(), text_step("done"))
    url = pg_database.password_url()
    async with askbridge_client(data_dir=data, model=model, env=store_env(url)) as client:
        client.answer_with(lambda ask: SQLITE)
        sid = await client.new_session()
        assert await client.prompt(sid, "go") == "end_turn"
    rows = pg_database.query(
        "SELECT type FROM askbridge.events WHERE session_id = %s ORDER BY seq", sid
    )
    types = [t for (t,) in rows]
    assert types[0] == "session/header" and "tool/result" in types and types[-1] == "turn/end"
    assert not (data / "askbridge.db").exists()  # the data directory holds no log
    async with askbridge_client(data_dir=data, model=model, env=store_env(url)) as client:
        assert sid in [s["sessionId"] for s in await client.list_sessions()]
        await client.load_session(sid)
        view = await client.view(sid)
        assert view["active"] == [], view  # its question was answered, in the database


async def test_G1_a_door_given_another_store_is_refused_by_the_running_host(
    pg_database: Database, tmp_path: Path
) -> None:
    """G1: a host runs on the team store; a door on the same data dir without a store (the
    data directory's SQLite) is refused in one line naming both stores, never a password;
    the host's status names its store."""
    data = tmp_path / "data"
    url = pg_database.password_url()
    async with RawServer.start(data, host="auto", env=store_env(url)) as same:
        await same.initialize()  # the same store: attached (its host started on it)
        status = askbridge("host", "--status", "--data-dir", str(data))
        assert "store: postgresql://" in status.stdout, status.stdout
        assert pg_database.name in status.stdout
        door = askbridge("serve", "--data-dir", str(data), "--host", "auto")
        assert door.returncode == 1, door
        [line] = door.stderr.splitlines()
        assert "the data directory's SQLite" in line and "postgresql://" in line, line
        for text in (status.stdout, door.stderr):
            assert PASSWORD not in text


def askbridge(*args: str) -> subprocess.CompletedProcess[str]:
    """A command without a team store in its environment."""
    return subprocess.run(
        [sys.executable, "-m", "askbridge.cli", *args],
        input="",
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "ASKBRIDGE_STORE"},
    )
