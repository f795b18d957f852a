"""An agent that runs outside askbridge (MCP) and asks through the host: its calls (X1–X6).

One MCP connection gets one `ExternalSession`, which *has* a `Session` (its log
and folds) rather than being one. That session is a root session with no
model: its header says `origin: "mcp"` and `model: {"kind": "external"}`, so
listing, loading and repairing it build no endpoint and run no turn
(`Session.runs_turns` is false, and prompts and steering are refused with
EXTERNAL_SESSION). Its title is "<client name> — <cwd>". The agent's tool calls
are logged exactly like a hosted agent's — a `request/header` declaring the
tools it sees (the timed `ask_user_question` schema, so the projection tracks
its calls, P1), then `tool/call` and `tool/result` per call — so views, claims,
late replies and repair (P*, C*, L*) apply unchanged.

- Calls (`run_call`): arguments are made storable and checked against S1 before
  anything is logged (model_output.check_call). A call the agent cancels ends
  ASK_ABORTED (its question is dropped, as a hosted cancel would); a call cut off
  because the connection ended, or because the host stops, ends outcome-unknown,
  so its question stays answerable (continued, X6, M6). The calls in flight share
  the session's `turn_signal`, so `Session.cancel` (a user's `session/cancel`)
  and `Session.abandon` (M6, the host stopping) reach them as they reach a turn.
- Late replies (X4): they wait in the inbox — no turn admits them — until
  `take_replies` admits them the way the turn loop does (`user/message` +
  `agent/inbox/claimed`, L4–L6): the question settles and the reply is delivered
  once. A session whose connection ended keeps them queued; no later
  connection sees them (X6).
- Who follows it (every renderer, M1) is the asking room's rule
  (host/asking/external_followers.py); the MCP door (mcp/tools.py) applies it on opening.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any

import anyio

from askbridge.core import (
    AbortSignal,
    HarnessError,
    StoreError,
    UserQuestionError,
    tool_failed,
    tool_outcome_unknown,
)
from askbridge.core.question import questions_from_wire
from askbridge.process.log_lines import field
from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.text import scrub

from ..log import events as ev
from ..log.inbox import InboxItem
from .agents import new_id, now_iso
from .model_output import CheckedCall, check_call
from .models.base import ToolCallRequest
from .models.external_agent import EXTERNAL_MODEL_SPEC
from .opening import create_session
from .ports import Requester, SessionHost
from .session import DETACHED, Session
from .tools import ToolContext, ToolOutcome

log = logging.getLogger("askbridge.host")

MAX_TITLE_NAME = 100

CallBody = Callable[[ToolContext, CheckedCall], Awaitable[ToolOutcome]]

_ABORTED = UserQuestionError.of(ErrorCode.ASK_ABORTED).to_data()


def external_header(client_name: str, cwd: str | None, ask_timeout: int) -> ev.Event:
    """X1: the header of a new external session (timed asks, no model)."""
    cwd = scrub(cwd or os.getcwd())
    name = scrub(client_name)[:MAX_TITLE_NAME] or "MCP client"
    return ev.session_header(
        session_id=new_id("s"),
        agent_id=new_id("a"),
        origin=ev.EXTERNAL_ORIGIN,
        cwd=cwd,
        model=EXTERNAL_MODEL_SPEC,
        ask_user_question={"mode": "timed", "timeout": ask_timeout},
        created_at=now_iso(),
        title=f"{name} — {cwd}",
    )


class ExternalSessions:
    """The sessions of this host's MCP connections, pruned once a connection is gone."""

    def __init__(self, host: SessionHost) -> None:
        self._host = host
        self._by_id: dict[str, ExternalSession] = {}

    async def open(
        self,
        requester: Requester,
        env: Mapping[str, str],
        *,
        client_name: str,
        cwd: str | None,
        ask_timeout: int,
        tools: list[dict[str, Any]],
    ) -> ExternalSession:
        """X1: a new connection's session; its header and the tools its agent sees are
        committed before this returns (D1). Who follows it: the MCP door subscribes them."""
        header = external_header(client_name, cwd, ask_timeout)
        session = await create_session(self._host, header, env)
        await session.log(ev.request_header(tools))  # the tools its agent sees (P1)
        external = ExternalSession(session, requester)
        self._by_id[external.session.id] = external
        log.info("external session %s for %s", external.session.id, field(header["title"]))
        return external

    def live(self) -> list[Session]:
        """The sessions of MCP connections still open (every renderer follows them, M1)."""
        for session_id, external in list(self._by_id.items()):
            if not external.connected:
                del self._by_id[session_id]
        return [external.session for external in self._by_id.values()]


class ExternalSession:
    def __init__(self, session: Session, requester: object) -> None:
        """The connection's session, its tools logged (P1); `requester` (its MCP client) is
        whose fallback asks when no follower renders (X3)."""
        self.session = session
        self.ask_tool = session.ask_tool
        self.connected = True  # its MCP connection is live (new renderers follow it)
        self.connection_lost = False  # set before the connection's calls are cut off (X6)
        self._taking: set[str] = set()  # inbox ids of replies being admitted (L6)
        session.turn_client = requester

    def disconnected(self) -> None:
        """The MCP connection ended: what it still runs is cut off outcome-unknown (X6)."""
        self.connected = False
        self.connection_lost = True
        self.session.turn_client = None

    def _signal(self) -> AbortSignal:
        """The signal the calls in flight share; once a cancel or M6 aborted it, the next
        call starts on a fresh one (cancelling once does not poison the session)."""
        signal = self.session.turn_signal
        if signal is None or signal.aborted:
            signal = self.session.turn_signal = AbortSignal()
        return signal

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
        session = self.session
        checked = check_call(ToolCallRequest(new_id("call"), name, arguments))
        await session.log(ev.tool_call(checked.id, checked.name, checked.arguments))
        ctx = ToolContext(session.agent, session.id, checked.id, self._signal())
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
            log.exception("tool %s of external session %s failed", name, session.id)
            outcome = ToolOutcome.failure(tool_failed(exc))
        finally:
            if outcome is None:  # cancelled: by the agent, or the connection or host is gone
                with anyio.CancelScope(shield=True):  # recorded even while being cancelled
                    await self._record(checked, self._cut_off(ctx, on_cancel), raising=False)
        if ctx.signal.reason == DETACHED and outcome.error == _ABORTED:
            outcome = ToolOutcome.failure(tool_outcome_unknown())  # M6: stays answerable
        await self._record(checked, outcome)
        return outcome

    def _cut_off(
        self, ctx: ToolContext, on_cancel: Callable[[str], ToolOutcome] | None
    ) -> ToolOutcome:
        if self.connection_lost or ctx.signal.reason == DETACHED:
            return ToolOutcome.failure(tool_outcome_unknown())  # X6, M6: continued
        if on_cancel is not None:
            return on_cancel(ctx.call_id)  # X3: continued, its reply through get_answers
        return ToolOutcome.failure(UserQuestionError.of(ErrorCode.ASK_ABORTED))

    async def _record(
        self, call: CheckedCall, outcome: ToolOutcome, *, raising: bool = True
    ) -> None:
        try:
            await self.session.log(outcome.event(call.id, call.name))  # with its kind (P3)
        except StoreError as exc:  # the next load repairs the call (P7)
            log.error("could not record the result of %s in %s: %s", call.id, self.session.id, exc)
            if raising:
                raise

    # -- late replies (X4) ----------------------------------------------------------------

    async def take_replies(self, call_ids: Collection[str] | None = None) -> list[dict[str, Any]]:
        """Admit the queued late replies (of `call_ids`, or all): `{callId, questions,
        answers}` each, in arrival order; each is delivered once (L6): a reply being
        admitted by a call whose commit is awaited is not taken by another meanwhile."""
        items = [
            item
            for item in self.session.inbox.items.values()
            if item.reply_call_id is not None
            and (call_ids is None or item.reply_call_id in call_ids)
            and item.inbox_id not in self._taking
        ]
        if not items:
            return []
        entries = [self._reply_entry(item) for item in items]  # while their calls are active
        taking = {item.inbox_id for item in items}
        self._taking |= taking
        try:
            await self.session.log(*[e for item in items for e in item.admission_events()])
        finally:
            self._taking -= taking
        return entries

    def _reply_entry(self, item: InboxItem) -> dict[str, Any]:
        """`{callId, questions, answers}`: the reply's typed batch and its call's questions
        as the projection holds them, dumped as `late_replies` dumped them into the text
        (never read back from that text: P4)."""
        call_id = item.reply_call_id or ""
        active = self.session.projection.entry(call_id)
        if item.answers is None or active is None:
            return _untyped_reply_entry(call_id, item.content)
        questions = [q.dump() for q in questions_from_wire(active.questions)]
        return {"callId": call_id, "questions": questions, "answers": item.answers}

    def pending_calls(self) -> list[str]:
        """Calls that returned pending (or outcome-unknown) and have no reply yet."""
        inbox = self.session.inbox
        return [
            call_id
            for call_id, entry in self.session.projection.active.items()
            if entry.state == "continued" and inbox.queued_reply(call_id) is None
        ]


def _untyped_reply_entry(call_id: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    """The `{callId, questions, answers}` a late reply's text (tools.reply_text) holds: the
    fallback for a reply queued before replies carried their answers (old stores only)."""
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


def late_replies(entries: list[dict[str, Any]], pending: list[str]) -> dict[str, Any]:
    """X4: what `get_answers` returns (and what rides along on the next result)."""
    return {"answers": entries, "pending": pending}
