"""The team store's schema and identity (G2, S6), on a real PostgreSQL.

Created on first use in its own PostgreSQL schema and versioned; migrated in one
transaction; a newer version refused in one line; and a data directory that used a
store refuses an emptied or different database instead of starting over.
"""

from __future__ import annotations

import stat
from pathlib import Path

import anyio
import pytest

from askbridge.core.errors import StoreError
from askbridge.host.log import events as ev
from askbridge.host.store.pg_connections import connect
from askbridge.host.store.pg_schema import MIGRATIONS, SCHEMA_VERSION, open_schema
from askbridge.host.store.store_api import encode_event
from askbridge.host.store.store_postgres import PostgresEventStore
from askbridge.host.store.team_identity import TEAM_FILE_NAME
from postgres import PASSWORD, Database
from session_headers import header


def test_the_schema_version_is_the_number_of_migrations() -> None:
    assert len(MIGRATIONS) == SCHEMA_VERSION


async def test_G2_a_new_store_gets_its_own_schema_and_the_directory_remembers_it(
    pg_database: Database, tmp_path: Path
) -> None:
    url = pg_database.password_url()
    store = await PostgresEventStore.open(url, str(tmp_path))
    await store.close()
    rows = pg_database.query("SELECT store_id, schema_version FROM askbridge.store_meta")
    assert rows == [(store.store_id, SCHEMA_VERSION)]
    tables = pg_database.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'askbridge'"
        " ORDER BY 1"
    )
    assert tables == [
        ("answers",),
        ("claims",),
        ("events",),
        ("hosts",),
        ("sessions",),
        ("store_meta",),
    ]
    assert pg_database.query(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
    ) == [(0,)]
    team_file = tmp_path / TEAM_FILE_NAME
    assert team_file.read_text() == f"askbridge team store {store.store_id}\n"
    assert stat.S_IMODE(team_file.stat().st_mode) == 0o600
    assert PASSWORD not in team_file.read_text()  # G9: no credential kept


async def test_G2_a_newer_schema_is_refused_in_one_line_and_left_alone(
    pg_database: Database, tmp_path: Path
) -> None:
    store = await PostgresEventStore.open(pg_database.url, str(tmp_path))
    await store.close()
    pg_database.query("UPDATE askbridge.store_meta SET schema_version = 99")
    with pytest.raises(StoreError) as caught:
        await PostgresEventStore.open(pg_database.url, str(tmp_path))
    assert caught.value.message == (
        f"the team store postgresql://postgres@/{pg_database.name}?host="
        f"{pg_database.server.socket_dir} has schema version 99, newer than this askbridge "
        f"understands ({SCHEMA_VERSION}); upgrade askbridge on this machine"
    )
    assert pg_database.query("SELECT schema_version FROM askbridge.store_meta") == [(99,)]


async def test_G2_a_migration_runs_in_one_transaction(pg_database: Database) -> None:
    """A step that fails leaves the store as it was; one that succeeds moves its version."""
    where = "the test store"
    conn = await connect(pg_database.url)
    try:
        store_id = await open_schema(conn, where, create=True, new_store_id="s-1")
        failing = [*MIGRATIONS, ("CREATE TABLE askbridge.later (x int)", "SELECT 1/0")]
        with pytest.raises(Exception, match="division by zero"):
            await open_schema(conn, where, create=True, new_store_id="s-2", migrations=failing)
        assert pg_database.query("SELECT to_regclass('askbridge.later') IS NULL") == [(True,)]
        assert pg_database.query("SELECT schema_version FROM askbridge.store_meta") == [
            (SCHEMA_VERSION,)
        ]
        working = [*MIGRATIONS, ("CREATE TABLE askbridge.later (x int)",)]
        again = await open_schema(conn, where, create=True, new_store_id="s-3", migrations=working)
        assert again == store_id == "s-1"
        assert pg_database.query("SELECT schema_version FROM askbridge.store_meta") == [
            (SCHEMA_VERSION + 1,)
        ]
        assert pg_database.query("SELECT to_regclass('askbridge.later') IS NULL") == [(False,)]
    finally:
        await conn.close()


async def test_G2_G4_a_store_of_version_1_is_migrated_and_its_sessions_taken_on(
    pg_database: Database, tmp_path: Path
) -> None:
    """A store made before hosts and leases existed: the first host that opens it brings
    it to the current version; its sessions have no owner, so the first host to write
    takes each one (epoch 1) and numbers on from its last event."""
    conn = await connect(pg_database.url)
    try:
        await open_schema(conn, "old", create=True, new_store_id="s-old", migrations=MIGRATIONS[:1])
        await conn.execute(
            "INSERT INTO askbridge.sessions (id, created_at, origin, next_seq)"
            " VALUES ('s1', '2025-01-01T00:00:00Z', 'root', 1)"
        )
        await conn.execute(
            "INSERT INTO askbridge.events (session_id, seq, body, type) VALUES ('s1', 0, %s, %s)",
            (encode_event(header("s1")), "session/header"),
        )
    finally:
        await conn.close()
    store = await PostgresEventStore.open(pg_database.url, str(tmp_path))
    try:
        assert store.store_id == "s-old"
        assert pg_database.query("SELECT schema_version FROM askbridge.store_meta") == [
            (SCHEMA_VERSION,)
        ]
        await store.append("s1", [ev.turn_start("t1", "prompt")])
        assert [e["type"] for e in await store.load("s1")] == ["session/header", "turn/start"]
        assert pg_database.query("SELECT owner_host, owner_epoch FROM askbridge.sessions") == [
            (store.team.host_id, 1)
        ]
    finally:
        await store.close()


async def test_G2_hosts_starting_together_on_an_empty_database_create_one_store(
    pg_database: Database, tmp_path: Path
) -> None:
    stores: list[PostgresEventStore] = []

    async def open_one(n: int) -> None:
        stores.append(await PostgresEventStore.open(pg_database.url, str(tmp_path / f"h{n}")))

    async with anyio.create_task_group() as tasks:
        for n in range(4):
            tasks.start_soon(open_one, n)
    for store in stores:
        await store.close()
    assert len({store.store_id for store in stores}) == 1
    assert pg_database.query("SELECT count(*) FROM askbridge.store_meta") == [(1,)]


async def test_G2_S6_an_emptied_database_is_refused_never_started_over(
    pg_database: Database, tmp_path: Path
) -> None:
    store = await PostgresEventStore.open(pg_database.url, str(tmp_path))
    await store.create_session(header("s1"))
    await store.close()
    pg_database.query("DROP SCHEMA askbridge CASCADE")
    with pytest.raises(StoreError) as caught:
        await PostgresEventStore.open(pg_database.url, str(tmp_path))
    message = caught.value.message
    assert "holds no askbridge data, but " in message
    assert f"used the store {store.store_id} ({tmp_path / TEAM_FILE_NAME} says so)" in message
    assert "\n" not in message
    assert pg_database.query("SELECT to_regnamespace('askbridge') IS NULL") == [(True,)]
    (tmp_path / TEAM_FILE_NAME).unlink()  # "start this directory on a new store"
    fresh = await PostgresEventStore.open(pg_database.url, str(tmp_path))
    assert fresh.store_id != store.store_id
    await fresh.close()


async def test_G2_S6_another_store_is_refused(pg_database: Database, tmp_path: Path) -> None:
    ours = await PostgresEventStore.open(pg_database.url, str(tmp_path / "ours"))
    await ours.close()
    other_db = pg_database.server.url(pg_database.server.new_database())
    theirs = await PostgresEventStore.open(other_db, str(tmp_path / "theirs"))
    await theirs.close()
    with pytest.raises(StoreError) as caught:
        await PostgresEventStore.open(other_db, str(tmp_path / "ours"))
    assert f"is the store {theirs.store_id}, but " in caught.value.message
    assert f"used the store {ours.store_id}" in caught.value.message


async def test_G1_a_second_host_joins_the_store_it_finds(
    pg_database: Database, tmp_path: Path
) -> None:
    first = await PostgresEventStore.open(pg_database.url, str(tmp_path / "a"))
    await first.create_session(header("s1"))
    second = await PostgresEventStore.open(pg_database.url, str(tmp_path / "b"))
    try:
        assert second.store_id == first.store_id
        assert [info.session_id for info in await second.list_sessions()] == ["s1"]
        assert (tmp_path / "b" / TEAM_FILE_NAME).read_text().split()[-1] == first.store_id
    finally:
        await first.close()
        await second.close()


async def test_a_database_that_is_not_utf8_is_refused(
    pg_database: Database, tmp_path: Path
) -> None:
    name = f"{pg_database.name}_ascii"
    with pg_database.server.admin() as conn:
        conn.execute(
            f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'SQL_ASCII' LC_COLLATE 'C'"
            " LC_CTYPE 'C'"
        )
    with pytest.raises(StoreError, match="uses the SQL_ASCII encoding; askbridge needs a UTF8"):
        await PostgresEventStore.open(pg_database.server.url(name), str(tmp_path))
    assert not (tmp_path / TEAM_FILE_NAME).exists()


async def test_a_schema_named_askbridge_that_is_not_ours_is_refused(
    pg_database: Database, tmp_path: Path
) -> None:
    pg_database.query("CREATE SCHEMA askbridge")
    pg_database.query("CREATE TABLE askbridge.things (x int)")
    with pytest.raises(StoreError, match="without askbridge's store_meta table"):
        await PostgresEventStore.open(pg_database.url, str(tmp_path))
