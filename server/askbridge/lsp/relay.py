"""Question answerers of the LSP door: the `userQuestions/ask` relay and the generic fallback.

One `QuestionRelay` per connection registers, for every root agent the client
drives, a listener on the core's waterfall. For a client that declared
`experimental.userQuestions` it sends `userQuestions/ask` and returns the
client's answer (the core checks it, V8). For any other LSP client it asks each
representable question with `window/showMessageRequest` and shows a timed
wait as work-done progress; unrepresentable batches are declined (`next()`).

Cancelling a listener (turn cancelled, deadline passed, shutdown) cancels the
outgoing request, and the connection sends `$/cancelRequest` without waiting
for the client (A9).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio

from askbridge.core import UserQuestionError, UserQuestionRequest, UserQuestionService, parse_answer
from askbridge.core.waterfall import NextListener
from askbridge.jsonrpc import ConnectionClosed, RpcResponseError
from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.vocabulary import Answer, AnswerItem, QuestionItem

log = logging.getLogger("askbridge.lsp")


class ClientErrorReply(Exception):
    """The client answered a question request with an error: its message and `data`.

    The core rebuilds `data = {name: "UserQuestionError", code}` as that error (E2);
    anything else becomes PROVIDER_ERROR carrying exactly the client's message (E1).
    """

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.data = data


class Outgoing(Protocol):
    async def request(self, method: str, params: Any) -> Any: ...

    def notify(self, method: str, params: Any) -> None: ...


def representable(questions: list[QuestionItem]) -> bool:
    """A batch `window/showMessageRequest` can show: single-select questions with options."""
    return all(q.options and not q.multi_select for q in questions)


def message_text(q: QuestionItem) -> str:
    text = f"[{q.header}] {q.question}" if q.header else q.question
    return f"{text}\n\n{q.detail}" if q.detail else text


class QuestionRelay:
    def __init__(self, service: UserQuestionService, out: Outgoing) -> None:
        self.service = service
        self.out = out
        self.renders_questions = False
        self.work_done_progress = False
        self._progress_ids = 0
        self._outstanding: set[anyio.CancelScope] = set()
        self._shut = False

    async def _request(self, method: str, params: Any) -> Any:
        """An outgoing question request that `cancel_outstanding` can withdraw."""
        if self._shut:
            raise UserQuestionError.of(ErrorCode.ASK_ABORTED)
        with anyio.CancelScope() as scope:
            self._outstanding.add(scope)
            try:
                return await self.out.request(method, params)
            except RpcResponseError as exc:
                # The model sees the client's own message (E1), not the RPC error's str.
                raise ClientErrorReply(exc.message, exc.data) from exc
            except ConnectionClosed:
                # The client is gone and the host is about to stop. Failing the ask would
                # record an error and drop the question (P3); leaving the call without a
                # result lets a restart repair it as outcome-unknown, still answerable (P7).
                await anyio.sleep_forever()
            finally:
                self._outstanding.discard(scope)
        raise UserQuestionError.of(ErrorCode.ASK_ABORTED)  # cancelled by shutdown

    def cancel_outstanding(self) -> None:
        """After `shutdown`: withdraw every question request; the client gets $/cancelRequest."""
        self._shut = True
        for scope in list(self._outstanding):
            scope.cancel()

    async def listener(self, request: UserQuestionRequest, next_: NextListener) -> Answer:
        if self.renders_questions:
            return await self._ask_client(request)
        if not representable(list(request.questions)):
            return await next_()
        return await self._ask_fallback(request)

    async def _ask_client(self, request: UserQuestionRequest) -> Answer:
        params: dict[str, Any] = {
            "sessionId": request.session_id,
            "agentId": request.agent.id if request.agent is not None else None,
            "questions": [q.dump() for q in request.questions],
        }
        if request.wait is not None:
            params["wait"] = request.wait.dump()
        result = await self._request("userQuestions/ask", params)
        return parse_answer(result)

    async def _ask_fallback(self, request: UserQuestionRequest) -> Answer:
        answers: list[AnswerItem] = []
        failure: Exception | None = None
        async with anyio.create_task_group() as tg:
            if self.work_done_progress and request.wait is not None and request.wait.timed:
                tg.start_soon(self._countdown, request)
            try:
                for q in request.questions:
                    answers.append(await self._show_message(q))
            except Exception as exc:  # raised below: a task group would wrap it in a group
                failure = exc
            finally:
                tg.cancel_scope.cancel()
        if failure is not None:
            raise failure
        return Answer(answers=answers)

    async def _show_message(self, q: QuestionItem) -> AnswerItem:
        params = {
            "type": 3,
            "message": message_text(q),
            "actions": [{"title": label} for label in q.option_labels()],
        }
        result = await self._request("window/showMessageRequest", params)
        if result is None:
            raise UserQuestionError.of(ErrorCode.ASK_CANCELLED)
        title = result.get("title") if isinstance(result, dict) else None
        if not isinstance(title, str):
            raise UserQuestionError(
                "the client answered window/showMessageRequest without an action title",
                ErrorCode.PROVIDER_ERROR,
            )
        return AnswerItem(id=q.id, selected=[title])

    async def _countdown(self, request: UserQuestionRequest) -> None:
        """Server-created work-done progress counting down a timed wait's seconds."""
        assert request.wait is not None and request.agent is not None
        wait = self.service.find_wait(request.agent.id, request.wait.call_id)
        if wait is None:
            return
        self._progress_ids += 1
        token = f"askbridge-wait-{self._progress_ids}"
        try:
            await self.out.request("window/workDoneProgress/create", {"token": token})
        except Exception as exc:  # a client may refuse; the question is still asked
            log.debug("workDoneProgress/create refused: %s", exc)
            return
        title = "askbridge: question waiting"
        self.out.notify(
            "$/progress",
            {"token": token, "value": {"kind": "begin", "title": title, "message": _left(wait)}},
        )
        try:
            while not wait.ended and not wait.expired:
                await anyio.sleep(1)
                self.out.notify(
                    "$/progress",
                    {"token": token, "value": {"kind": "report", "message": _left(wait)}},
                )
        finally:
            self.out.notify("$/progress", {"token": token, "value": {"kind": "end"}})


def _left(wait: Any) -> str:
    return f"{(wait.remaining_ms() + 999) // 1000} s left to answer"


Sender = Callable[[str, Any], Awaitable[Any]]
