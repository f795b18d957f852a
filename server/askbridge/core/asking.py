"""A question the core has out, as a record (architecture.md: "A pending question is a record").

`PendingAsk` is all one ask holds while it waits: its request, its timed wait
(if any), the listener's withdraw, the removers of its signal callbacks, and
the callback that resumes its caller. Callbacks drive it — the listener
settling, the turn's signal aborting, the wait's deadline or shutdown — so a
waiting question is this object: no coroutine, task or cancel scope per ask.
The turn loop resumes a tool call from its callback; the service's coroutine
`ask`/`ask_timed` await its one future. A listener settles with an answer it
has checked (V8) already (waterfall.py), so the core does not check it again.

The outcome rules are the service's (A8, A9, E1, E2, TW6–TW10): `ask_failure`
and `timed_failure` map a listener's failure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.vocabulary import Answer, PendingResult

from .errors import HarnessError, UserQuestionError, error_from_wire
from .signal import AbortSignal
from .timed_wait import TimedQuestionWait
from .waterfall import Settle, UserQuestionRequest, Withdraw

# What resumes the asker: (answer or pending, None) or (None, the error to raise).
Done = Callable[[Answer | PendingResult | None, Exception | None], None]


class _Verdict:
    """What a timed ask's failure comes to when it is not an error (`timed_failure`)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


PENDING: Final = _Verdict("pending")  # TW6, TW7: the question stays answerable
WAIT_FOR_DEADLINE: Final = _Verdict("wait")  # TW8: nobody can show it now; wait it out


def abort_error(cause: BaseException | None = None) -> UserQuestionError:
    err = UserQuestionError.of(ErrorCode.ASK_ABORTED)
    err.__cause__ = cause
    return err


def as_harness_error(exc: Exception) -> HarnessError | None:
    """A HarnessError as is (E2), or one rebuilt from a wire-shaped error's data."""
    if isinstance(exc, HarnessError):
        return exc
    rebuilt = error_from_wire(str(exc), getattr(exc, "data", None))
    if rebuilt is not None:
        rebuilt.__cause__ = exc
    return rebuilt


def provider_error(exc: Exception) -> UserQuestionError:
    """E1: a foreign failure keeps its message, with the original as __cause__."""
    err = UserQuestionError(str(exc) or type(exc).__name__, ErrorCode.PROVIDER_ERROR)
    err.__cause__ = exc
    return err


def ask_failure(exc: Exception, signal: AbortSignal | None) -> Exception:
    """A8 / E1 / E2: what a blocking ask raises when its listener failed with `exc` — an
    answerer's own HarnessError as is, even if the signal also aborted."""
    harness = as_harness_error(exc)
    if harness is not None:
        return harness
    if signal is not None and signal.aborted:
        return abort_error(exc)
    return provider_error(exc)


def timed_failure(
    exc: Exception, wait: TimedQuestionWait, turn: AbortSignal | None
) -> Exception | _Verdict:
    """TW7–TW9: a timed ask's listener failed with `exc`: pending, wait on, or an error."""
    harness = as_harness_error(exc)
    code = harness.code if harness is not None else None
    if code == ErrorCode.ASK_TIMED_OUT:
        return PENDING  # TW7
    if code == ErrorCode.NO_PROVIDER:
        return WAIT_FOR_DEADLINE  # TW8
    if harness is not None:
        return harness  # TW9
    if (turn is not None and turn.aborted) or wait.shutdown:
        return abort_error(exc)
    if wait.expired:
        return PENDING
    return provider_error(exc)


class PendingAsk:
    __slots__ = ("_done", "_listening", "_turn", "_wait", "_withdraw", "call_id")

    def __init__(
        self,
        turn: AbortSignal | None,
        done: Done,
        wait: TimedQuestionWait | None = None,
        call_id: str | None = None,
    ) -> None:
        self._turn = turn
        self._wait = wait
        self.call_id = call_id
        self._done: Done | None = done  # None once finished
        self._withdraw: Callable[[], None] | None = None
        self._listening = False

    def start(
        self, ask: Callable[[UserQuestionRequest, Settle], Withdraw], request: UserQuestionRequest
    ) -> None:
        """Ask (`UserQuestionWaterfall.start`), then watch the turn's signal (A9) and the
        wait's (TW6, TW10). The listener has the first word: a failure it settles with
        while it is being asked is mapped by A8 even if it aborted the signal itself."""
        self._listening = True
        withdraw = ask(request, self)  # the record is its own settle: no bound method
        if self._listening:
            self._withdraw = withdraw
        # No remover closures: `_finish` takes the callbacks off again (`off_abort`).
        if self._turn is not None and self._done is not None:
            self._turn.on_abort(self._on_turn_abort)
        if self._wait is not None and self._done is not None:
            self._wait.signal.on_abort(self._on_wait_end)

    # -- what resumes it ------------------------------------------------------------------

    def __call__(self, answer: Answer | None, error: Exception | None) -> None:
        """Settle: the listener's outcome (its answer checked, V8); ignored once withdrawn."""
        if not self._listening:
            return
        self._listening, self._withdraw = False, None
        if error is None:
            self._finish(answer, None)
            return
        if self._wait is None:
            self._finish(None, ask_failure(error, self._turn))
            return
        outcome = timed_failure(error, self._wait, self._turn)
        if outcome is WAIT_FOR_DEADLINE:
            return  # the wait's signal or the turn's ends it
        if isinstance(outcome, Exception):
            self._finish(None, outcome)
        else:
            self._finish(self._pending(), None)

    def _on_turn_abort(self) -> None:
        self._cut(None, abort_error())  # A9, TW9

    def _on_wait_end(self) -> None:
        wait = self._wait
        assert wait is not None
        if (self._turn is not None and self._turn.aborted) or wait.shutdown:
            self._cut(None, abort_error())  # TW9, TW10
        else:
            self._cut(self._pending(), None)  # TW6: the unclaimed deadline passed

    def cancel(self) -> None:
        """The asker is gone (its task cancelled): withdraw, and resume nobody."""
        self._done = None
        self._cut(None, None)

    # -- ending ---------------------------------------------------------------------------

    def _pending(self) -> PendingResult:
        assert self.call_id is not None
        return PendingResult(call_id=self.call_id)

    def _cut(self, result: PendingResult | None, error: Exception | None) -> None:
        withdraw, self._withdraw = self._withdraw, None
        self._listening = False
        if withdraw is not None:
            withdraw()
        self._finish(result, error)

    def _finish(self, result: Answer | PendingResult | None, error: Exception | None) -> None:
        if self._turn is not None:
            self._turn.off_abort(self._on_turn_abort)
        if self._wait is not None:
            self._wait.signal.off_abort(self._on_wait_end)
            self._wait.close()  # TW10: its claim streams end
        done, self._done = self._done, None
        if done is not None:
            done(result, error)
