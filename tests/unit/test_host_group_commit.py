"""The group commit on a question's path (host/store/commits.py, agent/turns.py; D1).

A question costs one commit: when a window answers, the turn is woken before the
answer's tool result is logged, so a model that replies at once (a script) logs its
next step into the same transaction as that result. D1 still holds: the next card
is shown only after that commit, and the result's update is published after it too.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from host_helpers import Env, ask_step, host_env, of_type, q, result_of, script, settle, text_step
from test_host_records import CallbackWindow

from askbridge.core import StoreError
from askbridge.host.log import events as ev
from askbridge.host.store.store_memory import MemoryEventStore
from askbridge.protocol.errors import ErrorCode


class CommitLog(MemoryEventStore):
    """The memory store, keeping the event types of each transaction (each append_encoded)."""

    def __init__(self) -> None:
        super().__init__()
        self.commits: list[list[str]] = []

    async def append_encoded(self, batches: Sequence[tuple[str, Sequence[str]]]) -> None:
        await super().append_encoded(batches)
        self.commits.append([json.loads(text)["type"] for _, texts in batches for text in texts])


@asynccontextmanager
async def two_asks(store: MemoryEventStore) -> AsyncIterator[tuple[Env, CallbackWindow, Any, Any]]:
    """A session whose script asks call-1, then call-2, then ends; call-1's card is out."""
    async with host_env(store, mode="timed", timeout_s=60) as env:
        window = CallbackWindow()
        client = env.host.attach(window, {})  # type: ignore[arg-type]
        steps = [ask_step("call-1", [q("db")]), ask_step("call-2", [q("db")]), text_step("ok")]
        s = await env.host.new_session(client, model=script(*steps))
        run = env.prompt(s.id, "go")
        await settle()
        yield env, window, s, run


async def test_D1_an_answer_and_the_next_step_share_one_commit() -> None:
    store = CommitLog()
    async with two_asks(store) as (env, window, s, run):
        assert list(window.cards) == ["call-1"]
        store.commits.clear()
        window.answer("call-1", "x")
        assert "call-2" not in window.cards  # D1: not before the step is durable
        await settle()
        step = [ev.REQUEST_HEADER, ev.ASSISTANT_MESSAGE, ev.TOOL_CALL]
        assert store.commits == [[ev.TOOL_RESULT, *step]]
        assert list(window.cards) == ["call-2"]
        completed = [u for u in env.rec.of("tool_call_update", s.id) if u["status"] == "completed"]
        assert [u["toolCallId"] for u in completed] == ["call-1"]
        window.answer("call-2", "y")
        await settle()
        assert run.stop == "end_turn"


class FailingStep(CommitLog):
    """Fails the transaction that holds `call_id`'s tool call (the disk filled up)."""

    def __init__(self, call_id: str) -> None:
        super().__init__()
        self.call_id = call_id

    async def append_encoded(self, batches: Sequence[tuple[str, Sequence[str]]]) -> None:
        for _, texts in batches:
            for text in texts:
                event = json.loads(text)
                if event["type"] == ev.TOOL_CALL and self.call_id in text:
                    raise StoreError("disk full")
        await super().append_encoded(batches)


async def test_D1_a_step_whose_commit_fails_asks_nothing_and_ends_the_turn() -> None:
    # The step's asks start from its commit's callback (agent/step.py): a failed commit
    # starts none and ends the turn with the store's error (S4).
    store = FailingStep("call-2")
    async with two_asks(store) as (env, window, s, run):
        window.answer("call-1", "x")
        await settle()
        assert run.done
        assert "call-2" not in window.cards
        assert isinstance(run.error, StoreError), run
        turn_end = of_type(await env.log(s.id), ev.TURN_END)[-1]
        assert turn_end["error"]["code"] == ErrorCode.STORE_ERROR


async def test_D1_a_step_of_an_ask_and_another_tool_starts_both_after_its_commit() -> None:
    store = CommitLog()
    async with host_env(store, mode="timed", timeout_s=60) as env:
        window = CallbackWindow()
        client = env.host.attach(window, {})  # type: ignore[arg-type]
        both = ask_step("call-1", [q("db")])
        both["toolCalls"].append({"id": "call-x", "name": "no_such_tool", "arguments": {}})
        s = await env.host.new_session(client, model=script(both, text_step("ok")))
        run = env.prompt(s.id, "go")
        await settle()
        assert list(window.cards) == ["call-1"]
        assert result_of(await env.log(s.id), "call-x")["error"] is not None  # the task's, logged
        assert not run.done
        window.answer("call-1", "x")
        await settle()
        assert run.stop == "end_turn"
        assert "error" not in result_of(await env.log(s.id), "call-1")


class TracedCommits(CommitLog):
    """Every transaction, as "commit", into a trace the frame batch and the window share."""

    def __init__(self, trace: list[str]) -> None:
        super().__init__()
        self.trace = trace

    async def append_encoded(self, batches: Sequence[tuple[str, Sequence[str]]]) -> None:
        await super().append_encoded(batches)
        self.trace.append("commit")


class TracedFrames:
    def __init__(self, trace: list[str]) -> None:
        self.trace = trace

    def open_batch(self) -> None:
        self.trace.append("open")

    def close_batch(self) -> None:
        self.trace.append("close")


class TracedWindow(CallbackWindow):
    def __init__(self, trace: list[str]) -> None:
        super().__init__()
        self.trace = trace

    def ask_with_callback(self, request: Any, on_done: Any) -> Any:
        self.trace.append(f"card {request.wait.call_id}")
        return super().ask_with_callback(request, on_done)


async def test_D1_the_next_card_is_queued_in_its_commits_batch() -> None:
    """With the doors' writers as the frame batch (daemon/bootstrap.py), the next card is queued
    in the batch its commit opens once durable, and written when the batch closes: in
    the commit's own loop turn, still after the commit (D1)."""
    trace: list[str] = []
    async with host_env(TracedCommits(trace), mode="timed", timeout_s=60) as env:
        env.host.commits.frames = TracedFrames(trace)
        window = TracedWindow(trace)
        client = env.host.attach(window, {})  # type: ignore[arg-type]
        steps = [ask_step("call-1", [q("db")]), ask_step("call-2", [q("db")]), text_step("ok")]
        s = await env.host.new_session(client, model=script(*steps))
        run = env.prompt(s.id, "go")
        await settle()
        trace.clear()
        window.answer("call-1", "x")
        await settle()
        assert trace == ["commit", "open", "card call-2", "close"]
        window.answer("call-2", "y")
        await settle()
        assert run.stop == "end_turn"


async def test_D1_answers_read_in_one_loop_turn_share_one_commit_with_their_next_steps() -> None:
    """Two windows' answers read in one loop turn: the second turn is woken after the group
    commit came due, which waits for it (commits.py `expect`): both results and both next
    steps are one transaction, not two."""
    store = CommitLog()
    async with host_env(store, mode="timed", timeout_s=60) as env:
        window = CallbackWindow()
        client = env.host.attach(window, {})  # type: ignore[arg-type]
        runs = []
        for call_id in ("call-a", "call-b"):
            steps = [ask_step(call_id, [q("db")]), ask_step(f"{call_id}-2", [q("db")])]
            s = await env.host.new_session(client, model=script(*steps, text_step("ok")))
            runs.append(env.prompt(s.id, "go"))
        await settle()
        assert sorted(window.cards) == ["call-a", "call-b"]
        store.commits.clear()
        window.answer("call-a", "x")
        window.answer("call-b", "y")
        await settle()
        step = [ev.TOOL_RESULT, ev.REQUEST_HEADER, ev.ASSISTANT_MESSAGE, ev.TOOL_CALL]
        assert store.commits == [[*step, *step]]
        assert sorted(window.cards) == ["call-a-2", "call-b-2"]
