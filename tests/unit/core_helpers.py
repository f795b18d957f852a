"""Plain helpers shared by the user-questions core tests (tests/unit/test_core_*.py).

`Agent` is a value-equal agent object, so identity-vs-equality (A3) is testable;
`make_service` wires a real UserQuestionService to a SimpleAgentRegistry and a
ManualClock; `WireError` is the shape a front door's JSON-RPC error has (a
message plus `.data = {name, code}`); `DeferredClock` is a Clock whose timers
run only when told to, like a busy event loop that has not reached a due
callback yet (the state C2 talks about). `settle()` lets every task run until
all are blocked; no helper sleeps on real time.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from anyio.abc import TaskGroup

from askbridge.core import (
    AbortSignal,
    ClaimStream,
    Clock,
    ManualClock,
    SimpleAgentRegistry,
    TimedQuestionWait,
    UserQuestionError,
    UserQuestionRequest,
    UserQuestionService,
)
from askbridge.core.waterfall import Next, Settle, Withdraw
from askbridge.protocol import FIXED_MESSAGES, Answer, AnswerItem, PendingResult, QuestionItem
from settling import settle


@dataclass(frozen=True)
class Agent:
    """Equal by id (dataclass eq), so two instances with one id are `==` but not `is`."""

    id: str


def message(code: str) -> str:
    """The fixed message of `code` (behavior.md E)."""
    return FIXED_MESSAGES[code]


def assert_error(err: BaseException, code: str, text: str | None = None) -> None:
    """`err` is a UserQuestionError with `code` and the table's (or the given) message."""
    assert isinstance(err, UserQuestionError), repr(err)
    assert err.code == code
    expected = text if text is not None else FIXED_MESSAGES[code]
    assert err.message == expected
    assert str(err) == expected


async def expect(
    awaitable: Awaitable[object], code: str, text: str | None = None
) -> UserQuestionError:
    """Await `awaitable`, which must fail with `code` and the table's (or the given) message."""
    with pytest.raises(UserQuestionError) as info:
        await awaitable
    assert_error(info.value, code, text)
    return info.value


def question(
    qid: str = "q1",
    *,
    options: Sequence[str] | None = ("Yes", "No"),
    multi: bool | None = None,
    detail: str | None = None,
    intent: dict[str, Any] | None = None,
) -> QuestionItem:
    return QuestionItem.model_validate(
        {
            "id": qid,
            "question": f"question {qid}?",
            "options": None if options is None else [{"label": label} for label in options],
            "multiSelect": multi,
            "detail": detail,
            "intent": intent,
        }
    )


def first_choice(questions: Sequence[QuestionItem]) -> Answer:
    """A valid answer: the first option of each question, or custom text when it has none."""
    items = [
        AnswerItem(id=q.id, selected=[q.options[0].label])
        if q.options
        else AnswerItem(id=q.id, custom="text")
        for q in questions
    ]
    return Answer(answers=items)


@dataclass
class Setup:
    service: UserQuestionService
    registry: SimpleAgentRegistry
    clock: Any  # a ManualClock, unless make_service was given another Clock
    root: Agent

    def request(
        self,
        questions: Sequence[QuestionItem] | None = None,
        *,
        agent: Agent | None = None,
        signal: AbortSignal | None = None,
        use_root: bool = True,
    ) -> UserQuestionRequest:
        return UserQuestionRequest(
            questions=list(questions) if questions is not None else [question()],
            agent=agent if agent is not None else (self.root if use_root else None),
            signal=signal,
        )


def make_service(clock: Clock | None = None) -> Setup:
    """A service with one live root agent, on a ManualClock (or the given one, e.g. a
    DeferredClock)."""
    registry = SimpleAgentRegistry()
    root = Agent("root")
    registry.add(root)
    clock = clock or ManualClock()
    return Setup(UserQuestionService(registry, clock), registry, clock, root)


@dataclass
class Answerer:
    """A waterfall listener standing in for a client: it records every request it gets and
    settles when the test sets `reply` (or fails with `error`) — at once if it is set
    already, else when `answer` or `fail` is called; it never answers while neither is.
    `cancelled` counts the times the core withdrew it while it waited."""

    reply: Answer | None = None
    error: Exception | None = None
    requests: list[UserQuestionRequest] = field(default_factory=list)
    cancelled: int = 0
    _waiting: list[Settle] = field(default_factory=list)

    def answer(self, reply: Answer) -> None:
        self.reply = reply
        self._wake()

    def fail(self, error: Exception) -> None:
        self.error = error
        self._wake()

    def _wake(self) -> None:
        waiting, self._waiting = self._waiting, []
        for done in waiting:
            self._settle(done)

    def _settle(self, done: Settle) -> None:
        if self.error is not None:
            done(None, self.error)
        else:
            done(self.reply, None)

    def __call__(self, request: UserQuestionRequest, next_: Next, done: Settle) -> Withdraw:
        self.requests.append(request)
        if self.reply is not None or self.error is not None:
            self._settle(done)
            return _nothing

        def withdraw() -> None:
            if done in self._waiting:
                self._waiting.remove(done)
                self.cancelled += 1

        self._waiting.append(done)
        return withdraw


def _nothing() -> None:
    """The withdraw of a listener that settled at once."""


class WireError(Exception):
    """A JSON-RPC error as a front door raises it: message plus `data = {name, code}`."""

    def __init__(self, message: str, data: Any) -> None:
        super().__init__(message)
        self.data = data


class DeferredClock:
    """A Clock whose due callbacks run only on `run_due()`, as on a loop that is
    still busy: `now()` can be past a timer that has not fired yet."""

    def __init__(self) -> None:
        self._now = 0.0
        self._heap: list[tuple[float, int, list[bool], Callable[[], None]]] = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self._now

    def call_at(self, when_ms: float, callback: Callable[[], None]) -> _DeferredTimer:
        flag = [False]
        heapq.heappush(self._heap, (when_ms, next(self._seq), flag, callback))
        return _DeferredTimer(flag)

    def jump(self, ms: float) -> None:
        """Move time without running any callback."""
        self._now += ms

    def run_due(self) -> None:
        while self._heap and self._heap[0][0] <= self._now:
            _, _, cancelled, callback = heapq.heappop(self._heap)
            if not cancelled[0]:
                callback()


@dataclass
class _DeferredTimer:
    flag: list[bool]

    def cancel(self) -> None:
        self.flag[0] = True


@dataclass
class TimedCall:
    """An `ask_timed` running in a task: its outcome once `done`."""

    done: bool = False
    result: Answer | PendingResult | None = None
    error: BaseException | None = None

    @property
    def pending(self) -> bool:
        return self.done and isinstance(self.result, PendingResult)


def start_timed(
    tg: TaskGroup,
    service: UserQuestionService,
    request: UserQuestionRequest,
    call_id: str = "c1",
    timeout_ms: int = 1000,
) -> TimedCall:
    """Start `service.ask_timed` in `tg`; a UserQuestionError is recorded, not raised."""
    call = TimedCall()

    async def run() -> None:
        try:
            call.result = await service.ask_timed(request, call_id, timeout_ms)
        except UserQuestionError as exc:
            call.error = exc
        finally:
            call.done = True

    tg.start_soon(run)
    return call


@dataclass
class Waiting:
    """A timed ask under way (`timed_ask`): its service, answerer, call and task group."""

    s: Setup
    call: TimedCall
    tg: TaskGroup
    answerer: Answerer  # registered unless timed_ask(provider=False)
    call_id: str

    def claim(self, claimant: AbortSignal | None = None) -> ClaimStream:
        """A client's claim on this ask's wait (`attach_wait` for the root agent, C1–C5)."""
        return self.s.service.attach_wait("root", self.call_id, claimant=claimant)

    def wait(self) -> TimedQuestionWait:
        """This ask's wait, which exists."""
        wait = self.s.service.find_wait("root", self.call_id)
        assert wait is not None
        return wait

    async def advance(self, ms: float) -> None:
        """Move the ManualClock by `ms`, then let every task run."""
        self.s.clock.advance(ms)
        await settle()


@asynccontextmanager
async def timed_ask(
    s: Setup | None = None,
    *,
    signal: AbortSignal | None = None,
    answerer: Answerer | None = None,
    provider: bool = True,
    call_id: str = "c1",
    timeout_ms: int = 1000,
) -> AsyncIterator[Waiting]:
    """The arrange block of the timed-wait and claim tests: a service (`s`, else a fresh
    `make_service()`) with an answerer registered (`answerer`, else a fresh one; none at
    all with `provider=False`, TW8), then the root agent's `ask_timed` (its turn's
    `signal`) started in a task group and settled, so the wait exists; the block's body
    runs while it waits, and leaving it waits for the ask to end."""
    s = s or make_service()
    answerer = answerer or Answerer()
    if provider:
        s.service.register(answerer)
    async with anyio.create_task_group() as tg:
        call = start_timed(tg, s.service, s.request(signal=signal), call_id, timeout_ms)
        await settle()
        yield Waiting(s, call, tg, answerer, call_id)
