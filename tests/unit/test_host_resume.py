"""Resuming stored sessions and committing before telling (behavior.md P7, A4, L2, L5, D1).

A crash is modelled by its only trace: the session log as a `kill -9` at that
moment leaves it. Every `append` is a commit, so any prefix of a real log (cut
after an event) is such a trace; `crashed_copy` copies that prefix into a
fresh store and a second Host resumes from it. tests/faults/test_host_crash.py
does the same with a real process killed by SIGKILL.

Durability checks (D1) read the SQLite file through a second, read-only
connection at the moment the host tells someone something.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from host_helpers import (
    Desk,
    Env,
    Recorder,
    answer,
    ask_step,
    call_step,
    host_env,
    of_type,
    q,
    replies_admitted,
    result_of,
    script,
    settle,
    state_of,
    text_step,
    types,
)

from askbridge.core import SessionError, UserQuestionError, UserQuestionRequest
from askbridge.core.waterfall import Next, Settle, Withdraw
from askbridge.host.log import events as ev
from askbridge.host.log.inbox import Inbox
from askbridge.host.store.datadir import DB_FILE_NAME, open_store
from askbridge.host.store.store_api import EventStore
from askbridge.host.store.store_memory import MemoryEventStore
from askbridge.protocol import FIXED_MESSAGES, ErrorCode

UNKNOWN_TEXT = "Error: " + FIXED_MESSAGES[ErrorCode.TOOL_OUTCOME_UNKNOWN]
UNKNOWN_DATA = {"name": "ToolError", "code": "TOOL_OUTCOME_UNKNOWN"}


async def crashed_copy(
    store: EventStore, session_id: str, last: Callable[[ev.Event], bool]
) -> MemoryEventStore:
    """A store holding the session's log up to and including the last event matching `last`."""
    events = await store.load(session_id)
    cut = max(i for i, e in enumerate(events) if last(e))
    copy = MemoryEventStore()
    await copy.create_session(events[0])
    await copy.append(session_id, events[1 : cut + 1])
    return copy


def is_call(call_id: str) -> Callable[[ev.Event], bool]:
    return lambda e: e["type"] == ev.TOOL_CALL and e["callId"] == call_id


async def open_question_crash(steps: list[dict]) -> tuple[str, MemoryEventStore]:
    """Run until call-1 is asked (its timed wait open), then 'crash' right there."""
    async with host_env() as env:
        s = await env.host.new_session(model=script(*steps))
        env.prompt(s.id, "go")
        await settle()
        assert env.desk.calls() == ["call-1"]
        return s.id, await crashed_copy(env.store, s.id, is_call("call-1"))


# -- P7 repair ------------------------------------------------------------------------------


async def test_P7_resume_repairs_an_open_timed_question_into_continued() -> None:
    sid, crashed = await open_question_crash([ask_step("call-1"), text_step("got it")])
    before = await crashed.load(sid)
    assert types(before)[-1] == ev.TOOL_CALL
    async with host_env(crashed) as env:
        session = await env.host.load_session(sid)
        await settle()
        log = await env.log(sid)
        repairs = log[len(before) :]
        assert repairs == [
            {
                "type": ev.TOOL_RESULT,
                "callId": "call-1",
                "name": "ask_user_question",
                "content": UNKNOWN_TEXT,
                "isError": True,
                "error": UNKNOWN_DATA,
            },
            {"type": ev.TURN_END, "turnId": "t-1", "stopReason": "cancelled"},
        ]
        assert state_of(await env.host.view(sid), "call-1") == "continued"
        assert env.rec.changes == []  # nobody follows it yet: its loader gets the snapshot
        assert env.desk.requests == []  # an interrupted turn is not re-run
        # The continued question accepts a late reply, which wakes the agent (L1, L4).
        assert await env.host.late_answers.answer_reply(sid, "call-1", answer(db="y")) is True
        await settle()
        log = await env.log(sid)
        assert [t["cause"] for t in of_type(log, ev.TURN_START)] == ["prompt", "inbox"]
        assert [t["turnId"] for t in of_type(log, ev.TURN_START)] == ["t-1", "t-2"]
        assert of_type(log, ev.ASSISTANT_MESSAGE)[-1]["text"] == "got it"  # next unused step
        assert state_of(await env.host.view(sid), "call-1") == "settled"
        assert session is await env.host.load_session(sid)  # loading again changes nothing
        assert await env.log(sid) == log


async def test_P7_every_unanswered_call_is_repaired_before_the_turn_is_closed() -> None:
    both = {
        "toolCalls": [
            {"id": "call-1", "name": "ask_user_question", "arguments": {"questions": [q("db")]}},
            {"id": "call-d", "name": "delegate", "arguments": {"prompt": "p", "steps": []}},
        ]
    }
    async with host_env() as env:
        s = await env.host.new_session(model=script(both))
        env.prompt(s.id, "go")
        await settle()
        # Cut where both calls are logged and neither has a result.
        crashed = await crashed_copy(env.store, s.id, lambda e: e["type"] == ev.TOOL_CALL)
    async with host_env(crashed) as env:
        n = len(await crashed.load(s.id))
        await env.host.load_session(s.id)
        repairs = (await env.log(s.id))[n:]
        assert [(e["type"], e.get("callId")) for e in repairs] == [
            (ev.TOOL_RESULT, "call-1"),
            (ev.TOOL_RESULT, "call-d"),
            (ev.TURN_END, None),
        ]
        assert all(e["error"] == UNKNOWN_DATA for e in repairs[:2])
        assert repairs[1]["name"] == "delegate"


async def test_P7_a_balanced_log_is_resumed_without_new_events() -> None:
    store = MemoryEventStore()
    async with host_env(store) as env:
        s = await env.host.new_session(model=script(text_step("hello")))
        env.prompt(s.id, "go")
        await settle()
    before = await store.load(s.id)
    async with host_env(store) as env:
        await env.host.load_session(s.id)
        await settle()
        assert await env.log(s.id) == before


async def test_A4_resumed_root_agent_asks_normally() -> None:
    steps = [ask_step("call-1"), ask_step("call-2", [q("os")]), text_step("done")]
    sid, crashed = await open_question_crash(steps)
    async with host_env(crashed) as env:
        env.desk.reply("call-2", answer(os="x"))
        assert (
            await env.host.late_answers.answer_reply(sid, "call-1", answer(db="y")) is True
        )  # lazy load
        await settle()
        (request,) = env.desk.requests
        session = await env.host.get_session(sid)
        assert request.agent is session.agent and session.agent.origin == "root"
        assert request.agent.id == session.header["agentId"]  # the stored agent, resumed
        result = result_of(await env.log(sid), "call-2")
        assert result["content"] == '{"answers":[{"id":"os","selected":["x"]}]}'


async def test_P7_delegated_child_sessions_are_not_loadable() -> None:
    store = MemoryEventStore()
    async with host_env(store) as env:
        s = await env.host.new_session(model=script(call_step("d-1", "delegate", {"prompt": "p"})))
        env.prompt(s.id, "go")
        await settle()
    (child,) = [i for i in await store.list_sessions() if i.origin == "subagent"]
    async with host_env(store) as env:
        with pytest.raises(SessionError) as info:
            await env.host.load_session(child.session_id)
        assert info.value.code == ErrorCode.UNKNOWN_SESSION
        assert [i.session_id for i in await env.host.list_sessions()] == [s.id]


# -- L2/L5 across a restart (SQLite) --------------------------------------------------------


async def queue_reply_in_a_busy_turn(env: Env) -> str:
    """call-1 pending, a reply to it queued while the turn is blocked in call-2."""
    s = await env.host.new_session(
        model=script(
            ask_step("call-1"),
            ask_step("call-2", [q("os")], timeout=-1),
            text_step("after restart"),
        )
    )
    env.prompt(s.id, "go")
    await settle()
    env.clock.advance(5000)
    await settle()
    assert env.desk.calls() == ["call-1", "call-2"]
    assert await env.host.late_answers.answer_reply(s.id, "call-1", answer(db="y")) is True
    return s.id


async def test_L2_queued_reply_guard_survives_a_host_restart(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    async with host_env(store) as env:
        sid = await queue_reply_in_a_busy_turn(env)
    await store.close()

    store = open_store(tmp_path)
    try:
        # The guard is a fold of the durable log: the reply is still queued, not admitted.
        inbox = Inbox()
        inbox.apply(await store.load(sid))
        assert inbox.queued_reply("call-1") is not None
        async with host_env(store) as env:
            # The lazy load below re-admits the reply (L5), but only once this task yields:
            # the second reply meets it still queued.
            with pytest.raises(UserQuestionError) as info:
                await env.host.late_answers.answer_reply(sid, "call-1", answer(db="x"))
            assert info.value.code == ErrorCode.REPLY_QUEUED
            await settle()
            log = await env.log(sid)
            # L5: the restart did not drop it; it was admitted at once (the agent was idle).
            assert replies_admitted(log) == [("call-1", [{"id": "db", "selected": ["y"]}])]
            assert of_type(log, ev.TURN_START)[-1]["cause"] == "inbox"
            # call-2 was cut off by the shutdown: repaired, so it is answerable too (P7).
            assert result_of(log, "call-2")["error"] == UNKNOWN_DATA
            assert state_of(await env.host.view(sid), "call-2") == "continued"
            assert await env.host.late_answers.answer_reply(sid, "call-2", answer(os="x")) is True
    finally:
        await store.close()


async def test_L5_queued_reply_can_be_withdrawn_after_a_restart(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    async with host_env(store) as env:
        sid = await queue_reply_in_a_busy_turn(env)
    await store.close()
    store = open_store(tmp_path)
    try:
        async with host_env(store) as env:
            assert await env.host.withdraw_reply(sid, "call-1") is True  # lazy load, then withdraw
            await settle()
            log = await env.log(sid)
            assert replies_admitted(log) == []
            assert of_type(log, ev.INBOX_DISCARDED)[0]["reason"] == "withdrawn"
            assert state_of(await env.host.view(sid), "call-1") == "continued"
    finally:
        await store.close()


# -- D1 commit before telling ---------------------------------------------------------------


class Reader:
    """A second, read-only connection to the data dir's database: what is committed."""

    def __init__(self, data_dir: Path) -> None:
        uri = f"file:{data_dir / DB_FILE_NAME}?mode=ro"
        self.conn = sqlite3.connect(uri, uri=True)

    def types(self, session_id: str) -> list[str]:
        import json

        rows = self.conn.execute(
            "SELECT body FROM events WHERE session_id = ? ORDER BY seq", (session_id,)
        ).fetchall()
        return [json.loads(body)["type"] for (body,) in rows]

    def close(self) -> None:
        self.conn.close()


async def test_D1_session_header_is_committed_before_new_session_returns(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    reader = Reader(tmp_path)
    try:
        async with host_env(store) as env:
            s = await env.host.new_session(model=script())
            assert reader.types(s.id) == [ev.SESSION_HEADER]
    finally:
        reader.close()
        await store.close()


async def test_D1_accepted_reply_is_committed_before_answer_returns_true(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    reader = Reader(tmp_path)
    try:
        async with host_env(store) as env:
            s = await env.host.new_session(model=script(ask_step("call-1"), text_step("ok")))
            env.prompt(s.id, "go")
            await settle()
            env.clock.advance(5000)
            await settle()
            assert ev.INBOX_INSERTED not in reader.types(s.id)
            assert await env.host.late_answers.answer_reply(s.id, "call-1", answer(db="y")) is True
            assert reader.types(s.id)[-1] == ev.INBOX_INSERTED  # before anything else ran
    finally:
        reader.close()
        await store.close()


async def test_D1_call_is_committed_before_the_ask_and_result_before_its_update(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path)
    reader = Reader(tmp_path)
    seen_at_ask: list[list[str]] = []
    seen_at_update: list[list[str]] = []
    desk = Desk()

    def committed_then_desk(request: UserQuestionRequest, next_: Next, settle: Settle) -> Withdraw:
        seen_at_ask.append(reader.types(session_id))
        return desk(request, next_, settle)

    class CommittedRecorder(Recorder):
        def on_update(self, sid: str, update: dict) -> None:
            if update["sessionUpdate"] == "tool_call_update":
                seen_at_update.append(reader.types(sid))

    try:
        async with host_env(store) as env:
            env.host.service.register(committed_then_desk, prepend=True)
            env.host.publisher.add_listener(CommittedRecorder())
            s = await env.host.new_session(model=script(ask_step("call-1"), text_step("ok")))
            session_id = s.id
            desk.reply("call-1", answer(db="x"))
            env.prompt(s.id, "go")
            await settle()
    finally:
        reader.close()
        await store.close()
    (at_ask,) = seen_at_ask
    assert at_ask[-3:] == [ev.REQUEST_HEADER, ev.ASSISTANT_MESSAGE, ev.TOOL_CALL]
    (at_update,) = seen_at_update
    # Committed when its update goes out; the next step (here the end of the turn) may
    # share its commit (group commit, D1 allows it).
    assert ev.TOOL_RESULT in at_update[at_update.index(ev.TOOL_CALL) :]
