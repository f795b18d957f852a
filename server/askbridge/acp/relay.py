"""The question answerer of the ACP door: the richest means the client declared, never a hang.

One `QuestionRelay` per connection is registered on the core's waterfall. For
each request that names a session it picks a tier (protocol.md "ACP front door"):

1. the client declared `_meta.askbridge {version: 1}` → `_askbridge/ask`
   (params and result as `userQuestions/ask`; its ASK_* error replies keep
   their code, E2). When the server stops wanting the answer (turn cancelled,
   deadline passed, shutdown) the request is abandoned and the client gets
   `_askbridge/cancelAsk {sessionId, callId?}`; a later reply is dropped.
2. else `elicitation.form` → a form (forms.py); `-32601` means the client does
   not really have it: remembered, and the request goes on to the next tier.
3. else a lone `approval` question → `session/request_permission`.
4. else `next()`: NO_PROVIDER for a blocking ask, pending at the deadline for
   a timed one (TW8).

ACP has no per-request cancel: an abandoned elicitation or permission request
is forgotten (the SDK drops its late reply). After `session/cancel`, clients
answer open ones with `cancelled`; for a cancelled turn that is ASK_ABORTED,
otherwise ASK_CANCELLED.
"""

from __future__ import annotations

import itertools
import logging
from typing import Any, Protocol

import anyio
import anyio.lowlevel
from acp.exceptions import RequestError
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    CancelElicitationResponse,
    CreateElicitationResponse,
    DeclineElicitationResponse,
    RequestPermissionResponse,
)
from pydantic import TypeAdapter, ValidationError

from askbridge.core import UserQuestionError, UserQuestionRequest, parse_answer
from askbridge.core.waterfall import NextListener
from askbridge.protocol.acp import CancelAskParams
from askbridge.protocol.errors import ErrorCode, RpcErrorCode
from askbridge.protocol.methods import (
    ACP_ELICITATION_CREATE,
    ACP_SESSION_REQUEST_PERMISSION,
    ASKBRIDGE_ASK,
    ASKBRIDGE_CANCEL_ASK,
)
from askbridge.protocol.vocabulary import Answer, QuestionItem

from .forms import answer_from_form, answer_from_permission, approval_question, form_request
from .forms import permission_request as build_permission_request
from .outbox import Outbox

log = logging.getLogger("askbridge.acp")

_ELICITATION_REPLY: TypeAdapter[Any] = TypeAdapter(CreateElicitationResponse)


class Requester(Protocol):
    async def send_request(self, method: str, params: Any = None) -> Any: ...


class CancelLedger:
    """How many `session/cancel`s each session got: a change during an ask means the
    turn that asked was cancelled, so a `cancelled` reply is ASK_ABORTED."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def record(self, session_id: str) -> None:
        self._counts[session_id] = self._counts.get(session_id, 0) + 1

    def mark(self, session_id: str) -> int:
        return self._counts.get(session_id, 0)


class _NotDeclared(Exception):
    """The client answered `-32601`: it does not have the method after all."""


class QuestionRelay:
    def __init__(self, conn: Requester, outbox: Outbox, cancels: CancelLedger) -> None:
        self.conn = conn
        self.outbox = outbox
        self.cancels = cancels
        self.renders_questions = False  # tier 1: clientCapabilities._meta.askbridge
        self.elicitation_form = False  # tier 2: clientCapabilities.elicitation.form
        self._approval_ids = itertools.count(1)

    async def listener(self, request: UserQuestionRequest, next_: NextListener) -> Answer:
        session_id = request.session_id
        if session_id is None:
            return await next_()  # nothing to address the client by
        if self.renders_questions:
            return await self._ask_extension(session_id, request)
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

    async def _send(self, method: str, params: dict[str, Any]) -> Any:
        try:
            return await self.conn.send_request(method, params)
        except ConnectionError:
            # The client is gone and the host is about to stop. Failing the ask would record
            # an error and drop the question (P3); leaving the call without a result lets the
            # next load repair it as outcome-unknown, still answerable (P7).
            await anyio.sleep_forever()

    async def _request(self, method: str, params: dict[str, Any]) -> Any:
        await self.outbox.flush()  # the tool_call update reaches the client before its question
        try:
            return await self._send(method, params)
        except RequestError as exc:
            if exc.code == RpcErrorCode.METHOD_NOT_FOUND and method != ASKBRIDGE_ASK:
                raise _NotDeclared() from exc
            raise

    # -- tier 1 ---------------------------------------------------------------------------

    async def _ask_extension(self, session_id: str, request: UserQuestionRequest) -> Answer:
        params: dict[str, Any] = {"sessionId": session_id}
        if request.agent is not None:
            params["agentId"] = request.agent.id
        params["questions"] = [q.dump() for q in request.questions]
        call_id = None
        if request.wait is not None:
            params["wait"] = request.wait.dump()
            call_id = request.wait.call_id
        await self.outbox.flush()
        try:
            result = await self._send(ASKBRIDGE_ASK, params)
        except anyio.get_cancelled_exc_class():
            cancel = CancelAskParams(session_id=session_id, call_id=call_id)
            self.outbox.post(ASKBRIDGE_CANCEL_ASK, cancel.dump())
            raise
        return parse_answer(result)

    # -- tier 2 ---------------------------------------------------------------------------

    async def _ask_form(self, session_id: str, request: UserQuestionRequest) -> Answer:
        mark = self.cancels.mark(session_id)
        call_id = request.wait.call_id if request.wait is not None else None
        raw = await self._request(
            ACP_ELICITATION_CREATE, form_request(session_id, call_id, request.questions)
        )
        try:
            reply = _ELICITATION_REPLY.validate_python(raw)
        except ValidationError as exc:
            raise _provider_error("elicitation/create", exc) from exc
        if isinstance(reply, AcceptElicitationResponse):
            return answer_from_form(request.questions, reply.content)
        if isinstance(reply, CancelElicitationResponse):
            raise await self._cancelled(session_id, mark)
        if isinstance(reply, DeclineElicitationResponse):
            raise UserQuestionError.of(ErrorCode.ASK_CANCELLED)
        raise UserQuestionError(
            f"the client answered the form with an unknown action {reply.action!r}",
            ErrorCode.PROVIDER_ERROR,
        )

    # -- tier 3 ---------------------------------------------------------------------------

    async def _ask_permission(
        self, session_id: str, request: UserQuestionRequest, question: QuestionItem
    ) -> Answer:
        mark = self.cancels.mark(session_id)
        if request.wait is not None:
            tool_call_id = request.wait.call_id
        else:  # a programmatic approval has no tool call of its own
            tool_call_id = f"askbridge-approval-{next(self._approval_ids)}"
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
        raise await self._cancelled(session_id, mark)

    async def _cancelled(self, session_id: str, mark: int) -> UserQuestionError:
        """A `cancelled` reply: ASK_ABORTED if the turn was cancelled meanwhile."""
        # The client sends session/cancel before it answers `cancelled`; the SDK handles the
        # notification in a task of its own, so let it run before deciding.
        await anyio.lowlevel.checkpoint()
        if self.cancels.mark(session_id) != mark:
            return UserQuestionError.of(ErrorCode.ASK_ABORTED)
        return UserQuestionError.of(ErrorCode.ASK_CANCELLED)


def _provider_error(method: str, exc: ValidationError) -> UserQuestionError:
    return UserQuestionError(
        f"the client's {method} reply is malformed: {exc.errors()[0]['msg']}",
        ErrorCode.PROVIDER_ERROR,
    )
