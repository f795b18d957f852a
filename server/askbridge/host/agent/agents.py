"""Agents and the live registry the core's identity checks (A3, A4, W3) read.

An `Agent` is a plain object: the registry holds the exact live instance per
id, so a stale object for the same id is not live (A3). Origin decides
delegation (A4): a root agent resumed from a stored session asks normally; a
child created by `delegate` has subagent origin.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from askbridge.core.identity import SimpleAgentRegistry

Origin = Literal["root", "subagent"]


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


def now_iso() -> str:
    """A session header's `createdAt`: UTC, milliseconds."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@dataclass(eq=False)
class Agent:
    id: str
    session_id: str
    origin: Origin = "root"
    parent_id: str | None = None
    children: list[str] = field(default_factory=list)


class AgentRegistry(SimpleAgentRegistry):
    """The live agents of this process."""

    def register(self, agent: Agent) -> None:
        self.add(agent, parent=agent.parent_id, subagent=agent.origin == "subagent")

    def unregister(self, agent: Agent) -> None:
        self.remove(agent)
