"""Followers (G5), on a real PostgreSQL: every commit notifies "session last_seq" (never
text); a follower turns that into hints, reads what is new with `load_since`, and
when its listening connection is lost (pg_terminate_backend) polls every second and
catches up in full once it listens again: every event is seen once, in order, with
no gap, also those whose notification was lost for good.

To keep a follower down for as long as a test needs, the test takes the follower's
liveness lock itself as the follower's backend ends: the follower's reconnect waits
for that lock (pg_presence.py), so it cannot listen again until the test lets go.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import psycopg
import pytest
from team_stores import serving, until

from askbridge.host.log import events as ev
from askbridge.host.store.pg_follow import Follower
from askbridge.host.store.pg_team_schema import LIVENESS_LOCK_CLASS
from askbridge.host.store.store_api import StoreDamaged, encode_event
from askbridge.host.store.store_postgres import PostgresEventStore
from postgres import Database
from session_headers import header
from settling import settle


async def test_G5_every_commit_notifies_its_sessions_last_seq_and_no_text(
    pg_database: Database,
) -> None:
    with pg_database.admin() as listener:
        listener.execute("LISTEN askbridge")
        async with serving(pg_database.url, "A") as (a,):
            await a.create_session(header("s1"))
            await a.create_session(header("s2"))
            secret = "the text of an answer"
            await a.append("s1", [ev.user_message(secret), ev.turn_start("t1", "prompt")])
            await a.append_encoded(
                [
                    ("s2", [encode_event(ev.user_message(secret))]),
                    ("s1", [encode_event({"type": "x"})]),
                ]
            )
        payloads = [note.payload for note in listener.notifies(timeout=1.0)]
    # One per created header, one per session and commit (its last seq); nothing else.
    assert payloads[:3] == ["s1 0", "s2 0", "s1 2"]
    assert sorted(payloads[3:]) == ["s1 3", "s2 1"]


class Reader:
    """A follower's reader: reads each hinted session from its cursor on."""

    def __init__(self, store: PostgresEventStore, session_ids: list[str]) -> None:
        self.store = store
        self.seen: dict[str, list[int]] = {session_id: [] for session_id in session_ids}
        self.cursor = dict.fromkeys(session_ids, 0)  # each has its header already
        for session_id in session_ids:
            store.team.follower.follow(session_id, 0)

    async def run(self) -> None:
        async for session_id, seq in self.store.team.follower.hints.stream():
            events = await self.store.load_since(session_id, self.cursor[session_id])
            assert len(events) >= seq - self.cursor[session_id]  # a hint is a floor
            first = self.cursor[session_id] + 1
            self.seen[session_id].extend(range(first, first + len(events)))
            self.cursor[session_id] += len(events)

    def count(self) -> int:
        return sum(len(seqs) for seqs in self.seen.values())


@asynccontextmanager
async def held_down(database: Database, store: PostgresEventStore) -> AsyncIterator[None]:
    """`store`'s listening connection terminated and kept from coming back until the end
    of the block (the test holds its liveness lock meanwhile)."""
    lock = f"SELECT pg_advisory_lock({LIVENESS_LOCK_CLASS}, %s)"
    key = store.team.presence.lock_key
    async with await psycopg.AsyncConnection.connect(database.url, autocommit=True) as holder:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(holder.execute, lock, (key,))  # queued behind the store's hold
            waiting = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = %s AND NOT granted"
            await until(lambda: database.query(waiting, key) == [(1,)])
            database.query("SELECT pg_terminate_backend(%s)", store.team.presence.backend_pid)
        await until(lambda: not store.team.presence.listening)
        yield
        await holder.execute("SELECT pg_advisory_unlock_all()")


async def write(writers: list[PostgresEventStore], ids: list[str], commits: int) -> None:
    """`commits` group commits of every writer at once, each to its own sessions."""

    async def one(store: PostgresEventStore, mine: list[str]) -> None:
        for _ in range(commits):
            await store.append_encoded(
                [(session_id, [encode_event({"type": "x"})]) for session_id in mine]
            )

    async with anyio.create_task_group() as tasks:
        for n, store in enumerate(writers):
            tasks.start_soon(one, store, ids[n :: len(writers)])


@pytest.mark.parametrize("while_down", ["catch-up after reconnecting", "polling every second"])
async def test_G5_a_follower_sees_every_event_once_across_a_lost_listening_connection(
    pg_database: Database, while_down: str
) -> None:
    """Two hosts write four sessions; the follower's listening connection is killed and
    kept down while they write on, so those notifications are lost for good. Either its
    polling (every second while down) or its catch-up (once it listens again) finds
    them: every seq seen exactly once, in order."""
    ids = ["s1", "s2", "s3", "s4"]
    async with serving(pg_database.url, "A", "B", "F") as (a, b, follower):
        for n, session_id in enumerate(ids):
            await (a, b)[n % 2].create_session(header(session_id))
        reader = Reader(follower, ids)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(reader.run)
            await write([a, b], ids, 10)
            await until(lambda: reader.count() == 40)
            if while_down == "catch-up after reconnecting":
                follower.team.presence.poll_s = 3600.0  # no polling: only the catch-up
            async with held_down(pg_database, follower):
                await write([a, b], ids, 10)
                if while_down == "polling every second":
                    await until(lambda: reader.count() == 80)
                    assert not follower.team.presence.listening  # seen by polling
                else:
                    await anyio.sleep(0.3)
                    assert reader.count() == 40  # the notifications were lost
            await until(lambda: follower.team.presence.listening and reader.count() == 80)
            await write([a, b], ids, 5)
            await until(lambda: reader.count() == 100)
            tasks.cancel_scope.cancel()
    assert reader.seen == {session_id: list(range(1, 26)) for session_id in ids}


async def test_G5_hints_move_forward_only_and_a_slow_reader_gets_the_latest(
    pg_database: Database,
) -> None:
    store = await PostgresEventStore.open(pg_database.url)
    try:
        follower: Follower = store.team.follower
        told: list[tuple[str, int]] = []
        follower.hints.subscribe(told.append)
        follower.follow("s1", 5)
        follower.saw("s1", 3)
        follower.saw("s1", 5)
        follower.saw("s2", 9)  # not followed
        follower.saw("s1", 7)
        follower.follow("s1", 6)  # following again never moves back
        follower.saw("s1", 7)
        assert told == [("s1", 7)]

        def broken(hint: tuple[str, int]) -> None:
            raise RuntimeError("a subscriber's bug")

        follower.hints.subscribe(broken)  # logged; the others are still told
        follower.hints.subscribe(told.append)
        follower.saw("s1", 8)
        assert told == [("s1", 7), ("s1", 8), ("s1", 8)]
        got: list[tuple[str, int]] = []

        async def read() -> None:
            async for hint in follower.hints.stream():
                got.append(hint)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            await settle()  # the reader waits for its first hint
            follower.follow("s2", 0)
            for seq in (9, 10):
                follower.saw("s1", seq)
            follower.saw("s2", 1)
            await settle()
            tasks.cancel_scope.cancel()
        assert got == [("s1", 10), ("s2", 1)]  # one per session, the latest
    finally:
        await store.close()


async def test_G5_load_since_reads_what_is_new_and_names_a_gap(pg_database: Database) -> None:
    store = await PostgresEventStore.open(pg_database.url)
    try:
        await store.create_session(header("s1"))
        await store.append("s1", [ev.turn_start(f"t{n}", "prompt") for n in range(1, 5)])
        assert [e["turnId"] for e in await store.load_since("s1", 2)] == ["t3", "t4"]
        assert await store.load_since("s1", 4) == []
        pg_database.query("DELETE FROM askbridge.events WHERE seq = 3")
        with pytest.raises(
            StoreDamaged,
            match=re.escape("session 's1': its events after 1 are 2 events numbered 2..4"),
        ):
            await store.load_since("s1", 1)
    finally:
        await store.close()
