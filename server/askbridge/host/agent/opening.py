"""Opening a session: the header of a new one, a Session built from a header and its events
(new or stored, hosted or external alike), and the P7 repair of a stored one.

host.py decides when (and who follows it); this module is how, so that the
agent room alone knows what a session is made of: its model (built from the
header's ModelSpec), its `ask_user_question` tool (from the header's settings),
and its agent, registered live for the core's identity checks (A3, A4).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from askbridge.core import SessionError, UserQuestionService, tool_outcome_unknown
from askbridge.protocol.defaults import ASK_MODE_DEFAULT, ASK_TIMEOUT_DEFAULT_SECONDS

from ..log import events as ev
from ..log.gcpause import paused_gc
from .agents import Agent, Origin, new_id, now_iso
from .models.base import Model
from .ports import SessionHost
from .session import Session
from .tools import AskUserQuestionTool, ToolOutcome


def make_model(spec: dict[str, Any], env: Mapping[str, str], *, check: bool = False) -> Model:
    """`models.factory.make_model`, imported on first use: the OpenAI adapter pulls in
    httpx, which `askbridge serve` should not pay for before answering `initialize`.
    With `check`, a model that can tell fails now (ModelError: a missing API key)."""
    from .models.factory import make_model as make

    model = make(spec, env)
    model_check = getattr(model, "check", None)
    if check and callable(model_check):
        model_check()
    return model


def new_header(
    *,
    model: dict[str, Any],
    ask: dict[str, Any],
    cwd: str | None,
    origin: str,
    parent: Session | None,
    parent_agent: Agent | None,
) -> ev.Event:
    return ev.session_header(
        session_id=new_id("s"),
        agent_id=new_id("a"),
        origin="subagent" if origin == "subagent" else "root",
        cwd=cwd or os.getcwd(),
        model=model,
        ask_user_question=ask,
        created_at=now_iso(),
        parent_session_id=parent.id if parent else None,
        parent_agent_id=parent_agent.id if parent_agent else None,
    )


def ask_tool(service: UserQuestionService, ask: Mapping[str, Any]) -> AskUserQuestionTool:
    """The session's `ask_user_question` from its settings; a bad timeout fails here (T1),
    before anything is stored."""
    mode = ask.get("mode", ASK_MODE_DEFAULT)
    return AskUserQuestionTool(service, mode, ask.get("timeout", ASK_TIMEOUT_DEFAULT_SECONDS))


def open_session(
    host: SessionHost,
    header: ev.Event,
    events: list[ev.Event],
    model: Model,
    tool: AskUserQuestionTool,
) -> Session:
    """The loaded Session of `header` (the first of `events`), its agent live.

    A fresh Agent instance each time: origin decides, so a resumed root agent asks
    normally (A4) and only a delegated child is a subagent."""
    session_id = header["sessionId"]
    origin: Origin = "subagent" if header.get("origin") == "subagent" else "root"
    agent = Agent(header["agentId"], session_id, origin, header.get("parentAgentId"))
    session = Session(host, header, events, agent, model, tool)
    host.registry.register(agent)
    host.sessions[session_id] = session
    return session


async def create_session(host: SessionHost, header: ev.Event, env: Mapping[str, str]) -> Session:
    """A new session of `header`: its model and tool are built first (a missing API key is
    MODEL_ERROR, a bad timeout T1: nothing is stored then), then the header is committed
    (D1) and the session opened."""
    model = make_model(header["model"], env, check=True)
    tool = ask_tool(host.service, header["askUserQuestion"])
    await host.store.create_session(header)
    return open_session(host, header, [header], model, tool)


async def open_stored(
    host: SessionHost,
    session_id: str,
    env: Mapping[str, str],
    default_ask: Mapping[str, Any],
) -> Session:
    """A stored root session, repaired (P7); UNKNOWN_SESSION if the store has none of that
    id, or only a delegated child's. An external session's header names no endpoint:
    nothing is contacted, no turn runs."""
    session, _ = await open_folded(host, session_id, env, default_ask)
    await repair(session)
    return session


async def open_folded(
    host: SessionHost,
    session_id: str,
    env: Mapping[str, str],
    default_ask: Mapping[str, Any],
) -> tuple[Session, int]:
    """A stored root session folded as stored, not repaired, and the number of its last
    event: `open_stored`'s first half, and all of a replica (G5: another host runs it, so
    nothing of it is ours to write)."""
    if not await host.store.exists(session_id):
        raise SessionError.unknown(session_id)
    # The whole log is built, folded and dropped here: with the cycle collector paused
    # throughout, none of it is ever scanned (gcpause.py). The folds read it through
    # `load_lazily`, which decodes only the bodies they read. (A store that awaits the
    # read lets other tasks run meanwhile, with the collector paused that long.)
    with paused_gc():
        events = await host.store.load_lazily(session_id)
        header = events[0]
        if header.get("origin") not in ev.ROOT_ORIGINS:
            raise SessionError.unknown(session_id)
        model = make_model(header["model"], env)
        tool = ask_tool(host.service, header.get("askUserQuestion") or default_ask)
        session = open_session(host, header, events, model, tool)
        last_seq = len(events) - 1
        del events
    return session, last_seq


async def repair(session: Session) -> None:
    """P7: a stored session's calls without a result end outcome-unknown (their questions
    stay answerable) and its open turn ends `cancelled`. No client follows it yet:
    whoever loads it gets the snapshot next."""
    repairs: list[ev.Event] = []
    for call_id, name in list(session.open_calls.items()):
        failure = ToolOutcome.failure(tool_outcome_unknown())
        repairs.append(
            ev.tool_result(call_id, name, failure.content, is_error=True, error=failure.error)
        )
    if session.open_turn is not None:
        repairs.append(ev.turn_end(session.open_turn, "cancelled"))
    if repairs:
        await session.log(*repairs, publish=False)
