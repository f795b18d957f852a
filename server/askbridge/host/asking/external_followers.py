"""Who follows an external (MCP) session (M1, X1): its own connection's client, and every
client that renders questions while the connection lives.

Those attached when it is created (`follow_by_renderers`, from the MCP door), those
attaching later (`follow_external`, from `Host.attach`; a door that learns only
later that its client renders questions — the LSP door after `initialized` —
calls it then), and, before each ask, any renderer not following yet (the MCP
door calls `follow_by_renderers`). The session itself and its calls are the
agent room's (host/agent/external_sessions.py); this room knows them only as what the
host subscribes clients to.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

from .clients import Client

S = TypeVar("S")
S_co = TypeVar("S_co", covariant=True)


class LiveSessions(Protocol[S_co]):
    def live(self) -> Iterable[S_co]:
        """The external sessions whose connection is live."""
        ...


class Subscribes(Protocol[S]):
    """What these rules need of host.py's Host (its sessions are `S`)."""

    clients: dict[int, Client]

    @property
    def externals(self) -> LiveSessions[S]: ...

    def subscribe(self, client: Client | None, session: S, *, snapshot: bool = True) -> None: ...


def follow_external(host: Subscribes[S], client: Client) -> None:
    """M1/X1: a client that renders questions follows every live external session."""
    if not client.attached or not client.renders_questions:
        return
    for session in list(host.externals.live()):
        host.subscribe(client, session)


def follow_by_renderers(host: Subscribes[S], session: S, *, snapshot: bool = True) -> None:
    """Every renderer attached now follows `session` (at its creation, and before each ask:
    a door learns that its client renders questions only after attaching it)."""
    for client in list(host.clients.values()):
        if client.attached and client.renders_questions:
            host.subscribe(client, session, snapshot=snapshot)
