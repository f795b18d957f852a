"""What the core needs to know about agents (A3, A4, W3), implemented by the host.

The core never creates agents. It receives an agent object from its caller
and asks the registry whether that exact instance is the live one, whether it
is owned by another agent (subagent origin), and which agents it descends from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class AgentLike(Protocol):
    @property
    def id(self) -> str: ...


class AgentIdentity(Protocol):
    def is_live(self, agent: AgentLike) -> bool:
        """A3: `agent` is the exact instance (identity, not equality) registered for its id."""
        ...

    def is_subagent(self, agent: AgentLike) -> bool:
        """A4: the agent has subagent origin (owned by another live agent)."""
        ...

    def lineage(self, agent_id: str) -> Sequence[str]:
        """W3: the agent's id followed by its ancestors' ids, nearest first."""
        ...


class SimpleAgentRegistry:
    """An in-memory AgentIdentity: enough for the core's tests and for the host to build on."""

    def __init__(self) -> None:
        self._live: dict[str, AgentLike] = {}
        self._parent: dict[str, str | None] = {}
        self._subagent: dict[str, bool] = {}

    def add(self, agent: AgentLike, *, parent: str | None = None, subagent: bool = False) -> None:
        self._live[agent.id] = agent
        self._parent[agent.id] = parent
        self._subagent[agent.id] = subagent

    def remove(self, agent: AgentLike) -> None:
        if self._live.get(agent.id) is agent:
            del self._live[agent.id]

    def get(self, agent_id: str) -> AgentLike | None:
        return self._live.get(agent_id)

    def is_live(self, agent: AgentLike) -> bool:
        return self._live.get(agent.id) is agent

    def is_subagent(self, agent: AgentLike) -> bool:
        return self._subagent.get(agent.id, False)

    def lineage(self, agent_id: str) -> Sequence[str]:
        out: list[str] = []
        current: str | None = agent_id
        while current is not None and current not in out:
            out.append(current)
            current = self._parent.get(current)
        return out
