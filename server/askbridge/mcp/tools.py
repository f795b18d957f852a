"""The MCP door's tools against the host: `ask_user_question`, `get_answers`, `approval_prompt`
(X2, X4, X5; protocol.md "MCP front door").

`ExternalAgent` is one connection's agent. Its external session (X1,
host/agent/external_sessions.py) is created on the first call that needs one — a connection
that never asks leaves nothing in `session/list`. Every call is logged as a
hosted agent's would be (`tool/call`, `tool/result`); the result's first text
content is exactly what a hosted model would read (T3, T5, T6) except that
pending says the answer comes through `get_answers`.

`structuredContent` (not for `approval_prompt`, whose result is exactly one
text, X5) holds the same JSON as the first text; for a failure,
`{name, code, message}`. Late replies not yet delivered ride along (X4) as a
second text content and, because Claude Code and Codex hand the model only
`structuredContent` when a result has one, also under its `lateReplies` key.
While a question waits, `notifications/progress` go out every
`PROGRESS_INTERVAL_S` when the request carried a `progressToken`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from askbridge.core import HarnessError, ToolInputError, UserQuestionRequest
from askbridge.core.beside import beside
from askbridge.host.agent.ask_call import CallExtra
from askbridge.host.agent.external_sessions import ExternalSession, late_replies
from askbridge.host.agent.model_output import CheckedCall
from askbridge.host.agent.tools import (
    ASK_TOOL,
    AskUserQuestionTool,
    ToolContext,
    ToolOutcome,
)
from askbridge.host.asking.external_followers import follow_by_renderers
from askbridge.process.log_lines import field

from .approval import APPROVAL_TOOL, approval_question, decision, failed
from .definitions import GET_ANSWERS_TOOL, external_pending_message, tool_definitions

if TYPE_CHECKING:
    from askbridge.host.asking.clients import Client
    from askbridge.host.host import Host

log = logging.getLogger("askbridge.mcp")

PROGRESS_INTERVAL_S = 5.0

# Sends one `notifications/progress` (elapsed seconds, message); never waits.
Progress = Callable[[float, str], None]
T = TypeVar("T")


class ToolResult:
    """A call's result: the texts (first = what a hosted model would read) and the JSON."""

    def __init__(self, texts: list[str], structured: dict[str, Any] | None, is_error: bool) -> None:
        self.texts, self.structured, self.is_error = texts, structured, is_error


class ExternalAgent:
    def __init__(
        self,
        host: Host,
        client: Client,
        *,
        client_name: Callable[[], str],
        cwd: str | None,
        ask_timeout: int,
    ) -> None:
        self.host, self.client = host, client
        self._client_name = client_name
        self.cwd = cwd
        self.ask_timeout = ask_timeout
        self.definitions = tool_definitions(AskUserQuestionTool(host.service, "timed", ask_timeout))
        self.session: ExternalSession | None = None

    async def _session(self) -> ExternalSession:
        if self.session is None:
            external = await self.host.externals.open(
                self.client,
                self.client.env,
                client_name=self._client_name(),
                cwd=self.cwd,
                ask_timeout=self.ask_timeout,
                tools=self.definitions,
            )
            # X1: followed by this connection's client and every renderer attached now
            # (later ones: Host.attach); nothing to show yet.
            self.host.subscribe(self.client, external.session, snapshot=False)
            follow_by_renderers(self.host, external.session, snapshot=False)
            self.session = external
        return self.session

    def disconnected(self) -> None:
        if self.session is not None:
            self.session.disconnected()

    async def call(self, name: str, arguments: Any, progress: Progress | None) -> ToolResult:
        if name == ASK_TOOL:
            session = await self._session()
            on_cancel = self._continued if self._timed(arguments) else None
            outcome = await session.run_call(name, arguments, self._asker(progress), on_cancel)
            return await self._result_with_late(outcome)
        if name == GET_ANSWERS_TOOL:
            return await self._get_answers(arguments)
        if name == APPROVAL_TOOL:
            return await self._approval(arguments, progress)
        raise ValueError(f"unknown tool {name}")

    # -- ask_user_question (X2, X3) -------------------------------------------------------

    def _timed(self, arguments: Any) -> bool:
        timeout = arguments.get("timeout") if isinstance(arguments, dict) else None
        return (self.ask_timeout if timeout is None else timeout) != -1

    @staticmethod
    def _continued(call_id: str) -> ToolOutcome:
        """X3: a timed ask the agent cancelled (its own tool timeout) is pending, not aborted:
        the question stays answerable and `get_answers` delivers the reply."""
        return ToolOutcome.pending(call_id, external_pending_message(call_id))

    def _asker(
        self, progress: Progress | None
    ) -> Callable[[ToolContext, CheckedCall], Awaitable[ToolOutcome]]:
        async def ask(ctx: ToolContext, call: CheckedCall) -> ToolOutcome:
            session = await self._session()
            follow_by_renderers(self.host, session.session)
            outcome = await self._waiting(
                session.ask_tool.run(ctx, call.arguments, call.questions), ctx, progress
            )
            if outcome.kind == "pending":
                return ToolOutcome.pending(ctx.call_id, external_pending_message(ctx.call_id))
            return outcome

        return ask

    async def _waiting(self, work: Awaitable[T], ctx: ToolContext, progress: Progress | None) -> T:
        """`work`, with progress notifications while it waits."""
        if progress is None:
            return await work
        return await beside(work, self._report, progress, ctx)

    async def _report(self, progress: Progress, ctx: ToolContext) -> None:
        elapsed = 0.0
        while True:
            wait = self.host.service.find_wait(ctx.agent.id, ctx.call_id)
            if wait is not None:
                left = (wait.remaining_ms() + 999) // 1000
                message = f"waiting for the user's answer ({left} s left)"
            else:
                message = "waiting for the user's answer"
            progress(elapsed, message)
            await anyio.sleep(PROGRESS_INTERVAL_S)
            elapsed += PROGRESS_INTERVAL_S

    # -- get_answers (X4) -----------------------------------------------------------------

    async def _get_answers(self, arguments: Any) -> ToolResult:
        call_ids = arguments.get("callIds") if isinstance(arguments, dict) else None
        if call_ids is not None and (
            not isinstance(call_ids, list) or not all(isinstance(c, str) for c in call_ids)
        ):
            outcome = ToolOutcome.failure(ToolInputError("callIds must be an array of strings"))
            return await self._result_with_late(outcome)
        if self.session is None:  # nothing was asked on this connection
            return self._result(ToolOutcome.done(late_replies([], [])))
        session = self.session
        wanted = set(call_ids) if call_ids is not None else None
        entries: list[dict[str, Any]] = []

        async def collect(ctx: ToolContext, call: CheckedCall) -> ToolOutcome:
            entries.extend(await session.take_replies(wanted))
            pending = session.pending_calls()
            if wanted is not None:
                pending = [c for c in pending if c in wanted]
            return ToolOutcome.done(late_replies(entries, pending))

        outcome = await session.run_call(GET_ANSWERS_TOOL, arguments, collect)
        return await self._result_with_late(outcome)

    # -- approval_prompt (X5) -------------------------------------------------------------

    async def _approval(self, arguments: Any, progress: Progress | None) -> ToolResult:
        session = await self._session()
        tool_name = arguments.get("tool_name") if isinstance(arguments, dict) else None
        tool_input = arguments.get("input") if isinstance(arguments, dict) else None
        name = tool_name if isinstance(tool_name, str) and tool_name else "this"

        async def decide(ctx: ToolContext, call: CheckedCall) -> ToolOutcome:
            if not isinstance(tool_name, str) or not tool_name or not isinstance(tool_input, dict):
                reason = "approval_prompt needs tool_name (a string) and input (an object)"
                return ToolOutcome.done(failed(name, reason))
            question = approval_question(tool_name, tool_input)
            request = UserQuestionRequest(
                [question],
                agent=ctx.agent,
                signal=ctx.signal,
                session_id=ctx.session_id,
                extra=CallExtra(ctx.call_id),
            )
            follow_by_renderers(self.host, session.session)
            try:
                answer = await self._waiting(self.host.service.ask(request), ctx, progress)
            except HarnessError as exc:
                log.info("approval of %s denied: %s", field(tool_name), field(exc.message))
                return ToolOutcome.done(failed(tool_name, exc.message))
            return ToolOutcome.done(decision(question, tool_name, tool_input, answer))

        outcome = await session.run_call(APPROVAL_TOOL, arguments, decide)
        if outcome.message is not None:  # a failure run_call caught is still a decision: deny (X5)
            outcome = ToolOutcome.done(failed(name, outcome.message))
        # X5: exactly one text content and nothing else; Claude Code rejects any other
        # shape ("an invalid result") and the user's decision would be lost.
        return ToolResult([outcome.content], None, False)

    # -- results --------------------------------------------------------------------------

    def failure(self, exc: HarnessError) -> ToolResult:
        """A call that could not even be recorded (a store failure, S4): the agent hears why."""
        log.error("tool call failed: %s", field(exc.message))
        return self._result(ToolOutcome.failure(exc))

    async def _result_with_late(self, outcome: ToolOutcome) -> ToolResult:
        """`_result`, the late replies queued meanwhile riding along (X4)."""
        session = self.session
        late = await session.take_replies() if session is not None else []
        return self._result(outcome, late)

    def _result(self, outcome: ToolOutcome, late: list[dict[str, Any]] | None = None) -> ToolResult:
        """The MCP result of a typed outcome: its text first, and the object it renders as
        `structuredContent` (X2, X4), with the late replies `late` (taken already)."""
        texts, structured = [outcome.content], outcome.data()
        session = self.session
        if late and session is not None:
            replies = ToolOutcome.done(late_replies(late, session.pending_calls()))
            texts.append(replies.content)
            structured = {**structured, "lateReplies": replies.data()}
        if outcome.is_error:
            log.info("tool call failed: %s", field(outcome.content))
        return ToolResult(texts, structured, outcome.is_error)


__all__ = ["GET_ANSWERS_TOOL", "ExternalAgent", "ToolResult", "tool_definitions"]
