"""The clients attached to a Host and the sessions each one follows (behavior.md M1–M7).

A front door attaches one `Client` per connection (`Host.attach(link, env)`)
and hands the host a `ClientLink`: what the host can do to that client. The
host decides; the link only speaks the door's protocol.

A client is *subscribed* to the sessions it created or loaded, lazy loads by
session-scoped methods included (M1); every client that renders questions is
also subscribed to every external (MCP) session. Subscribers get the
session's updates and view changes, and its questions (fanout.py). Sending
never waits: each link queues on its own connection, so a stalled client
never delays another (M7).

`Client.gone` aborts when the client detaches; its claims on timed waits end
with it (C4, M4).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from askbridge.core import AbortSignal, HarnessError, UserQuestionRequest
from askbridge.core.waterfall import NextListener
from askbridge.protocol.vocabulary import Answer

_client_ids = itertools.count(1)


class ClientLink(Protocol):
    """What a door does for the host, for one client."""

    @property
    def renders_questions(self) -> bool:
        """The client shows question cards itself (LSP capability, ACP tier 1)."""
        ...

    def send_updates(self, session_id: str, updates: list[dict[str, Any]]) -> None:
        """`session/update`s of a followed session (host/updates.py shapes); never blocks."""
        ...

    def send_view_changes(self, session_id: str, changes: list[dict[str, Any]]) -> None:
        """The view's changes (S2); the first call after subscribing is the snapshot."""
        ...

    async def ask(self, request: UserQuestionRequest) -> Answer:
        """Show the question and return the client's answer (schema-checked, not V8).

        Cancelling the call withdraws the card; a valid answer arriving after that
        is handed to `LateAnswers.late_answer` (late_answers.py, L7). Raise for a
        client failure; raise `ClientGone` when the connection is gone.
        """
        ...

    def notify_fatal(self, error: HarnessError) -> None:
        """The host is stopping for good (STORE_LOST, S5): tell the user, briefly."""
        ...

    async def fallback(self, request: UserQuestionRequest, next_: NextListener) -> Answer:
        """The client's own way when no subscriber renders questions (M2): a generic
        LSP client's showMessageRequest, an ACP form or permission, or `next_()`."""
        ...


@dataclass(eq=False)
class Client:
    link: ClientLink
    # H5: the front door's environment; a session's model reads its API key from the
    # env of the client that created or first loaded it in this host.
    env: Mapping[str, str]
    door: str = "lsp"
    id: int = field(default_factory=lambda: next(_client_ids))
    gone: AbortSignal = field(default_factory=AbortSignal)
    sessions: set[str] = field(default_factory=set)

    @property
    def attached(self) -> bool:
        return not self.gone.aborted

    @property
    def renders_questions(self) -> bool:
        return self.link.renders_questions


class Subscribers:
    """Who follows each session, in subscription order."""

    def __init__(self) -> None:
        self._by_session: dict[str, dict[int, Client]] = {}

    def add(self, client: Client, session_id: str) -> bool:
        """True when `client` was not subscribed yet."""
        followers = self._by_session.setdefault(session_id, {})
        if client.id in followers:
            return False
        followers[client.id] = client
        client.sessions.add(session_id)
        return True

    def remove(self, client: Client, session_id: str) -> bool:
        """True when that was the session's last subscriber."""
        followers = self._by_session.get(session_id)
        if followers is None or followers.pop(client.id, None) is None:
            return False
        client.sessions.discard(session_id)
        if followers:
            return False
        del self._by_session[session_id]
        return True

    def of(self, session_id: str) -> list[Client]:
        return list(self._by_session.get(session_id, {}).values())

    def renderers(self, session_id: str) -> list[Client]:
        return [c for c in self.of(session_id) if c.renders_questions]

    def count(self, session_id: str) -> int:
        return len(self._by_session.get(session_id, {}))
