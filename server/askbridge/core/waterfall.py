"""The `user-questions/request` waterfall (behavior.md W1–W4).

Listeners are async callables `(request, next) -> Answer`. Returning an answer
claims the request; awaiting `next()` hands it to the following listener; past
the last one `next()` fails with NO_PROVIDER. A listener may be scoped to an
agent: it then sees only requests from that agent or its descendants.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace

from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.vocabulary import Answer, QuestionItem, Wait

from .errors import UserQuestionError
from .identity import AgentIdentity, AgentLike
from .signal import AbortSignal


@dataclass(frozen=True, eq=False)
class UserQuestionRequest:
    """V5: what a caller asks. `agent` is the live calling agent object, if any."""

    questions: Sequence[QuestionItem]
    agent: AgentLike | None = None
    signal: AbortSignal | None = None
    wait: Wait | None = None
    # Front doors read this to address the right client; the core never interprets it.
    session_id: str | None = None
    extra: dict[str, object] = field(default_factory=dict)

    def with_wait(self, signal: AbortSignal, wait: Wait) -> UserQuestionRequest:
        return replace(self, signal=signal, wait=wait)


NextListener = Callable[[], Awaitable[Answer]]
Listener = Callable[[UserQuestionRequest, NextListener], Awaitable[Answer]]
Disposer = Callable[[], None]


@dataclass(eq=False)
class _Entry:
    listener: Listener
    agent_id: str | None


class UserQuestionWaterfall:
    def __init__(self, identity: AgentIdentity) -> None:
        self._identity = identity
        self._entries: list[_Entry] = []

    def register(
        self, listener: Listener, *, agent_id: str | None = None, prepend: bool = False
    ) -> Disposer:
        """W2/W3: add a listener (first with `prepend`); the disposer is idempotent."""
        entry = _Entry(listener, agent_id)
        if prepend:
            self._entries.insert(0, entry)
        else:
            self._entries.append(entry)

        def dispose() -> None:
            if entry in self._entries:
                self._entries.remove(entry)

        return dispose

    def listeners_for(self, request: UserQuestionRequest) -> list[Listener]:
        """W3: global listeners always; scoped ones when the caller descends from their agent."""
        lineage: Sequence[str] = ()
        if request.agent is not None:
            lineage = self._identity.lineage(request.agent.id)
        return [e.listener for e in self._entries if e.agent_id is None or e.agent_id in lineage]

    async def dispatch(self, request: UserQuestionRequest) -> Answer:
        """W1: run the chain; the listeners are fixed when dispatch starts."""
        chain = self.listeners_for(request)

        async def call(index: int) -> Answer:
            if index >= len(chain):
                raise UserQuestionError.of(ErrorCode.NO_PROVIDER)
            return await chain[index](request, lambda: call(index + 1))

        return await call(0)
