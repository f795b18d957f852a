"""A loaded session: its root agent, its log, its queue; its turns run in turns.py.

What it knows from its log (the projection, the inbox, the model's position, the
open calls and turn, the last text) are its folds (session_folds.py), never its
events (S10): `history()` reads the log from the store for the one reader that
needs all of it (an endpoint model's conversation, an ACP replay). Only queued
prompts live in memory: their `session/prompt` callers are gone after a restart
anyway.

A session changes only by appending events, through the store room's group
commit (host/store/commits.py), in one of two ways:
- `await log(*events)` commits now (with whatever else is pending) and returns
  once the events are durable;
- `log_grouped(*events)` joins the batch committed at the end of this loop turn;
  `after_commit(callback)` hears when it is durable.
Either way the events are folded and the host tells the followers what changed
(host/log/updates.py) only after the commit (`committed_events`), so nothing
derived from an event reaches a client before it is durable (D1) and the folds
hold exactly what the log holds. A store failure ends at most the turn that
logged (S4): it is raised by `log`, given to `after_commit`'s callback, or raised
by the session's next `log_grouped`; a lost data directory stops the host (S5).
"""

from __future__ import annotations

import itertools
import logging
from collections import deque
from collections.abc import Callable
from typing import Any, Literal

from askbridge.core import AbortSignal, SessionError, StoreError
from askbridge.protocol.errors import ErrorCode

from ..log import events as ev
from ..log.inbox import InboxItem
from ..store.commits import Chunk
from ..store.store_api import encode_event
from .agents import Agent, new_id
from .delegation import DelegationLimits, PromptBudget
from .models.base import Model
from .session_folds import SessionFolds
from .session_ports import CANCELLED, DETACHED, HostOf, QueuedPrompt, Requester
from .tools import AskUserQuestionTool, StepTools, reply_text
from .turns import run_turn

log = logging.getLogger("askbridge.host")

_arrivals = itertools.count()


class Session(SessionFolds):
    def __init__(
        self,
        host: HostOf[Session],
        header: ev.Event,
        events: list[ev.Event],
        agent: Agent,
        model: Model,
        ask_tool: AskUserQuestionTool,
    ) -> None:
        self.host, self.header, self.agent, self.model = host, header, agent, model
        self.id: str = header["sessionId"]
        self.ask_tool = ask_tool
        self._step_tools: StepTools | None = None
        self.commit_error: StoreError | None = None  # a failed log_grouped not yet raised
        super().__init__(events)
        self.prompts: deque[QueuedPrompt] = deque()
        self.reply_arrival = {item.inbox_id: next(_arrivals) for item in self.inbox.items.values()}
        self.replies_logging: set[str] = set()  # call ids of late replies not committed yet
        self.running = False
        self.turn_signal: AbortSignal | None = None
        # The client whose prompt (or late reply) started the current turn: its fallback
        # asks when no follower renders questions (M2).
        self.turn_client: Requester | None = None
        self.inbox_client: Requester | None = None  # who sent the latest inbox work
        self.hold_replies = False  # after a user cancel, replies wait for the next prompt (L5)
        self.max_turn_requests = host.max_turn_requests  # a front door may set its own
        # S16 (delegation.py): the bounds of this session's root prompts (a front door may
        # set its own); the budget its running turn's tree shares; 0 for a root session.
        self.delegation_limits: DelegationLimits = host.delegation_limits
        self.budget: PromptBudget | None = None
        self.depth = 0
        # An external (MCP) session's agent runs outside (agent/external_sessions.py): it has no
        # turns, takes no prompts, and its late replies wait for `take_replies` (X4).
        self.runs_turns = header.get("origin") != ev.EXTERNAL_ORIGIN
        # Not a delegated child: followed, listed, asked through the fan-out (M1, P6). Read
        # for every commit and ask; the header never changes.
        self.is_root: bool = header.get("origin") in ev.ROOT_ORIGINS

    # -- the log --------------------------------------------------------------------------

    async def log(self, *events: ev.Event, publish: bool = True) -> None:
        """Commit now (with everything pending), then fold, then tell the followers (D1)."""
        self.log_grouped(*events, publish=publish)
        await self.host.commits.flush()
        self.raise_commit_error()

    def log_grouped(self, *events: ev.Event, publish: bool = True) -> None:
        """Commit with the batch at the end of this loop turn (commits.py); `after_commit`
        hears when. Raises at once for an event that cannot be stored (nothing is queued
        then) and for an earlier log_grouped whose commit failed."""
        self.raise_commit_error()
        batch = list(events)
        texts = [self._encoded(event) for event in batch]
        self.host.commits.add(self, batch, texts, publish)

    def after_commit(self, callback: Callable[[StoreError | None], None]) -> None:
        """`callback(None)` once everything logged is durable, or with the StoreError
        (commits.py `after`)."""
        self.host.commits.after(self, callback)

    def will_log(self) -> None:
        """This session's turn was just woken and logs its next step when it runs: a group
        commit due before then waits for it (commits.py `expect`)."""
        self.host.commits.expect(self)

    def raise_commit_error(self) -> None:
        error, self.commit_error = self.commit_error, None
        if error is not None:
            raise error

    def committed_events(self, chunks: list[Chunk]) -> None:
        """What one commit made durable, as logged (events, whether to publish them): fold
        it, then tell the followers (D1), in as few `publish`es as the wire allows."""
        if len(chunks) == 1:
            events, publish = chunks[0]
            changes = self.fold(events, initial=False)
            if publish and self.is_root:  # P6: a delegated child has no followers
                self.host.publisher.publish(self.id, events, changes)
            return
        for events, changes in self.fold_chunks(chunks, told=self.is_root):
            self.host.publisher.publish(self.id, events, changes)

    def _encoded(self, event: ev.Event) -> str:
        step = self._step_tools
        if step is not None and event is step.header:
            return step.encoded  # the same tools every step: encoded once
        return encode_event(event)

    async def history(self) -> list[ev.Event]:
        """Every event of the log, read from the store (the session keeps none, S10)."""
        if self.host.commits.pending(self):
            await self.host.commits.flush()
            self.raise_commit_error()
        return await self.host.store.load(self.id)

    # -- queueing -------------------------------------------------------------------------

    def enqueue_prompt(
        self, content: list[dict[str, Any]], client: Requester | None
    ) -> QueuedPrompt:
        self._refuse_prompts()
        prompt = QueuedPrompt(content, next(_arrivals), client)
        self.prompts.append(prompt)
        self.hold_replies = False
        self.wake()
        return prompt

    async def enqueue_reply(
        self,
        call_id: str,
        questions: list[dict[str, Any]],
        answers: list[dict[str, Any]],
        client: Requester | None = None,
    ) -> None:
        """L4: commit the reply to the inbox, then wake an idle agent. It is logged with
        its answers (P4 folds them) and the model's text, rendered from them once."""
        content = ev.text_content(reply_text(call_id, questions, answers))
        source = ev.reply_source(call_id)
        await self.enqueue_inbox(content, source, "next-step", client, answers=answers)

    async def steer(self, text: str, client: Requester | None = None) -> None:
        """A user message for the running agent, admitted at its next step boundary."""
        self._refuse_prompts()
        await self.enqueue_inbox(ev.text_content(text), None, "next-step", client)

    async def enqueue_inbox(
        self,
        content: list[dict[str, Any]],
        source: dict[str, Any] | None,
        delivery: Literal["next-turn", "next-step"],
        client: Requester | None = None,
        *,
        answers: list[dict[str, Any]] | None = None,
    ) -> None:
        """Commit an inbox item (durable), then wake an idle agent."""
        # New inbox work after a user cancel wakes the agent, and the items held since the
        # cancel go with it in arrival order (L4, L5).
        inbox_id = new_id("in")
        await self.log(ev.inbox_inserted(inbox_id, delivery, content, source, answers))
        self.hold_replies = False
        self.reply_arrival[inbox_id] = next(_arrivals)
        if client is not None:
            self.inbox_client = client
        self.wake()

    def _refuse_prompts(self) -> None:
        if not self.runs_turns:
            raise SessionError(
                f"session {self.id} belongs to an agent outside askbridge (MCP): it takes no "
                "prompts; answer its questions instead",
                ErrorCode.EXTERNAL_SESSION,
            )

    async def withdraw_reply(self, call_id: str) -> bool:
        item = self.inbox.queued_reply(call_id)
        if item is None:
            return False
        await self.log(ev.inbox_discarded(item.inbox_id, "withdrawn"))
        return True

    def has_work(self) -> bool:
        if not self.runs_turns:
            return False
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

    def step_tools(self) -> StepTools:
        """The tools the model sees and the `request/header` every step logs, built once."""
        if self._step_tools is None:
            self._step_tools = StepTools(self.ask_tool)
        return self._step_tools


__all__ = ["CANCELLED", "DETACHED", "QueuedPrompt", "Session"]
