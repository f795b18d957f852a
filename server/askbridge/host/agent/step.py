"""A step's tool calls, from the commit that makes them durable to their logged results.

The turn loop (turns.py) logs a step's calls and hands them to a `Step`: the
group commit's callback starts them (D1: nothing asks before its call is
durable), each ask as the core's record, and each result is logged from that
record's callback (M6: an ask cut off by the last follower leaving stays
answerable). The turn wakes once per step with only asks in it.
"""

from __future__ import annotations

import asyncio
import logging

from askbridge.core import AbortSignal, StoreError, tool_outcome_unknown
from askbridge.process.log_lines import field
from askbridge.protocol.errors import ErrorCode

from .model_output import CheckedCall
from .session_ports import DETACHED, TurnSession
from .tools import ASK_TOOL, Cancellable, ToolContext, ToolOutcome

log = logging.getLogger("askbridge.host")


class Step:
    """A step's tool calls, started from the commit that makes them durable (D1), the asks
    as records: the turn waits on one future.

    The group commit calls `committed` (commits.py `after`), which starts each ask as the
    core's record (core/asking.py), resumed by its callback, which logs the result; so
    an answered question wakes the turn once, not once for the commit and again for the
    answer. The step holds a count and the records (to cancel), not the calls' arguments
    (they are in the log), nor a task or coroutine per call. It wakes the turn early only
    for what must run as a task (any other tool, or a core whose first listener is a
    coroutine) and for a store failure.
    """

    __slots__ = (
        "_calls",
        "_failure",
        "_future",
        "_left",
        "_session",
        "_signal",
        "_started",
        "_starting",
        "tasks",
    )

    def __init__(self, session: TurnSession, signal: AbortSignal, calls: list[CheckedCall]) -> None:
        self._session, self._signal = session, signal
        self._calls: list[CheckedCall] | None = calls
        self._left = 0
        self._started: list[Cancellable] = []
        self._future: asyncio.Future[None] | None = None
        self._failure: StoreError | None = None
        self._starting = False
        self.tasks: list[CheckedCall] = []  # the calls the turn runs as tasks

    async def start(self) -> None:
        """Return once the calls are committed and started: at once with tasks to run (or a
        StoreError), else when the last ask's result is logged."""
        self._future = asyncio.get_running_loop().create_future()
        self._session.after_commit(self.committed)
        await self._resumed()
        if self._failure is not None:
            raise self._failure

    async def _resumed(self) -> None:
        """Wait for the step's future (set by `committed`, the last result, or a failure)."""
        assert self._future is not None
        await self._future

    def committed(self, error: StoreError | None) -> None:
        """The group commit's callback: the calls are durable (D1); start them."""
        calls, self._calls = self._calls, None
        if calls is None:  # cancelled while it waited for the commit
            return
        if error is not None:
            self._fail(error)
            return
        self._starting = True
        try:
            self.tasks = [c for c in calls if not self._start(c)]
        except Exception as exc:  # a bug: the turn gets it, as from a task
            self._starting = False
            if self._future is not None and not self._future.done():
                self._future.set_exception(exc)
            raise
        self._starting = False
        calls.clear()  # the records hold what they need; the arguments are in the log
        if self.tasks or self._left == 0:
            self._wake()

    def _start(self, call: CheckedCall) -> bool:
        """Ask `call` as a record; False when it must run as a task."""
        if call.name != ASK_TOOL or call.problem is not None:
            return False
        session = self._session
        ctx = ToolContext(session.agent, session.id, call.id, self._signal)
        self._left += 1
        # The step is each call's callback: no bound method per call.
        started = session.ask_tool.start(ctx, call.arguments, call.questions, self)
        self._started.append(started)  # the records themselves: no bound method per call
        return True

    def __call__(self, call_id: str, outcome: ToolOutcome) -> None:
        """A call's outcome: log it; the last one (or a store failure) resumes the turn."""
        self._left -= 1
        last = self._left == 0 and self._failure is None and not self._starting
        if last:
            # The turn is woken before the result is logged, so its wake-up is queued ahead
            # of the group commit's: a model that answers at once (a script) logs its next
            # step into the same commit as this result. The result is still logged here,
            # before the turn runs; a failure to log it is raised by `wait`.
            self._wake()
        try:
            finish_call(self._session, call_id, ASK_TOOL, self._signal, outcome)
        except StoreError as exc:  # not the tool's failure: it ends the turn (S4)
            self._fail(exc)
            return
        if last:
            # A group commit already due (another session's answer, read in the same loop
            # turn) waits for the turn's next step.
            self._session.will_log()

    def _wake(self) -> None:
        future = self._future
        if future is not None and not future.done():
            future.set_result(None)

    def _fail(self, exc: StoreError) -> None:
        self._failure = self._failure or exc
        future = self._future
        if future is not None and not future.done():
            future.set_exception(exc)

    async def wait(self) -> None:
        """After the tasks: return once every ask's result is logged."""
        if self._left and self._failure is None:
            self._future = asyncio.get_running_loop().create_future()
            await self._resumed()
        if self._failure is not None:
            raise self._failure

    def cancel(self) -> None:
        """The turn is gone (cancelled, or failed): withdraw what still waits, quietly."""
        self._calls = None  # a commit still to come starts nothing
        started, self._started = self._started, []
        for call in started:
            call.cancel()


def finish_call(
    session: TurnSession, call_id: str, name: str, signal: AbortSignal, outcome: ToolOutcome
) -> None:
    """A call's outcome, logged (M6: an ask cut off by the last follower leaving stays
    answerable)."""
    if outcome.error is not None:
        log.info(
            "tool %s (%s) of %s failed: %s",
            field(name),
            field(call_id),
            session.id,
            field(outcome.content),
        )
    if (
        signal.reason == DETACHED
        and outcome.error is not None
        and outcome.error.get("code") == ErrorCode.ASK_ABORTED
    ):
        # M6: nobody is left to answer now, but the question is not dropped (P3).
        outcome = ToolOutcome.failure(tool_outcome_unknown())
    record_result(session, call_id, name, outcome)


def record_result(session: TurnSession, call_id: str, name: str, outcome: ToolOutcome) -> None:
    """The result joins the next group commit (with the next step, D1: its update is sent
    after that commit)."""
    session.log_grouped(outcome.event(call_id, name))
