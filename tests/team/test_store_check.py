"""`askbridge store check [URL]` as a real process against a real PostgreSQL (G1, G2, G3):
what it prints, its exit status, and that no password ever reaches its output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from askbridge.host.log import events as ev
from askbridge.host.store.pg_schema import SCHEMA_VERSION
from askbridge.host.store.store_postgres import PostgresEventStore
from postgres import PASSWORD, PASSWORD_ROLE, Database


def askbridge(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "ASKBRIDGE_STORE"}
    return subprocess.run(
        [sys.executable, "-m", "askbridge.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**environment, **(env or {})},
        stdin=subprocess.DEVNULL,
        check=False,
    )


def lines(text: str) -> dict[str, str]:
    return {line[:11].strip(): line[11:] for line in text.splitlines()}


def test_G1_an_empty_database_is_reachable_and_has_no_schema_yet(pg_database: Database) -> None:
    done = askbridge("store", "check", pg_database.url)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    report = lines(done.stdout)
    assert (
        report["store"]
        == f"postgresql://postgres@/{pg_database.name}?host={pg_database.server.socket_dir}"
    )
    assert report["reachable"].startswith("yes (PostgreSQL 1")
    assert report["schema"].startswith("none yet")
    assert (report["sessions"], report["hosts up"]) == ("0", "0")
    assert pg_database.query("SELECT to_regnamespace('askbridge') IS NULL") == [
        (True,)
    ]  # reads only


async def test_G1_a_store_in_use_says_its_version_and_sessions_with_no_password(
    pg_database: Database, tmp_path: Path
) -> None:
    url = pg_database.password_url()
    store = await PostgresEventStore.open(url, str(tmp_path))
    for session_id in ("s1", "s2"):
        await store.create_session(
            ev.session_header(
                session_id=session_id,
                agent_id="a",
                origin="root",
                cwd="/w",
                model={"kind": "script"},
                ask_user_question={"mode": "legacy"},
                created_at="2025-01-01T00:00:00Z",
            )
        )
    done = askbridge("store", "check", url)
    assert lines(done.stdout)["hosts up"] == "1"  # the open store holds its liveness lock
    await store.close()
    for done in (
        askbridge("store", "check", url),
        askbridge("store", "check", env={"ASKBRIDGE_STORE": url}),  # G1: the environment's
    ):
        assert done.returncode == 0, done.stderr
        report = lines(done.stdout)
        assert report["store"].startswith(f"postgresql://{PASSWORD_ROLE}@/{pg_database.name}?host=")
        assert report["schema"] == f"version {SCHEMA_VERSION} (store {store.store_id})"
        assert (report["sessions"], report["hosts up"]) == ("2", "0")
        assert PASSWORD not in done.stdout + done.stderr


@pytest.mark.parametrize("problem", ["no server", "wrong password", "newer schema"])
def test_G1_G2_a_store_that_cannot_be_used_is_one_line_and_status_1(
    pg_database: Database, tmp_path: Path, problem: str
) -> None:
    url = pg_database.password_url()
    expected = {
        "no server": "the team store is unreachable: connection to server on socket",
        "wrong password": "cannot connect to the team store postgresql://",
        "newer schema": f"has schema version 7, newer than this askbridge understands ({SCHEMA_VERSION})",
    }[problem]
    if problem == "no server":
        url = url.replace(pg_database.server.socket_dir, str(tmp_path))
    elif problem == "wrong password":
        url = url.replace(PASSWORD, PASSWORD + "-not")
    else:
        url = pg_database.url  # the owner of what it creates below
        pg_database.query("CREATE SCHEMA askbridge")
        pg_database.query("CREATE TABLE askbridge.store_meta (store_id text, schema_version int)")
        pg_database.query("INSERT INTO askbridge.store_meta VALUES ('x', 7)")
    done = askbridge("store", "check", url)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("askbridge store check: ")
    assert expected in done.stderr
    assert PASSWORD not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["store", "check"], "give the store's URL, or set ASKBRIDGE_STORE"),
        (["store", "check", "/var/lib/x.db"], "URL must be a postgresql:// URL"),
        (["store"], "the following arguments are required"),
        (["serve", "--store", "sqlite.db"], "argument --store: must be a postgresql:// URL"),
    ],
)
def test_G1_a_store_usage_error_is_one_line_and_status_2(args: list[str], message: str) -> None:
    done = askbridge(*args)
    assert done.returncode == 2
    assert message in done.stderr and done.stderr.count("\n") == 1


@pytest.mark.parametrize("command", ["host", "serve", "mcp"])
@pytest.mark.parametrize("given", ["flag", "environment"])
def test_G1_a_host_is_never_started_on_sqlite_when_a_team_store_is_asked_for(
    tmp_path: Path, command: str, given: str
) -> None:
    """A command asked for a team store it cannot reach fails in one line naming the store
    (never its password) once G3's 10 s are up, and never runs on the data directory's
    SQLite instead."""
    url = f"postgresql://someone:secret-pw@/team?host={tmp_path / 'no-server'}"
    args = [command, "--data-dir", str(tmp_path / "data"), "--host", "inline"]
    if command == "host":
        args.remove("--host")
        args.remove("inline")
    done = (
        askbridge(*args, "--store", url)
        if given == "flag"
        else askbridge(*args, env={"ASKBRIDGE_STORE": url})
    )
    assert done.returncode == 1, done
    # The last line says why it stopped; an inline door's stderr (its log) may hold the
    # store's WARNING naming the store before it, a host's goes to host.log.
    log = (
        done.stderr + (tmp_path / "data" / "host.log").read_text()
        if command == "host"
        else done.stderr
    )
    assert done.stderr.splitlines()[-1].endswith("(for 10 s)"), done.stderr
    assert "the team store is unreachable" in done.stderr.splitlines()[-1]
    assert "postgresql://someone@/team" in log, log
    assert "secret-pw" not in log + done.stdout
    assert not (tmp_path / "data" / "askbridge.db").exists()
