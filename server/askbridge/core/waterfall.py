"""The `user-questions/request` waterfall (behavior.md W1–W4).

Listeners are async callables `(request, next) -> Answer`. Returning an answer
claims the request; awaiting `next()` hands it to the following listener; past
the last one `next()` fails with NO_PROVIDER. A listener may be scoped to an
agent: it then sees only requests from that agent or its descendants.

A listener may instead ask with a callback (`register_soon`): `soon(request,
next, settle)` returns a withdraw and calls `settle(answer, None)` or `(None,
error)` once, unless withdrawn first; the answer it settles with is checked
(V8) already. When such a listener comes first (the host's fan-out, the common
case), the service keeps the question as a record (asking.py) instead of
awaiting the chain; reached through an earlier listener's `next()`, it is
awaited like any other (`awaiting`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.vocabulary import Answer, Wait

from .errors import UserQuestionError
from .identity import AgentIdentity, AgentLike
from .question import Question
from .signal import AbortSignal


@dataclass(frozen=True, eq=False, slots=True)
class UserQuestionRequest:
    """V5: what a caller asks. `agent` is the live calling agent object, if any."""

    questions: Sequence[Question]
    agent: AgentLike | None = None
    signal: AbortSignal | None = None
    wait: Wait | None = None
    # Front doors read this to address the right client; the core never interprets it.
    session_id: str | None = None
    extra: Mapping[str, object] = field(default_factory=dict)

    def with_wait(self, signal: AbortSignal, wait: Wait) -> UserQuestionRequest:
        return replace(self, signal=signal, wait=wait)


NextListener = Callable[[], Awaitable[Answer]]
Listener = Callable[[UserQuestionRequest, NextListener], Awaitable[Answer]]
Disposer = Callable[[], None]
Settle = Callable[[Answer | None, Exception | None], None]
SoonAsk = Callable[[UserQuestionRequest, NextListener, Settle], Callable[[], None]]
SoonStart = Callable[[UserQuestionRequest, Settle], Callable[[], None]]
T = TypeVar("T")


async def await_callback(
    start: Callable[[Callable[[T | None, Exception | None], None]], Disposer],
) -> T:
    """Await what `start(settle)` settles, on one future; cancelling the await withdraws it
    (the disposer `start` returned) — a callback-driven wait seen as a coroutine."""
    future: asyncio.Future[T | None] = asyncio.get_running_loop().create_future()

    def settle(result: T | None, error: Exception | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    withdraw = start(settle)
    try:
        result = await future
    finally:
        if not future.done() or future.cancelled():
            withdraw()
    assert result is not None
    return result


def awaiting(soon: SoonAsk) -> Listener:
    """A soon listener as an async one, for when it is reached through `next()`."""

    async def listener(request: UserQuestionRequest, next_: NextListener) -> Answer:
        return await await_callback(lambda settle: soon(request, next_, settle))

    return listener


@dataclass(eq=False, slots=True)
class _Entry:
    listener: Listener
    agent_id: str | None
    soon: SoonAsk | None = None


class UserQuestionWaterfall:
    def __init__(self, identity: AgentIdentity) -> None:
        self._identity = identity
        self._entries: list[_Entry] = []
        self._scoped = 0  # how many entries are scoped to an agent (W3)

    def register(
        self, listener: Listener, *, agent_id: str | None = None, prepend: bool = False
    ) -> Disposer:
        """W2/W3: add a listener (first with `prepend`); the disposer is idempotent."""
        return self._add(_Entry(listener, agent_id), prepend)

    def register_soon(
        self, soon: SoonAsk, *, agent_id: str | None = None, prepend: bool = False
    ) -> Disposer:
        """`register` for a listener that asks with a callback (module docstring)."""
        return self._add(_Entry(awaiting(soon), agent_id, soon), prepend)

    def _add(self, entry: _Entry, prepend: bool) -> Disposer:
        if prepend:
            self._entries.insert(0, entry)
        else:
            self._entries.append(entry)
        self._scoped += entry.agent_id is not None

        def dispose() -> None:
            if entry in self._entries:
                self._entries.remove(entry)
                self._scoped -= entry.agent_id is not None

        return dispose

    def _chain(self, request: UserQuestionRequest) -> list[_Entry]:
        """W3: global listeners always; scoped ones when the caller descends from their agent."""
        if self._scoped == 0:  # the host's case: no caller's lineage to look up
            return self._entries.copy()
        lineage: Sequence[str] = ()
        if request.agent is not None:
            lineage = self._identity.lineage(request.agent.id)
        return [e for e in self._entries if e.agent_id is None or e.agent_id in lineage]

    def listeners_for(self, request: UserQuestionRequest) -> list[Listener]:
        return [e.listener for e in self._chain(request)]

    def first_soon(self, request: UserQuestionRequest) -> SoonStart | None:
        """The chain's first listener when it asks with a callback, as `start(request,
        settle)`: the listeners are fixed now (W1), `next()` goes on down the chain."""
        chain = self._chain(request)
        soon = chain[0].soon if chain else None
        if soon is None:
            return None
        if len(chain) == 1:  # the common case: nobody after it, and nothing to hold per ask

            def start_alone(request: UserQuestionRequest, settle: Settle) -> Callable[[], None]:
                return soon(request, _no_provider, settle)

            return start_alone
        listeners = [e.listener for e in chain]

        def start(request: UserQuestionRequest, settle: Settle) -> Callable[[], None]:
            return soon(request, _Rest(listeners, request), settle)

        return start

    async def dispatch(self, request: UserQuestionRequest) -> Answer:
        """W1: run the chain; the listeners are fixed when dispatch starts."""
        return await _call(self.listeners_for(request), request, 0)


class _Rest:
    """`next()` of a soon listener first in its chain: the listeners after it (a record,
    not a closure, as it lives as long as the question)."""

    __slots__ = ("_chain", "_request")

    def __init__(self, chain: list[Listener], request: UserQuestionRequest) -> None:
        self._chain, self._request = chain, request

    def __call__(self) -> Awaitable[Answer]:
        return _call(self._chain, self._request, 1)


async def _no_provider() -> Answer:
    """`next()` past the last listener (W4)."""
    raise UserQuestionError.of(ErrorCode.NO_PROVIDER)


async def _call(chain: list[Listener], request: UserQuestionRequest, index: int) -> Answer:
    if index >= len(chain):
        return await _no_provider()
    return await chain[index](request, lambda: _call(chain, request, index + 1))
