"""Stateful property test of the timed wait (TW5, TW6, TW10, C1–C5).

Hypothesis draws a sequence of operations — clock advances, claims (with or
without a claimant signal), releases (by closing the stream, by the claimant
disconnecting, or by cancelling the consumer task), answers, client timeouts,
turn aborts and shutdowns — and one event loop replays it against the real
code on a ManualClock, next to a small model. After every step (and a settle
that lets all tasks run) the test checks that the wait expired exactly at the
first moment when no claim was held and the deadline had passed, and never
otherwise; that each claim stream is open exactly while its claim is held; and
that every stream ends when the wait ends.

Two targets: `UserQuestionService.ask_timed` (with an answerer that waits for
an answer, or with none: TW8) and a bare `TimedQuestionWait`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio
import pytest
from core_helpers import Answerer, first_choice, make_service, question, settle, start_timed
from hypothesis import given, settings
from hypothesis import strategies as st

from askbridge.core import (
    AbortSignal,
    ClaimStream,
    ManualClock,
    TimedQuestionWait,
    UserQuestionError,
)
from askbridge.protocol import Answer, ErrorCode, PendingResult, WaitFrame
from settling import SettlingLoop

# A broken rule must fail fast, not hang until the suite-wide timeout.
pytestmark = pytest.mark.timeout(90)

Op = tuple[str, int]

OPS = st.one_of(
    st.tuples(st.just("advance"), st.integers(0, 700)),
    st.tuples(st.just("claim"), st.integers(0, 1)),  # 1: with a claimant signal
    st.tuples(st.just("release"), st.integers(0, 9)),
    st.tuples(st.just("disconnect"), st.integers(0, 9)),
    st.tuples(st.just("cancel_consumer"), st.integers(0, 9)),
    st.tuples(st.just("answer"), st.just(0)),
    st.tuples(st.just("client_timed_out"), st.just(0)),
    st.tuples(st.just("abort"), st.just(0)),
)
SCENARIO = settings(max_examples=150, deadline=None, derandomize=True, database=None)


@dataclass
class Claim:
    stream: ClaimStream
    claimant: AbortSignal | None
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    frames: list[WaitFrame] = field(default_factory=list)
    finished: bool = False
    expected_frames: list[int] = field(default_factory=list)


@dataclass
class Model:
    """What the rules say: the deadline is fixed; time counts only while unclaimed."""

    deadline: float
    now: float = 0.0
    held: set[int] = field(default_factory=set)
    expired_at: float | None = None
    closed: bool = False  # the wait ended some other way (answer, abort, client timeout)
    outcome: str | None = None  # "pending" | "answer" | "aborted" (service target)

    @property
    def open(self) -> bool:
        return self.expired_at is None and not self.closed

    def expire_if_due(self, at: float) -> None:
        if self.open and not self.held and at >= self.deadline:
            self.expired_at = at
            self.outcome = "pending"

    def advance(self, ms: int) -> None:
        if self.open and not self.held and self.now + ms >= self.deadline:
            self.expired_at = max(self.deadline, self.now)  # the timer fires at its own time
            self.outcome = "pending"
        self.now += ms

    def claim(self, index: int) -> int | None:
        self.expire_if_due(self.now)  # C2
        if not self.open:
            return None
        self.held.add(index)
        return max(0, round(self.deadline - self.now))

    def release(self, index: int) -> None:
        if index in self.held:
            self.held.discard(index)
            self.expire_if_due(self.now)  # TW5: re-armed for max(0, deadline - now)

    def close(self, outcome: str) -> None:
        if self.open:
            self.closed, self.outcome = True, outcome
        self.held.clear()


class Scenario:
    def __init__(self, timeout: int, *, service: bool, answerer: bool) -> None:
        self.clock = ManualClock()
        self.setup = make_service(self.clock)
        self.model = Model(deadline=timeout)
        self.use_service = service
        self.answerer = Answerer() if answerer else None
        self.turn = AbortSignal()
        self.claims: list[Claim] = []
        self.expiries: list[float] = []
        self.timeout = timeout

    async def run(self, ops: list[Op]) -> None:
        with anyio.fail_after(2):  # a guard against hangs only; no test time is real time
            async with anyio.create_task_group() as tg:
                await self._start(tg)
                for op in ops:
                    await self._apply(tg, op)
                    await settle()
                    self._check()
                await self._apply(tg, ("abort", 0))  # end whatever is left open
                await settle()
                self._check()
            assert all(c.finished for c in self.claims)  # TW10: every stream ended

    async def _start(self, tg: anyio.abc.TaskGroup) -> None:
        if self.use_service:
            if self.answerer is not None:
                self.setup.service.register(self.answerer)
            request = self.setup.request([question()], signal=self.turn)
            self.call = start_timed(tg, self.setup.service, request, "c1", self.timeout)
            await settle()
            found = self.setup.service.find_wait("root", "c1")
            assert found is not None
            self.wait = found
        else:
            self.wait = TimedQuestionWait(self.clock, self.timeout)
        self.wait.signal.on_abort(lambda: self.expiries.append(self.clock.now()))

    async def _apply(self, tg: anyio.abc.TaskGroup, op: Op) -> None:
        kind, arg = op
        model = self.model
        if kind == "advance":
            model.advance(arg)
            self.clock.advance(arg)
        elif kind == "claim":
            self._claim(tg, with_claimant=bool(arg))
        elif kind in ("release", "disconnect", "cancel_consumer") and self.claims:
            index = arg % len(self.claims)
            claim = self.claims[index]
            model.release(index)
            if kind == "disconnect" and claim.claimant is not None:
                claim.claimant.abort()
            elif kind == "cancel_consumer":
                claim.scope.cancel()
                await settle()  # the consumer's own cancellation releases the claim (C4)
            else:
                await claim.stream.aclose()
        elif kind == "answer" and self.answerer is not None:
            model.close("answer")
            self.answerer.answer(first_choice([question()]))
        elif kind == "client_timed_out" and self.answerer is not None:
            model.close("pending")  # TW7: pending, but the wait did not expire
            self.answerer.fail(UserQuestionError.of(ErrorCode.ASK_TIMED_OUT))
        elif kind == "abort":
            model.close("aborted")
            if self.use_service:
                self.turn.abort()
            else:
                self.wait.close()

    def _claim(self, tg: anyio.abc.TaskGroup, *, with_claimant: bool) -> None:
        index = len(self.claims)
        claimant = AbortSignal() if with_claimant else None
        if self.use_service:
            stream = self.setup.service.attach_wait("root", "c1", claimant)
        else:
            stream = ClaimStream(self.wait, claimant)
        claim = Claim(stream, claimant)
        remaining = self.model.claim(index)
        claim.expected_frames = [] if remaining is None else [remaining]
        self.claims.append(claim)

        async def consume() -> None:
            with claim.scope:
                async for frame in claim.stream:
                    claim.frames.append(frame)
            claim.finished = True

        tg.start_soon(consume)

    def _check(self) -> None:
        model, wait = self.model, self.wait
        # Expired exactly once, exactly when the model says, and never otherwise.
        expected = [] if model.expired_at is None else [model.expired_at]
        assert self.expiries == expected, (self.expiries, expected)
        assert wait.expired == (model.expired_at is not None)
        for index, claim in enumerate(self.claims):
            assert [f.remaining_ms for f in claim.frames] == claim.expected_frames
            assert claim.finished == (index not in model.held), index
            assert claim.stream.claimed == (index in model.held), index
        if model.open:
            assert wait.claim_count == len(model.held)
            assert self.clock.pending_timers == (0 if model.held else 1)
        else:
            assert wait.claim_count == 0 and self.clock.pending_timers == 0
        if self.use_service:
            self._check_call()

    def _check_call(self) -> None:
        model, call = self.model, self.call
        assert call.done == (not model.open)
        if model.outcome == "pending":
            assert call.result == PendingResult(call_id="c1")
        elif model.outcome == "answer":
            assert isinstance(call.result, Answer)
        elif model.outcome == "aborted":
            assert isinstance(call.error, UserQuestionError)
            assert call.error.code == ErrorCode.ASK_ABORTED
        if call.done:
            assert self.setup.service.find_wait("root", "c1") is None  # TW10: slot freed
            assert wait_ended(self.wait)


def wait_ended(wait: TimedQuestionWait) -> bool:
    return wait.ended and wait.claim_count == 0


def run(scenario: Scenario, ops: list[Op]) -> None:
    """One example on its own loop, one `settle()` can see into (tests/settling.py)."""
    anyio.run(scenario.run, ops, backend_options={"loop_factory": SettlingLoop})


@SCENARIO
@given(timeout=st.integers(1, 1500), ops=st.lists(OPS, max_size=25), answerer=st.booleans())
def test_TW5_C5_stateful_ask_timed_expires_exactly_when_unclaimed_past_deadline(
    timeout: int, ops: list[Op], answerer: bool
) -> None:
    """TW5/TW6/TW8/TW10, C1–C5 through UserQuestionService.ask_timed and attach_wait."""
    run(Scenario(timeout, service=True, answerer=answerer), ops)


@SCENARIO
@given(timeout=st.integers(1, 1500), ops=st.lists(OPS, max_size=25))
def test_TW5_C5_stateful_timed_question_wait(timeout: int, ops: list[Op]) -> None:
    """TW5/TW10, C1–C5 on a bare TimedQuestionWait and its ClaimStreams."""
    run(Scenario(timeout, service=False, answerer=False), ops)
