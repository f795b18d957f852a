"""The team store when the network or the server fails (G3), on a real PostgreSQL.

- A connection lost in the middle of a commit, before the server committed (its
  backend terminated while the commit waits for a lock) or after (the reply lost on
  the way back, tests/team/pg_proxy.py): the store retries on a new connection and
  the events are stored exactly once.
- The server stopped, or paused: a call fails with STORE_UNAVAILABLE once its
  deadline passes (`the team store is unreachable: <why>`), never hangs; the store
  reconnects when the server is back, and an outcome it could not learn is never
  written twice.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import anyio
import pytest
from pg_proxy import LosingProxy

from askbridge.core.errors import StoreUnavailable
from askbridge.host.log import events as ev
from askbridge.host.store.store_postgres import PostgresEventStore
from postgres import Database, PostgresServer
from session_headers import header


async def _wait_for_blocked_commit(database: Database) -> int:
    """The pid of the store's backend once it waits for a lock (the commit is under way)."""
    with anyio.fail_after(30):
        while True:
            rows = database.query(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                " AND application_name = 'askbridge' AND wait_event_type = 'Lock'"
            )
            if rows:
                return int(rows[0][0])
            await anyio.sleep(0.01)


async def test_G3_a_commit_whose_connection_is_killed_mid_statement_is_written_once(
    pg_database: Database, tmp_path: Path
) -> None:
    store = await PostgresEventStore.open(pg_database.url, str(tmp_path))
    try:
        await store.create_session(header("s1"))
        with pg_database.admin() as blocker:
            blocker.execute("BEGIN")
            blocker.execute("SELECT 1 FROM askbridge.sessions WHERE id = 's1' FOR UPDATE")
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(store.append, "s1", [ev.turn_start("t1", "prompt")])
                pid = await _wait_for_blocked_commit(pg_database)
                pg_database.query("SELECT pg_terminate_backend(%s)", pid)
                blocker.execute("ROLLBACK")
        assert await store.load("s1") == [header("s1"), ev.turn_start("t1", "prompt")]
        killed = pg_database.query("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", pid)
        assert killed == [(0,)]  # that backend is gone: the retry ran on a new connection
    finally:
        await store.close()


@pytest.mark.parametrize("lost", ["append", "create"])
async def test_G3_a_commit_whose_reply_is_lost_is_written_exactly_once(
    pg_database: Database, tmp_path: Path, lost: str
) -> None:
    """The server commits, the reply never arrives: the retry finds the very events (or the
    very header) stored, and neither writes them again nor calls it a conflict."""
    proxy = LosingProxy(pg_database.server.socket_dir)
    async with anyio.create_task_group() as tasks:
        await tasks.start(proxy.serve)
        store = await PostgresEventStore.open(proxy.url(pg_database.name), str(tmp_path))
        try:
            if lost == "create":
                proxy.lose_reply_to(b"INSERT INTO askbridge.sessions")
            await store.create_session(header("s1"))
            if lost == "append":
                proxy.lose_reply_to(b"INSERT INTO askbridge.events")
            await store.append("s1", [ev.turn_start("t1", "prompt"), ev.turn_end("t1", "end_turn")])
            assert proxy.lost == 1
            expected = [header("s1"), ev.turn_start("t1", "prompt"), ev.turn_end("t1", "end_turn")]
            assert await store.load("s1") == expected
            await store.append("s1", [ev.turn_start("t2", "prompt")])  # numbering goes on
            assert len(await store.load("s1")) == 4
        finally:
            await store.close()
            tasks.cancel_scope.cancel()


async def test_G3_a_stopped_server_is_store_unavailable_then_the_store_reconnects(
    own_pg_server: PostgresServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "askbridge.store")
    url = own_pg_server.url(own_pg_server.new_database())
    store = await PostgresEventStore.open(url, str(tmp_path), unavailable_after=1.0)
    try:
        await store.create_session(header("s1"))
        own_pg_server.stop()
        for call in (
            lambda: store.append("s1", [ev.turn_start("t1", "prompt")]),
            lambda: store.load("s1"),
            lambda: store.list_sessions(),
        ):
            started = time.monotonic()
            with pytest.raises(StoreUnavailable) as caught:
                await call()
            assert time.monotonic() - started < 20  # the deadline, not a hang
            assert caught.value.code == "STORE_UNAVAILABLE"
            assert caught.value.message.startswith("the team store is unreachable: ")
            assert f'socket "{own_pg_server.socket_dir}/.s.PGSQL.5432"' in caught.value.message
            assert "\n" not in caught.value.message
        own_pg_server.start()
        await store.append("s1", [ev.turn_start("t1", "prompt")])
        assert await store.load("s1") == [header("s1"), ev.turn_start("t1", "prompt")]
        said = [record.getMessage() for record in caplog.records]
        assert len(said) == 2, said  # once when lost, once when back: not every retry
        assert said[0].startswith(f"the team store {store.where} is unreachable: ")
        assert said[1] == f"the team store {store.where} answers again"
    finally:
        await store.close()


async def test_G3_a_paused_server_is_store_unavailable_and_nothing_is_written_twice(
    own_pg_server: PostgresServer, tmp_path: Path
) -> None:
    """A server that accepts but does not answer (SIGSTOP): the commit gives up at its
    deadline. Whether the server then commits it is not known; the store reads the
    session's numbers again, so a later commit never overwrites or doubles it."""
    url = own_pg_server.url(own_pg_server.new_database())
    store = await PostgresEventStore.open(url, str(tmp_path), unavailable_after=1.0)
    try:
        await store.create_session(header("s1"))
        own_pg_server.pause()
        try:
            started = time.monotonic()
            with pytest.raises(StoreUnavailable, match="unreachable: no answer in time"):
                await store.append("s1", [ev.turn_start("t1", "prompt")])
            assert time.monotonic() - started < 20  # the deadline, not a hang
        finally:
            own_pg_server.resume()
        await store.append("s1", [ev.turn_start("t2", "prompt")])
        turns = [event["turnId"] for event in (await store.load("s1"))[1:]]
        assert turns in (["t2"], ["t1", "t2"])
    finally:
        await store.close()
