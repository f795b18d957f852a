"""What the test client hands back for work in flight: a held claim, a background prompt."""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio


@dataclass
class Claim:
    """A held claim on a timed wait (`userQuestions/attachWait`)."""

    remaining_ms: int | None
    _scope: anyio.CancelScope
    ended: anyio.Event = field(default_factory=anyio.Event)

    @property
    def held(self) -> bool:
        return self.remaining_ms is not None and not self.ended.is_set()

    def release(self) -> None:
        """Cancel the attachWait request: the server gets `$/cancelRequest` (C4)."""
        self._scope.cancel()


@dataclass
class PromptRun:
    """A `session/prompt` sent with `start_prompt`; `result()` waits for its stopReason."""

    done: anyio.Event = field(default_factory=anyio.Event)
    stop_reason: str | None = None
    error: Exception | None = None

    async def result(self, timeout: float = 10) -> str:
        with anyio.fail_after(timeout):
            await self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.stop_reason is not None
        return self.stop_reason
