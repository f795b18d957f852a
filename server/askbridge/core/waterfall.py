"""The `user-questions/request` waterfall (behavior.md W1–W4).

A listener asks with a callback: `listener(request, next, settle)` returns a
withdraw and calls `settle(answer, None)` or `settle(None, error)` once, unless
withdrawn first. Settling with an answer claims the request; calling
`next(settle)` hands it to the following listener (and returns that one's
withdraw); past the last one `next` settles NO_PROVIDER. A listener settles
with an answer it has checked (V8, `check_answer`): the host's fan-out checks
each client's answer to tell a client's failure from the question's end, so the
core does not check it again. A listener may be scoped to an agent: it then
sees only requests from that agent or its descendants.

No coroutine, task or cancel scope per ask: an ask is a record (asking.py) that
this chain settles. `await_callback` turns a callback wait into one future, for
a caller that must await (the service's `ask`, a door's fallback awaiting the
rest of the chain).
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


Disposer = Callable[[], None]
Withdraw = Callable[[], None]
Settle = Callable[[Answer | None, Exception | None], None]
Next = Callable[[Settle], Withdraw]
Listener = Callable[[UserQuestionRequest, Next, Settle], Withdraw]
# The rest of the chain as a coroutine, for a door's fallback (host/asking/clients.py).
NextListener = Callable[[], Awaitable[Answer]]
T = TypeVar("T")


async def await_callback(
    start: Callable[[Callable[[T | None, Exception | None], None]], Withdraw],
) -> T:
    """Await what `start(settle)` settles, on one future; cancelling the await withdraws it
    (the withdraw `start` returned) — a callback-driven wait seen as a coroutine."""
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


def awaited(next_: Next) -> NextListener:
    """`next` as a coroutine function: for a door's fallback, which awaits the rest."""
    return lambda: await_callback(next_)


@dataclass(eq=False, slots=True)
class _Entry:
    listener: Listener
    agent_id: str | None


class UserQuestionWaterfall:
    def __init__(self, identity: AgentIdentity) -> None:
        self._identity = identity
        self._entries: list[_Entry] = []
        self._scoped = 0  # how many entries are scoped to an agent (W3)

    def register(
        self, listener: Listener, *, agent_id: str | None = None, prepend: bool = False
    ) -> Disposer:
        """W2/W3: add a listener (first with `prepend`); the disposer is idempotent."""
        entry = _Entry(listener, agent_id)
        if prepend:
            self._entries.insert(0, entry)
        else:
            self._entries.append(entry)
        self._scoped += agent_id is not None

        def dispose() -> None:
            if entry in self._entries:
                self._entries.remove(entry)
                self._scoped -= entry.agent_id is not None

        return dispose

    def _chain(self, request: UserQuestionRequest) -> list[Listener]:
        """W3: global listeners always; scoped ones when the caller descends from their agent."""
        if self._scoped == 0:  # the host's case: no caller's lineage to look up
            return [e.listener for e in self._entries]
        lineage: Sequence[str] = ()
        if request.agent is not None:
            lineage = self._identity.lineage(request.agent.id)
        return [e.listener for e in self._entries if e.agent_id is None or e.agent_id in lineage]

    def start(self, request: UserQuestionRequest, settle: Settle) -> Withdraw:
        """W1: ask the chain's first listener; the listeners are fixed now. A listener that
        raises instead of settling has failed with what it raised."""
        chain = self._chain(request)
        if len(chain) == 1:  # the common case: nobody after it, and nothing to hold per ask
            return _ask(chain[0], request, _no_provider, settle)
        return _Rest(chain, request, 0)(settle)


def _nothing() -> None:
    """The withdraw of a listener that has settled already."""


def _no_provider(settle: Settle) -> Withdraw:
    """`next` past the last listener (W1)."""
    settle(None, UserQuestionError.of(ErrorCode.NO_PROVIDER))
    return _nothing


def _ask(listener: Listener, request: UserQuestionRequest, next_: Next, settle: Settle) -> Withdraw:
    try:
        return listener(request, next_, settle)
    except Exception as exc:  # it failed before it could ask: as if it settled the error
        settle(None, exc)
        return _nothing


class _Rest:
    """`next` of a listener: the listeners after it (a record, not a closure, as it lives as
    long as the question)."""

    __slots__ = ("_chain", "_index", "_request")

    def __init__(self, chain: list[Listener], request: UserQuestionRequest, index: int) -> None:
        self._chain, self._request, self._index = chain, request, index

    def __call__(self, settle: Settle) -> Withdraw:
        index = self._index
        if index >= len(self._chain):
            return _no_provider(settle)
        rest = _Rest(self._chain, self._request, index + 1)
        return _ask(self._chain[index], self._request, rest, settle)
