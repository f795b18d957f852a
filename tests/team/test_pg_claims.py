"""Claims on timed waits across hosts (G7, C1-C5), the store's part, on a real PostgreSQL:
a claim from any host is seen by the owner, which hears of every claim and release; a
claim is leased with its host's renewals, so one whose host was killed lapses 10 s
later in the database's time, and one that lapsed while its host was paused is not
revived. The 10 s are made to pass by moving the claim's end back in the database, as
the database's clock moving on would.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from team_stores import HostProcess, serving, until

from postgres import Database
from session_headers import header

PASS = "UPDATE askbridge.claims SET lease_until = lease_until - make_interval(secs => %s)"


async def test_G7_C3_C5_claims_from_another_host_hold_the_wait_until_the_last_is_released(
    pg_database: Database,
) -> None:
    async with serving(pg_database.url, "A", "B") as (a, b):
        await a.create_session(header("s1"))
        heard: list[tuple[str, str | None]] = []
        a.team.claims.hints.subscribe(heard.append)
        assert (await a.team.claims.claims("s1", "c1")).claims == ()
        first = await b.team.claims.claim("s1", "c1", "window-1")
        await b.team.claims.claim("s1", "c1", "window-2")
        held = await a.team.claims.claims("s1", "c1")
        assert [(claim.host, claim.client) for claim in held.claims] == [
            (b.team.host_id, "window-1"),
            (b.team.host_id, "window-2"),
        ]
        assert held.until is not None and held.until - held.now <= timedelta(seconds=10)
        assert first.lease_until - first.claimed_at == timedelta(seconds=10)
        await b.team.claims.release("s1", "c1", "window-1")
        assert [claim.client for claim in (await a.team.claims.claims("s1", "c1")).claims] == [
            "window-2"
        ]
        await b.team.claims.release("s1", "c1", "window-2")
        await b.team.claims.release("s1", "c1", "window-2")  # C4: idempotent
        assert (await a.team.claims.claims("s1", "c1")).claims == ()
        await until(
            lambda: len(heard) == 4
        )  # two claims, two releases (the repeat changed nothing)
        assert set(heard) == {("s1", "c1")}
        assert (await a.team.claims.claims("s1", "c2")).claims == ()  # per call


async def test_G7_a_claim_of_a_host_killed_with_9_lapses_10_s_later_in_database_time(
    pg_database: Database,
) -> None:
    async with (
        serving(pg_database.url, "A", "B") as (a, b),
        HostProcess.start(pg_database.url, "C") as c,
    ):
        await a.create_session(header("s1"))
        await c.do(do="claim", session="s1", call="c1", client="window")
        await b.team.claims.claim("s1", "c1", "window")
        c.kill()
        await a.team.leases.renew()  # A reads the database's clock
        held = await a.team.claims.claims("s1", "c1")
        assert sorted(claim.host for claim in held.claims) == sorted([b.team.host_id, c.host_id])
        assert held.until is not None
        assert 0 < a.team.db_clock.remaining_ms(held.until) <= 10_000  # A's timer, on A's clock
        pg_database.query(PASS, 8)
        await b.team.leases.renew()  # B is alive: its claim goes on from the database's now
        pg_database.query(PASS, 2)  # C's claim, not renewed, is 10 s old
        held = await a.team.claims.claims("s1", "c1")
        assert [claim.host for claim in held.claims] == [b.team.host_id]
        assert held.until is not None and held.until > held.now + timedelta(seconds=7)


async def test_G7_a_claim_that_lapsed_while_its_host_was_paused_is_not_revived(
    pg_database: Database,
) -> None:
    """The owner may have resumed the deadline and fired it meanwhile: the claimant's
    next renewal drops the claim and tells its host, rather than pause the wait again."""
    async with serving(pg_database.url, "A", "B") as (a, b):
        await a.create_session(header("s1"))
        lapsed: list[tuple[str, str, str]] = []
        b.team.leases.on_lapsed_claim = lambda *claim: lapsed.append(claim)
        await b.team.claims.claim("s1", "c1", "window")
        pg_database.query(PASS, 10)
        assert (await a.team.claims.claims("s1", "c1")).claims == ()
        await b.team.leases.renew()
        assert lapsed == [("s1", "c1", "window")]
        assert pg_database.query("SELECT count(*) FROM askbridge.claims") == [(0,)]
        again = await b.team.claims.claim("s1", "c1", "window")  # a new claim is a new one
        assert again.lease_until > again.claimed_at


@pytest.mark.parametrize("owned", [True, False])
async def test_G7_catching_up_hints_every_session_the_host_owns(
    pg_database: Database, owned: bool
) -> None:
    """Claims and releases told while the owner's listening connection was down are
    lost; its catch-up says "re-read every claim of your sessions"."""
    async with serving(pg_database.url, "A", "B") as (a, b):
        await (a if owned else b).create_session(header("s1"))
        heard: list[tuple[str, str | None]] = []
        a.team.claims.hints.subscribe(heard.append)
        await a.team.claims.catch_up()
        assert heard == ([("s1", None)] if owned else [])
