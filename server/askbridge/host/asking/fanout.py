"""One question, every window: the host's answerer on the user-questions waterfall (M2, M3).

The host registers `QuestionFanout.listener` first on the core's waterfall.
For a request of a root session it opens an `OpenQuestion`:

- every follower of the session that renders questions is asked at once; a
  follower that subscribes while the question is open is asked then (M3);
- the first valid answer (V8) settles it; ASK_CANCELLED (the user dismissed
  the card) or ASK_TIMED_OUT (its countdown ran out, TW7) from any of them
  ends it too — those are the user's and the clock's word, not a client's
  failure. Then every other card is withdrawn: cancelling its ask makes the
  door send its cancel (`$/cancelRequest`, ACP `_askbridge/cancelAsk` and
  `$/cancel_request`), and a valid answer that still arrives for a question
  that went pending is a late reply (L7, the doors' `on_late`);
- a client whose card fails (an invalid answer, an error reply) drops out;
  when no card is left and one failed, the last failure is the outcome. A
  client that disconnects drops out silently: the question waits for another
  (a later subscriber, M3) until the turn ends — at the latest when the last
  follower leaves (M6);
- with no rendering follower, the fallback of the client whose prompt started
  the turn applies (showMessageRequest, an ACP form or permission) — outside a
  turn, the first follower's — else the rest of the waterfall; a timed
  question nobody can show stays open for a later subscriber until its
  deadline (pending, TW6/TW8).

The fan-out asks with a callback (`ask_soon`, registered with the core's
`register_soon`): an open question is an `OpenQuestion` record and its cards
are the links' callbacks (the LSP relay's `ask_soon`); only what must wait in
Python — a link without `ask_soon`, the fallback, the rest of the waterfall —
runs as a task in the host's task group, under a cancel scope the question
holds. Every answer it settles with is checked (V8) here, once, the
fallback's too. Withdrawing it (turn cancelled, unclaimed deadline, shutdown)
withdraws every card and cancels those tasks at once (A9).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import anyio

from askbridge.core import UserQuestionError, UserQuestionRequest, check_answer
from askbridge.core.waterfall import NextListener, Settle
from askbridge.protocol.errors import ClientGone, ErrorCode
from askbridge.protocol.vocabulary import Answer

from .clients import Client, Subscribers
from .question_log import error_code, log_asked, log_ended

log = logging.getLogger("askbridge.host")

_FINAL_CODES = frozenset({ErrorCode.ASK_CANCELLED, ErrorCode.ASK_TIMED_OUT})


Spawn = Callable[[Callable[[], Coroutine[Any, Any, Any]]], None]


class OpenQuestion:
    """One question out to the session's windows: a record, ended by one of its callbacks."""

    __slots__ = (
        "_asked",
        "_failure",
        "_on_end",
        "_running",
        "_scopes",
        "_spawn",
        "_withdraws",
        "answer",
        "by",
        "call_id",
        "done",
        "error",
        "request",
        "session_id",
        "settle",
        "tasks",
        "timed",
    )

    def __init__(
        self,
        request: UserQuestionRequest,
        spawn: Spawn,
        on_end: Callable[[OpenQuestion], None],
        session_id: str,
        settle: Settle,
    ) -> None:
        self.request = request
        self.session_id = session_id
        self.settle = settle  # the core's: the answer or the error, once
        self._spawn = spawn  # runs a task in the host's group
        self._on_end = on_end  # called once when it ends, however it ends
        self._asked: list[int] = []
        self._withdraws: list[Callable[[], None]] = []  # cards asked without a task
        self._scopes: list[anyio.CancelScope] = []  # its tasks' (only when it runs some)
        self._running = 0
        self.tasks = 0  # cards (and the fallback) that run as tasks
        self._failure: Exception | None = None
        self.done = False
        self.answer: Answer | None = None
        self.error: Exception | None = None
        wait = request.wait
        self.call_id = wait.call_id if wait is not None else None
        self.timed = bool(wait is not None and wait.timed)
        self.by: str | None = None  # S12: who ended it ("client N", "the fallback")

    def offer(self, client: Client) -> None:
        """Show the question to `client` too, once (M2, M3)."""
        if self.done or client.id in self._asked or not client.attached:
            return
        if not client.renders_questions:
            return
        self._asked.append(client.id)
        self._running += 1
        # A link that can ask with a callback (the LSP relay) costs no task per card.
        ask_soon = getattr(client.link, "ask_soon", None)
        if ask_soon is None:
            self._start(self._ask, client)
            return

        try:
            self._withdraws.append(ask_soon(self.request, _CardDone(self, client)))
        except Exception as exc:
            self._outcome(client, None, exc)

    def _start(self, fn: Callable[..., Awaitable[None]], *args: Any) -> None:
        """Run `fn(*args)` as a task the question cancels when it ends."""
        scope = anyio.CancelScope()
        self._scopes.append(scope)
        self.tasks += 1

        async def run() -> None:
            try:
                with scope:  # absorbs its own cancellation (the question ended)
                    await fn(*args)
            except anyio.get_cancelled_exc_class():  # from outside: the host is stopping
                self.abort()
                raise

        self._spawn(run)

    def withdraw(self) -> None:
        """End it from outside (its asker gave up): nothing is settled any more."""
        if not self.done:
            self.done = True
            self._end()

    def _end(self) -> None:
        """Withdraw every card still shown (M2) — the one that answered is settled already —
        and cancel its tasks."""
        withdraws, self._withdraws = self._withdraws, []
        for withdraw in withdraws:
            withdraw()
        scopes, self._scopes = self._scopes, []
        for scope in scopes:
            scope.cancel()
        self._on_end(self)

    def ask_rest(self, rest: NextListener) -> None:
        """No follower renders questions: the prompting client's fallback, or the waterfall."""
        self._running += 1
        self._start(self._ask_rest, rest)

    async def _ask(self, client: Client) -> None:
        try:
            answer = await client.link.ask(self.request)
        except Exception as exc:
            self._outcome(client, None, exc)
        else:
            self._outcome(client, answer, None)

    def _outcome(self, client: Client, answer: Answer | None, error: Exception | None) -> None:
        """One card's end: a valid answer (V8) settles the question; the user's or the
        clock's word ends it; a client's failure drops that card; a departed client
        drops out silently."""
        if error is None:
            assert answer is not None
            try:
                checked = check_answer(self.request.questions, answer, self.call_id)  # V8
            except Exception as exc:
                error = exc
            else:
                self.by = self.by or f"client {client.id}"
                self._finish(answer=checked)
                return
        if isinstance(error, ClientGone):
            self._drop(None)
        elif error_code(error) in _FINAL_CODES:
            self.by = self.by or f"client {client.id}"
            self._finish(error=error)
        else:  # the client's failure, not the ask's while others remain
            self._drop(error, client)

    async def _ask_rest(self, rest: NextListener) -> None:
        try:
            answer = await rest()
        except UserQuestionError as exc:
            if exc.code == ErrorCode.NO_PROVIDER and self.timed:
                self._drop(None)  # nobody can show it now; a later subscriber may (M3)
            else:
                self._finish(error=exc)
        except Exception as exc:
            self._finish(error=exc)
        else:
            try:
                checked = check_answer(self.request.questions, answer, self.call_id)  # V8
            except UserQuestionError as exc:
                self._finish(error=exc)
                return
            self.by = self.by or "the fallback"
            self._finish(answer=checked)

    def _drop(self, failure: Exception | None, client: Client | None = None) -> None:
        self._running -= 1
        if failure is not None:
            log.info("client %s could not answer: %s", client.id if client else "-", failure)
            self._failure = failure
        if self._running == 0 and self._failure is not None:
            self._finish(error=self._failure)

    def _finish(self, *, answer: Answer | None = None, error: Exception | None = None) -> None:
        if self.done:
            return
        self.answer, self.error = answer, error
        self.done = True
        self._end()

    def abort(self) -> None:
        self._finish(error=UserQuestionError.of(ErrorCode.ASK_ABORTED))


class _CardDone:
    """A card's callback: its outcome to its question (a record, not a closure)."""

    __slots__ = ("_client", "_question")

    def __init__(self, question: OpenQuestion, client: Client) -> None:
        self._question, self._client = question, client

    def __call__(self, answer: Answer | None, error: Exception | None) -> None:
        self._question._outcome(self._client, answer, error)


class QuestionFanout:
    """The answerer of the host's root sessions. host.py wires it: `subscribers` says who
    follows each session, `asks_here(session_id)` whether the session is a loaded root
    session (anything else goes down the waterfall), `requester(session_id)` whose
    prompt (or late reply) started its running turn — that client's fallback asks when no
    follower renders questions (M2) — and `spawn` runs what must wait in Python (a card
    sent as a task, the fallback) in the host's task group."""

    def __init__(
        self,
        subscribers: Subscribers,
        asks_here: Callable[[str], bool],
        requester: Callable[[str], Client | None],
        spawn: Spawn,
    ) -> None:
        self._subscribers = subscribers
        self._asks_here = asks_here
        self._requester = requester
        self._spawn = spawn
        self._open: dict[str, list[OpenQuestion]] = {}

    def abort(self, session_id: str) -> None:
        """`session/cancel`: every question open in the session ends ASK_ABORTED — the
        turn's, and a programmatic caller's outside any turn alike."""
        for question in list(self._open.get(session_id, ())):
            question.abort()

    def offer(self, client: Client, session_id: str) -> None:
        """M3: a client just subscribed; show it every question open in that session."""
        for question in list(self._open.get(session_id, ())):
            question.offer(client)

    def ask_soon(
        self, request: UserQuestionRequest, next_: NextListener, settle: Settle
    ) -> Callable[[], None]:
        """The core's first listener (`register_soon`): open the question in its session's
        windows, or pass it on; `settle` is called once with the checked answer or the
        error, unless the returned withdraw comes first."""
        session_id = request.session_id
        if session_id is None or not self._asks_here(session_id):
            return self._pass_on(request, next_, settle)
        question = OpenQuestion(request, self._spawn, self._ended, session_id, settle)
        self._open.setdefault(session_id, []).append(question)
        renderers = self._subscribers.renderers(session_id)
        log_asked(question, session_id, renderers, self._rest_client(session_id))
        for client in renderers:
            question.offer(client)
        if not renderers and not question.done:
            question.ask_rest(lambda: self._rest(session_id, request, next_))
        return question.withdraw

    def _ended(self, question: OpenQuestion) -> None:
        questions = self._open.get(question.session_id, [])
        if question in questions:
            questions.remove(question)
        if not questions:
            self._open.pop(question.session_id, None)
        log_ended(question)
        if question.answer is not None or question.error is not None:
            question.settle(question.answer, question.error)

    def _pass_on(
        self, request: UserQuestionRequest, next_: NextListener, settle: Settle
    ) -> Callable[[], None]:
        """Not a root session's question: the rest of the waterfall, in a task (V8 here)."""
        scope = anyio.CancelScope()

        async def run() -> None:
            with scope:
                try:
                    answer = check_answer(request.questions, await next_(), _call_id(request))
                except Exception as exc:  # cancellation is not an Exception: nobody is told
                    settle(None, exc)
                else:
                    settle(answer, None)

        self._spawn(run)
        return scope.cancel

    def _rest_client(self, session_id: str) -> Client | None:
        client = self._requester(session_id)
        if client is None or not client.attached:
            # Asked outside a turn (a programmatic caller, an external agent): the first
            # follower's own way applies.
            client = next(iter(self._subscribers.of(session_id)), None)
        return client if client is not None and client.attached else None

    async def _rest(
        self, session_id: str, request: UserQuestionRequest, next_: NextListener
    ) -> Answer:
        client = self._rest_client(session_id)
        if client is not None:
            return await client.link.fallback(request, next_)
        return await next_()


def _call_id(request: UserQuestionRequest) -> str | None:
    return request.wait.call_id if request.wait is not None else None
