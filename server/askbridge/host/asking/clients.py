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
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from askbridge.core import AbortSignal, HarnessError, UserQuestionRequest
from askbridge.core.waterfall import NextListener
from askbridge.protocol.vocabulary import Answer

log = logging.getLogger("askbridge.host")

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
        is handed to `Host.late_answer` (L7). Raise for a client failure; raise
        `ClientGone` when the connection is gone.
        """
        ...

    def notify_fatal(self, error: HarnessError) -> None:
        """The host is stopping for good (STORE_LOST, S5): tell the user, briefly."""
        ...

    async def fallback(self, request: UserQuestionRequest, next_: NextListener) -> Answer:
        """The client's own way when no subscriber renders questions (M2): a generic
        LSP client's showMessageRequest, an ACP form or permission, or `next_()`."""
        ...


class LateAnswers(Protocol):
    """Who takes a withdrawn card's answer as a late reply (host.py's Host, L7)."""

    def late_answer(
        self, client: Client, session_id: str, call_id: str, answer: Answer
    ) -> None: ...


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


def publish(
    followers: list[Client],
    session_id: str,
    updates: list[dict[str, Any]],
    changes: list[dict[str, Any]],
) -> None:
    """Tell every follower of `session_id` what its latest commit changed (after the commit):
    the view's changes first, then the session updates (the order the transcripts fix)."""
    for client in followers:
        if changes:
            client.link.send_view_changes(session_id, changes)
        if updates:
            client.link.send_updates(session_id, updates)


def late_answer_callback(
    host: LateAnswers,
    client: Client | None,
    request: UserQuestionRequest,
    build: Callable[[Any], Answer],
) -> Callable[[Any, Exception | None], None] | None:
    """L7, for a door's card: what to do with a reply that arrives after the card was
    withdrawn — `build` makes it an Answer, the host takes it as a late reply if its
    question went pending. None for a blocking ask (not in the view: no late reply)."""
    wait, session_id = request.wait, request.session_id
    if wait is None or session_id is None:
        return None

    def on_late(result: Any, error: Exception | None) -> None:
        if error is not None or client is None:
            # S12: a withdrawn card answering with an error is the card closing (first
            # answer wins elsewhere, or the wait ended): nothing was dropped.
            log.debug("the card of %s closed after it was withdrawn: %s", wait.call_id, error)
            return
        try:
            answer = build(result)
        except (HarnessError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
            log.info("late reply to %s from client %s dropped: %s", wait.call_id, client.id, exc)
            return
        log.info("late reply to %s from client %s", wait.call_id, client.id)
        host.late_answer(client, session_id, wait.call_id, answer)

    return on_late
