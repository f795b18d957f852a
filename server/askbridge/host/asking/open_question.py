"""The record of one open question out to a session's windows, and its cards (M2, M3).

`OpenQuestion` is data, not a stack: the request, the clients asked, the cards'
withdraws and the cancel scopes of the few tasks it runs (a card of a link
without `ask_with_callback`, the fallback). Each card's outcome comes back through a
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

from askbridge.core import UserQuestionError, UserQuestionRequest, check_answer, error_from_wire
from askbridge.core.waterfall import NextListener, Settle
from askbridge.process.log_lines import field
from askbridge.protocol.errors import ClientGone, ErrorCode
from askbridge.protocol.vocabulary import Answer

from .clients import Client

log = logging.getLogger("askbridge.host")

_FINAL_CODES = frozenset({ErrorCode.ASK_CANCELLED, ErrorCode.ASK_TIMED_OUT})


Spawn = Callable[[Callable[[], Coroutine[Any, Any, Any]]], None]


class Owner(Protocol):
    """The fan-out, as its questions see it: it runs their tasks (in the host's group) and
    is told once when each ends, however it ends."""

    def spawn(self, fn: Callable[[], Coroutine[Any, Any, Any]]) -> None: ...

    def question_ended(self, question: OpenQuestion) -> None: ...

    def arbitrate(self, question: OpenQuestion, client: Client, answer: Answer) -> bool:
        """True when another decides whether `answer` wins (G6: the team store); the
        question then ends through `settle_with`."""
        ...


class OpenQuestion:
    """One question out to the session's windows: a record, ended by one of its callbacks.
    Calling it withdraws it (it is the core's withdraw, as the core's record is its settle).
    It holds its cards in a tuple, not lists (a question has a card or a few, and thousands
    of questions may wait at once: benchmarks/bench_bridge_memory.py), and reads what its
    request says (session, call id, timed) from the request."""

    __slots__ = (
        "_cards",
        "_failure",
        "_owner",
        "_running",
        "_scopes",
        "answer",
        "by",
        "done",
        "error",
        "request",
        "settle",
        "tasks",
    )

    def __init__(
        self,
        request: UserQuestionRequest,
        owner: Owner,
        settle: Settle,
    ) -> None:
        assert request.session_id is not None
        self.request = request
        self.settle = settle  # the core's: the answer or the error, once
        self._owner = owner
        self._cards: tuple[_Card, ...] = ()  # one per client asked
        self._scopes: tuple[anyio.CancelScope, ...] = ()  # its tasks' (only when it runs some)
        self._running = 0
        self.tasks = 0  # cards (and the fallback) that run as tasks
        self._failure: Exception | None = None
        self.done = False
        self.answer: Answer | None = None
        self.error: Exception | None = None
        self.by: str | None = None  # S12: who ended it ("client N", "the fallback")

    @property
    def session_id(self) -> str:
        session_id = self.request.session_id
        assert session_id is not None
        return session_id

    @property
    def call_id(self) -> str | None:
        wait = self.request.wait
        return wait.call_id if wait is not None else None

    @property
    def timed(self) -> bool:
        wait = self.request.wait
        return bool(wait is not None and wait.timed)

    @property
    def asked(self) -> int:
        """How many clients were shown it (S12), until it has ended (`_end`)."""
        return len(self._cards)

    def offer(self, client: Client) -> None:
        """Show the question to `client` too, once (M2, M3)."""
        if self.done or not client.attached or not client.renders_questions:
            return
        for card in self._cards:  # a loop, not any(): no generator on every ask
            if card.client.id == client.id:
                return
        card = _Card(self, client)
        self._cards += (card,)
        self._running += 1
        # A link that can ask with a callback (the LSP relay) costs no task per card.
        ask_with_callback = getattr(client.link, "ask_with_callback", None)
        if ask_with_callback is None:
            self._start(self._ask, client)
            return
        try:
            card.withdraw = ask_with_callback(self.request, card)
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

        self._owner.spawn(run)

    def __call__(self) -> None:
        """End it from outside (its asker gave up): nothing is settled any more."""
        if not self.done:
            self.done = True
            self._end()

    def _end(self) -> None:
        """Withdraw every card still shown (M2) — the one that answered is settled already —
        and cancel its tasks."""
        for card in self._cards:
            withdraw, card.withdraw = card.withdraw, None
            if withdraw is not None:
                withdraw()
        scopes, self._scopes = self._scopes, ()
        for scope in scopes:
            scope.cancel()
        try:
            self._owner.question_ended(self)
        finally:
            # Each card points back at its question: let go of them, so the ended record
            # is freed when its last reference goes, not left to the cycle collector (a
            # cycle per question cost a busy host ~5% of its instructions in collections).
            self._cards = ()

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
                if self._owner.arbitrate(self, client, checked):
                    return  # G6: the database says which answer wins, then `settle_with`
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
            who = client.id if client else "-"
            log.info("client %s could not answer: %s", who, field(failure))
            self._failure = failure
        if self._running == 0 and self._failure is not None:
            self._finish(error=self._failure)

    def _finish(self, *, answer: Answer | None = None, error: Exception | None = None) -> None:
        if self.done:
            return
        self.answer, self.error = answer, error
        self.done = True
        self._end()

    def settle_with(self, answer: Answer, by: str) -> bool:
        """End it with the answer that won elsewhere (G6), checked as any answer (V8);
        every card still out is withdrawn (M2: answered elsewhere). False when it had
        ended already or the answer is not valid for it."""
        if self.done:
            return False
        try:
            checked = check_answer(self.request.questions, answer, self.call_id)  # V8
        except Exception as exc:
            log.info("answer to %s from %s dropped: %s", self.call_id, by, field(exc))
            return False
        self.by = self.by or by
        self._finish(answer=checked)
        return True

    def abort(self) -> None:
        self._finish(error=UserQuestionError.of(ErrorCode.ASK_ABORTED))


class _Card:
    """One client the question was shown to: the card's callback (its outcome to its
    question: a record, not a closure) and, for a card asked without a task, its withdraw."""

    __slots__ = ("_question", "client", "withdraw")

    def __init__(self, question: OpenQuestion, client: Client) -> None:
        self._question, self.client = question, client
        self.withdraw: Callable[[], None] | None = None

    def __call__(self, answer: Answer | None, error: Exception | None) -> None:
        self._question._outcome(self.client, answer, error)


def error_code(error: Exception) -> Any:
    """A card's error reply rebuilt as the core would (E2): the user's dismissal and a
    countdown's end end the question everywhere; anything else is that client's failure."""
    if isinstance(error, UserQuestionError):
        return error.code
    rebuilt = error_from_wire(str(error), getattr(error, "data", None))
    return rebuilt.code if rebuilt is not None else None
