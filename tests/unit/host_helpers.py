"""Plain helpers shared by the host tests (tests/unit/test_host_*.py).

Everything here is the real thing: a real `Host` over a real store
(MemoryEventStore unless a test passes a SQLite one), the real ScriptModel,
and a `Desk` — a listener on the real `user-questions/request` waterfall, the
interface a front door uses — standing in for the user at a client.

    async with host_env(mode="timed", timeout_s=5) as env:
        s = await env.host.new_session(model=script(ask_step("call-1", [q("db")]), text_step("ok")))
        run = env.prompt(s.id, "hi")          # the prompt runs in the env's task group
        await settle()
        env.clock.advance(5000)                # the timed ask becomes pending (no sleeping)
        await settle()
        assert run.stop == "end_turn"

`settle()` lets every task run until all are blocked; nothing here sleeps on
real time. `Recorder` collects the `session/update`s and views a front door
would be told about.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from askbridge.core import ManualClock, UserQuestionRequest
from askbridge.core.waterfall import Next, Settle, Withdraw
from askbridge.host.host import Host
from askbridge.host.log import events as ev
from askbridge.host.store.store_api import EventStore
from askbridge.host.store.store_memory import MemoryEventStore
from askbridge.protocol import Answer, AnswerItem, ProjectionView
from askbridge.protocol.views import apply_view_changes, empty_view
from scripts import ask_call, call_step, script, text_step  # noqa: F401  (re-exported)
from settling import settle  # noqa: F401  (re-exported for the host tests)

ANY = "*"


# -- script model steps ---------------------------------------------------------------------


def q(qid: str = "db", labels: Sequence[str] | None = ("x", "y"), **extra: Any) -> dict[str, Any]:
    """A question as a model writes it in ask_user_question's arguments."""
    item: dict[str, Any] = {"id": qid, "question": f"Which {qid}?"}
    if labels is not None:
        item["options"] = [{"label": label} for label in labels]
    item.update(extra)
    return item


def ask_step(
    call_id: str, questions: Sequence[dict[str, Any]] | None = None, **arguments: Any
) -> dict[str, Any]:
    """A script step whose one tool call is ask_user_question."""
    return ask_call(call_id, list(questions) if questions is not None else [q()], **arguments)


def answer(**selected: str | list[str]) -> Answer:
    """`answer(db="y")` → `{answers: [{id: "db", selected: ["y"]}]}`."""
    return Answer(
        answers=[
            AnswerItem(id=qid, selected=[value] if isinstance(value, str) else value)
            for qid, value in selected.items()
        ]
    )


# -- the user at a client -------------------------------------------------------------------


@dataclass
class Desk:
    """A waterfall listener: records every request, answers the ones the test replies to.

    `reply(call_id, answer_or_error)` answers (or fails) the request of that
    call — now if it is waiting, or as soon as it arrives. `reply(ANY, …)`
    answers every request that has no specific reply (legacy asks have no call
    id). Requests without a reply wait until the core withdraws them.
    """

    requests: list[UserQuestionRequest] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    _replies: dict[str, Answer | Exception] = field(default_factory=dict)
    _waiting: dict[str, list[Settle]] = field(default_factory=dict)

    @staticmethod
    def key(request: UserQuestionRequest) -> str:
        return request.wait.call_id if request.wait is not None else ANY

    def reply(self, key: str, outcome: Answer | Exception) -> None:
        self._replies[key] = outcome
        for waiting_key in list(self._waiting) if key == ANY else [key]:
            for done in self._waiting.pop(waiting_key, []):
                self._settle(done, outcome)

    def calls(self) -> list[str]:
        return [self.key(r) for r in self.requests]

    @staticmethod
    def _settle(done: Settle, outcome: Answer | Exception) -> None:
        if isinstance(outcome, Exception):
            done(None, outcome)
        else:
            done(outcome, None)

    def __call__(self, request: UserQuestionRequest, next_: Next, done: Settle) -> Withdraw:
        self.requests.append(request)
        key = self.key(request)
        outcome = self._replies.get(key, self._replies.get(ANY))
        if outcome is not None:
            self._settle(done, outcome)
            return lambda: None
        self._waiting.setdefault(key, []).append(done)

        def withdraw() -> None:
            waiting = self._waiting.get(key, [])
            if done in waiting:
                waiting.remove(done)
                self.cancelled.append(key)

        return withdraw


@dataclass
class Recorder:
    """A HostListener: what a front door would forward to its client."""

    updates: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    # Every didChange's changes, and each session's view folded from them (S2).
    changes: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    views: dict[str, dict[str, Any]] = field(default_factory=dict)

    def on_update(self, session_id: str, update: dict[str, Any]) -> None:
        self.updates.append((session_id, update))

    def on_view_changes(self, session_id: str, changes: list[dict[str, Any]]) -> None:
        self.changes.append((session_id, changes))
        self.views[session_id] = apply_view_changes(
            self.views.get(session_id, empty_view()), changes
        )

    def of(self, kind: str, session_id: str | None = None) -> list[dict[str, Any]]:
        return [
            u
            for sid, u in self.updates
            if u.get("sessionUpdate") == kind and (session_id is None or sid == session_id)
        ]


# -- a running host -------------------------------------------------------------------------


@dataclass
class PromptRun:
    """A `host.prompt` running in a task: its stop reason once done."""

    stop: str | None = None
    error: BaseException | None = None

    @property
    def done(self) -> bool:
        return self.stop is not None or self.error is not None


@dataclass
class Env:
    host: Host
    store: EventStore
    clock: ManualClock
    desk: Desk
    rec: Recorder
    tg: TaskGroup

    def prompt(self, session_id: str, text: str) -> PromptRun:
        run = PromptRun()

        async def go() -> None:
            try:
                run.stop = await self.host.prompt(session_id, ev.text_content(text))
            except Exception as exc:
                run.error = exc

        self.tg.start_soon(go)
        return run

    async def log(self, session_id: str) -> list[ev.Event]:
        """The session's events as the store holds them (not the host's memory)."""
        return await self.store.load(session_id)


@asynccontextmanager
async def host_env(
    store: EventStore | None = None,
    *,
    mode: str = "timed",
    timeout_s: int = 5,
    max_turn_requests: int = 1000,
    clock: ManualClock | None = None,
) -> AsyncIterator[Env]:
    clock = clock or ManualClock()
    store = store if store is not None else MemoryEventStore()
    desk, rec = Desk(), Recorder()
    async with Host(
        store,
        clock=clock,
        ask_user_question={"mode": mode, "timeout": timeout_s},
        max_turn_requests=max_turn_requests,
    ) as host:
        host.service.register(desk)
        host.publisher.add_listener(rec)
        async with anyio.create_task_group() as tg:
            yield Env(host, store, clock, desk, rec, tg)
            tg.cancel_scope.cancel()


# -- reading logs ---------------------------------------------------------------------------


def types(events: Sequence[ev.Event]) -> list[str]:
    return [e["type"] for e in events]


def of_type(events: Sequence[ev.Event], kind: str) -> list[ev.Event]:
    return [e for e in events if e["type"] == kind]


def result_of(events: Sequence[ev.Event], call_id: str) -> ev.Event:
    (found,) = [e for e in events if e["type"] == ev.TOOL_RESULT and e["callId"] == call_id]
    return found


def replies_admitted(events: Sequence[ev.Event]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(callId, answers) of every late reply admitted as a user message, in log order."""
    out = []
    for e in of_type(events, ev.USER_MESSAGE):
        source = e.get("source")
        if source and source.get("kind") == ev.REPLY_SOURCE_KIND:
            out.append((source["callId"], json.loads(e["content"][0]["text"])["answers"]))
    return out


def user_texts(events: Sequence[ev.Event]) -> list[str]:
    """The text of every user message (prompts and admitted replies), in log order."""
    return [e["content"][0]["text"] for e in of_type(events, ev.USER_MESSAGE)]


def state_of(view: ProjectionView, call_id: str) -> str | None:
    """ "open"/"continued" for an active call, "settled", or None when the view lacks it."""
    for active in view.active:
        if active.call_id == call_id:
            return active.state
    if any(s.call_id == call_id for s in view.settled):
        return "settled"
    return None
