"""A loaded session: its log, its root agent, its queue; its turns run in turns.py.

Everything a restart needs is a fold of the log (`events`): the projection,
the inbox (queued late replies), the model's position (`request_index`).
Only queued prompts live in memory: their `session/prompt` callers are gone
after a restart anyway.

`log(*events)` is the only way a session changes: it commits, folds, and then
the host tells the session's followers what changed (host/updates.py), so
nothing derived from an event reaches a client before it is durable (D1). A
store failure there ends at most the turn that logged (S4); a lost data
directory stops the host (S5).
"""

from __future__ import annotations

import itertools
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio

from askbridge.core import AbortSignal, HarnessError, StoreLost

from . import events as ev
from .agents import Agent, new_id
from .inbox import Inbox, InboxItem
from .models.base import Model
from .projection import Projection
from .tools import DELEGATE_SCHEMA, AskUserQuestionTool

if TYPE_CHECKING:
    from .clients import Client
    from .host import Host

log = logging.getLogger("askbridge.host")

_arrivals = itertools.count()

# Why a turn was aborted: a user's cancel, or its last follower leaving (M6). An ask cut
# off by the second stays answerable: its result is outcome-unknown (continued, P3).
CANCELLED = "cancelled"
DETACHED = "detached"


@dataclass(eq=False)
class QueuedPrompt:
    content: list[dict[str, Any]]
    arrival: int
    client: Client | None = None
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
        self.turns = sum(1 for e in events if e.get("type") == ev.TURN_START)
        self.prompts: deque[QueuedPrompt] = deque()
        self.reply_arrival = {item.inbox_id: next(_arrivals) for item in self.inbox.items.values()}
        self.running = False
        self.turn_signal: AbortSignal | None = None
        # The client whose prompt (or late reply) started the current turn: its fallback
        # asks when no follower renders questions (M2).
        self.turn_client: Client | None = None
        self.inbox_client: Client | None = None  # who sent the latest inbox work
        self.hold_replies = False  # after a user cancel, replies wait for the next prompt (L5)
        self.max_turn_requests = host.max_turn_requests  # a front door may set its own

    @property
    def is_root(self) -> bool:
        return self.header.get("origin") == "root"

    # -- the log --------------------------------------------------------------------------

    def log(self, *events: ev.Event, publish: bool = True) -> None:
        """Commit, then fold, then tell the followers (D1)."""
        try:
            self.host.store.append(self.id, events)
        except StoreLost as exc:
            self.host.store_lost(exc)
            raise
        self.events.extend(events)
        self.inbox.apply(events)
        changes = self.projection.apply(events)
        if publish and self.is_root:  # P6: a delegated child has no followers
            self.host.publish(self, events, changes)

    # -- queueing -------------------------------------------------------------------------

    def enqueue_prompt(self, content: list[dict[str, Any]], client: Client | None) -> QueuedPrompt:
        prompt = QueuedPrompt(content, next(_arrivals), client)
        self.prompts.append(prompt)
        self.hold_replies = False
        self.wake()
        return prompt

    def enqueue_reply(self, call_id: str, text: str, client: Client | None = None) -> None:
        """L4: commit the reply to the inbox, then wake an idle agent."""
        self.enqueue_inbox(ev.text_content(text), ev.reply_source(call_id), "next-step", client)

    def steer(self, text: str, client: Client | None = None) -> None:
        """A user message for the running agent, admitted at its next step boundary."""
        self.enqueue_inbox(ev.text_content(text), None, "next-step", client)

    def enqueue_inbox(
        self,
        content: list[dict[str, Any]],
        source: dict[str, Any] | None,
        delivery: Literal["next-turn", "next-step"],
        client: Client | None = None,
    ) -> None:
        """Commit an inbox item (durable), then wake an idle agent."""
        # New inbox work after a user cancel wakes the agent, and the items held since the
        # cancel go with it in arrival order (L4, L5).
        inbox_id = new_id("in")
        self.log(ev.inbox_inserted(inbox_id, delivery, content, source))
        self.hold_replies = False
        self.reply_arrival[inbox_id] = next(_arrivals)
        if client is not None:
            self.inbox_client = client
        self.wake()

    def withdraw_reply(self, call_id: str) -> bool:
        item = self.inbox.queued_reply(call_id)
        if item is None:
            return False
        self.log(ev.inbox_discarded(item.inbox_id, "withdrawn"))
        return True

    def has_work(self) -> bool:
        return bool(self.prompts) or (bool(self.inbox.items) and not self.hold_replies)

    def wake(self) -> None:
        if not self.running and self.has_work():
            self.running = True
            self.host.spawn(self._drive)

    def cancel(self) -> None:
        """session/cancel: end the turn and every queued prompt; late replies stay queued."""
        self._stop(CANCELLED)
        self.host.fanout.abort(self.id)
        self.hold_replies = True

    def abandon(self) -> None:
        """M6: the last follower left: the turn ends `cancelled`, queued prompts are answered
        `cancelled`, open questions stay answerable (continued); queued replies stay queued."""
        self._stop(DETACHED)
        self.hold_replies = True

    def _stop(self, reason: str) -> None:
        if self.turn_signal is not None:
            self.turn_signal.abort(reason)
        self.release_prompts()

    def release_prompts(self) -> None:
        """Answer every queued prompt `cancelled`: its turn will never run."""
        while self.prompts:
            prompt = self.prompts.popleft()
            prompt.stop_reason = "cancelled"
            prompt.done.set()

    # -- turns ----------------------------------------------------------------------------

    async def _drive(self) -> None:
        from .turns import run_turn

        try:
            while self.has_work():
                await run_turn(self)
        finally:
            self.running = False
            self.host.session_idle(self)

    def next_turn(self) -> tuple[str, QueuedPrompt | None, list[InboxItem]]:
        """The next turn's id, its prompt (if any) and the queued items it admits first."""
        prompt = self.prompts.popleft() if self.prompts else None
        items = self.inbox_before(prompt.arrival if prompt else float("inf"))
        self.turns += 1
        self.turn_client = prompt.client if prompt is not None else self.inbox_client
        return f"t-{self.turns}", prompt, items

    def inbox_before(self, limit: float, *, step: bool = False) -> list[InboxItem]:
        """Queued items that arrived before `limit`; at a step boundary only next-step ones."""
        return [
            item
            for item in self.inbox.items.values()
            if self.reply_arrival.get(item.inbox_id, -1) < limit
            and (not step or item.delivery == "next-step")
        ]

    def tool_schemas(self) -> list[dict[str, Any]]:
        """What the model sees; fixed per session, so built once (logged by every step)."""
        if self._tools is None:
            self._tools = [self.ask_tool.schema(), DELEGATE_SCHEMA]
        return self._tools

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


__all__ = ["CANCELLED", "DETACHED", "QueuedPrompt", "Session"]
