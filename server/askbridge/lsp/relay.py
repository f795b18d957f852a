"""The LSP door's side of a client (a `ClientLink`, asking/clients.py): its updates and its cards.

- Updates: `session/update` and `userQuestions/didChange` notifications, queued
  on the client's connection without waiting (M7).
- Cards: a client that declared `experimental.userQuestions` gets
  `userQuestions/ask` and its reply is the answer (the host checks V8). Any
  other LSP client's fallback asks each representable question with
  `window/showMessageRequest` and shows a timed wait as work-done progress;
  unrepresentable batches are declined (`next()`).
- Withdrawal: cancelling an ask (another window answered, turn cancelled,
  deadline, shutdown) — or withdrawing a card asked with `ask_with_callback`, the
  fan-out's way to ask without a task per card — makes the connection send
  `$/cancelRequest` without waiting for the client (A9). A valid answer that
  still arrives is handed to the host as a late answer (L7): it becomes a late
  reply if the question went pending, and is dropped (logged) otherwise.
- After `shutdown` every outstanding card is withdrawn and no new one is sent:
  the client is leaving (the host treats it as gone for its questions).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from askbridge.core import HarnessError, UserQuestionError, UserQuestionRequest, parse_answer
from askbridge.core.beside import beside
from askbridge.core.question import Question
from askbridge.core.waterfall import NextListener
from askbridge.host.asking.clients import Client
from askbridge.host.asking.late_answers import late_answer_callback
from askbridge.jsonrpc import (
    Connection,
    ConnectionClosed,
    LateReply,
    Outcome,
    RpcResponseError,
    client_failure,
)
from askbridge.protocol.errors import ClientGone, ErrorCode
from askbridge.protocol.vocabulary import Answer, AnswerItem

if TYPE_CHECKING:
    from askbridge.host.host import Host

log = logging.getLogger("askbridge.lsp")


def representable(questions: list[Question]) -> bool:
    """A batch `window/showMessageRequest` can show: single-select questions with options."""
    return all(q.options and not q.multi_select for q in questions)


def message_text(q: Question) -> str:
    text = f"[{q.header}] {q.question}" if q.header else q.question
    return f"{text}\n\n{q.detail}" if q.detail else text


class LspRelay:
    def __init__(self, conn: Connection, host: Host) -> None:
        self.conn = conn
        self.host = host
        self.client: Client | None = None  # set once attached
        self.renders_questions = False
        self.work_done_progress = False
        self._progress_ids = 0
        self._outstanding: set[anyio.CancelScope] = set()
        self._shut = False

    # -- updates --------------------------------------------------------------------------

    def send_updates(self, session_id: str, updates: list[dict[str, Any]]) -> None:
        for update in updates:
            self.conn.notify("session/update", {"sessionId": session_id, "update": update})

    def send_view_changes(self, session_id: str, changes: list[dict[str, Any]]) -> None:
        params = {"sessionId": session_id, "changes": changes}
        self.conn.notify("userQuestions/didChange", params)

    def notify_fatal(self, error: HarnessError) -> None:
        self.conn.notify(
            "window/showMessage", {"type": 1, "message": f"askbridge: {error.message}"}
        )

    # -- cards ----------------------------------------------------------------------------

    async def _request(self, method: str, params: Any, on_late: LateReply | None = None) -> Any:
        """An outgoing card that `cancel_outstanding` can withdraw."""
        if self._shut:
            raise ClientGone("the client has shut down")
        with anyio.CancelScope() as scope:
            self._outstanding.add(scope)
            try:
                return await self.conn.request(method, params, on_late=on_late)
            except (RpcResponseError, ConnectionClosed) as exc:
                raise client_failure(exc) from exc
            finally:
                self._outstanding.discard(scope)
        raise ClientGone("the client has shut down")  # withdrawn by cancel_outstanding

    def cancel_outstanding(self) -> None:
        """After `shutdown`: withdraw every card; the client gets $/cancelRequest."""
        self._shut = True
        for scope in list(self._outstanding):
            scope.cancel()
        # The cards asked with ask_with_callback are the connection's callback requests whose
        # callback is a _Card: no registry of our own (thousands of cards may be out).
        for withdraw, settled in self.conn.outgoing.callback_requests():
            if isinstance(settled, _Card):
                withdraw()
                settled.on_done(None, ClientGone("the client has shut down"))

    def _late(self, request: UserQuestionRequest, build: Any = parse_answer) -> LateReply | None:
        return late_answer_callback(self.host.late_answers, self.client, request, build)

    async def ask(self, request: UserQuestionRequest) -> Answer:
        params = _ask_params(request, request.session_id)
        result = await self._request("userQuestions/ask", params, self._late(request))
        return parse_answer(result)

    def ask_with_callback(
        self, request: UserQuestionRequest, on_done: Outcome
    ) -> Callable[[], None]:
        """`ask` without a task (host/asking/fanout.py): `on_done(answer, None)` or `(None, error)`
        — the errors `ask` raises — is called once, unless the returned `withdraw()` comes
        first (then the client gets $/cancelRequest and a late answer goes to L7)."""
        if self._shut:
            raise ClientGone("the client has shut down")
        try:
            params = _ask_params(request, request.session_id)
            # The request's withdraw is the card's: nothing of ours to clean up.
            return self.conn.request_with_callback(
                "userQuestions/ask", params, _Card(on_done), self._late(request)
            )
        except ConnectionClosed as exc:
            raise client_failure(exc) from exc

    async def fallback(self, request: UserQuestionRequest, next_: NextListener) -> Answer:
        if self.renders_questions or not representable(list(request.questions)):
            return await next_()

        async def show_each() -> Answer:
            answers: list[AnswerItem] = []
            for index, q in enumerate(request.questions):
                answers.append(await self._show_message(request, q, index, answers))
            return Answer(answers=answers)

        if self.work_done_progress and request.wait is not None and request.wait.timed:
            return await beside(show_each(), self._countdown, request)
        return await show_each()

    async def _show_message(
        self, request: UserQuestionRequest, q: Question, index: int, earlier: list[AnswerItem]
    ) -> AnswerItem:
        params = {
            "type": 3,
            "message": message_text(q),
            "actions": [{"title": label} for label in q.option_labels()],
        }
        # A late button for the batch's last question completes it (L7); earlier ones cannot.
        last = index == len(request.questions) - 1
        done = list(earlier)
        on_late = (
            self._late(request, lambda r: Answer(answers=[*done, _chosen(q, r)])) if last else None
        )
        result = await self._request("window/showMessageRequest", params, on_late)
        return _chosen(q, result)

    async def _countdown(self, request: UserQuestionRequest) -> None:
        """Server-created work-done progress counting down a timed wait's seconds."""
        assert request.wait is not None and request.agent is not None
        wait = self.host.service.find_wait(request.agent.id, request.wait.call_id)
        if wait is None:
            return
        self._progress_ids += 1
        token = f"askbridge-wait-{self._progress_ids}"
        try:
            await self.conn.request("window/workDoneProgress/create", {"token": token})
        except Exception as exc:  # a client may refuse; the question is still asked
            log.debug("workDoneProgress/create refused: %s", exc)
            return
        title = "askbridge: question waiting"
        self.conn.notify(
            "$/progress",
            {"token": token, "value": {"kind": "begin", "title": title, "message": _left(wait)}},
        )
        try:
            while not wait.ended and not wait.expired:
                await anyio.sleep(1)
                self.conn.notify(
                    "$/progress",
                    {"token": token, "value": {"kind": "report", "message": _left(wait)}},
                )
        finally:
            self.conn.notify("$/progress", {"token": token, "value": {"kind": "end"}})


class _Card:
    """One card asked with `ask_with_callback`, while it is out: the outgoing request's
    callback, which makes its reply the card's outcome — a record, not a closure, as it
    lives as long as its question (architecture: "A pending question is a record")."""

    __slots__ = ("on_done",)

    def __init__(self, on_done: Outcome) -> None:
        self.on_done = on_done

    def __call__(self, result: Any, error: Exception | None) -> None:
        if error is not None:
            self.on_done(None, client_failure(error))
            return
        try:
            answer = parse_answer(result)
        except HarnessError as exc:
            self.on_done(None, exc)
        else:
            self.on_done(answer, None)


def _ask_params(request: UserQuestionRequest, session_id: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {
        "sessionId": session_id,
        "agentId": _agent_id(request),
        "questions": [q.dump() for q in request.questions],
    }
    if request.wait is not None:
        params["wait"] = request.wait.dump()
    return params


def _agent_id(request: UserQuestionRequest) -> str | None:
    return request.agent.id if request.agent is not None else None


def _chosen(q: Question, result: Any) -> AnswerItem:
    if result is None:
        raise UserQuestionError.of(ErrorCode.ASK_CANCELLED)
    title = result.get("title") if isinstance(result, dict) else None
    if not isinstance(title, str):
        raise UserQuestionError(
            "the client answered window/showMessageRequest without an action title",
            ErrorCode.PROVIDER_ERROR,
        )
    return AnswerItem(id=q.id, selected=[title])


def _left(wait: Any) -> str:
    return f"{(wait.remaining_ms() + 999) // 1000} s left to answer"
