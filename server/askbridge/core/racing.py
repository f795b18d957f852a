"""The service's coroutine path: an ask awaiting a chain of plain async listeners.

When the waterfall's first listener asks with a callback (the host's fan-out, the
common case), an ask is a record (asking.py). Otherwise the service awaits the
chain (W1) and races it against the caller's signals: `race` cancels the
answerers the moment a signal aborts (A9; TW6 for a timed wait's own signal),
and `wait_for_deadline` waits out a timed ask nobody can show (TW8).
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from askbridge.protocol.vocabulary import Answer

from .asking import abort_error
from .signal import AbortSignal
from .timed_wait import TimedQuestionWait
from .waterfall import UserQuestionRequest, UserQuestionWaterfall


class Aborted(Exception):
    """A signal fired while answerers were still working."""


async def race(
    waterfall: UserQuestionWaterfall, request: UserQuestionRequest, signals: Sequence[AbortSignal]
) -> Answer:
    """Dispatch on the waterfall; raise `Aborted` when a signal aborts first (A9).

    The signals cancel the dispatch's scope from their abort callbacks: no watcher
    task per ask, which matters with thousands of questions pending at once.
    """
    result: Answer | None = None
    failure: Exception | None = None
    with anyio.CancelScope() as scope:
        removers = [signal.on_abort(scope.cancel) for signal in signals]
        try:
            result = await waterfall.dispatch(request)
        except Exception as exc:  # cancellation is not an Exception: it propagates (E3)
            failure = exc
        finally:
            for remove in removers:
                remove()
    if failure is not None:
        raise failure
    if result is None:
        raise Aborted()
    return result


async def wait_for_deadline(wait: TimedQuestionWait, turn: AbortSignal | None) -> None:
    """TW8: until the wait's deadline (it stays pending) or an abort; ASK_ABORTED when the
    turn aborted or the service shut down (TW9, TW10)."""
    async with anyio.create_task_group() as tg:

        async def watch(signal: AbortSignal) -> None:
            await signal.wait()
            tg.cancel_scope.cancel()

        tg.start_soon(watch, wait.signal)
        if turn is not None:
            tg.start_soon(watch, turn)
    if (turn is not None and turn.aborted) or wait.shutdown:
        raise abort_error()
