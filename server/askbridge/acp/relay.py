"""The ACP door's side of a client (a `ClientLink`, host/asking/clients.py): updates and cards.

Updates go out as ACP's own `session/update` kinds plus `_askbridge/turn`
(updates.py) and `_askbridge/didChange`, queued on the connection in order.

Cards reach the client by the richest means it declared (protocol.md "ACP
front door"):

1. `clientCapabilities._meta.askbridge {version: 1}` → it renders questions:
   the host sends it every question of the sessions it follows (M2) as
   `_askbridge/ask` (params and result as `userQuestions/ask`; ASK_* error
   replies keep their code, E2). Withdrawing one sends `_askbridge/cancelAsk
   {sessionId, callId?}` and ACP's `$/cancel_request` (the connection).
2. else, as this client's fallback when nobody renders the question:
   `elicitation.form` → one form per batch (forms.py); `-32601` means the
   client does not really have it: remembered, and the request goes on;
3. else a lone `approval` question → `session/request_permission`;
4. else `next()`: NO_PROVIDER for a blocking ask, pending at the deadline for
   a timed one.

A valid answer to a withdrawn `_askbridge/ask` or form whose question went
pending is a late reply (L7); any other late reply is dropped, logged. After
`session/cancel`, clients answer open requests with `cancelled`: the cancel
notification is handled in arrival order, before that reply, so the turn's
ask has already ended ASK_ABORTED and the reply is dropped as late.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    CreateElicitationResponse,
    RequestPermissionResponse,
)
from pydantic import TypeAdapter, ValidationError

from askbridge.core import HarnessError, UserQuestionError, UserQuestionRequest, parse_answer
from askbridge.core.forms import form_answer
from askbridge.core.question import Question
from askbridge.core.timed_wait import DEADLINE
from askbridge.core.waterfall import NextListener
from askbridge.host.agent.tools import TOOL_CALL_ID
from askbridge.host.asking.clients import Client
from askbridge.host.asking.late_answers import late_answer_callback
from askbridge.jsonrpc import (
    Connection,
    ConnectionClosed,
    LateReply,
    RpcResponseError,
    client_failure,
    is_method_not_found,
)
from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.methods import (
    ACP_ELICITATION_CREATE,
    ACP_SESSION_REQUEST_PERMISSION,
    ASKBRIDGE_ASK,
    ASKBRIDGE_CANCEL_ASK,
    ASKBRIDGE_DID_CHANGE,
)
from askbridge.protocol.vocabulary import Answer

from .forms import answer_from_permission, approval_question, form_request
from .forms import permission_request as build_permission_request
from .updates import notifications

if TYPE_CHECKING:
    from askbridge.host.host import Host

log = logging.getLogger("askbridge.acp")

_ELICITATION_REPLY: TypeAdapter[Any] = TypeAdapter(CreateElicitationResponse)


class _NotDeclared(Exception):
    """The client answered `-32601`: it does not have the method after all."""


class AcpRelay:
    def __init__(self, conn: Connection, host: Host) -> None:
        self.conn = conn
        self.host = host
        self.client: Client | None = None  # set once attached
        self.renders_questions = False  # tier 1: clientCapabilities._meta.askbridge
        self.elicitation_form = False  # tier 2: clientCapabilities.elicitation.form
        self._approval_ids = itertools.count(1)
        # (session, call) → withdraw(), for timed forms left open past their deadline (F4)
        self._open_forms: dict[tuple[str, str], Callable[[], None]] = {}

    # -- updates --------------------------------------------------------------------------

    def send_updates(self, session_id: str, updates: list[dict[str, Any]]) -> None:
        for update in updates:
            try:
                translated = notifications(session_id, update)
            except (KeyError, TypeError, ValidationError):  # never end the turn over a shape
                log.exception("cannot send session update %r", update)
                continue
            for method, params in translated:
                self.conn.notify(method, params)

    def withdraw_forms(self, session_id: str) -> None:
        """F4: `session/cancel` withdraws the forms left open past their deadline."""
        for key in [k for k in self._open_forms if k[0] == session_id]:
            self._open_forms.pop(key)()

    def send_view_changes(self, session_id: str, changes: list[dict[str, Any]]) -> None:
        for change in changes:  # F4: a form left open past its deadline goes when it settles
            if change.get("state") in ("settled", "removed"):
                withdraw = self._open_forms.pop((session_id, str(change.get("callId"))), None)
                if withdraw is not None:
                    withdraw()
        self.conn.notify(ASKBRIDGE_DID_CHANGE, {"sessionId": session_id, "changes": changes})

    def notify_fatal(self, error: HarnessError) -> None:
        if self.client is None:
            return
        for session_id in self.client.sessions:
            self.send_updates(
                session_id,
                [
                    {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": f"Error: {error.message}"},
                    }
                ],
            )

    # -- sending --------------------------------------------------------------------------

    async def _request(
        self, method: str, params: dict[str, Any], on_late: LateReply | None = None
    ) -> Any:
        try:
            return await self.conn.request(method, params, on_late=on_late)
        except (ConnectionClosed, RpcResponseError) as exc:
            raise _failed(method, exc) from exc

    def _late(self, request: UserQuestionRequest, build: Any = parse_answer) -> LateReply | None:
        return late_answer_callback(self.host.late_answers, self.client, request, build)

    # -- tier 1 ---------------------------------------------------------------------------

    async def ask(self, request: UserQuestionRequest) -> Answer:
        session_id = request.session_id
        params: dict[str, Any] = {"sessionId": session_id}
        if request.agent is not None:
            params["agentId"] = request.agent.id
        params["questions"] = [q.dump() for q in request.questions]
        call_id = None
        if request.wait is not None:
            params["wait"] = request.wait.dump()
            call_id = request.wait.call_id
        try:
            result = await self._request(ASKBRIDGE_ASK, params, self._late(request, parse_answer))
        except anyio.get_cancelled_exc_class():
            cancel: dict[str, Any] = {"sessionId": session_id}
            if call_id is not None:
                cancel["callId"] = call_id
            self.conn.notify(ASKBRIDGE_CANCEL_ASK, cancel)
            raise
        return parse_answer(result)

    # -- tiers 2-4 ------------------------------------------------------------------------

    async def fallback(self, request: UserQuestionRequest, next_: NextListener) -> Answer:
        session_id = request.session_id
        if session_id is None:
            return await next_()
        if self.elicitation_form:
            try:
                return await self._ask_form(session_id, request)
            except _NotDeclared:
                log.info("the client answered elicitation/create with -32601; not using forms")
                self.elicitation_form = False
        question = approval_question(request.questions)
        if question is not None:
            return await self._ask_permission(session_id, request, question)
        return await next_()

    async def _ask_form(self, session_id: str, request: UserQuestionRequest) -> Answer:
        call_id = _tool_call_id(request)
        questions = request.questions
        timed = request.wait is not None and bool(request.wait.timed)

        def answer(raw: Any) -> Answer:
            try:
                reply = _ELICITATION_REPLY.validate_python(raw)
            except ValidationError as exc:
                raise _provider_error("elicitation/create", exc) from exc
            content = reply.content if isinstance(reply, AcceptElicitationResponse) else None
            return form_answer(questions, reply.action, content, timed=timed)  # F3

        params = form_request(session_id, call_id, questions)
        late = self._late(request, answer)
        if not timed or late is None or call_id is None:
            return answer(await self._request(ACP_ELICITATION_CREATE, params, late))
        return answer(await self._timed_form(session_id, call_id, params, request, late))

    async def _timed_form(
        self,
        session_id: str,
        call_id: str,
        params: dict[str, Any],
        request: UserQuestionRequest,
        late: LateReply,
    ) -> Any:
        """F4: the form of a timed question outlives its deadline. The model gets pending,
        the form stays open, and its later reply is the late reply (L7) that wakes the
        agent; it is withdrawn only when the question settles or goes away (a view change,
        send_view_changes), or when the ask ends any other way (turn cancelled, shutdown)."""
        done = anyio.Event()
        outcome: list[tuple[Any, Exception | None]] = []
        past_deadline = False
        key = (session_id, call_id)

        def on_done(result: Any, error: Exception | None) -> None:
            if past_deadline:
                self._open_forms.pop(key, None)
                if error is None:  # an error reply or a closed connection answers nothing
                    late(result, None)
                return
            outcome.append((result, error))
            done.set()

        try:
            withdraw = self.conn.request_with_callback(
                ACP_ELICITATION_CREATE, params, on_done, late
            )
        except ConnectionClosed as exc:
            raise client_failure(exc) from exc
        try:
            await done.wait()
        except anyio.get_cancelled_exc_class():
            if request.signal is not None and request.signal.reason == DEADLINE:
                past_deadline = True
                self._open_forms[key] = withdraw
            else:
                withdraw()
            raise
        result, error = outcome[0]
        if error is not None:
            raise _failed(ACP_ELICITATION_CREATE, error) from error
        return result

    async def _ask_permission(
        self, session_id: str, request: UserQuestionRequest, question: Question
    ) -> Answer:
        # A programmatic approval has no tool call of its own: it gets an id of its own.
        tool_call_id = _tool_call_id(request) or f"askbridge-approval-{next(self._approval_ids)}"
        raw = await self._request(
            ACP_SESSION_REQUEST_PERMISSION,
            build_permission_request(session_id, tool_call_id, question),
        )
        try:
            reply = RequestPermissionResponse.model_validate(raw)
        except ValidationError as exc:
            raise _provider_error("session/request_permission", exc) from exc
        if isinstance(reply.outcome, AllowedOutcome):
            return answer_from_permission(question, reply.outcome.option_id)
        raise UserQuestionError.of(ErrorCode.ASK_CANCELLED)


def _failed(method: str, exc: Exception) -> Exception:
    """A request's failure as the door raises it (jsonrpc.client_failure), except that
    -32601 to a fallback method is a method the client does not have after all."""
    failure = client_failure(exc)
    return _NotDeclared() if is_method_not_found(failure) and method != ASKBRIDGE_ASK else failure


def _tool_call_id(request: UserQuestionRequest) -> str | None:
    """The asking tool call: the wait's, or the one the tool named (legacy mode has no wait)."""
    if request.wait is not None:
        return request.wait.call_id
    named = request.extra.get(TOOL_CALL_ID)
    return named if isinstance(named, str) else None


def _provider_error(method: str, exc: ValidationError) -> UserQuestionError:
    return UserQuestionError(
        f"the client's {method} reply is malformed: {exc.errors()[0]['msg']}",
        ErrorCode.PROVIDER_ERROR,
    )
