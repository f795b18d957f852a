"""The asking room in-process (tests/unit/test_asking_*.py): the real fan-out on the real
question service, with a ManualClock and fake clients — no Host, no process, no real time.

`Room` wires what host.py wires: a `UserQuestionService` whose waterfall starts
with `QuestionFanout.listener`, the `Subscribers`, and the two callables the
fan-out is given (is the session a loaded root session, whose prompt started
its turn). `FakeLink` is a client that renders questions (or not): every card
it is asked is a `Card` the test answers, fails or leaves unanswered (a
stalled client). With `callback=True` it asks as the LSP relay does
(`ask_with_callback`, no task per card); otherwise as the ACP relay does (an `ask`
coroutine the fan-out runs and cancels).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup
from core_helpers import Agent, assert_error, first_choice, question, settle

from askbridge.core import (
    AbortSignal,
    ManualClock,
    SimpleAgentRegistry,
    UserQuestionRequest,
    UserQuestionService,
)
from askbridge.core.waterfall import NextListener
from askbridge.host.asking.clients import Client, Subscribers
from askbridge.host.asking.fanout import QuestionFanout
from askbridge.protocol import Answer, PendingResult, QuestionItem, Wait

SESSION = "s-1"

Done = Callable[[Answer | None, Exception | None], None]


class Card:
    """One question card shown by one fake client."""

    def __init__(self, request: UserQuestionRequest, on_done: Done | None = None) -> None:
        self.request = request
        self.withdrawn = False
        self._on_done = on_done
        self._settled = anyio.Event()
        self._answer: Answer | None = None
        self._error: Exception | None = None

    def answer(self, answer: Answer | None = None) -> None:
        self._end(answer or first_choice(self.request.questions), None)

    def fail(self, error: Exception) -> None:
        self._end(None, error)

    def _end(self, answer: Answer | None, error: Exception | None) -> None:
        self._answer, self._error = answer, error
        if self._on_done is not None:
            self._on_done(answer, error)
        self._settled.set()

    def withdraw(self) -> None:
        self.withdrawn = True

    async def reply(self) -> Answer:
        try:
            await self._settled.wait()
        except anyio.get_cancelled_exc_class():
            self.withdrawn = True
            raise
        if self._error is not None:
            raise self._error
        assert self._answer is not None
        return self._answer


class FakeLink:
    """A `ClientLink` (host/asking/clients.py) that records what the host does to it."""

    def __init__(self, *, renders: bool = True, callback: bool = False) -> None:
        self._renders = renders
        self.cards: list[Card] = []
        self.fallbacks: list[UserQuestionRequest] = []
        self.fallback_answer: Answer | None = None  # None: the fallback passes it on (next_)
        self.view_changes: list[tuple[str, list[dict[str, Any]]]] = []
        self.updates: list[tuple[str, list[dict[str, Any]]]] = []
        if callback:
            self.ask_with_callback = self._ask_with_callback

    @property
    def renders_questions(self) -> bool:
        return self._renders

    def send_updates(self, session_id: str, updates: list[dict[str, Any]]) -> None:
        self.updates.append((session_id, updates))

    def send_view_changes(self, session_id: str, changes: list[dict[str, Any]]) -> None:
        self.view_changes.append((session_id, changes))

    async def ask(self, request: UserQuestionRequest) -> Answer:
        card = Card(request)
        self.cards.append(card)
        return await card.reply()

    def _ask_with_callback(self, request: UserQuestionRequest, on_done: Done) -> Callable[[], None]:
        card = Card(request, on_done)
        self.cards.append(card)
        return card.withdraw

    def notify_fatal(self, error: Exception) -> None:
        raise AssertionError(f"no test here stops the host: {error}")

    async def fallback(self, request: UserQuestionRequest, next_: NextListener) -> Answer:
        self.fallbacks.append(request)
        if self.fallback_answer is not None:
            return self.fallback_answer
        return await next_()

    @property
    def card(self) -> Card:
        """The one card this client was shown."""
        assert len(self.cards) == 1, self.cards
        return self.cards[0]


@dataclass
class Asked:
    """An ask running in the test's task group: its outcome once it ends."""

    result: Answer | PendingResult | None = None
    error: Exception | None = None
    done: anyio.Event = field(default_factory=anyio.Event)

    @property
    def answer(self) -> Answer:
        assert self.done.is_set() and self.error is None, self.error
        assert isinstance(self.result, Answer), self.result
        return self.result

    def failed(self, code: str, text: str | None = None) -> None:
        """The ask ended with `code` (and the table's, or the given, message)."""
        assert self.done.is_set() and self.error is not None, self.result
        assert_error(self.error, code, text)


@dataclass
class Room:
    tg: TaskGroup
    clock: ManualClock = field(default_factory=ManualClock)
    root: Agent = field(default_factory=lambda: Agent("a-1"))
    roots: set[str] = field(default_factory=lambda: {SESSION})
    requesters: dict[str, Client] = field(default_factory=dict)
    subscribers: Subscribers = field(default_factory=Subscribers)

    def __post_init__(self) -> None:
        registry = SimpleAgentRegistry()
        registry.add(self.root)
        self.service = UserQuestionService(registry, self.clock)
        self.fanout = QuestionFanout(
            self.subscribers, lambda sid: sid in self.roots, self.requesters.get, self.tg.start_soon
        )
        self.service.register(self.fanout.listener)  # first, as host.py wires it

    def client(self, *, renders: bool = True, callback: bool = False) -> tuple[Client, FakeLink]:
        """A client attached to the room and following SESSION (as Host.subscribe does)."""
        link = FakeLink(renders=renders, callback=callback)
        client = Client(link, {})
        self.follow(client)
        return client, link

    def follow(self, client: Client, session_id: str = SESSION) -> None:
        if self.subscribers.add(client, session_id):
            self.fanout.offer(client, session_id)  # M3

    def detach(self, client: Client) -> None:
        client.gone.abort("detached")
        for session_id in list(client.sessions):
            self.subscribers.remove(client, session_id)

    def ask(
        self,
        *questions: QuestionItem,
        timeout_ms: int | None = None,
        call_id: str = "c1",
        signal: AbortSignal | None = None,
        wait: Wait | None = None,
    ) -> Asked:
        """Start an ask (timed when `timeout_ms` is given; `signal` the turn's; `wait` a
        blocking ask's call id) in the test's task group."""
        asked = Asked()
        request = UserQuestionRequest(
            list(questions) or [question()],
            agent=self.root,
            signal=signal,
            wait=wait,
            session_id=SESSION,
        )

        async def run() -> None:
            try:
                if timeout_ms is None:
                    asked.result = await self.service.ask(request)
                else:
                    asked.result = await self.service.ask_timed(request, call_id, timeout_ms)
            except Exception as exc:
                asked.error = exc
            finally:
                asked.done.set()

        self.tg.start_soon(run)
        return asked

    async def ask_windows(
        self, windows: int, *, callback: bool, timeout_ms: int | None = None
    ) -> tuple[list[FakeLink], Asked]:
        """`windows` clients that render questions, then an ask each of them was shown."""
        links = [self.client(callback=callback)[1] for _ in range(windows)]
        asked = self.ask(timeout_ms=timeout_ms)
        await settle()
        return links, asked


@asynccontextmanager
async def open_room() -> AsyncIterator[Room]:
    """A Room whose asks run in a task group the test leaves (cancelled) with it."""
    async with anyio.create_task_group() as tg:
        yield Room(tg)
        tg.cancel_scope.cancel()
