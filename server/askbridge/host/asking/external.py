"""External sessions: an agent that runs outside askbridge asks through the host (X1–X6).

An MCP connection (askbridge/mcp/) gets one `ExternalSession`: a root session
with no model. Its header says `origin: "mcp"` and `model: {"kind":
"external"}`, so listing, loading and repairing it never build a model or run a
turn; its title is "<client name> — <cwd>". The agent's tool calls are logged
exactly like a hosted agent's — a `request/header` declaring the tools it sees
(the timed `ask_user_question` schema, so the projection tracks its calls, P1),
then `tool/call` and `tool/result` per call — so views, claims, late replies and
repair (P*, C*, L*) apply unchanged.

- Followers (M1): the connection's own client, and every client that renders
  questions while the connection lives: those attached when it is created, those
  attaching later (`follow_external`, which doors also call once they know a
  client renders questions), and, before each ask, any renderer not following
  yet.
- Calls (`run_call`): arguments are made storable and checked against S1 before
  anything is logged (model_output.check_call). A call the agent cancels ends
  ASK_ABORTED (its question is dropped, as a hosted cancel would); a call cut off
  because the connection ended, or because the host stops, ends outcome-unknown,
  so its question stays answerable (continued, X6, M6). A user's
  `session/cancel` of the session aborts the calls in flight.
- Late replies (X4): they wait in the inbox — no turn admits them — until
  `take_replies` admits them the way the turn loop does (`user/message` +
  `agent/inbox/claimed`, L4–L6): the question settles and the reply is delivered
  once. A session whose connection ended keeps them queued; no later
  connection sees them (X6).
- No prompts: `session/prompt` and steering are refused with EXTERNAL_SESSION.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from askbridge.core import (
    AbortSignal,
    HarnessError,
    ModelError,
    SessionError,
    StoreError,
    UserQuestionError,
    tool_failed,
    tool_outcome_unknown,
)
from askbridge.protocol.defaults import ASK_TIMEOUT_DEFAULT_SECONDS
from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.text import scrub

from ..agent.agents import Agent, new_id
from ..agent.model_output import CheckedCall, check_call
from ..agent.models.base import ModelResponse, ToolCallRequest
from ..agent.session import CANCELLED, DETACHED, QueuedPrompt, Session
from ..agent.tools import AskUserQuestionTool, ToolContext, ToolOutcome, compact
from ..agent.turns import _admit as admission_events  # the one way an inbox item is admitted
from ..log import events as ev

if TYPE_CHECKING:
    from ..host import Host
    from .clients import Client

log = logging.getLogger("askbridge.host")

EXTERNAL_MODEL: dict[str, Any] = {"kind": "external"}
MAX_TITLE_NAME = 100

CallBody = Callable[[ToolContext, CheckedCall], Awaitable[ToolOutcome]]


class _NoModel:
    """An external session's model slot: its agent runs elsewhere, so nothing may ask it."""

    async def complete(
        self, history: Sequence[ev.Event], tools: Sequence[dict[str, Any]], request_index: int
    ) -> ModelResponse:
        raise ModelError("an external (MCP) session has no model: its agent runs outside")


def is_external(header: Mapping[str, Any]) -> bool:
    return header.get("origin") == ev.EXTERNAL_ORIGIN


def external_session_error(session_id: str) -> SessionError:
    return SessionError(
        f"session {session_id} belongs to an agent outside askbridge (MCP): it takes no "
        "prompts; answer its questions instead",
        ErrorCode.EXTERNAL_SESSION,
    )


class ExternalSession(Session):
    def __init__(
        self,
        host: Host,
        header: ev.Event,
        events: list[ev.Event],
        agent: Agent,
        ask_tool: AskUserQuestionTool,
    ) -> None:
        super().__init__(host, header, events, agent, _NoModel(), ask_tool)
        self.connected = False  # its MCP connection is live (new renderers follow it)
        self.connection_lost = False  # set before the connection's calls are cut off (X6)
        self.call_signal = AbortSignal()  # aborted by session/cancel and by M6

    @property
    def is_root(self) -> bool:
        return True  # a root session in every respect but its origin (M1, P6)

    # -- no turns -------------------------------------------------------------------------

    def wake(self) -> None:
        """No turn ever runs: late replies wait for `take_replies` (X4)."""

    def enqueue_prompt(self, content: list[dict[str, Any]], client: Client | None) -> QueuedPrompt:
        raise external_session_error(self.id)

    def steer(self, text: str, client: Client | None = None) -> None:
        raise external_session_error(self.id)

    def cancel(self) -> None:
        """session/cancel from a user: the calls in flight end ASK_ABORTED."""
        self._interrupt(CANCELLED)

    def abandon(self) -> None:
        """M6 / the host stopping: the calls in flight end outcome-unknown (continued)."""
        self._interrupt(DETACHED)

    def _interrupt(self, reason: str) -> None:
        signal, self.call_signal = self.call_signal, AbortSignal()
        signal.abort(reason)

    def disconnected(self) -> None:
        """The MCP connection ended: what it still runs is cut off outcome-unknown (X6)."""
        self.connected = False
        self.connection_lost = True
        self.turn_client = None

    # -- calls ----------------------------------------------------------------------------

    async def run_call(
        self,
        name: str,
        arguments: Any,
        body: CallBody,
        on_cancel: Callable[[str], ToolOutcome] | None = None,
    ) -> ToolOutcome:
        """Log `tool/call`, run `body`, log `tool/result` (D1); the outcome as logged.

        A call the agent cancels is logged as ASK_ABORTED, or as `on_cancel(call_id)`
        when given: a timed ask the agent gave up waiting for stays continued (X3)."""
        checked = check_call(ToolCallRequest(new_id("call"), name, arguments))
        self.log(ev.tool_call(checked.id, checked.name, checked.arguments))
        ctx = ToolContext(self.agent, self.id, checked.id, self.call_signal)
        outcome: ToolOutcome | None = None
        try:
            if checked.problem is not None:
                outcome = ToolOutcome.failure(checked.problem)
            else:
                outcome = await body(ctx, checked)
        except StoreError:
            raise
        except HarnessError as exc:
            outcome = ToolOutcome.failure(exc)
        except Exception as exc:  # a bug must not take the connection down: the agent sees it
            log.exception("tool %s of external session %s failed", name, self.id)
            outcome = ToolOutcome.failure(tool_failed(exc))
        finally:
            if outcome is None:  # cancelled: by the agent, or the connection or host is gone
                self._record(checked, self._cut_off(ctx, on_cancel), raising=False)
        if ctx.signal.reason == DETACHED and outcome.error == _ABORTED:
            outcome = ToolOutcome.failure(tool_outcome_unknown())  # M6: stays answerable
        self._record(checked, outcome)
        return outcome

    def _cut_off(
        self, ctx: ToolContext, on_cancel: Callable[[str], ToolOutcome] | None
    ) -> ToolOutcome:
        if self.connection_lost or ctx.signal.reason == DETACHED:
            return ToolOutcome.failure(tool_outcome_unknown())  # X6, M6: continued
        if on_cancel is not None:
            return on_cancel(ctx.call_id)  # X3: continued, its reply through get_answers
        return ToolOutcome.failure(UserQuestionError.of(ErrorCode.ASK_ABORTED))

    def _record(self, call: CheckedCall, outcome: ToolOutcome, *, raising: bool = True) -> None:
        try:
            self.log(outcome.event(call.id, call.name))
        except StoreError as exc:  # the next load repairs the call (P7)
            log.error("could not record the result of %s in %s: %s", call.id, self.id, exc)
            if raising:
                raise

    # -- late replies (X4) ----------------------------------------------------------------

    def take_replies(self, call_ids: Collection[str] | None = None) -> list[dict[str, Any]]:
        """Admit the queued late replies (of `call_ids`, or all): `{callId, questions,
        answers}` each, in arrival order; each is delivered once (L6)."""
        items = [
            item
            for item in self.inbox.items.values()
            if item.reply_call_id is not None
            and (call_ids is None or item.reply_call_id in call_ids)
        ]
        if not items:
            return []
        self.log(*[event for item in items for event in admission_events(item)])
        return [_reply_entry(item.reply_call_id or "", item.content) for item in items]

    def pending_calls(self) -> list[str]:
        """Calls that returned pending (or outcome-unknown) and have no reply yet."""
        return [
            call_id
            for call_id, entry in self.projection.active.items()
            if entry.state == "continued" and self.inbox.queued_reply(call_id) is None
        ]


_ABORTED = UserQuestionError.of(ErrorCode.ASK_ABORTED).to_data()


def _reply_entry(call_id: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    """The `{callId, questions, answers}` a late reply's text (tools.reply_text) holds."""
    text = next((c.get("text") for c in content if isinstance(c, dict)), None)
    try:
        body = json.loads(text) if isinstance(text, str) else {}
    except (ValueError, RecursionError):
        body = {}
    body = body if isinstance(body, dict) else {}
    return {
        "callId": call_id,
        "questions": body.get("questions", []),
        "answers": body.get("answers", []),
    }


def late_replies_text(entries: list[dict[str, Any]], pending: list[str]) -> str:
    """X4: what `get_answers` returns (and what rides along on the next result)."""
    return compact({"answers": entries, "pending": pending})


# -- creating, loading, following ---------------------------------------------------------


def create_external_session(
    host: Host,
    client: Client,
    *,
    client_name: str,
    cwd: str | None,
    ask_timeout: int,
    tools: list[dict[str, Any]],
) -> ExternalSession:
    """X1: a new external session followed by `client` and every renderer; its header and
    the tools its agent sees are committed before this returns (D1)."""
    from ..host import _now_iso

    cwd = scrub(cwd or os.getcwd())
    name = scrub(client_name)[:MAX_TITLE_NAME] or "MCP client"
    session_id, agent_id = new_id("s"), new_id("a")
    ask = {"mode": "timed", "timeout": ask_timeout}
    header = ev.session_header(
        session_id=session_id,
        agent_id=agent_id,
        origin=ev.EXTERNAL_ORIGIN,
        cwd=cwd,
        model=EXTERNAL_MODEL,
        ask_user_question=ask,
        created_at=_now_iso(),
        title=f"{name} — {cwd}",
    )
    host.store.create_session(header)
    session = _register(host, header, [header])
    session.log(ev.request_header(tools))  # P1: its calls are tracked
    session.connected = True
    session.turn_client = client  # its fallback asks when no follower renders (X3)
    host.subscribe(client, session, snapshot=False)
    follow_by_renderers(host, session, snapshot=False)  # nothing to show yet
    log.info("external session %s for %s", session_id, header["title"])
    return session


def load_external_session(host: Host, header: ev.Event, events: list[ev.Event]) -> ExternalSession:
    """A stored external session, for an editor that loads it: no model is built."""
    return _register(host, header, events)


def _register(host: Host, header: ev.Event, events: list[ev.Event]) -> ExternalSession:
    ask = header.get("askUserQuestion") or {}
    tool = AskUserQuestionTool(
        host.service, "timed", ask.get("timeout", ASK_TIMEOUT_DEFAULT_SECONDS)
    )
    agent = Agent(header["agentId"], header["sessionId"], "root")
    session = ExternalSession(host, header, events, agent, tool)
    host.registry.register(agent)
    host.sessions[session.id] = session
    return session


def follow_external(host: Host, client: Client) -> None:
    """M1/X1: a client that renders questions follows every live external session."""
    if not client.attached or not client.renders_questions:
        return
    for session in list(host.sessions.values()):
        if isinstance(session, ExternalSession) and session.connected:
            host.subscribe(client, session)


def follow_by_renderers(host: Host, session: ExternalSession, *, snapshot: bool = True) -> None:
    """Every renderer attached now follows `session` (at its creation, and before each ask:
    a door learns that its client renders questions only after attaching it)."""
    for client in list(host.clients.values()):
        if client.attached and client.renders_questions:
            host.subscribe(client, session, snapshot=snapshot)
