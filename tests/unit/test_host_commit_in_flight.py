"""The group commit on a store whose commit really awaits (host/store/commits.py, D1, S4).

SQLite commits inline, so on it a commit is never in flight while anything else
runs. `HeldStore` is the real SQLite store whose `append_encoded` waits, before it
commits, until the test lets that commit go: a PostgreSQL round trip as long as
the test wants. On it: one commit in flight at a time, the next batch filling
meanwhile; nothing derived from an event told before its commit returned; each
session's events stored in the order they were logged; and a failure in flight
failing its own batch only.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from host_helpers import ANY, answer, ask_step, host_env, q, script, settle, text_step
from store_helpers import header
from test_host_records import CallbackWindow

from askbridge.core import StoreError, UserQuestionError
from askbridge.host.log import events as ev
from askbridge.host.store.commits import Chunk, GroupCommit
from askbridge.host.store.datadir import DB_FILE_NAME
from askbridge.host.store.store_sqlite import SQLiteEventStore
from askbridge.protocol.errors import ErrorCode

Batches = Sequence[tuple[str, Sequence[str]]]


class HeldStore(SQLiteEventStore):
    """The SQLite store, each commit held (once `holding`) until `release` lets it go."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.holding = True
        self.begun: list[list[tuple[str, list[str]]]] = []  # every commit, as it began
        self.in_flight = 0
        self.most_in_flight = 0
        self._gates: list[tuple[asyncio.Event, list[BaseException]]] = []

    async def append_encoded(self, batches: Batches) -> None:
        self.begun.append([(session_id, list(texts)) for session_id, texts in batches])
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.holding:
                gate: tuple[asyncio.Event, list[BaseException]] = (asyncio.Event(), [])
                self._gates.append(gate)
                await gate[0].wait()
                if gate[1]:
                    raise gate[1][0]
            await super().append_encoded(batches)
        finally:
            self.in_flight -= 1

    @property
    def held(self) -> int:
        return sum(not event.is_set() for event, _ in self._gates)

    def release(self, failure: BaseException | None = None) -> None:
        """Let the oldest held commit go on (and fail with `failure`, if given)."""
        event, failures = next(gate for gate in self._gates if not gate[0].is_set())
        if failure is not None:
            failures.append(failure)
        event.set()

    async def types(self, session_id: str) -> list[str]:
        return [event["type"] for event in await self.load(session_id)][1:]


class Writer:
    """What the group commit calls back (agent/session.py's Session): what it was told."""

    def __init__(self, session_id: str) -> None:
        self.id = session_id
        self.commit_error: StoreError | None = None
        self.told: list[str] = []

    def committed_events(self, chunks: list[Chunk]) -> None:
        self.told.extend(event["type"] for events, _ in chunks for event in events)


def event(kind: str) -> tuple[list[ev.Event], list[str]]:
    body = {"type": kind}
    return [body], [f'{{"type":"{kind}"}}']


@asynccontextmanager
async def committing(tmp_path: Path) -> AsyncIterator[tuple[HeldStore, GroupCommit]]:
    store = HeldStore(tmp_path / DB_FILE_NAME)
    store.holding = False
    for session_id in ("a", "b"):
        await store.create_session(header(session_id))
    store.holding = True
    commits = GroupCommit(store, on_lost=lambda exc: None)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(commits.run)
            yield store, commits
            store.holding = False
            while store.held:
                store.release()
            await commits.close()
    finally:
        await store.close()


def add(commits: GroupCommit, writer: Writer, kind: str) -> None:
    events, texts = event(kind)
    commits.add(writer, events, texts, True)  # type: ignore[arg-type]


async def test_D1_one_commit_in_flight_the_next_batch_filling_told_only_once_committed(
    tmp_path: Path,
) -> None:
    a, b = Writer("a"), Writer("b")
    heard: list[tuple[str, StoreError | None]] = []
    async with committing(tmp_path) as (store, commits):
        add(commits, a, "a1")
        await settle()
        assert store.begun == [[("a", ['{"type":"a1"}'])]] and store.held == 1
        assert a.told == []  # D1: in flight is not committed

        # While it is in flight, the next batch fills; nothing else begins.
        add(commits, b, "b1")
        add(commits, a, "a2")
        commits.after(a, lambda error: heard.append(("a", error)))
        commits.after(b, lambda error: heard.append(("b", error)))
        await settle()
        assert len(store.begun) == 1 and store.most_in_flight == 1
        assert commits.pending(a) and commits.pending(b)
        assert (a.told, b.told, heard) == ([], [], [])

        store.release()  # the first commit returns: told, then the next batch begins
        await settle()
        assert a.told == ["a1"] and b.told == [] and heard == []
        assert store.begun[1] == [("b", ['{"type":"b1"}']), ("a", ['{"type":"a2"}'])]
        assert store.held == 1 and store.most_in_flight == 1

        store.release()
        await settle()
        assert (a.told, b.told) == (["a1", "a2"], ["b1"])
        assert heard == [("b", None), ("a", None)]  # once the whole batch is told
        assert not commits.pending(a) and not commits.pending(b)
        assert await store.types("a") == ["a1", "a2"]  # in the order logged
        assert await store.types("b") == ["b1"]


async def test_S4_a_failure_in_flight_fails_its_batch_only(tmp_path: Path) -> None:
    a, b = Writer("a"), Writer("b")
    heard: list[tuple[str, StoreError | None]] = []
    async with committing(tmp_path) as (store, commits):
        add(commits, a, "a1")
        await settle()
        add(commits, b, "b1")  # the next batch, filling while a1 is in flight
        add(commits, a, "a2")  # after a1, which is about to fail
        commits.after(a, lambda error: heard.append(("a", error)))
        commits.after(b, lambda error: heard.append(("b", error)))
        await settle()

        store.release(StoreError("disk full"))
        await settle()
        # a1 failed, and a2 with it: never stored after the events before it failed.
        assert a.told == [] and [who for who, _ in heard] == ["a"]
        assert str(heard[0][1]) == "disk full"
        assert store.begun[1] == [("b", ['{"type":"b1"}'])]  # the next batch goes on

        store.release()
        await settle()
        assert b.told == ["b1"] and heard[1] == ("b", None)
        assert await store.types("a") == [] and await store.types("b") == ["b1"]

        add(commits, a, "a3")  # the store recovered: a's next event commits
        await settle()
        store.release()
        await settle()
        assert a.told == ["a3"] and await store.types("a") == ["a3"]


async def test_D1_flush_waits_for_the_commit_in_flight_then_commits_what_filled(
    tmp_path: Path,
) -> None:
    a, b = Writer("a"), Writer("b")
    async with committing(tmp_path) as (store, commits), anyio.create_task_group() as tg:
        add(commits, a, "a1")
        await settle()
        add(commits, b, "b1")
        flushed = anyio.Event()

        async def flush() -> None:
            await commits.flush()
            flushed.set()

        tg.start_soon(flush)
        await settle()
        assert not flushed.is_set() and len(store.begun) == 1
        store.release()
        await settle()
        assert store.begun[1] == [("b", ['{"type":"b1"}'])] and not flushed.is_set()
        store.release()
        await settle()
        assert flushed.is_set() and b.told == ["b1"]


# -- the host on a store that awaits ---------------------------------------------------


@pytest.fixture
def held(tmp_path: Path) -> HeldStore:
    store = HeldStore(tmp_path / DB_FILE_NAME)
    store.holding = False
    return store


async def test_D1_a_card_waits_for_the_commit_of_its_call(held: HeldStore) -> None:
    async with host_env(held, mode="timed", timeout_s=60) as env:
        window = CallbackWindow()
        client = env.host.attach(window, {})  # type: ignore[arg-type]
        steps = [ask_step("call-1", [q("db")]), ask_step("call-2", [q("db")]), text_step("ok")]
        s = await env.host.new_session(client, model=script(*steps))
        run = env.prompt(s.id, "go")
        await settle()
        assert list(window.cards) == ["call-1"]
        held.holding = True
        begun = len(held.begun)
        window.answer("call-1", "x")
        await settle()
        # The answer's result and the next step share the commit in flight: no card of
        # that step, no update of the result, until it returns (D1).
        (in_flight,) = held.begun[begun:]
        assert [json.loads(text)["type"] for _, texts in in_flight for text in texts] == [
            ev.TOOL_RESULT,
            ev.REQUEST_HEADER,
            ev.ASSISTANT_MESSAGE,
            ev.TOOL_CALL,
        ]
        assert held.held == 1 and "call-2" not in window.cards
        completed = [u for u in env.rec.of("tool_call_update", s.id) if u["status"] == "completed"]
        assert completed == []
        held.holding = False
        held.release()
        await settle()
        assert list(window.cards) == ["call-2"]
        completed = [u for u in env.rec.of("tool_call_update", s.id) if u["status"] == "completed"]
        assert [u["toolCallId"] for u in completed] == ["call-1"]
        window.answer("call-2", "y")
        await settle()
        assert run.stop == "end_turn"
        assert [e["callId"] for e in await env.log(s.id) if e["type"] == ev.TOOL_RESULT] == [
            "call-1",
            "call-2",
        ]


async def test_L2_a_second_reply_while_the_first_is_committed_is_reply_queued(
    held: HeldStore,
) -> None:
    async with host_env(held, mode="timed", timeout_s=5) as env:
        s = await env.host.new_session(model=script(ask_step("call-1", [q("db")]), text_step("ok")))
        run = env.prompt(s.id, "go")
        await settle()
        env.clock.advance(5000)  # pending (TW6): the question takes late replies now
        await settle()
        assert run.stop == "end_turn"
        held.holding = True
        results: list[Any] = []

        async def reply(label: str) -> None:
            try:
                results.append(
                    await env.host.late_answers.answer_reply(s.id, "call-1", answer(db=label))
                )
            except UserQuestionError as exc:
                results.append(exc.code)

        env.tg.start_soon(reply, "x")
        env.tg.start_soon(reply, "y")
        await settle()
        # The first reply's commit is in flight: it has not answered True yet; the second
        # finds it queued all the same (L2), though the inbox holds it only once committed.
        assert held.held == 1 and results == [ErrorCode.REPLY_QUEUED]
        held.holding = False
        held.release()
        await settle()
        assert results == [ErrorCode.REPLY_QUEUED, True]
        queued = [e for e in await env.log(s.id) if e["type"] == ev.INBOX_INSERTED]
        assert len(queued) == 1
        env.desk.reply(ANY, answer(db="x"))


async def test_M1_two_loads_of_a_session_at_once_make_one_session(held: HeldStore) -> None:
    await held.create_session(header("s1", model={"kind": "script", "steps": []}))
    await held.append("s1", [ev.turn_start("t1", "prompt")])  # open: the load repairs it
    async with host_env(held) as env:
        held.holding = True
        loaded: list[Any] = []

        async def load() -> None:
            loaded.append(await env.host.get_session("s1"))

        env.tg.start_soon(load)
        env.tg.start_soon(load)
        await settle()
        assert held.held == 1 and loaded == []  # the repair (P7) is in flight
        held.holding = False
        held.release()
        await settle()
        assert len(loaded) == 2 and loaded[0] is loaded[1]
        assert [e["type"] for e in await env.log("s1")][1:] == [ev.TURN_START, ev.TURN_END]
