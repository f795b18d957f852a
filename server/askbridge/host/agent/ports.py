"""What the agent room needs of the host that wires it (host.py's Host), as protocols.

The agent never imports host.py or the asking room (tests/unit/test_layers.py): a
session logs through the store room's group commit (`commits`, host/store/commits.py,
whose API Session alone calls), hands derived updates to `publisher.publish`,
and withdraws its open questions through `fanout.abort`; host.py supplies all of it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from askbridge.core import UserQuestionService

from ..log import events as ev
from ..store.commits import GroupCommit
from ..store.store_api import EventStore
from .agents import AgentRegistry
from .delegation import DelegationLimits

if TYPE_CHECKING:
    from .session import Session


# Whoever sent a prompt or a reply: a client of the asking room. The agent only carries it
# back (`Session.turn_client`): host.py hands it to the fan-out, whose fallback asks through
# the turn's requester (M2). The agent needs nothing of it, so it names no type of asking/.
Requester: TypeAlias = object


class Withdraws(Protocol):
    def abort(self, session_id: str) -> None: ...


class Publishes(Protocol):
    def publish(
        self, session_id: str, events: Sequence[ev.Event], changes: list[dict[str, Any]]
    ) -> None: ...


class SessionHost(Protocol):
    store: EventStore
    commits: GroupCommit
    registry: AgentRegistry
    service: UserQuestionService
    max_turn_requests: int
    delegation_limits: DelegationLimits

    @property
    def sessions(self) -> dict[str, Session]: ...

    @property
    def fanout(self) -> Withdraws: ...

    def spawn(self, fn: Callable[[], Coroutine[Any, Any, Any]]) -> None: ...

    @property
    def publisher(self) -> Publishes: ...

    def session_idle(self, session: Session) -> None: ...

    @property
    def new_session(self) -> Callable[..., Awaitable[Session]]:
        """host.py's `Host.new_session` (a delegation makes its child session with it);
        its keywords are not repeated here, so the signature stays written once."""
        ...
