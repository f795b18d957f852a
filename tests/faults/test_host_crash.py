"""The host under a real `kill -9` (behavior.md D1, D2, P7, L1, L2, L5).

A child process (host_driver.py) runs a Host on a SQLite data dir and prints
a marker after each thing it has done; by D1 whatever a marker reports is
committed. The parent SIGKILLs it at a chosen point, reopens the data dir in
this process (the kernel dropped the child's lock) and checks that nothing
acknowledged is lost and that the resumed session keeps the rules:

1. killed with a timed question open  -> the call is repaired (P7), `continued`,
   and accepts a late reply;
2. killed after the question went pending, with the turn busy in a second
   question -> the pending result is there, both calls accept replies;
3. killed after a late reply was accepted (`answered: true`) but before it was
   admitted (the turn is busy in call-2, so no step boundary comes) -> the
   reply is still queued.

How (3) observes the queued reply after the restart: a restarted host re-admits
queued replies as soon as the session loads (L5), so the guard is checked twice
before that can happen — once on the durable state itself (the inbox fold of
the reopened store's log), and once through the host, whose lazy load only
schedules the admission turn: the second reply, handled before this task
yields, meets the first still queued and gets REPLY_QUEUED. After yielding,
the log shows the first reply admitted, with its batch, exactly once.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from askbridge.core import ManualClock, UserQuestionError, UserQuestionRequest
from askbridge.core.waterfall import Next, Settle, Withdraw
from askbridge.host.host import Host
from askbridge.host.log import events as ev
from askbridge.host.log.inbox import Inbox
from askbridge.host.store.datadir import open_store
from askbridge.protocol import Answer, AnswerItem, ErrorCode
from scripts import ask_call, question
from settling import settle

DRIVER = Path(__file__).with_name("host_driver.py")
MARKER_TIMEOUT_S = 30.0


def ask_step(call_id: str, qid: str, **arguments: Any) -> dict[str, Any]:
    return ask_call(call_id, [question(qid, "x", "y")], **arguments)


SCRIPT = {
    "kind": "script",
    "steps": [
        ask_step("call-1", "db"),
        ask_step("call-2", "os", timeout=-1),  # untimed: keeps the turn busy
        {"text": "after restart"},
        {"text": "later"},
    ],
}


def reply(qid: str, label: str) -> Answer:
    return Answer(answers=[AnswerItem(id=qid, selected=[label])])


class Driver:
    """The child process: send commands, wait for markers, kill it."""

    def __init__(self, data_dir: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(DRIVER), str(data_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put("")

    def send(self, **cmd: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()

    def expect(self, **fields: Any) -> dict[str, Any]:
        """The next marker whose fields include `fields` (earlier ones are kept in `seen`)."""
        while True:
            try:
                line = self.lines.get(timeout=MARKER_TIMEOUT_S)
            except queue.Empty:
                raise AssertionError(f"no marker {fields} within {MARKER_TIMEOUT_S}s") from None
            if not line:
                err = self.proc.stderr.read() if self.proc.stderr else ""
                raise AssertionError(f"driver ended before {fields}: {err}")
            marker = json.loads(line)
            self.seen.append(marker)
            if all(marker.get(k) == v for k, v in fields.items()):
                return marker

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        assert self.proc.returncode == -signal.SIGKILL

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def pending_update(driver: Driver, call_id: str) -> dict[str, Any]:
    while True:
        marker = driver.expect(event="update")
        update = marker["update"]
        if update.get("sessionUpdate") == "tool_call_update" and update["toolCallId"] == call_id:
            return update


def start(tmp_path: Path) -> tuple[Driver, str]:
    """A driver whose session has asked call-1 (a timed question, 5 s, never answered)."""
    driver = Driver(tmp_path)
    driver.send(cmd="new", model=SCRIPT, ask={"mode": "timed", "timeout": 5})
    session_id = driver.expect(event="session")["sessionId"]
    driver.send(cmd="prompt", sessionId=session_id, text="go")
    driver.expect(event="asked", callId="call-1")
    return driver, session_id


def make_pending_and_busy(driver: Driver) -> str:
    driver.send(cmd="advance", ms=5000)
    update = pending_update(driver, "call-1")
    driver.expect(event="asked", callId="call-2")
    return str(update["content"][0]["content"]["text"])


class Desk:
    """The answerer of the resumed host: records the calls it is asked, answers none."""

    def __init__(self) -> None:
        self.calls: list[str | None] = []

    def __call__(self, request: UserQuestionRequest, next_: Next, settle: Settle) -> Withdraw:
        self.calls.append(request.wait.call_id if request.wait else None)
        return lambda: None  # never settles


async def state(host: Host, session_id: str, call_id: str) -> str | None:
    view = await host.view(session_id)
    for active in view.active:
        if active.call_id == call_id:
            return active.state
    return "settled" if any(s.call_id == call_id for s in view.settled) else None


def replies(events: list[ev.Event]) -> list[tuple[str, list[dict[str, Any]]]]:
    return [
        (e["source"]["callId"], json.loads(e["content"][0]["text"])["answers"])
        for e in events
        if e["type"] == ev.USER_MESSAGE and e.get("source")
    ]


def result(events: list[ev.Event], call_id: str) -> ev.Event:
    (found,) = [e for e in events if e["type"] == ev.TOOL_RESULT and e["callId"] == call_id]
    return found


UNKNOWN = {"name": "ToolError", "code": "TOOL_OUTCOME_UNKNOWN"}


async def test_kill_9_with_a_timed_question_open(tmp_path: Path) -> None:
    """P7/L1: the open question survives as `continued` and accepts a late reply."""
    driver, sid = start(tmp_path)
    try:
        driver.kill()
    finally:
        driver.close()
    store = open_store(tmp_path)
    try:
        log = await store.load(sid)
        assert [e["type"] for e in log][-1] == ev.TOOL_CALL  # acknowledged by "asked"
        desk = Desk()
        async with Host(store, clock=ManualClock()) as host:
            host.service.register(desk)
            await host.load_session(sid)
            repaired = (await store.load(sid))[len(log) :]
            assert [e["type"] for e in repaired] == [ev.TOOL_RESULT, ev.TURN_END]
            assert repaired[0]["error"] == UNKNOWN and repaired[0]["callId"] == "call-1"
            assert await state(host, sid, "call-1") == "continued"
            assert await host.late_answers.answer_reply(sid, "call-1", reply("db", "y")) is True
            await settle()
            # The woken turn took the script's next unused step: call-2, asked normally.
            assert await state(host, sid, "call-1") == "settled"
            assert await state(host, sid, "call-2") == "open"
            assert desk.calls == ["call-2"]  # a resumed root agent asks normally (A4)
            await host.cancel(sid)
    finally:
        await store.close()


async def test_kill_9_after_pending_with_the_turn_busy(tmp_path: Path) -> None:
    """D1/P7: the pending result is kept; both questions are answerable after the restart."""
    driver, sid = start(tmp_path)
    try:
        pending_text = make_pending_and_busy(driver)
        driver.kill()
    finally:
        driver.close()
    store = open_store(tmp_path)
    try:
        assert json.loads(result(await store.load(sid), "call-1")["content"])["pending"] is True
        assert result(await store.load(sid), "call-1")["content"] == pending_text
        desk = Desk()
        async with Host(store, clock=ManualClock()) as host:
            host.service.register(desk)
            await host.load_session(sid)
            assert await state(host, sid, "call-1") == "continued"
            assert await state(host, sid, "call-2") == "continued"
            assert result(await store.load(sid), "call-2")["error"] == UNKNOWN
            assert await host.late_answers.answer_reply(sid, "call-2", reply("os", "x")) is True
            assert await host.late_answers.answer_reply(sid, "call-1", reply("db", "y")) is True
            await settle()
            log = await store.load(sid)
            # Both replies went into one inbox turn, in arrival order (L5).
            assert replies(log) == [
                ("call-2", [{"id": "os", "selected": ["x"]}]),
                ("call-1", [{"id": "db", "selected": ["y"]}]),
            ]
            assert [e["cause"] for e in log if e["type"] == ev.TURN_START] == ["prompt", "inbox"]
            assert desk.calls == []  # the interrupted turn was not re-run
    finally:
        await store.close()


@pytest.mark.parametrize("withdraw", [False, True], ids=["answer-again", "withdraw"])
async def test_kill_9_after_a_reply_was_accepted_but_not_admitted(
    tmp_path: Path, withdraw: bool
) -> None:
    """L2/L5: the acknowledged reply is still queued after the restart (see module docstring)."""
    driver, sid = start(tmp_path)
    try:
        make_pending_and_busy(driver)
        driver.send(cmd="answer", sessionId=sid, callId="call-1", answer=reply("db", "y").dump())
        assert driver.expect(event="answered")["result"] is True
        driver.kill()
    finally:
        driver.close()
    store = open_store(tmp_path)
    try:
        before = await store.load(sid)
        inbox = Inbox()
        inbox.apply(before)
        assert inbox.queued_reply("call-1") is not None  # durable, not lost
        assert replies(before) == []  # and not admitted
        async with Host(store, clock=ManualClock()) as host:
            if withdraw:
                # The queue is durable: a reply queued before the kill can still be withdrawn.
                assert await host.withdraw_reply(sid, "call-1") is True
                await settle()
                assert replies(await store.load(sid)) == []
                assert await state(host, sid, "call-1") == "continued"
                assert await host.late_answers.answer_reply(sid, "call-1", reply("db", "x")) is True
                expected = [{"id": "db", "selected": ["x"]}]
            else:
                with pytest.raises(UserQuestionError) as info:
                    await host.late_answers.answer_reply(sid, "call-1", reply("db", "x"))
                assert info.value.code == ErrorCode.REPLY_QUEUED
                expected = [{"id": "db", "selected": ["y"]}]
            await settle()
            log = await store.load(sid)
            assert replies(log) == [("call-1", expected)]
            assert await state(host, sid, "call-1") == "settled"
            assert await state(host, sid, "call-2") == "continued"  # repaired (P7)
            assert (
                await host.late_answers.answer_reply(sid, "call-1", reply("db", "y")) is False
            )  # L6
    finally:
        await store.close()
