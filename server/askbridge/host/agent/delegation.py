"""The bounds of delegation (behavior.md S16): what one root prompt's tree may grow to.

A `delegate` call starts a child with the same model and tools, `delegate` included,
and one step's calls run together; so a model (or a prompt injection it copies into
its children's prompts) that always delegates grows the tree exponentially. Each root
turn gets a `PromptBudget` that its delegated children share, holding:

- `depth`: how many levels of children below the root (a child at the last level
  cannot delegate);
- `children`: delegate calls run per step (the calls of one model reply); the rest
  fail;
- `sessions`: child sessions started for the prompt, across the tree;
- `requests`: model requests made for the prompt, across the tree, the root's own
  included: when they are spent every turn of the tree ends with
  `max_turn_requests`, and a child's end fails its `delegate` call.

Each refusal is a tool error the model reads, naming the bound. The limits come from
`--delegation-limits` (lower freely; higher only with `--raise-delegation-limits`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from askbridge.core import ToolError
from askbridge.protocol.defaults import DELEGATION_LIMITS_DEFAULT
from askbridge.protocol.errors import ErrorCode

from .model_output import CheckedCall
from .tools import DELEGATE_TOOL


@dataclass(frozen=True, slots=True)
class DelegationLimits:
    depth: int = DELEGATION_LIMITS_DEFAULT["depth"]
    children: int = DELEGATION_LIMITS_DEFAULT["children"]
    sessions: int = DELEGATION_LIMITS_DEFAULT["sessions"]
    requests: int = DELEGATION_LIMITS_DEFAULT["requests"]

    @classmethod
    def of(cls, given: Mapping[str, Any] | None) -> DelegationLimits:
        """The limits a settings layer names (`{depth?, children?, sessions?, requests?}`,
        checked by the command line), the defaults for the rest."""
        return cls(**{k: v for k, v in (given or {}).items() if k in DELEGATION_LIMITS_DEFAULT})


DEFAULT_LIMITS = DelegationLimits()


def refused(why: str, limit: str, value: int) -> ToolError:
    return ToolError(
        f"delegate refused: {why} (delegation limit {limit}={value})", ErrorCode.TOOL_FAILED
    )


class PromptBudget:
    """What the tree of one root prompt has spent; shared by its children."""

    __slots__ = ("limits", "requests", "sessions")

    def __init__(self, limits: DelegationLimits) -> None:
        self.limits = limits
        self.requests = 0
        self.sessions = 0

    def take_request(self) -> bool:
        """Count one model request; False once the prompt's requests are spent."""
        if self.requests >= self.limits.requests:
            return False
        self.requests += 1
        return True

    @property
    def requests_spent(self) -> bool:
        return self.requests >= self.limits.requests

    def take_child(self, parent_depth: int) -> None:
        """Count a child session about to start under a session at `parent_depth`; the
        tool error naming the bound when it may not."""
        limits = self.limits
        if parent_depth >= limits.depth:
            raise refused(
                f"this agent is at delegation level {parent_depth}, the deepest",
                "depth",
                limits.depth,
            )
        if self.sessions >= limits.sessions:
            raise refused(
                f"this prompt has started its {limits.sessions} delegated sessions",
                "sessions",
                limits.sessions,
            )
        if self.requests_spent:
            raise self.spent()
        self.sessions += 1

    def spent(self) -> ToolError:
        return refused(
            f"this prompt has made its {self.limits.requests} model requests",
            "requests",
            self.limits.requests,
        )


def bounded_delegates(calls: list[CheckedCall], limits: DelegationLimits) -> list[CheckedCall]:
    """One step's calls with each `delegate` call past the per-step bound failing."""
    allowed = limits.children
    seen = 0
    out = calls
    for i, call in enumerate(calls):
        if call.name != DELEGATE_TOOL or call.problem is not None:
            continue
        seen += 1
        if seen > allowed:
            if out is calls:
                out = list(calls)
            problem = refused(
                f"at most {allowed} delegate calls run per step; this is call {seen}",
                "children",
                allowed,
            )
            out[i] = replace(call, problem=problem)
    return out
