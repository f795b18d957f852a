"""One writer per session across hosts (G4, G7, G8), on a real PostgreSQL.

A session is its creator's; another host takes it only when its lease lapsed or its
owner's liveness lock is free; a host that lost a session writes nothing more to it
and is told. Time is the database's: a lease is made to lapse by moving its end in
the database, not by waiting 10 s, and hosts are killed (-9) or paused (SIGSTOP) for
real (team_host.py).
"""

from __future__ import annotations

import anyio
import pytest
from team_stores import HostProcess, ShiftedClock, serving, until

from askbridge.host.log import events as ev
from askbridge.host.store.store_postgres import PostgresEventStore
from askbridge.host.store.team_records import Ownership, SessionFenced
from postgres import Database
from session_headers import header

LAPSE = "UPDATE askbridge.sessions SET lease_until = clock_timestamp() WHERE id = %s"


async def own_once_free(store: PostgresEventStore, session_id: str) -> Ownership:
    """`own`, tried until the owner is found dead (a backend ends within milliseconds of
    its client's death; the test's deadline is generous, the rule is in `why`)."""
    with anyio.fail_after(10):
        while True:
            try:
                return await store.own(session_id)
            except SessionFenced:
                await anyio.sleep(0.01)


async def test_G4_a_session_is_its_creators_and_a_live_owner_keeps_it(
    pg_database: Database,
) -> None:
    async with serving(pg_database.url, "A", "B") as (a, b):
        await a.create_session(header("s1"))
        with pytest.raises(SessionFenced) as caught:
            await b.own("s1")
        refused = caught.value
        assert (refused.session_id, refused.owner_host) == ("s1", a.team.host_id)
        assert refused.message.startswith(f"session 's1' is run by host A ({a.team.host_id}), ")
        with pytest.raises(
            SessionFenced, match=r"is run by host A .*nothing of this commit was written"
        ):
            await b.append("s1", [ev.turn_start("t-b", "prompt")])
        await a.append("s1", [ev.turn_start("t-a", "prompt")])
        assert [e.get("turnId") for e in await b.load("s1")] == [None, "t-a"]
        assert pg_database.query("SELECT owner_host, owner_epoch FROM askbridge.sessions") == [
            (a.team.host_id, 1)
        ]
        assert pg_database.query("SELECT seq, epoch FROM askbridge.events ORDER BY seq") == [
            (0, 1),
            (1, 1),
        ]


async def test_G4_a_stale_writer_writes_nothing_after_a_takeover_and_is_told_once(
    pg_database: Database,
) -> None:
    """A's lease lapses (A paused, say); B takes the session under epoch 2. A's next
    commit is refused inside its transaction, names B, writes nothing, and A's `lost`
    is called once; B's numbering goes on without a gap."""
    async with serving(pg_database.url, "A", "B") as (a, b):
        await a.create_session(header("s1"))
        told: list[SessionFenced] = []
        assert (await a.own("s1", told.append)).why == "mine"
        await a.append("s1", [ev.turn_start("t1", "prompt")])
        pg_database.query(LAPSE, "s1")
        taken = await b.own("s1")
        assert (taken.epoch, taken.why, taken.previous_host) == (2, "lapsed", a.team.host_id)
        with pytest.raises(SessionFenced) as caught:
            await a.append("s1", [ev.turn_start("t-stale", "prompt")])
        assert caught.value.owner_name == "B"
        assert [error.owner_name for error in told] == ["B"]
        with pytest.raises(SessionFenced):  # and again: it does not take it back
            await a.append("s1", [ev.turn_start("t-stale", "prompt")])
        await a.team.leases.renew()
        assert len(told) == 1
        await b.append("s1", [ev.turn_start("t2", "prompt")])
        loaded = await b.load("s1")  # StoreDamaged on a gap
        assert [e.get("turnId") for e in loaded] == [None, "t1", "t2"]
        assert pg_database.query("SELECT seq, epoch FROM askbridge.events ORDER BY seq") == [
            (0, 1),
            (1, 1),
            (2, 2),
        ]


async def test_G4_a_renewal_finds_a_lease_taken_over_and_tells_once(pg_database: Database) -> None:
    async with serving(pg_database.url, "A", "B") as (a, b):
        await a.create_session(header("s1"))
        await a.create_session(header("s2"))
        told: list[str] = []
        await a.own("s1", lambda error: told.append(error.session_id))
        before = pg_database.query("SELECT lease_until FROM askbridge.sessions WHERE id = 's2'")
        pg_database.query(LAPSE, "s1")
        await b.own("s1")
        await a.team.leases.renew()
        assert told == ["s1"]
        assert a.team.owned() == ["s2"]
        after = pg_database.query("SELECT lease_until FROM askbridge.sessions WHERE id = 's2'")
        assert after > before  # the lease A still holds moved on
        await a.team.leases.renew()
        assert told == ["s1"]


async def test_G4_G8_a_host_killed_with_9_frees_its_sessions_before_its_lease_lapses(
    pg_database: Database,
) -> None:
    """Its liveness lock goes with its connection: the session is taken as "dead" while
    its lease still runs (a lapsed lease would say "lapsed"), and what it committed stays."""
    async with serving(pg_database.url, "A") as (a,), HostProcess.start(pg_database.url, "C") as c:
        await c.do(do="create", session="s1")
        await c.do(do="append", session="s1", n=3)
        with pytest.raises(SessionFenced, match=r"is run by host C \("):
            await a.own("s1")
        c.kill()
        taken = await own_once_free(a, "s1")
        assert (taken.why, taken.epoch, taken.previous_host) == ("dead", 2, c.host_id)
        await a.append("s1", [ev.turn_start("t-a", "prompt")])
        loaded = await a.load("s1")
        assert [e.get("by") for e in loaded[1:4]] == [c.host_id] * 3 and len(loaded) == 5


async def test_G4_a_paused_host_keeps_its_sessions_until_the_lease_lapses_then_writes_nothing(
    pg_database: Database,
) -> None:
    """SIGSTOP keeps the process's connections open, so its lock is held: only the
    lease's lapse lets another host in. Resumed, the paused host's write is refused."""
    async with serving(pg_database.url, "A") as (a,), HostProcess.start(pg_database.url, "C") as c:
        await c.do(do="create", session="s1")
        c.pause()
        try:
            with pytest.raises(SessionFenced, match=r"is run by host C \("):
                await a.own("s1")
            pg_database.query(LAPSE, "s1")  # 10 s of the database's time
            assert (await a.own("s1")).why == "lapsed"
            await a.append("s1", [ev.turn_start("t-a", "prompt")])
        finally:
            c.resume()
        with pytest.raises(AssertionError, match="SessionFenced: session 's1' is run by host A"):
            await c.do(do="append", session="s1", n=1)
        assert pg_database.query(
            "SELECT count(*) FROM askbridge.events WHERE body->>'by' IS NOT NULL"
        ) == [(0,)]


async def test_G4_a_clean_stop_hands_the_leases_back_and_leaves(pg_database: Database) -> None:
    async with serving(pg_database.url, "B") as (b,):
        a = await PostgresEventStore.open(pg_database.url, host_name="A")
        await a.create_session(header("s1"))
        await a.close()
        assert pg_database.query("SELECT owner_host, lease_until FROM askbridge.sessions") == [
            (None, None)
        ]
        assert pg_database.query("SELECT name FROM askbridge.hosts") == [("B",)]
        assert (await b.own("s1")).why == "free"


async def test_G4_a_store_used_without_own_takes_the_lease_at_its_first_write(
    pg_database: Database,
) -> None:
    """Solo use on PostgreSQL, a host that never calls `own`: its restart writes on."""
    first = await PostgresEventStore.open(pg_database.url)
    await first.create_session(header("s1"))
    await first.close()
    again = await PostgresEventStore.open(pg_database.url)
    try:
        await again.append("s1", [ev.turn_start("t1", "prompt")])
        assert again.team.leases.epochs == {"s1": 2}
        with pytest.raises(KeyError):
            await again.append("nope", [ev.turn_start("t1", "prompt")])
    finally:
        await again.close()


async def test_G4_a_host_whose_listening_connection_is_killed_is_dead_until_it_is_back(
    pg_database: Database,
) -> None:
    """pg_terminate_backend of A's listening connection frees A's lock: while A cannot
    reconnect (the database takes no new connections for a moment), B may take A's
    session. A reconnects, holds its lock again (its new sessions are its own again),
    and writes nothing to the one it lost."""
    allow = "ALTER DATABASE {} ALLOW_CONNECTIONS {}"
    async with serving(pg_database.url, "A", "B") as (a, b):
        await a.create_session(header("s1"))
        await b.list_sessions()  # B's pool holds a connection already
        pid = a.team.presence.backend_pid
        with pg_database.server.admin() as admin:
            admin.execute(allow.format(pg_database.name, "false").encode())
            try:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
                await until(lambda: not a.team.presence.listening)
                assert (await own_once_free(b, "s1")).why == "dead"
            finally:
                admin.execute(allow.format(pg_database.name, "true").encode())
        # A notices, reconnects, locks and listens again.
        await until(lambda: a.team.presence.listening and a.team.presence.backend_pid != pid)
        with pytest.raises(SessionFenced, match="is run by host B"):
            await a.append("s1", [ev.turn_start("t-a", "prompt")])
        await a.create_session(header("s2"))
        with pytest.raises(SessionFenced, match="is run by host A"):
            await b.own("s2")


async def test_G4_serving_renews_the_leases_and_says_the_host_is_seen(
    pg_database: Database,
) -> None:
    async with serving(pg_database.url, "A") as (a,):
        a.team.leases.renew_s = 0.02
        await a.create_session(header("s1"))
        query = "SELECT s.lease_until, h.last_seen FROM askbridge.sessions s, askbridge.hosts h"
        [(lease, seen)] = pg_database.query(query)

        def renewed() -> bool:
            [(lease_now, seen_now)] = pg_database.query(query)
            return bool(lease_now > lease and seen_now > seen)

        await until(renewed)


async def test_G7_hosts_whose_clocks_disagree_by_30_s_see_the_same_lease_end(
    pg_database: Database,
) -> None:
    """Each host maps the database's lease end to its own monotonic clock by the offset
    its renewals measure (db_clock.py): one host 30 s off computes the same time left."""
    async with (
        serving(pg_database.url, "A") as (a,),
        serving(pg_database.url, "B", clock=ShiftedClock(30_000.0)) as (b,),
    ):
        await a.create_session(header("s1"))
        for store in (a, b):
            for _ in range(3):
                await store.team.leases.renew()
        [(lease_until,)] = pg_database.query("SELECT lease_until FROM askbridge.sessions")
        left = [store.team.db_clock.remaining_ms(lease_until) for store in (a, b)]
        slack = a.team.db_clock.error_ms + b.team.db_clock.error_ms + 100  # both read now
        assert abs(left[0] - left[1]) < slack
        assert 0 < left[0] <= 10_000
        shift = b.team.db_clock.offset_ms - a.team.db_clock.offset_ms
        assert shift == pytest.approx(-30_000.0, abs=slack)
