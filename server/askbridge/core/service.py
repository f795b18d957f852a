"""UserQuestionService: `ask` (A1–A9), `ask_timed` (TW1–TW10), `attach_wait` (C1–C5).

The service validates a request, dispatches it on the waterfall, checks the
answer (V8) and maps every failure onto the error table. When the first
listener asks with a callback (the host's fan-out) the ask is a record
(`start_ask`, `start_ask_timed`; asking.py), which the coroutine
`ask`/`ask_timed` await on one future; a chain of plain async listeners is
raced against the caller's signal (and, for timed asks, the wait's private
signal) instead (racing.py).
Late replies (`answer`) are decided by the host, which installs a
`LateReplyHandler`; without one every late reply is refused (`False`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.vocabulary import Answer, AnswerItem, PendingResult, Wait

from .asking import (
    PENDING,
    WAIT_FOR_DEADLINE,
    Done,
    PendingAsk,
    abort_error,
    ask_failure,
    timed_failure,
)
from .clock import Clock, MonotonicClock
from .errors import UserQuestionError
from .identity import AgentIdentity, AgentLike
from .limits import checked_questions
from .racing import Aborted, race, wait_for_deadline
from .signal import AbortSignal
from .timed_wait import ClaimStream, TimedQuestionWait
from .validation import check_answer, validate_intents
from .waterfall import (
    Disposer,
    Listener,
    SoonAsk,
    UserQuestionRequest,
    UserQuestionWaterfall,
    await_callback,
)

MAX_TIMER_MS = 2147483647


class LateReplyHandler(Protocol):
    async def answer(
        self, agent_id: str, session_id: str, call_id: str, batch: Sequence[AnswerItem]
    ) -> bool: ...


class UserQuestionService:
    def __init__(self, identity: AgentIdentity, clock: Clock | None = None) -> None:
        self.identity = identity
        self.clock: Clock = clock or MonotonicClock()
        self.waterfall = UserQuestionWaterfall(identity)
        self._waits: dict[tuple[str, str], TimedQuestionWait] = {}
        self._late_replies: LateReplyHandler | None = None
        self._closed = False

    # -- listeners and hooks -------------------------------------------------------------

    def register(
        self, listener: Listener, *, agent_id: str | None = None, prepend: bool = False
    ) -> Disposer:
        return self.waterfall.register(listener, agent_id=agent_id, prepend=prepend)

    def register_soon(
        self, soon: SoonAsk, *, agent_id: str | None = None, prepend: bool = False
    ) -> Disposer:
        """A listener that asks with a callback (waterfall.py); first, it makes every ask a
        record (asking.py)."""
        return self.waterfall.register_soon(soon, agent_id=agent_id, prepend=prepend)

    def set_late_reply_handler(self, handler: LateReplyHandler | None) -> None:
        self._late_replies = handler

    # -- checks ---------------------------------------------------------------------------

    def _check_agent(self, agent: AgentLike | None) -> None:
        if agent is None:
            return
        if not self.identity.is_live(agent):
            raise UserQuestionError.of(ErrorCode.CALLER_NOT_LIVE)  # A3
        if self.identity.is_subagent(agent):
            raise UserQuestionError.of(ErrorCode.DELEGATED_CALLER)  # A4

    # -- ask ------------------------------------------------------------------------------

    def _check_ask(self, request: UserQuestionRequest) -> None:
        signal = request.signal
        if signal is not None and signal.aborted:
            raise UserQuestionError.of(ErrorCode.ASK_ABORTED)  # A1
        if not request.questions:
            raise UserQuestionError.of(ErrorCode.EMPTY_QUESTIONS)  # A2
        checked_questions(request.questions)  # S1 (once: a checked batch passes), before asking
        self._check_agent(request.agent)  # A3, A4
        validate_intents(request.questions)  # A5

    def start_ask(self, request: UserQuestionRequest, done: Done) -> PendingAsk | None:
        """`ask` as a record (asking.py): `done(answer, None)` or `(None, error)` resumes
        the caller. Raises what `ask` raises before asking; None (nothing checked, nothing
        asked) when the first listener does not ask with a callback: then await `ask`."""
        first = self.waterfall.first_soon(request)
        if first is None:
            return None
        self._check_ask(request)
        pending = PendingAsk(request.signal, done)
        pending.start(first, request)
        return pending

    async def ask(self, request: UserQuestionRequest) -> Answer:
        first = self.waterfall.first_soon(request)
        if first is not None:

            def start(done: Done) -> Callable[[], None]:
                pending = self.start_ask(request, done)
                assert pending is not None
                return pending.cancel

            answer = await await_callback(start)
            assert isinstance(answer, Answer)
            return answer
        self._check_ask(request)
        signal = request.signal
        call_id = request.wait.call_id if request.wait else None
        try:
            answer = await race(self.waterfall, request, [signal] if signal is not None else [])
        except Aborted:
            raise abort_error() from None  # A9
        except Exception as exc:
            # A8 / E2: an answerer's own HarnessError is re-raised as is, keeping its own
            # __cause__ (`raise e from e` would make it its own cause).
            failure = ask_failure(exc, signal)
            if failure is exc:
                raise
            raise failure from exc
        return check_answer(request.questions, answer, call_id)  # V8

    # -- ask_timed ------------------------------------------------------------------------

    def _open_wait(
        self, request: UserQuestionRequest, call_id: str, timeout_ms: int
    ) -> tuple[TimedQuestionWait, UserQuestionRequest]:
        """TW1–TW3 and the ask's checks, then the wait, registered under (agent, call id)."""
        if (
            not isinstance(timeout_ms, int)
            or isinstance(timeout_ms, bool)
            or not 1 <= timeout_ms <= MAX_TIMER_MS
        ):
            raise UserQuestionError.of(ErrorCode.BAD_TIMEOUT)  # TW1
        turn = request.signal
        if turn is not None and turn.aborted:
            raise UserQuestionError.of(ErrorCode.ASK_ABORTED)  # A1
        if not request.questions:
            raise UserQuestionError.of(ErrorCode.EMPTY_QUESTIONS)  # A2
        checked_questions(request.questions)  # S1
        agent = request.agent
        if agent is None:
            raise UserQuestionError.of(ErrorCode.CALLER_NOT_LIVE)  # TW2
        self._check_agent(agent)
        validate_intents(request.questions, timed=True)  # A5
        key = (agent.id, call_id)
        if key in self._waits:
            raise UserQuestionError.of(ErrorCode.DUPLICATE_WAIT)  # TW3
        if self._closed:
            raise UserQuestionError.of(ErrorCode.ASK_ABORTED)
        wait = TimedQuestionWait(self.clock, timeout_ms)
        self._waits[key] = wait
        return wait, request.with_wait(wait.signal, Wait(call_id=call_id, timed=True))

    def _close_wait(
        self, request: UserQuestionRequest, call_id: str, wait: TimedQuestionWait
    ) -> None:
        wait.close()  # TW10
        key = (request.agent.id if request.agent is not None else "", call_id)
        if self._waits.get(key) is wait:
            del self._waits[key]

    def start_ask_timed(
        self, request: UserQuestionRequest, call_id: str, timeout_ms: int, done: Done
    ) -> PendingAsk | None:
        """`ask_timed` as a record, as `start_ask` is `ask`'s: `done(answer or pending, None)`."""
        first = self.waterfall.first_soon(request)
        if first is None:
            return None
        wait, timed_request = self._open_wait(request, call_id, timeout_ms)

        def finished(result: Answer | PendingResult | None, error: Exception | None) -> None:
            self._close_wait(request, call_id, wait)
            done(result, error)

        pending = PendingAsk(request.signal, finished, wait, call_id)
        pending.start(first, timed_request)
        return pending

    async def ask_timed(
        self, request: UserQuestionRequest, call_id: str, timeout_ms: int
    ) -> Answer | PendingResult:
        if self.waterfall.first_soon(request) is not None:

            def start(done: Done) -> Callable[[], None]:
                pending = self.start_ask_timed(request, call_id, timeout_ms, done)
                assert pending is not None
                return pending.cancel

            result = await await_callback(start)
            assert isinstance(result, Answer | PendingResult)
            return result
        wait, timed_request = self._open_wait(request, call_id, timeout_ms)
        turn = request.signal
        pending = PendingResult(call_id=call_id)
        try:
            signals = [wait.signal] + ([turn] if turn is not None else [])
            try:
                answer = await race(self.waterfall, timed_request, signals)
            except Aborted:
                if (turn is not None and turn.aborted) or wait.shutdown:
                    raise abort_error() from None  # TW9, TW10
                return pending  # TW6
            except Exception as exc:
                verdict = timed_failure(exc, wait, turn)
                if verdict is PENDING:
                    return pending  # TW7, or the deadline passed meanwhile
                if verdict is WAIT_FOR_DEADLINE:
                    await wait_for_deadline(wait, turn)  # TW8
                    return pending
                assert isinstance(verdict, Exception)
                if verdict is exc:
                    raise  # TW9: raised unchanged (its own cause kept, as in ask)
                raise verdict from exc
            return check_answer(request.questions, answer, call_id)
        finally:
            self._close_wait(request, call_id, wait)

    # -- claims ---------------------------------------------------------------------------

    def find_wait(self, agent_id: str, call_id: str) -> TimedQuestionWait | None:
        return self._waits.get((agent_id, call_id))

    def attach_wait(
        self, agent: AgentLike | str, call_id: str, claimant: AbortSignal | None = None
    ) -> ClaimStream:
        """C1–C5: claim the wait of (agent, call_id); the stream's one frame is the time left."""
        agent_id = agent if isinstance(agent, str) else agent.id
        return ClaimStream(self._waits.get((agent_id, call_id)), claimant)

    # -- late replies ---------------------------------------------------------------------

    async def answer(
        self, agent_id: str, session_id: str, call_id: str, batch: Sequence[AnswerItem]
    ) -> bool:
        """L1–L6, decided by the host's handler; without a host nothing is answerable late."""
        if self._late_replies is None:
            return False
        return await self._late_replies.answer(agent_id, session_id, call_id, batch)

    # -- shutdown -------------------------------------------------------------------------

    def shutdown(self) -> None:
        """TW10: close every wait; their asks end with ASK_ABORTED."""
        self._closed = True
        for wait in list(self._waits.values()):
            wait.close(shutdown=True)
