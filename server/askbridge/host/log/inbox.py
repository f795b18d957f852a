"""The agent inbox as a fold of the session log (durable through inbox events).

An item is queued by `agent/inbox/inserted` and leaves by `agent/inbox/claimed`
(admitted as a user message) or `agent/inbox/discarded` (withdrawn). Late
replies are inbox items whose source names the call they answer, which gives
the one-queued-reply guard (L2) after a restart for free.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from . import events as ev

# The events this fold reads: a fold of a whole log may hand it only these (in order). A
# tuple, not a set: a damaged event's type may be anything, even unhashable.
INBOX_KINDS = (ev.INBOX_INSERTED, ev.INBOX_CLAIMED, ev.INBOX_DISCARDED)


@dataclass(frozen=True)
class InboxItem:
    inbox_id: str
    delivery: str
    content: list[dict[str, Any]]
    source: dict[str, Any] | None
    answers: list[dict[str, Any]] | None = None  # a late reply's checked batch (events.py)

    @property
    def reply_call_id(self) -> str | None:
        if self.source and self.source.get("kind") == ev.REPLY_SOURCE_KIND:
            call_id = self.source.get("callId")
            return call_id if isinstance(call_id, str) else None
        return None

    def admission_events(self) -> list[ev.Event]:
        """The events that admit this item: its `user/message`, then its `agent/inbox/claimed`
        (the turn loop's and `get_answers`' one way, L4-L6)."""
        return [
            ev.user_message(
                self.content, source=self.source, inbox_id=self.inbox_id, answers=self.answers
            ),
            ev.inbox_claimed(self.inbox_id),
        ]


class Inbox:
    def __init__(self) -> None:
        self.items: dict[str, InboxItem] = {}  # insertion order = arrival order
        self._by_call: dict[str, str] = {}

    def apply(self, events: Iterable[ev.Event]) -> None:
        for event in events:
            kind = event.get("type")
            if kind == ev.INBOX_INSERTED:
                message = event.get("message") or {}
                item = InboxItem(
                    event["inboxId"],
                    event.get("delivery", "next-turn"),
                    list(message.get("content") or []),
                    message.get("source"),
                    message.get("answers"),
                )
                self.items[item.inbox_id] = item
                if item.reply_call_id is not None:
                    self._by_call[item.reply_call_id] = item.inbox_id
            elif kind in (ev.INBOX_CLAIMED, ev.INBOX_DISCARDED):
                item = self.items.pop(event.get("inboxId", ""), None)  # type: ignore[arg-type]
                if item is not None and item.reply_call_id is not None:
                    self._by_call.pop(item.reply_call_id, None)

    def queued_reply(self, call_id: str) -> InboxItem | None:
        inbox_id = self._by_call.get(call_id)
        return self.items.get(inbox_id) if inbox_id is not None else None

    def __len__(self) -> int:
        return len(self.items)
