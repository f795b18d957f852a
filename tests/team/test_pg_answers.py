"""First answer wins in the database (G6), and an answer is consumed exactly once by the
commit of the event that uses it, also across a kill -9 of the owner (G8); on a real
PostgreSQL, with racing offers from several store instances and real host processes.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import anyio
import pytest
from pg_proxy import LosingProxy
from team_stores import HostProcess, serving, until

from askbridge.core.errors import StoreError
from askbridge.host.store.store_api import encode_event
from askbridge.host.store.store_postgres import PostgresEventStore
from askbridge.host.store.team_records import AnsweredElsewhere, Offered, SessionFenced, Won
from postgres import Database
from session_headers import header

STORES = 4


def result(call_id: str) -> str:
    return encode_event({"type": "tool/result", "callId": call_id})


async def test_G6_thousands_of_racing_offers_one_wins_never_both_never_neither(
    pg_database: Database,
) -> None:
    """2,000 questions, each offered an answer by four store instances at once (their
    connections racing on the server): exactly one Won per question, every other offer
    AnsweredElsewhere with that very answer, one live answer per question stored."""
    stores = [
        await PostgresEventStore.open(pg_database.url, host_name=f"H{n}") for n in range(STORES)
    ]
    try:
        calls = [f"c{n:04}" for n in range(2000)]
        outcomes: dict[str, list[Offered]] = {}
        for start in range(0, len(calls), 100):
            chunk = calls[start : start + 100]
            offers = [
                store.team.answers.offer("s1", call_id, {"by": n}, person=f"p{n}", door="lsp")
                for call_id in chunk
                for n, store in enumerate(random.sample(stores, STORES))
            ]
            done = await asyncio.gather(*offers)
            for index, outcome in enumerate(done):
                outcomes.setdefault(chunk[index // STORES], []).append(outcome)
        for call_id, offered in outcomes.items():
            won = [outcome.answer for outcome in offered if isinstance(outcome, Won)]
            assert len(won) == 1, (call_id, offered)
            lost = [outcome.answer for outcome in offered if isinstance(outcome, AnsweredElsewhere)]
            assert lost == [won[0]] * (STORES - 1)
            assert won[0].person == f"p{won[0].answer['by']}" and won[0].call_id == call_id
        assert pg_database.query(
            "SELECT count(*), count(DISTINCT call_id) FROM askbridge.answers WHERE withdrawn_at IS NULL"
        ) == [(2000, 2000)]
    finally:
        for store in stores:
            await store.close()


async def test_G6_offers_racing_a_withdrawal_see_at_most_one_live_answer(
    pg_database: Database,
) -> None:
    """Each round withdraws the last winner while four new offers race: at most one wins,
    and a loser names either that winner or the one withdrawn under it (read before it
    went), never an answer that was never live."""
    stores = [
        await PostgresEventStore.open(pg_database.url, host_name=f"H{n}") for n in range(STORES)
    ]
    try:
        for call_id in [f"c{n}" for n in range(100)]:
            first = await stores[0].team.answers.offer("s1", call_id, {"round": -1})
            assert isinstance(first, Won)
            winner = first.answer
            for round_ in range(5):
                withdrawal = stores[round_ % STORES].team.answers.withdraw(winner.answer_id)
                offers = [
                    store.team.answers.offer("s1", call_id, {"round": round_}) for store in stores
                ]
                withdrawn, *offered = await asyncio.gather(withdrawal, *offers)
                assert withdrawn is True
                won = [outcome.answer for outcome in offered if isinstance(outcome, Won)]
                assert len(won) <= 1
                allowed = {winner.answer_id, *(answer.answer_id for answer in won)}
                assert {outcome.answer.answer_id for outcome in offered} <= allowed
                live = await stores[1].team.answers.live("s1", call_id)
                assert (live.answer_id if live else None) == (won[0].answer_id if won else None)
                if not won:
                    break
                winner = won[0]
    finally:
        for store in stores:
            await store.close()


async def test_G6_the_owner_hears_of_an_answer_given_on_another_host(pg_database: Database) -> None:
    async with serving(pg_database.url, "A", "B") as (a, b):
        await a.create_session(header("s1"))
        heard: list[tuple[str, str]] = []
        a.team.answers.hints.subscribe(heard.append)
        offered = await b.team.answers.offer(
            "s1", "c1", {"answers": {"q": "yes"}}, person="bea", door="web", client="Firefox"
        )
        assert isinstance(offered, Won)
        await until(lambda: heard == [("s1", "c1")])
        answer = await a.team.answers.live("s1", "c1")
        assert answer == offered.answer
        assert (answer.answer, answer.person, answer.host, answer.door, answer.client) == (
            {"answers": {"q": "yes"}},
            "bea",
            b.team.host_id,
            "web",
            "Firefox",
        )
        assert await a.team.answers.unconsumed(["s1"]) == [answer]


async def test_G6_an_answer_is_consumed_once_by_the_commit_of_the_event_using_it(
    pg_database: Database,
) -> None:
    async with serving(pg_database.url, "A", "B") as (a, b):
        await a.create_session(header("s1"))
        await b.team.answers.offer("s1", "c1", {"x": 1})
        await a.append_encoded(
            [("s1", [encode_event({"type": "x"}), result("c1")])], uses=[("s1", "c1", 1)]
        )
        consumed = await a.team.answers.live("s1", "c1")
        assert consumed is not None and consumed.consumed_seq == 2  # the tool/result's seq
        assert (await a.load("s1"))[2]["callId"] == "c1"
        for refused in (
            a.append_encoded([("s1", [result("c1")])], uses=[("s1", "c1", 0)]),  # again
            a.append_encoded([("s1", [result("c2")])], uses=[("s1", "c2", 0)]),  # no answer
        ):
            with pytest.raises(
                StoreError, match=r"no unconsumed answer to call 'c.' of session 's1'"
            ):
                await refused
        assert not await a.team.answers.withdraw(consumed.answer_id)  # consumed: it stays
        await b.team.answers.offer("s1", "c3", {"x": 3})
        with pytest.raises(SessionFenced):  # only the owner writes, and so consumes
            await b.append_encoded([("s1", [result("c3")])], uses=[("s1", "c3", 0)])
        with pytest.raises(ValueError, match="used by no event"):
            await a.append_encoded([("s1", [result("c3")])], uses=[("s1", "c3", 1)])
        assert len(await a.load("s1")) == 3  # nothing of the refused commits
        assert [answer.call_id for answer in await a.team.answers.unconsumed(["s1"])] == ["c3"]


async def test_G6_a_withdrawn_answer_opens_the_question_to_another(pg_database: Database) -> None:
    store = await PostgresEventStore.open(pg_database.url)
    try:
        first = await store.team.answers.offer("s1", "c1", "first")
        assert isinstance(first, Won)
        assert isinstance(await store.team.answers.offer("s1", "c1", "second"), AnsweredElsewhere)
        assert await store.team.answers.withdraw(first.answer.answer_id)
        assert not await store.team.answers.withdraw(first.answer.answer_id)  # once
        third = await store.team.answers.offer("s1", "c1", "third")
        assert isinstance(third, Won) and third.answer.answer == "third"
        with pytest.raises(
            StoreError, match="cannot store the answer to 'c2': it is not plain JSON"
        ):
            await store.team.answers.offer("s1", "c2", {"x": {1, 2}})
    finally:
        await store.close()


async def test_G6_an_offer_whose_reply_is_lost_is_won_once(pg_database: Database) -> None:
    """The insert commits, its reply never arrives: the retry finds its own answer (its
    offer id) and says Won, not AnsweredElsewhere to itself."""
    proxy = LosingProxy(pg_database.server.socket_dir)
    async with anyio.create_task_group() as tasks:
        await tasks.start(proxy.serve)
        store = await PostgresEventStore.open(proxy.url(pg_database.name))
        try:
            proxy.lose_reply_to(b"INSERT INTO askbridge.answers")
            offered = await store.team.answers.offer("s1", "c1", {"x": 1})
            assert proxy.lost == 1
            assert isinstance(offered, Won)
            assert pg_database.query("SELECT count(*) FROM askbridge.answers") == [(1,)]
        finally:
            await store.close()
            tasks.cancel_scope.cancel()


async def consume_all(store: PostgresEventStore, session_id: str) -> None:
    """What a new owner does on taking a session over: every unconsumed answer used."""
    for answer in await store.team.answers.unconsumed([session_id]):
        await store.append_encoded(
            [(session_id, [result(answer.call_id)])], uses=[(session_id, answer.call_id, 0)]
        )


@pytest.mark.parametrize("run", range(5))
async def test_G6_G8_after_kill_9_of_the_owner_every_acknowledged_answer_is_consumed_once(
    pg_database: Database, tmp_path: Path, run: int
) -> None:
    """Host C owns a session and logs a tool/result for each answer B gives, consuming it
    in that commit; C is killed -9 at a random point, maybe mid-commit. A takes the
    session over (C is dead) and uses what is left: every answer B was told won is
    used by exactly one event, at the seq its row names; C's writes are epoch 1, A's 2."""
    calls = [f"c{n:02}" for n in range(20)]
    kill_after = random.randrange(len(calls))
    async with (
        serving(pg_database.url, "A", "B") as (a, b),
        HostProcess.start(pg_database.url, "C") as c,
    ):
        await c.do(do="create", session="s1")
        await c.do(do="consume", session="s1")
        won: list[str] = []
        for call_id in calls:
            offered = await b.team.answers.offer("s1", call_id, {"call": call_id})
            assert isinstance(offered, Won)
            won.append(call_id)
            if len(won) == kill_after + 1:
                await until(lambda: len(c.consumed) >= kill_after)
                c.kill()
        while True:
            try:
                taken = await a.own("s1")
                break
            except SessionFenced:
                await anyio.sleep(0.01)
        assert taken.why == "dead"
        await consume_all(a, "s1")
        loaded = await a.load("s1")  # StoreDamaged on a gap
    used = [event["callId"] for event in loaded if event.get("type") == "tool/result"]
    assert sorted(used) == sorted(won) == calls  # each once
    rows = pg_database.query(
        "SELECT a.call_id, e.body->>'callId', e.epoch FROM askbridge.answers a"
        " JOIN askbridge.events e ON e.session_id = a.session_id AND e.seq = a.consumed_seq"
        " ORDER BY a.consumed_seq"
    )
    assert [call for call, _, _ in rows] == used and all(
        call == used_by for call, used_by, _ in rows
    )
    epochs = [epoch for _, _, epoch in rows]
    assert epochs == sorted(epochs) and set(epochs) <= {1, 2}
    assert epochs.count(1) >= len(c.consumed) >= kill_after  # what C said it committed is in
