"""What a session's turns need of the session, and what a session needs of its host, as
protocols, so that neither turns.py, step.py nor delegate.py imports session.py (which runs
them) and session.py does not import ports.py (which names the Session that host.py hosts).

`HostOf[S]` is the host of sessions of type S (host.py's Host): written once, generic in
the session, so that ports.SessionHost is `HostOf[Session]` while a turn's delegate sees
`HostOf[TurnSession]` (its child sessions as turns see them). `TurnSession` is a Session
as turns.py, step.py and delegate.py act on it; session.py's `_drive` hands them `self`,
which is where the type checker holds Session to it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Self, TypeAlias, TypeVar

import anyio

from askbridge.core import AbortSignal, HarnessError, StoreError, UserQuestionService

from ..log import events as ev
from ..log.inbox import InboxItem
from ..store.commits import GroupCommit
from ..store.store_api import EventStore
from .agents import Agent, AgentRegistry
from .delegation import DelegationLimits, PromptBudget
from .models.base import Model
from .tools import AskUserQuestionTool, StepTools

# Whoever sent a prompt or a reply: a client of the asking room. The agent only carries it
# back (`Session.turn_client`): host.py hands it to the fan-out, whose fallback asks through
# the turn's requester (M2). The agent needs nothing of it, so it names no type of asking/.
Requester: TypeAlias = object

# Why a turn was aborted: a user's cancel, or its last follower leaving (M6). An ask cut
# off by the second stays answerable: its result is outcome-unknown (continued, P3).
CANCELLED = "cancelled"
DETACHED = "detached"


@dataclass(eq=False)
class QueuedPrompt:
    content: list[dict[str, Any]]
    arrival: int
    client: Requester | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    stop_reason: str = "cancelled"
    error: HarnessError | None = None


class Withdraws(Protocol):
    def abort(self, session_id: str) -> None: ...


class Publishes(Protocol):
    def publish(
        self, session_id: str, events: Sequence[ev.Event], changes: list[dict[str, Any]]
    ) -> None: ...


S = TypeVar("S")


class HostOf(Protocol[S]):
    """The host of sessions of type S: what a session and its turns use of host.py's Host."""

    store: EventStore
    commits: GroupCommit
    registry: AgentRegistry
    service: UserQuestionService
    max_turn_requests: int
    delegation_limits: DelegationLimits

    @property
    def sessions(self) -> dict[str, S]: ...

    @property
    def fanout(self) -> Withdraws: ...

    def spawn(self, fn: Callable[[], Coroutine[Any, Any, Any]]) -> None: ...

    @property
    def publisher(self) -> Publishes: ...

    def session_idle(self, session: S) -> None: ...

    @property
    def new_session(self) -> Callable[..., Awaitable[S]]:
        """host.py's `Host.new_session` (a delegation makes its child session with it);
        its keywords are not repeated here, so the signature stays written once."""
        ...


class TurnSession(Protocol):
    """A Session (session.py) as its turns, their steps and their delegates act on it."""

    id: str
    header: ev.Event
    agent: Agent
    model: Model
    ask_tool: AskUserQuestionTool
    prompts: deque[QueuedPrompt]
    running: bool
    turn_signal: AbortSignal | None
    turn_client: Requester | None
    max_turn_requests: int
    delegation_limits: DelegationLimits
    budget: PromptBudget | None
    depth: int
    request_index: int
    last_text: str

    @property
    def host(self) -> HostOf[Self]: ...

    async def log(self, *events: ev.Event, publish: bool = True) -> None: ...

    def log_grouped(self, *events: ev.Event, publish: bool = True) -> None: ...

    def after_commit(self, callback: Callable[[StoreError | None], None]) -> None: ...

    def will_log(self) -> None: ...

    async def history(self) -> list[ev.Event]: ...

    def next_turn(self) -> tuple[str, QueuedPrompt | None, list[InboxItem]]: ...

    def inbox_before(self, limit: float, *, step: bool = False) -> list[InboxItem]: ...

    def step_tools(self) -> StepTools: ...
