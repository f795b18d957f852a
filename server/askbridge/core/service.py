"""UserQuestionService: `ask` (A1–A9), `ask_timed` (TW1–TW10), `attach_wait` (C1–C5).

The service checks a request, asks the waterfall's listeners and maps every
failure onto the error table. An ask is a record (`start_ask`,
`start_ask_timed`; asking.py) that a callback resumes; the coroutine
`ask`/`ask_timed` await that record's one future. Late replies (`answer`) are
decided by the host, which installs a `LateReplyHandler`; without one every
late reply is refused (`False`).

How a question crosses the core and the host's asking room (one path, no
coroutine per waiting question):

1. The turn's step (host/agent/step.py) starts each ask_user_question call with
   `AskUserQuestionTool.start` (host/agent/tools.py), which builds the request
   and calls `start_ask` or `start_ask_timed` here: the checks (A1–A5, S1 in
   limits.py, TW1–TW3), then for a timed ask a `TimedQuestionWait`
   (timed_wait.py: its deadline on the injected clock, clock.py, and its
   claims, which `attach_wait` takes). The MCP door and embedders await the
   coroutine `ask` over the same record.
2. A `PendingAsk` (asking.py) asks the waterfall (waterfall.py `start`), whose
   first listener is the host's `QuestionFanout.listener` (host/asking/fanout.py).
3. The fan-out opens an `OpenQuestion` (host/asking/open_question.py): a card
   per follower that renders questions (clients.py: the door's link), else the
   prompting client's fallback or the rest of the waterfall; it checks each
   answer (V8, validation.py) and logs the question's life (question_log.py).
4. The first valid answer, the user's dismissal, a countdown's end, or the
   failure of every card settles the `PendingAsk`; so do the turn's abort and
   the wait's deadline or shutdown (`ask_failure`, `timed_failure`). It
   withdraws what is still out and resumes the tool call once, with an answer,
   a pending result or an error.
5. A reply to a question that went pending comes back later through
   host/asking/late_answers.py (L1–L7), not through this record.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.vocabulary import Answer, AnswerItem, PendingResult, Wait

from .asking import Done, PendingAsk
from .clock import Clock, MonotonicClock
from .errors import UserQuestionError
from .identity import AgentIdentity, AgentLike
from .limits import checked_questions
from .signal import AbortSignal
from .timed_wait import ClaimStream, TimedQuestionWait
from .validation import validate_intents
from .waterfall import (
    Disposer,
    Listener,
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
        """W2/W3: a listener that asks with a callback (waterfall.py)."""
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

    def start_ask(self, request: UserQuestionRequest, done: Done) -> PendingAsk:
        """`ask` as a record (asking.py): `done(answer, None)` or `(None, error)` resumes
        the caller, maybe before this returns. Raises what `ask` raises before asking."""
        self._check_ask(request)
        pending = PendingAsk(request.signal, done)
        pending.start(self.waterfall.start, request)
        return pending

    async def ask(self, request: UserQuestionRequest) -> Answer:
        """`start_ask` awaited; cancelling the await withdraws the question."""
        answer: Answer | PendingResult = await await_callback(
            lambda done: self.start_ask(request, done).cancel
        )
        assert isinstance(answer, Answer)
        return answer

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

        def forget() -> None:  # TW10: however the ask ends, its cancellation included
            if self._waits.get(key) is wait:
                del self._waits[key]

        wait.on_close = forget
        return wait, request.with_wait(wait.signal, Wait(call_id=call_id, timed=True))

    def start_ask_timed(
        self, request: UserQuestionRequest, call_id: str, timeout_ms: int, done: Done
    ) -> PendingAsk:
        """`ask_timed` as a record, as `start_ask` is `ask`'s: `done(answer or pending, None)`.
        The wait is closed and its slot freed before `done` runs."""
        wait, timed_request = self._open_wait(request, call_id, timeout_ms)
        pending = PendingAsk(request.signal, done, wait, call_id)
        pending.start(self.waterfall.start, timed_request)
        return pending

    async def ask_timed(
        self, request: UserQuestionRequest, call_id: str, timeout_ms: int
    ) -> Answer | PendingResult:
        """`start_ask_timed` awaited; cancelling the await withdraws the question."""
        result: Answer | PendingResult = await await_callback(
            lambda done: self.start_ask_timed(request, call_id, timeout_ms, done).cancel
        )
        return result

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
