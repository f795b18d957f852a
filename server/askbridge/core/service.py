"""UserQuestionService: `ask` (A1–A9), `ask_timed` (TW1–TW10), `attach_wait` (C1–C5).

The service validates a request, dispatches it on the waterfall, races the
answerers against the caller's signal (and, for timed asks, the wait's private
signal), checks the answer (V8) and maps every failure onto the error table.
Late replies (`answer`) are decided by the host, which installs a
`LateReplyHandler`; without one every late reply is refused (`False`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import anyio

from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.vocabulary import Answer, AnswerItem, PendingResult, Wait

from .clock import Clock, MonotonicClock
from .errors import HarnessError, UserQuestionError, error_from_wire
from .identity import AgentIdentity, AgentLike
from .limits import checked_questions
from .signal import AbortSignal
from .timed_wait import ClaimStream, TimedQuestionWait
from .validation import check_answer, validate_intents
from .waterfall import Disposer, Listener, UserQuestionRequest, UserQuestionWaterfall

MAX_TIMER_MS = 2147483647


class LateReplyHandler(Protocol):
    async def answer(
        self, agent_id: str, session_id: str, call_id: str, batch: Sequence[AnswerItem]
    ) -> bool: ...


class _Aborted(Exception):
    """A signal fired while answerers were still working (internal)."""


def _abort_error(cause: BaseException | None = None) -> UserQuestionError:
    err = UserQuestionError.of(ErrorCode.ASK_ABORTED)
    err.__cause__ = cause
    return err


def _as_harness_error(exc: Exception) -> HarnessError | None:
    """A HarnessError as is (E2), or one rebuilt from a wire-shaped error's data."""
    if isinstance(exc, HarnessError):
        return exc
    rebuilt = error_from_wire(str(exc), getattr(exc, "data", None))
    if rebuilt is not None:
        rebuilt.__cause__ = exc
    return rebuilt


def _provider_error(exc: Exception) -> UserQuestionError:
    """E1: a foreign failure keeps its message, with the original as __cause__."""
    err = UserQuestionError(str(exc) or type(exc).__name__, ErrorCode.PROVIDER_ERROR)
    err.__cause__ = exc
    return err


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

    async def _race(self, request: UserQuestionRequest, signals: Sequence[AbortSignal]) -> Answer:
        """Dispatch on the waterfall; cancel the answerers the moment a signal aborts (A9).

        The signals cancel the dispatch's scope from their abort callbacks: no watcher
        task per ask, which matters with thousands of questions pending at once.
        """
        result: Answer | None = None
        failure: Exception | None = None
        with anyio.CancelScope() as scope:
            removers = [signal.on_abort(scope.cancel) for signal in signals]
            try:
                result = await self.waterfall.dispatch(request)
            except Exception as exc:  # cancellation is not an Exception: it propagates (E3)
                failure = exc
            finally:
                for remove in removers:
                    remove()
        if failure is not None:
            raise failure
        if result is None:
            raise _Aborted()
        return result

    # -- ask ------------------------------------------------------------------------------

    async def ask(self, request: UserQuestionRequest) -> Answer:
        signal = request.signal
        if signal is not None and signal.aborted:
            raise UserQuestionError.of(ErrorCode.ASK_ABORTED)  # A1
        if not request.questions:
            raise UserQuestionError.of(ErrorCode.EMPTY_QUESTIONS)  # A2
        checked_questions(request.questions)  # S1 (once: a checked batch passes), before asking
        self._check_agent(request.agent)  # A3, A4
        validate_intents(request.questions)  # A5
        call_id = request.wait.call_id if request.wait else None
        try:
            answer = await self._race(request, [signal] if signal is not None else [])
        except _Aborted:
            raise _abort_error() from None  # A9
        except Exception as exc:
            harness = _as_harness_error(exc)
            # A8 / E2: raised even if the signal also aborted. An answerer's own HarnessError
            # is re-raised as is, keeping its own __cause__ (`raise e from e` would make
            # it its own cause); one rebuilt from wire data has the original as cause.
            if harness is exc:
                raise
            if harness is not None:
                raise harness from exc
            if signal is not None and signal.aborted:
                raise _abort_error(exc) from exc
            raise _provider_error(exc) from exc
        return check_answer(request.questions, answer, call_id)  # V8

    # -- ask_timed ------------------------------------------------------------------------

    async def ask_timed(
        self, request: UserQuestionRequest, call_id: str, timeout_ms: int
    ) -> Answer | PendingResult:
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
        pending = PendingResult(call_id=call_id)
        try:
            timed_request = request.with_wait(wait.signal, Wait(call_id=call_id, timed=True))
            signals = [wait.signal] + ([turn] if turn is not None else [])
            try:
                answer = await self._race(timed_request, signals)
            except _Aborted:
                if (turn is not None and turn.aborted) or wait.shutdown:
                    raise _abort_error() from None  # TW9, TW10
                return pending  # TW6
            except Exception as exc:
                harness = _as_harness_error(exc)
                code = harness.code if harness is not None else None
                if code == ErrorCode.ASK_TIMED_OUT:
                    return pending  # TW7
                if code == ErrorCode.NO_PROVIDER:
                    return await self._wait_for_deadline(wait, turn, pending)  # TW8
                if harness is exc:
                    raise  # TW9: raised unchanged (its own cause kept, as in ask)
                if harness is not None:
                    raise harness from exc
                if (turn is not None and turn.aborted) or wait.shutdown:
                    raise _abort_error(exc) from exc
                if wait.expired:
                    return pending
                raise _provider_error(exc) from exc
            return check_answer(request.questions, answer, call_id)
        finally:
            wait.close()  # TW10
            if self._waits.get(key) is wait:
                del self._waits[key]

    async def _wait_for_deadline(
        self, wait: TimedQuestionWait, turn: AbortSignal | None, pending: PendingResult
    ) -> PendingResult:
        async with anyio.create_task_group() as tg:

            async def watch(signal: AbortSignal) -> None:
                await signal.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(watch, wait.signal)
            if turn is not None:
                tg.start_soon(watch, turn)
        if (turn is not None and turn.aborted) or wait.shutdown:
            raise _abort_error()
        return pending

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
