"""The MCP client as a client of the host (a `ClientLink`, asking/clients.py): X3's last resort.

An MCP client renders no askbridge cards and follows nothing but its own
external session, whose updates it does not need: `renders_questions` is
False and updates are not sent. Its `fallback` — used when no follower of
the session renders questions (M2, X3) — asks the MCP client itself through
a form elicitation when it declared `elicitation` (form mode), with the
mapping both doors share (core/forms.py, F1–F3: keys `q1`, `q1_other`, …;
accept → the Answer, decline → ASK_DECLINED, cancel → pending at once for a
timed ask, ASK_CANCELLED for a blocking one). A client that answers `-32601`
is taken as not supporting it from then on. Without elicitation the fallback
declines (`next()`): NO_PROVIDER for a blocking ask, pending at the deadline for
a timed one.

A form the door stopped waiting for (an editor answered, the deadline passed)
is cancelled with `notifications/cancelled`; if the client still accepts it
and the question went pending, the answer is a late reply (L7).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import mcp_types as types
from pydantic import ValidationError

from askbridge.core import HarnessError, UserQuestionError, UserQuestionRequest
from askbridge.core.forms import form_answer, form_message, form_schema
from askbridge.core.waterfall import NextListener
from askbridge.host.asking.clients import Client
from askbridge.host.asking.late_answers import late_answer_callback
from askbridge.jsonrpc import (
    ConnectionClosed,
    LateReply,
    Outgoing,
    RpcResponseError,
    client_failure,
    is_method_not_found,
)
from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.vocabulary import Answer

if TYPE_CHECKING:
    from askbridge.host.host import Host

log = logging.getLogger("askbridge.mcp")


class ElicitationUnsupported(Exception):
    """The client answered -32601 to `elicitation/create`."""


def declares_form_elicitation(capabilities: types.ClientCapabilities | None) -> bool:
    """`elicitation: {}` (2025-06-18) or `elicitation: {form: {}}` (2025-11-25)."""
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None:
        return False
    return elicitation.form is not None or elicitation.url is None


def elicitation_params(request: UserQuestionRequest) -> dict[str, Any]:
    """The params of one form `elicitation/create` for the batch."""
    params = types.ElicitRequestFormParams(
        message=form_message(request.questions), requested_schema=form_schema(request.questions)
    )
    return params.model_dump(mode="json", by_alias=True, exclude_none=True)


def answer_from_elicitation(request: UserQuestionRequest, result: Any) -> Answer:
    try:
        reply = types.ElicitResult.model_validate(result, by_name=False)
    except ValidationError:
        raise UserQuestionError(
            "the MCP client's elicitation reply is not an ElicitResult", ErrorCode.PROVIDER_ERROR
        ) from None
    timed = request.wait is not None and bool(request.wait.timed)
    content = dict(reply.content) if reply.content is not None else None
    return form_answer(request.questions, reply.action, content, timed=timed)  # F3


class McpLink:
    def __init__(
        self,
        host: Host,
        requests: Outgoing,
        capabilities: Callable[[], types.ClientCapabilities | None],
    ) -> None:
        self.host = host
        self.requests = requests
        self._capabilities = capabilities
        self.client: Client | None = None  # set once attached
        self._unsupported = False

    @property
    def renders_questions(self) -> bool:
        return False

    @property
    def elicits(self) -> bool:
        return not self._unsupported and declares_form_elicitation(self._capabilities())

    def send_updates(self, session_id: str, updates: list[dict[str, Any]]) -> None:
        """The agent made these calls itself: nothing to tell it."""

    def send_view_changes(self, session_id: str, changes: list[dict[str, Any]]) -> None:
        """get_answers (X4) is how the agent hears of its questions."""

    def notify_fatal(self, error: HarnessError) -> None:
        log.critical("telling the MCP client nothing more: %s", error.message)

    async def ask(self, request: UserQuestionRequest) -> Answer:
        return await self._elicit(request)

    async def fallback(self, request: UserQuestionRequest, next_: NextListener) -> Answer:
        if not self.elicits:
            return await next_()
        try:
            return await self._elicit(request)
        except ElicitationUnsupported:
            self._unsupported = True
            return await next_()

    async def _elicit(self, request: UserQuestionRequest) -> Answer:
        try:
            result = await self.requests.request(
                "elicitation/create", elicitation_params(request), on_late=self._late(request)
            )
        except (ConnectionClosed, RpcResponseError) as exc:
            failure = client_failure(exc)  # the client gone, or its own error (E1, E2)
            if is_method_not_found(failure):
                raise ElicitationUnsupported(str(failure)) from exc
            raise failure from exc
        return answer_from_elicitation(request, result)

    def _late(self, request: UserQuestionRequest) -> LateReply | None:
        """L7: an accepted form the door had stopped waiting for, as a late reply (the
        same handling as every door's card)."""
        return late_answer_callback(
            self.host.late_answers,
            self.client,
            request,
            lambda result: answer_from_elicitation(request, result),
        )
