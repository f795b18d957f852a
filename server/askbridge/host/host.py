"""The Host: sessions over one store, the live agent registry and the question service.

Front doors (`bridge`, `acp`) own one Host each. They call `new_session`,
`load_session`, `prompt`, `cancel`, `answer`, `withdraw_reply`, `view`, and
subscribe with `add_listener` to session updates (the `session/update`
shapes of protocol.md) and projection views. Use it as an async context
manager: its task group owns every turn; leaving it cancels the turns, closes
every timed wait and leaves the store consistent.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Coroutine, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

import anyio
from anyio.abc import TaskGroup

from askbridge.core import (
    AbortSignal,
    Clock,
    SessionError,
    ToolInputError,
    UserQuestionError,
    UserQuestionService,
    check_answer,
    tool_outcome_unknown,
)
from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.vocabulary import Answer, AnswerItem, ProjectionView

from . import events as ev
from .agents import Agent, AgentRegistry, new_id
from .models.base import Model
from .session import QueuedPrompt, Session
from .store_api import EventStore, SessionInfo
from .tools import DEFAULT_TIMEOUT_S, AskUserQuestionTool, ToolContext, ToolOutcome, reply_text

log = logging.getLogger("askbridge.host")


class HostListener(Protocol):
    def on_update(self, session_id: str, update: dict[str, Any]) -> None: ...

    def on_view(self, session_id: str, view: ProjectionView) -> None: ...


def make_model(spec: dict[str, Any]) -> Model:
    """`models.factory.make_model`, imported on first use: the OpenAI adapter pulls in
    httpx, which `askbridge serve` should not pay for before answering `initialize`."""
    from .models.factory import make_model as make

    return make(spec)


def _now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class Host:
    def __init__(
        self,
        store: EventStore,
        *,
        model: dict[str, Any] | None = None,
        ask_user_question: dict[str, Any] | None = None,
        clock: Clock | None = None,
        max_turn_requests: int = 1000,
    ) -> None:
        self.store = store
        self.default_model: dict[str, Any] = model or {"kind": "none"}  # UnconfiguredModel
        self.default_ask: dict[str, Any] = ask_user_question or {
            "mode": "legacy",
            "timeout": DEFAULT_TIMEOUT_S,
        }
        self.max_turn_requests = max_turn_requests
        self.registry = AgentRegistry()
        self.service = UserQuestionService(self.registry, clock)
        self.service.set_late_reply_handler(self)
        self.sessions: dict[str, Session] = {}
        self._listeners: list[HostListener] = []
        self._tg: TaskGroup | None = None

    # -- lifecycle ------------------------------------------------------------------------

    async def __aenter__(self) -> Host:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        assert self._tg is not None
        # Cancel the turns first, without aborting their signals: an ask cut off by a
        # shutdown records no result (an ASK_ABORTED result would drop the question, P3);
        # the next load repairs the call as outcome-unknown and it stays answerable (P7).
        self._tg.cancel_scope.cancel()
        for session in list(self.sessions.values()):
            # Callers awaiting `prompt` live outside our task group: answer them, or they hang.
            session.release_prompts()
        self.service.shutdown()
        try:
            return await self._tg.__aexit__(*exc)
        finally:
            self._tg = None

    def spawn(self, fn: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        if self._tg is None:
            raise RuntimeError("the host is not running (use `async with Host(...)`)")
        self._tg.start_soon(fn)

    # -- listeners ------------------------------------------------------------------------

    def add_listener(self, listener: HostListener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def publish_update(self, session: Session, update: dict[str, Any]) -> None:
        for listener in list(self._listeners):
            listener.on_update(session.id, update)

    def publish_view(self, session: Session) -> None:
        if not session.is_root:
            return  # P6: a delegated child's questions never reach its parent's clients
        view = session.projection.view()
        for listener in list(self._listeners):
            listener.on_view(session.id, view)

    # -- sessions -------------------------------------------------------------------------

    def new_session(
        self,
        *,
        cwd: str | None = None,
        model: dict[str, Any] | None = None,
        ask_user_question: dict[str, Any] | None = None,
        origin: str = "root",
        parent: Session | None = None,
        parent_agent: Agent | None = None,
    ) -> Session:
        """Create a session; its header is committed before this returns (D1)."""
        spec = model or self.default_model
        ask = {**self.default_ask, **(ask_user_question or {})}
        model_obj = make_model(spec)
        check = getattr(model_obj, "check", None)
        if callable(check):
            check()  # ModelError (MODEL_ERROR) for a missing API key
        session_id, agent_id = new_id("s"), new_id("a")
        header = ev.session_header(
            session_id=session_id,
            agent_id=agent_id,
            origin="subagent" if origin == "subagent" else "root",
            cwd=cwd or os.getcwd(),
            model=spec,
            ask_user_question=ask,
            created_at=_now_iso(),
            parent_session_id=parent.id if parent else None,
            parent_agent_id=parent_agent.id if parent_agent else None,
        )
        tool = AskUserQuestionTool(self.service, ask.get("mode", "legacy"), ask.get("timeout", 120))
        self.store.create_session(header)
        agent = Agent(
            agent_id, session_id, header["origin"], parent_agent.id if parent_agent else None
        )
        session = Session(self, header, [header], agent, model_obj, tool)
        self.registry.register(agent)
        self.sessions[session_id] = session
        return session

    def get_session(self, session_id: str) -> Session:
        """The loaded session, loading a stored one first (protocol: lazy loading)."""
        session = self.sessions.get(session_id)
        return session if session is not None else self.load_session(session_id)

    def load_session(self, session_id: str) -> Session:
        """Resume a stored root session: P7 repair, then re-admit queued replies (L5)."""
        loaded = self.sessions.get(session_id)
        if loaded is not None:
            return loaded
        if not self.store.exists(session_id):
            raise SessionError.unknown(session_id)
        events = self.store.load(session_id)
        header = events[0]
        if header.get("origin") != "root":
            raise SessionError.unknown(session_id)
        ask = header.get("askUserQuestion") or self.default_ask
        tool = AskUserQuestionTool(self.service, ask.get("mode", "legacy"), ask.get("timeout", 120))
        # A fresh instance: origin decides, so a resumed root agent asks normally (A4).
        agent = Agent(header["agentId"], session_id, "root")
        session = Session(self, header, events, agent, make_model(header["model"]), tool)
        self.registry.register(agent)
        self.sessions[session_id] = session
        repairs: list[ev.Event] = []
        for call_id, name in session.unanswered_calls():
            failure = ToolOutcome.failure(tool_outcome_unknown())
            repairs.append(
                ev.tool_result(call_id, name, failure.content, is_error=True, error=failure.error)
            )
        open_turn = _open_turn(events)
        if open_turn is not None:
            repairs.append(ev.turn_end(open_turn, "cancelled"))
        if repairs:
            session.log(*repairs)
        session.wake()
        return session

    def list_sessions(self) -> list[SessionInfo]:
        return [info for info in self.store.list_sessions() if info.origin == "root"]

    # -- prompts --------------------------------------------------------------------------

    async def prompt(self, session_id: str, content: list[dict[str, Any]]) -> str:
        session = self.get_session(session_id)
        queued: QueuedPrompt = session.enqueue_prompt(content)
        await queued.done.wait()
        if queued.error is not None:
            raise queued.error
        return queued.stop_reason

    def steer(self, session_id: str, text: str) -> None:
        """Steer the running agent: a user message admitted at its next step boundary
        (durable as an inbox event); an idle agent wakes into a new turn for it."""
        self.get_session(session_id).steer(text)

    def cancel(self, session_id: str) -> None:
        self.get_session(session_id).cancel()

    # -- late replies (L1–L6) -------------------------------------------------------------

    async def answer(
        self, agent_id: str, session_id: str, call_id: str, batch: Sequence[AnswerItem]
    ) -> bool:
        session = self.get_session(session_id)
        if session.agent.id != agent_id:
            return False
        active = next((a for a in session.projection.view().active if a.call_id == call_id), None)
        if active is None or active.state != "continued":
            return False  # L1
        if session.inbox.queued_reply(call_id) is not None:
            raise UserQuestionError.of(ErrorCode.REPLY_QUEUED)  # L2, before BAD_ANSWER
        checked = check_answer(active.questions, Answer(answers=list(batch)), call_id)  # L3, V8
        text = reply_text(
            call_id,
            [q.dump() for q in active.questions],
            [a.dump() for a in checked.answers],
        )
        session.enqueue_reply(call_id, text)  # L4: committed before True
        return True

    async def answer_reply(self, session_id: str, call_id: str, answer: Answer) -> bool:
        session = self.get_session(session_id)
        return await self.service.answer(session.agent.id, session_id, call_id, answer.answers)

    def withdraw_reply(self, session_id: str, call_id: str) -> bool:
        return self.get_session(session_id).withdraw_reply(call_id)  # L5

    def view(self, session_id: str) -> ProjectionView:
        return self.get_session(session_id).projection.view()

    # -- delegate (T7, T8) ----------------------------------------------------------------

    async def run_delegate(self, parent: Session, ctx: ToolContext, arguments: Any) -> ToolOutcome:
        if not isinstance(arguments, dict) or not isinstance(arguments.get("prompt"), str):
            raise ToolInputError("delegate requires a string prompt")
        steps = arguments.get("steps")
        spec = dict(parent.header["model"])
        if spec.get("kind") == "script":
            if steps is not None and not isinstance(steps, list):
                raise ToolInputError("delegate steps must be an array of script steps")
            spec = {"kind": "script", "steps": steps or []}
        child = self.new_session(
            cwd=parent.header.get("cwd"),
            model=spec,
            ask_user_question=parent.header.get("askUserQuestion"),
            origin="subagent",
            parent=parent,
            parent_agent=ctx.agent,
        )
        signal = AbortSignal()
        remove = ctx.signal.on_abort(lambda: signal.abort("parent cancelled"))
        try:
            child.prompts.append(QueuedPrompt(ev.text_content(arguments["prompt"]), -1))
            child.running = True
            await child.run_turn(signal)
            return ToolOutcome(child.final_text())
        finally:
            remove()
            child.running = False
            self.registry.unregister(child.agent)  # one-shot
            self.sessions.pop(child.id, None)


def _open_turn(events: list[ev.Event]) -> str | None:
    current: str | None = None
    for event in events:
        if event.get("type") == ev.TURN_START:
            current = event.get("turnId")
        elif event.get("type") == ev.TURN_END:
            current = None
    return current
