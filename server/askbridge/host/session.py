"""A loaded session: its log, its root agent, its queue and its turn loop.

Everything a restart needs is a fold of the log (`events`): the projection,
the inbox (queued late replies), the model's position (`request_index`).
Only queued prompts live in memory: their `session/prompt` callers are gone
after a restart anyway.

Turns run one at a time in a task of the host's task group. A turn admits the
queued items up to and including the first queued prompt (arrival order,
L5), then loops model request → tool calls (run concurrently) → results, and
at each step boundary admits late replies that arrived meanwhile (L4).
"""

from __future__ import annotations

import itertools
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio

from askbridge.core import AbortSignal, HarnessError, tool_failed, unknown_tool

from . import events as ev
from . import updates as up
from .agents import Agent, new_id
from .inbox import Inbox, InboxItem
from .models.base import Model, ModelError, ToolCallRequest
from .projection import Projection
from .tools import (
    ASK_TOOL,
    DELEGATE_SCHEMA,
    DELEGATE_TOOL,
    AskUserQuestionTool,
    ToolContext,
    ToolOutcome,
)

if TYPE_CHECKING:
    from .host import Host

log = logging.getLogger("askbridge.host")

_arrivals = itertools.count()


@dataclass(eq=False)
class QueuedPrompt:
    content: list[dict[str, Any]]
    arrival: int
    done: anyio.Event = field(default_factory=anyio.Event)
    stop_reason: str = "cancelled"
    error: HarnessError | None = None


class Session:
    def __init__(
        self,
        host: Host,
        header: ev.Event,
        events: list[ev.Event],
        agent: Agent,
        model: Model,
        ask_tool: AskUserQuestionTool,
    ) -> None:
        self.host, self.header, self.agent, self.model = host, header, agent, model
        self.id: str = header["sessionId"]
        self.ask_tool = ask_tool
        self._tools: list[dict[str, Any]] | None = None
        self.events = events
        self.projection = Projection(events)
        self.inbox = Inbox()
        self.inbox.apply(events)
        self.request_index = sum(1 for e in events if e.get("type") == ev.REQUEST_HEADER)
        self._turns = sum(1 for e in events if e.get("type") == ev.TURN_START)
        self.prompts: deque[QueuedPrompt] = deque()
        self._reply_arrival = {item.inbox_id: next(_arrivals) for item in self.inbox.items.values()}
        self.running = False
        self.turn_signal: AbortSignal | None = None
        self.hold_replies = False  # after a user cancel, replies wait for the next prompt (L5)

    @property
    def is_root(self) -> bool:
        return self.header.get("origin") == "root"

    # -- the log --------------------------------------------------------------------------

    def log(self, *events: ev.Event, publish: bool = True) -> None:
        """Commit, then fold (D1): nothing derived from an event is shown before it is durable."""
        self.host.store.append(self.id, events)
        self.events.extend(events)
        self.inbox.apply(events)
        changes = self.projection.apply(events)
        if changes and publish:
            self.host.publish_view_changes(self, changes)

    def emit(self, update: dict[str, Any]) -> None:
        if self.is_root:
            self.host.publish_update(self, update)

    # -- queueing -------------------------------------------------------------------------

    def enqueue_prompt(self, content: list[dict[str, Any]]) -> QueuedPrompt:
        prompt = QueuedPrompt(content, next(_arrivals))
        self.prompts.append(prompt)
        self.hold_replies = False
        self.wake()
        return prompt

    def enqueue_reply(self, call_id: str, text: str) -> None:
        """L4: commit the reply to the inbox, then wake an idle agent."""
        self.enqueue_inbox(ev.text_content(text), ev.reply_source(call_id), "next-step")

    def steer(self, text: str) -> None:
        """A user message for the running agent, admitted at its next step boundary."""
        self.enqueue_inbox(ev.text_content(text), None, "next-step")

    def enqueue_inbox(
        self,
        content: list[dict[str, Any]],
        source: dict[str, Any] | None,
        delivery: Literal["next-turn", "next-step"],
    ) -> None:
        """Commit an inbox item (durable), then wake an idle agent."""
        # New inbox work after a user cancel wakes the agent, and the items held since the
        # cancel go with it in arrival order (L4, L5).
        self.hold_replies = False
        inbox_id = new_id("in")
        self._reply_arrival[inbox_id] = next(_arrivals)
        self.log(ev.inbox_inserted(inbox_id, delivery, content, source))
        self.wake()

    def withdraw_reply(self, call_id: str) -> bool:
        item = self.inbox.queued_reply(call_id)
        if item is None:
            return False
        self.log(ev.inbox_discarded(item.inbox_id, "withdrawn"))
        return True

    def _has_work(self) -> bool:
        return bool(self.prompts) or (bool(self.inbox.items) and not self.hold_replies)

    def wake(self) -> None:
        if not self.running and self._has_work():
            self.running = True
            self.host.spawn(self._drive)

    def cancel(self) -> None:
        """session/cancel: end the turn and every queued prompt; late replies stay queued."""
        if self.turn_signal is not None:
            self.turn_signal.abort("cancelled")
        self.release_prompts()
        self.hold_replies = True

    def release_prompts(self) -> None:
        """Answer every queued prompt `cancelled`: its turn will never run."""
        while self.prompts:
            prompt = self.prompts.popleft()
            prompt.stop_reason = "cancelled"
            prompt.done.set()

    # -- turns ----------------------------------------------------------------------------

    async def _drive(self) -> None:
        try:
            while self._has_work():
                await self.run_turn()
        finally:
            self.running = False

    def _inbox_before(self, limit: float, *, step: bool = False) -> list[InboxItem]:
        """Queued items that arrived before `limit`; at a step boundary only next-step ones."""
        return [
            item
            for item in self.inbox.items.values()
            if self._reply_arrival.get(item.inbox_id, -1) < limit
            and (not step or item.delivery == "next-step")
        ]

    async def run_turn(self, signal: AbortSignal | None = None) -> str:
        prompt = self.prompts.popleft() if self.prompts else None
        replies = self._inbox_before(prompt.arrival if prompt else float("inf"))
        signal = signal or AbortSignal()
        self.turn_signal = signal
        self._turns += 1
        turn_id = f"t-{self._turns}"
        cause = "prompt" if prompt is not None else "inbox"
        admitted = [m for item in replies for m in self._admit(item)]
        if prompt is not None:
            admitted.append(ev.user_message(prompt.content))
        self.log(ev.turn_start(turn_id, cause), *admitted)  # type: ignore[arg-type]
        self.emit(up.turn_started(turn_id, cause))
        self._emit_admitted(replies)
        stop, error = "end_turn", None
        try:
            stop = await self._steps(signal)
        except ModelError as exc:
            error = exc
            self.emit(up.agent_message_chunk(f"Error: {exc}"))
        except anyio.get_cancelled_exc_class():
            stop = "cancelled"  # the host is shutting down
            raise
        finally:
            # No await in here: the end of a turn is recorded even while being cancelled.
            if signal.aborted:
                stop = "cancelled"
            self.turn_signal = None
            self.log(ev.turn_end(turn_id, stop))
            self.emit(up.turn_ended(turn_id, stop))
            if prompt is not None:
                prompt.stop_reason, prompt.error = stop, error
                prompt.done.set()
        return stop

    def _admit(self, item: InboxItem) -> list[ev.Event]:
        return [
            ev.user_message(item.content, source=item.source, inbox_id=item.inbox_id),
            ev.inbox_claimed(item.inbox_id),
        ]

    def _emit_admitted(self, items: list[InboxItem]) -> None:
        for item in items:
            self.emit(up.user_message(item.content, item.source))

    async def _steps(self, signal: AbortSignal) -> str:
        for _ in range(self.host.max_turn_requests):
            if signal.aborted:
                return "cancelled"
            tools = self.tool_schemas()
            # The header is committed with the response it led to (one commit per step,
            # D1 still holds: both precede any ask they cause); alone when none came.
            header = ev.request_header(tools)
            index, self.request_index = self.request_index, self.request_index + 1
            response = None
            with anyio.CancelScope() as scope:
                remove = signal.on_abort(scope.cancel)
                try:
                    response = await self.model.complete(self.events, tools, index)
                except BaseException:
                    self.log(header)
                    raise
                finally:
                    remove()
            if response is None:
                self.log(header)
                return "cancelled"
            calls = response.tool_calls
            self.log(
                header,
                ev.assistant_message(response.text, [_call_json(c) for c in calls]),
                *[ev.tool_call(c.id, c.name, c.arguments) for c in calls],
            )
            if response.text:
                self.emit(up.agent_message_chunk(response.text))
            if not calls:
                return "end_turn"
            for c in calls:
                self.emit(up.tool_call(c.id, c.name, c.arguments))
            if len(calls) == 1:  # the common step: spare it a task group and a task
                await self._run_tool(calls[0], signal)
            else:
                async with anyio.create_task_group() as tg:
                    for c in calls:
                        tg.start_soon(self._run_tool, c, signal)
            if signal.aborted:
                return "cancelled"
            boundary = self._inbox_before(
                self.prompts[0].arrival if self.prompts else float("inf"), step=True
            )
            if boundary:  # L4: claimed at the next step boundary
                self.log(*[m for item in boundary for m in self._admit(item)])
                self._emit_admitted(boundary)
        return "max_turn_requests"

    def tool_schemas(self) -> list[dict[str, Any]]:
        """What the model sees; fixed per session, so built once (logged by every step)."""
        if self._tools is None:
            self._tools = [self.ask_tool.schema(), DELEGATE_SCHEMA]
        return self._tools

    async def _run_tool(self, call: ToolCallRequest, signal: AbortSignal) -> None:
        ctx = ToolContext(self.agent, self.id, call.id, signal)
        try:
            if call.name == ASK_TOOL:
                outcome = await self.ask_tool.run(ctx, call.arguments)
            elif call.name == DELEGATE_TOOL:
                outcome = await self.host.run_delegate(self, ctx, call.arguments)
            else:
                outcome = ToolOutcome.failure(unknown_tool(call.name))
        except HarnessError as exc:
            outcome = ToolOutcome.failure(exc)
        except Exception as exc:  # a tool bug must not kill the turn; the model sees the failure
            log.exception("tool %s failed", call.name)
            outcome = ToolOutcome.failure(tool_failed(exc))
        self.record_result(call.id, call.name, outcome)

    def record_result(self, call_id: str, name: str, outcome: ToolOutcome) -> None:
        self.log(
            ev.tool_result(
                call_id, name, outcome.content, is_error=outcome.is_error, error=outcome.error
            )
        )
        self.emit(
            up.tool_call_update(
                call_id, outcome.content, is_error=outcome.is_error, error=outcome.error
            )
        )

    def unanswered_calls(self) -> list[tuple[str, str]]:
        """P7: tool calls of the log that never got a result."""
        open_calls: dict[str, str] = {}
        for event in self.events:
            kind = event.get("type")
            if kind == ev.TOOL_CALL:
                open_calls[event["callId"]] = event.get("name", "")
            elif kind == ev.TOOL_RESULT:
                open_calls.pop(event.get("callId", ""), None)
        return list(open_calls.items())

    def final_text(self) -> str:
        for event in reversed(self.events):
            if event.get("type") == ev.ASSISTANT_MESSAGE and event.get("text"):
                return str(event["text"])
        return ""


def _call_json(call: ToolCallRequest) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


__all__ = ["QueuedPrompt", "Session"]
