"""The `delegate` tool (behavior.md T7, T8): a one-shot child agent in a session of its own.

The child runs with subagent origin, so its `ask_user_question` fails with
DELEGATED_CALLER (A4) and it must put open decisions in its final result. Its
log is its own (parent session id in its header); the parent's log holds only
the `delegate` call and result, and nobody follows the child (P6).

The child shares its root prompt's budget one level deeper (delegation.py, S16): a
call past a bound, or a child stopped by the prompt's requests running out, fails
with a tool error naming the bound.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from askbridge.core import AbortSignal, ToolError, ToolInputError
from askbridge.protocol.errors import ErrorCode

from ..log import events as ev
from .delegation import PromptBudget
from .session_ports import HostOf, QueuedPrompt, TurnSession
from .tools import ToolContext, ToolOutcome


async def run_delegate(
    host: HostOf[TurnSession],
    parent: TurnSession,
    ctx: ToolContext,
    arguments: Any,
    run_turn: Callable[[TurnSession, AbortSignal], Awaitable[str]],
) -> ToolOutcome:
    """`run_turn` is turns.py's, which runs this tool: handed in, so neither imports the
    other."""
    if not isinstance(arguments, dict) or not isinstance(arguments.get("prompt"), str):
        raise ToolInputError("delegate requires a string prompt")
    steps = arguments.get("steps")
    budget = parent.budget or PromptBudget(parent.delegation_limits)
    budget.take_child(parent.depth)  # S16: a tool error when a bound forbids the child
    spec = dict(parent.header["model"])
    if spec.get("kind") == "script":
        if steps is not None and not isinstance(steps, list):
            raise ToolInputError("delegate steps must be an array of script steps")
        spec = {"kind": "script", "steps": steps or []}
    child = await host.new_session(
        cwd=parent.header.get("cwd"),
        model=spec,
        ask_user_question=parent.header.get("askUserQuestion"),
        origin="subagent",
        parent=parent,
        parent_agent=ctx.agent,
    )
    child.budget, child.depth = budget, parent.depth + 1
    signal = AbortSignal()
    remove = ctx.signal.on_abort(lambda: signal.abort(ctx.signal.reason or "parent cancelled"))
    try:
        child.prompts.append(QueuedPrompt(ev.text_content(arguments["prompt"]), -1))
        child.running = True
        stop = await run_turn(child, signal)
        if stop == "max_turn_requests":
            raise budget.spent() if budget.requests_spent else _unfinished(child.max_turn_requests)
        return ToolOutcome(child.last_text)
    finally:
        remove()
        child.running = False
        host.registry.unregister(child.agent)  # one-shot
        host.sessions.pop(child.id, None)


def _unfinished(requests: int) -> ToolError:
    return ToolError(
        f"delegate failed: the child made {requests} model requests without finishing "
        "(--max-turn-requests)",
        ErrorCode.TOOL_FAILED,
    )
