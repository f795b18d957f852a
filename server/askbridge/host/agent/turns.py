"""The turn loop: one turn of a session, from its first admitted message to `turn/end`.

A turn admits the queued items up to and including the first queued prompt
(arrival order, L5), then loops model request → tool calls (run concurrently)
→ results, and at each step boundary admits late replies that arrived
meanwhile (L4). Every step is logged before anything it causes is shown (D1):
a step's results, the next request header, the model's message and its tool
calls join one group commit (`Session.log_grouped`, commits.py), which the loop
awaits before any tool runs; so a question costs one commit, shared with every
other session that logged in the same loop turn. The turn's start and end
commit at once (`await Session.log`): its prompt is answered only after its end is
durable, and the end is recorded even while the turn is being cancelled.

Nothing inside a turn takes the process down (S4): what the model returns is
made storable first (model_output.py, S3); a model failure ends the turn with
MODEL_ERROR; a store failure ends it with STORE_ERROR, recorded on `turn/end`
when the store lets us, and the prompt's caller gets the error. Asks cut off
because the session's last follower left (M6) end outcome-unknown: the
question stays answerable (continued).
"""

from __future__ import annotations

import logging

import anyio

from askbridge.core import (
    AbortSignal,
    HarnessError,
    ModelError,
    StoreError,
    tool_failed,
    unknown_tool,
)
from askbridge.process.log_lines import field

from ..log import events as ev
from .delegate import run_delegate
from .delegation import PromptBudget, bounded_delegates
from .model_output import CheckedCall, checked_reply
from .session_ports import QueuedPrompt, TurnSession
from .step import Step, finish_call
from .tools import DELEGATE_TOOL, ToolContext, ToolOutcome

log = logging.getLogger("askbridge.host")


async def run_turn(session: TurnSession, signal: AbortSignal | None = None) -> str:
    turn_id, prompt, items = session.next_turn()
    if session.depth == 0:  # S16: a root turn's tree starts with a fresh budget
        session.budget = PromptBudget(session.delegation_limits)
    signal = signal or AbortSignal()
    session.turn_signal = signal
    cause = "prompt" if prompt is not None else "inbox"
    admitted = [event for item in items for event in item.admission_events()]
    if prompt is not None:
        admitted.append(ev.user_message(prompt.content))
    stop, error = "end_turn", None
    try:
        await session.log(ev.turn_start(turn_id, cause), *admitted)  # type: ignore[arg-type]
    except StoreError as exc:
        session.turn_signal = None
        _answer(prompt, "end_turn", exc)
        return "end_turn"
    except BaseException:  # the host stopping while the commit was awaited
        session.turn_signal = None
        _answer(prompt, "cancelled", None)
        raise
    try:
        stop = await _steps(session, signal)
    except (ModelError, StoreError) as exc:
        log.error("turn %s of %s failed: %s", turn_id, session.id, field(exc))
        error = exc
    except BaseExceptionGroup as group:  # tools run concurrently: a store failure in one
        store_failure, rest = group.split(StoreError)
        if rest is not None or store_failure is None:
            raise
        error = store_failure.exceptions[0]  # type: ignore[assignment]
        log.error("turn %s of %s failed: %s", turn_id, session.id, field(error))
    except anyio.get_cancelled_exc_class():
        stop = "cancelled"  # the host is shutting down
        raise
    finally:
        if signal.aborted:
            stop = "cancelled"
        session.turn_signal = None
        session.turn_client = None
        detail = None if error is None else {**error.to_data(), "message": error.message}
        try:
            with anyio.CancelScope(shield=True):  # recorded even while being cancelled
                await session.log(ev.turn_end(turn_id, stop, detail))
        except StoreError as exc:  # the turn still ends; the next load closes it (P7)
            log.error("could not record the end of turn %s of %s: %s", turn_id, session.id, exc)
            error = error or exc
        _answer(prompt, stop, error)
    return stop


def _answer(prompt: QueuedPrompt | None, stop: str, error: HarnessError | None) -> None:
    if prompt is not None:
        prompt.stop_reason, prompt.error = stop, error
        prompt.done.set()


async def _steps(session: TurnSession, signal: AbortSignal) -> str:
    model = session.model
    # A model that answers without waiting (the script) cannot be interrupted while it
    # answers: spare each step the cancel scope that would let a turn's abort cut it off.
    never_waits = getattr(model, "never_waits", False) is True
    # The session's log is read for a model that reads it (an endpoint's conversation).
    reads_history = getattr(model, "reads_history", True) is True
    budget = session.budget
    for _ in range(session.max_turn_requests):
        if signal.aborted:
            return "cancelled"
        if budget is not None and not budget.take_request():
            return "max_turn_requests"  # S16: the root prompt's tree spent its requests
        step_tools = session.step_tools()
        tools = step_tools.schemas
        # The header is committed with the response it led to (D1 still holds: both
        # precede any ask they cause); alone when none came.
        header = step_tools.header
        index, session.request_index = session.request_index, session.request_index + 1
        response = None
        try:
            history = await session.history() if reads_history else ()
            if never_waits:
                response = await model.complete(history, tools, index)
            else:
                # The turn's abort cuts the request off: the scope absorbs it (None below).
                with anyio.CancelScope() as scope:
                    remove = signal.on_abort(scope.cancel)
                    try:
                        response = await model.complete(history, tools, index)
                    finally:
                        remove()
        except BaseException:
            session.log_grouped(header)
            raise
        if response is None:
            session.log_grouped(header)
            return "cancelled"
        try:
            text, calls = checked_reply(response)  # S7: no frame over 8 MiB; S3, S1
        except ModelError:
            session.log_grouped(header)
            raise
        del response  # what the model said is in the log now; a waiting step holds none of it
        if budget is not None:
            calls = bounded_delegates(calls, budget.limits)  # S16: per step
        _log_step(session, header, text, calls)
        if not calls:
            return "end_turn"
        await _run_tools(session, calls, signal)  # D1: they start once the calls are durable
        if signal.aborted:
            return "cancelled"
        boundary = session.inbox_before(
            session.prompts[0].arrival if session.prompts else float("inf"), step=True
        )
        if boundary:  # L4: claimed at the next step boundary
            session.log_grouped(*[event for item in boundary for event in item.admission_events()])
    return "max_turn_requests"


def _log_step(session: TurnSession, header: ev.Event, text: str, calls: list[CheckedCall]) -> None:
    """The model's message and calls, made storable (S3), logged with the header."""
    session.log_grouped(
        header,
        ev.assistant_message(text, [c.as_json() for c in calls]),
        *[ev.tool_call(c.id, c.name, c.arguments) for c in calls],
    )


async def _run_tools(session: TurnSession, calls: list[CheckedCall], signal: AbortSignal) -> None:
    """Run one step's calls once committed: asks as records (step.py), anything else as
    tasks."""
    step = Step(session, signal, calls)
    try:
        await step.start()
        tasks = step.tasks
        if len(tasks) == 1:  # spare a lone task call a task group and a task
            await _run_tool(session, tasks[0], signal)
        elif tasks:
            async with anyio.create_task_group() as tg:
                for c in tasks:
                    tg.start_soon(_run_tool, session, c, signal)
        await step.wait()
    except BaseException:
        step.cancel()
        raise


async def _run_tool(session: TurnSession, call: CheckedCall, signal: AbortSignal) -> None:
    ctx = ToolContext(session.agent, session.id, call.id, signal)
    try:
        if call.problem is not None:
            outcome = ToolOutcome.failure(call.problem)
        elif call.name == DELEGATE_TOOL:
            outcome = await run_delegate(session.host, session, ctx, call.arguments, run_turn)
        else:
            outcome = ToolOutcome.failure(unknown_tool(call.name))
    except StoreError:
        raise  # not the tool's failure: it ends the turn (S4)
    except HarnessError as exc:
        outcome = ToolOutcome.failure(exc)
    except Exception as exc:  # a tool bug must not kill the turn; the model sees the failure
        log.exception("tool %s failed", call.name)
        outcome = ToolOutcome.failure(tool_failed(exc))
    finish_call(session, call.id, call.name, signal, outcome)
