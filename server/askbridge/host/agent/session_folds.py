"""What a loaded session knows from its log: the folds it keeps (S10, P7, T8).

Everything a restart needs is a fold of the log: the projection, the inbox
(queued late replies), the model's position (`request_index`), the calls
without a result and the open turn (P7), the last text (a child's result,
T8). A loaded session keeps these folds, never its events (S10): they are
folded from the whole log when it loads and from each commit after that
(`Session.committed_events`, session.py).

`Session` is a `SessionFolds`: the folds are the session's own fields, read
all over the agent room (turns, opening, delegation, late replies), so they
stay on it rather than behind a second object that every reader would name.
"""

from __future__ import annotations

from typing import Any

from ..log import events as ev
from ..log.inbox import INBOX_KINDS, Inbox
from ..log.projection import Change, Projection
from ..store.commits import Chunk


class SessionFolds:
    def __init__(self, events: list[ev.Event]) -> None:
        self.request_index = 0  # model requests so far: request/header events
        self.turns = 0  # turn/start events
        self.open_calls: dict[str, str] = {}  # P7: tool calls without a result → their name
        self.open_turn: str | None = None  # P7: a turn/start without its turn/end
        self.last_text = ""  # the latest assistant text (a child's final result, T8)
        self.projection = Projection()
        self.inbox = Inbox()
        self.fold(events, initial=True)

    def fold(self, events: list[ev.Event], *, initial: bool) -> list[dict[str, Any]]:
        """Every fold a loaded session keeps; the view's changes, unless `initial` (a load:
        nobody needs them)."""
        self.fold_state(events, initial=initial)
        return self.projection.apply(events, report=not initial)

    def fold_state(self, events: list[ev.Event], *, initial: bool) -> None:
        """Every fold but the projection's, in one pass (the inbox's events are rare: they
        are handed to it, not all the others). Live, the turn loop counts requests and
        turns as it makes them (the model's position is needed before its header is
        logged)."""
        open_calls = self.open_calls
        messages: list[ev.Event] = []
        inbox: list[ev.Event] = []
        for event in events:
            kind = event.get("type")
            if kind == ev.TOOL_CALL:
                open_calls[event["callId"]] = event.get("name", "")
            elif kind == ev.TOOL_RESULT:
                open_calls.pop(event.get("callId", ""), None)
            elif kind == ev.REQUEST_HEADER:
                if initial:
                    self.request_index += 1
            elif kind == ev.ASSISTANT_MESSAGE:
                messages.append(event)
            elif kind == ev.TURN_START:
                self.open_turn = event.get("turnId")
                if initial:
                    self.turns += 1
            elif kind == ev.TURN_END:
                self.open_turn = None
            elif kind in INBOX_KINDS:
                inbox.append(event)
        if inbox:
            self.inbox.apply(inbox)
        # The latest text, read from the end: a load (store.load_lazily) decodes no other
        # assistant message.
        for message in reversed(messages):
            if message.get("text"):
                self.last_text = str(message["text"])
                break

    def fold_chunks(
        self, chunks: list[Chunk], *, told: bool
    ) -> list[tuple[list[ev.Event], list[Change]]]:
        """Fold one commit's chunks (in one pass but the projection's, which reports each
        chunk's changes); what to publish, if `told`, in as few parts as the wire allows:
        a chunk's view changes go before its updates and every update is a notification
        of its own, so a chunk that changes no view (a step's result, then its next step)
        joins the one before it."""
        self.fold_state([event for events, _ in chunks for event in events], initial=False)
        groups: list[tuple[list[ev.Event], list[Change]]] = []
        for events, publish in chunks:
            changes = self.projection.apply(events)
            if not (publish and told):
                continue  # tells nothing: the chunks either side of it may still join
            if changes or not groups:
                groups.append((list(events), changes))
            else:
                groups[-1][0].extend(events)
        return groups
