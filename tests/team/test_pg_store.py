"""The team store's own guarantees, on a real PostgreSQL (tests/postgres.py): one group
commit is one transaction over many sessions (G3), concurrent writers never deadlock,
damage is named (S6), and a data directory is held by one host (H1) as with SQLite."""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from hypothesis import given
from hypothesis import strategies as st

from askbridge.host.log import events as ev
from askbridge.host.store.event_rows import columns
from askbridge.host.store.pg_commit import event_type
from askbridge.host.store.store_api import StoreDamaged, StoreError, encode_event
from askbridge.host.store.store_postgres import PostgresEventStore
from askbridge.host.store.team_records import SessionFenced
from postgres import Database
from session_headers import header


async def test_G3_a_64_session_group_commit_is_one_transaction(
    pg_database: Database, tmp_path: Path
) -> None:
    """All 64 sessions' events land in one transaction (one xmin), numbered on from each
    session's last event, each stamped with the database's clock."""
    store = await PostgresEventStore.open(pg_database.url, str(tmp_path))
    try:
        ids = [f"s{n:02}" for n in range(64)]
        for session_id in reversed(ids):  # the commit sorts them
            await store.create_session(header(session_id))
        await store.append("s07", [ev.turn_start("t0", "prompt")])
        batch = [
            (
                session_id,
                [encode_event(ev.turn_start(f"t-{session_id}-{i}", "prompt")) for i in range(2)],
            )
            for session_id in reversed(ids)
        ]
        await store.append_encoded(batch)
        rows = pg_database.query(
            "SELECT count(DISTINCT xmin::text), count(*), min(committed_at) > now() - interval '1 min'"
            " FROM askbridge.events WHERE body->>'turnId' LIKE 't-%%'"
        )
        assert rows == [(1, 128, True)]
        for session_id in ids:
            loaded = await store.load(session_id)
            turns = [event["turnId"] for event in loaded[1:]]
            assert turns[-2:] == [f"t-{session_id}-0", f"t-{session_id}-1"]
        assert len(await store.load("s07")) == 4  # header, t0, then the group's two
    finally:
        await store.close()


async def test_G3_G4_two_writers_in_opposite_orders_never_deadlock_nor_both_write(
    pg_database: Database,
) -> None:
    """Two stores commit to the same 16 sessions at once, one listing them forwards, the
    other backwards, while the second takes each session over (its lease made to lapse)
    in reverse order. The statement locks sessions in id order, so commits queue and
    never deadlock; a commit that meets a session taken over writes nothing
    (SessionFenced naming the new owner); every log stays gapless, and no event of the
    first writer follows one of the second's (G4: no stale-epoch write)."""
    first = await PostgresEventStore.open(pg_database.url, host_name="first")
    second = await PostgresEventStore.open(pg_database.url, host_name="second")
    ids = [f"s{n:02}" for n in range(16)]
    for session_id in ids:
        await first.create_session(header(session_id))
    outcomes: dict[str, list[str]] = {"first": [], "second": []}
    taken = anyio.Event()
    going = anyio.Event()  # the first has written a few commits

    async def write(store: PostgresEventStore, order: list[str], name: str) -> None:
        # The first writes on until it has been refused a few times, the second 40 times.
        for round_ in range(1000):
            if (name == "second" and round_ == 40) or outcomes[name].count("fenced") == 3:
                return
            if name == "second":
                await taken.wait()
            body = encode_event({"type": "x", "by": name, "round": round_})
            try:
                await store.append_encoded([(session_id, [body]) for session_id in order])
                outcomes[name].append("written")
                if outcomes["first"].count("written") == 5:
                    going.set()
            except SessionFenced as exc:
                assert exc.owner_name == "second", exc.message
                outcomes[name].append("fenced")
            await anyio.lowlevel.checkpoint()

    async def take_over() -> None:
        await going.wait()
        pg_database.query("UPDATE askbridge.sessions SET lease_until = clock_timestamp()")
        for session_id in reversed(ids):
            assert (await second.own(session_id)).why == "lapsed"
        taken.set()

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(write, first, ids, "first")
            tasks.start_soon(write, second, ids[::-1], "second")
            tasks.start_soon(take_over)
        assert outcomes["second"] == ["written"] * 40
        assert outcomes["first"].count("fenced") == 3
        written_by_first = outcomes["first"].count("written")
        for session_id in ids:
            loaded = await first.load(session_id)  # StoreDamaged on a gap
            writers = [event["by"] for event in loaded[1:]]
            # Each commit wrote to all 16 or none; first's writes all precede second's.
            assert writers == ["first"] * written_by_first + ["second"] * 40
        epochs = pg_database.query(
            "SELECT body->>'by', array_agg(DISTINCT epoch) FROM askbridge.events"
            " WHERE seq > 0 GROUP BY 1 ORDER BY 1"
        )
        assert epochs == [("first", [1]), ("second", [2])]
        assert pg_database.query(
            "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
        ) in ([(0,)], [(None,)])
    finally:
        await first.close()
        await second.close()


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        ("DELETE FROM askbridge.events WHERE seq = 1", "event 1 is missing"),
        ("DELETE FROM askbridge.events WHERE seq = 2", "events 2..2 are missing"),
        ("DELETE FROM askbridge.events", "it is listed but has no events"),
        ("DELETE FROM askbridge.sessions", "it has events but no row in the sessions table"),
        ("UPDATE askbridge.events SET body = '[1]' WHERE seq = 1", "event 1 is not a JSON object"),
        (
            'UPDATE askbridge.events SET body = \'{"type":"turn/start"}\' WHERE seq = 0',
            "its event 0 is not a session/header",
        ),
    ],
)
async def test_S6_a_damaged_session_is_named_never_unknown_or_empty(
    pg_database: Database, tmp_path: Path, damage: str, problem: str
) -> None:
    store = await PostgresEventStore.open(pg_database.url, str(tmp_path))
    try:
        await store.create_session(header("s1"))
        await store.append("s1", [ev.turn_start("t1", "prompt"), ev.turn_end("t1", "end_turn")])
        pg_database.query(damage)
        assert await store.exists("s1")
        for load in (store.load, store.load_lazily):
            with pytest.raises(StoreDamaged) as caught:
                events = await load("s1")
                [dict(event) for event in events]  # a lazy body is checked when read
            assert caught.value.code == "STORE_DAMAGED"
            assert "is damaged: session 's1': " + problem in caught.value.message
    finally:
        await store.close()


async def test_S6_tables_dropped_under_a_running_store_are_damage(
    pg_database: Database, tmp_path: Path
) -> None:
    store = await PostgresEventStore.open(pg_database.url, str(tmp_path))
    try:
        await store.create_session(header("s1"))
        pg_database.query("DROP SCHEMA askbridge CASCADE")
        with pytest.raises(StoreDamaged, match="lost askbridge's tables while in use"):
            await store.load("s1")
        with pytest.raises(StoreDamaged, match="lost askbridge's tables while in use"):
            await store.append("s1", [ev.turn_start("t1", "prompt")])
    finally:
        await store.close()


async def test_a_lazy_load_reads_no_body_its_folds_leave_alone(
    pg_database: Database, tmp_path: Path
) -> None:
    """load_lazily's events equal load's; a call's arguments are decoded only when read."""
    store = await PostgresEventStore.open(pg_database.url, str(tmp_path))
    try:
        await store.create_session(header("s1"))
        call = ev.tool_call("c1", "read", {"path": "a"})
        await store.append("s1", [ev.turn_start("t1", "prompt"), call])
        lazy = await store.load_lazily("s1")
        assert dict.get(lazy[2], "arguments") is None  # not decoded yet
        assert lazy[2]["name"] == "read" and lazy[2]["callId"] == "c1"
        assert lazy == await store.load("s1")
        assert dict.get(lazy[2], "arguments") == {"path": "a"}
    finally:
        await store.close()


async def test_H1_a_data_directory_is_held_by_one_store(
    pg_database: Database, tmp_path: Path
) -> None:
    store = await PostgresEventStore.open(pg_database.url, str(tmp_path))
    try:
        with pytest.raises(StoreError, match=f"data directory {tmp_path} is in use by process"):
            await PostgresEventStore.open(pg_database.url, str(tmp_path))
    finally:
        await store.close()
    again = await PostgresEventStore.open(pg_database.url, str(tmp_path))  # released on close
    await again.close()


async def test_G1_open_store_is_sqlite_without_a_url_and_refuses_what_is_not_postgresql(
    tmp_path: Path,
) -> None:
    from store_factories import Awaited

    from askbridge.host.store.store_open import open_store
    from askbridge.host.store.store_sqlite import SQLiteEventStore

    store = await open_store(tmp_path / "solo", None)
    assert isinstance(store, SQLiteEventStore)
    await Awaited(store).close()
    with pytest.raises(StoreError, match="must be a postgresql:// URL"):
        await open_store(tmp_path / "other", "/var/lib/askbridge.db")


@given(st.text(max_size=12) | st.sampled_from(['a"b', "a\\b", "é", "\x00", ""]), st.booleans())
def test_a_rows_type_column_is_the_one_the_sqlite_store_keeps(kind: str, first: bool) -> None:
    """The team store's `type` column says exactly what event_rows.columns says."""
    body = encode_event({"type": kind, "x": 1} if first else {"x": 1, "type": kind})
    assert event_type(body) == columns(body)[0]
