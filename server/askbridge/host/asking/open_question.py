"""The record of one open question out to a session's windows, and its cards (M2, M3).

`OpenQuestion` is data, not a stack: the request, the clients asked, the cards'
withdraws and the cancel scopes of the few tasks it runs (a card of a link
without `ask_soon`, the fallback). Each card's outcome comes back through a
`_CardDone` callback; the first valid answer (V8, checked here once), or the
user's or the clock's word (ASK_CANCELLED, ASK_TIMED_OUT), ends it and
withdraws every other card; a client's failure drops only its card. The
fan-out (fanout.py) opens these records and is told once when each ends.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

import anyio

from askbridge.core import UserQuestionError, UserQuestionRequest, check_answer
from askbridge.core.waterfall import NextListener, Settle
from askbridge.protocol.errors import ClientGone, ErrorCode
from askbridge.protocol.vocabulary import Answer

from .clients import Client
from .question_log import error_code

log = logging.getLogger("askbridge.host")

_FINAL_CODES = frozenset({ErrorCode.ASK_CANCELLED, ErrorCode.ASK_TIMED_OUT})


Spawn = Callable[[Callable[[], Coroutine[Any, Any, Any]]], None]


class Ends(Protocol):
    """Who is told once when a question ends, however it ends (the fan-out)."""

    def question_ended(self, question: OpenQuestion) -> None: ...


class OpenQuestion:
    """One question out to the session's windows: a record, ended by one of its callbacks.
    Calling it withdraws it (it is the core's withdraw, as the core's record is its settle).
    What it holds per card are tuples, not lists: a question has a card or a few, and
    thousands of questions may wait at once (benchmarks/bench_bridge_memory.py)."""

    __slots__ = (
        "_asked",
        "_ends",
        "_failure",
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
        ends: Ends,
        session_id: str,
        settle: Settle,
    ) -> None:
        self.request = request
        self.session_id = session_id
        self.settle = settle  # the core's: the answer or the error, once
        self._spawn = spawn  # runs a task in the host's group
        self._ends = ends  # told once when it ends, however it ends
        self._asked: tuple[int, ...] = ()
        self._withdraws: tuple[Callable[[], None], ...] = ()  # cards asked without a task
        self._scopes: tuple[anyio.CancelScope, ...] = ()  # its tasks' (only when it runs some)
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
        self._asked += (client.id,)
        self._running += 1
        # A link that can ask with a callback (the LSP relay) costs no task per card.
        ask_soon = getattr(client.link, "ask_soon", None)
        if ask_soon is None:
            self._start(self._ask, client)
            return

        try:
            self._withdraws += (ask_soon(self.request, _CardDone(self, client)),)
        except Exception as exc:
            self._outcome(client, None, exc)

    def _start(self, fn: Callable[..., Awaitable[None]], *args: Any) -> None:
        """Run `fn(*args)` as a task the question cancels when it ends."""
        scope = anyio.CancelScope()
        self._scopes += (scope,)
        self.tasks += 1

        async def run() -> None:
            try:
                with scope:  # absorbs its own cancellation (the question ended)
                    await fn(*args)
            except anyio.get_cancelled_exc_class():  # from outside: the host is stopping
                self.abort()
                raise

        self._spawn(run)

    def __call__(self) -> None:
        """End it from outside (its asker gave up): nothing is settled any more."""
        if not self.done:
            self.done = True
            self._end()

    def _end(self) -> None:
        """Withdraw every card still shown (M2) — the one that answered is settled already —
        and cancel its tasks."""
        withdraws, self._withdraws = self._withdraws, ()
        for withdraw in withdraws:
            withdraw()
        scopes, self._scopes = self._scopes, ()
        for scope in scopes:
            scope.cancel()
        self._ends.question_ended(self)

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
