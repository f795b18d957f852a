"""`_askbridge/attachWait` / `releaseWait`: this client's claims on timed waits (C1–C5).

ACP has no progress tokens, so a claim is not tied to an open request as in
the LSP door: `attach` takes the claim and returns the wait's remaining time,
and the claim stays held until `release`, the end of the wait, or the client
disconnecting (`client_gone`). One claim per client per wait: attaching again
returns the current remaining time and adds no second claim.
"""

from __future__ import annotations

from askbridge.core import AbortSignal, ClaimStream, UserQuestionService


class ClientClaims:
    def __init__(self, service: UserQuestionService, client_gone: AbortSignal) -> None:
        self._service = service
        self._client_gone = client_gone
        self._held: dict[tuple[str, str], ClaimStream] = {}

    def _prune(self) -> None:
        for key, stream in list(self._held.items()):
            if not stream.claimed:  # released elsewhere, or its wait ended
                del self._held[key]

    async def attach(self, agent_id: str, call_id: str) -> int | None:
        """The wait's remaining milliseconds with this client's claim held, or None (no wait)."""
        self._prune()
        key = (agent_id, call_id)
        if key in self._held:
            wait = self._service.find_wait(agent_id, call_id)
            return wait.remaining_ms() if wait is not None else None
        stream = self._service.attach_wait(agent_id, call_id, self._client_gone)
        if not stream.claimed:
            return None  # C1, C2: no wait, already ended, or expired now
        self._held[key] = stream
        frame = await anext(stream)  # C3: exactly one frame, available at once
        return frame.remaining_ms

    def release(self, agent_id: str, call_id: str) -> bool:
        """True when this client held a claim on the wait and has now let it go (TW5)."""
        stream = self._held.pop((agent_id, call_id), None)
        if stream is None or not stream.claimed:
            return False
        stream.release()
        return True

    @property
    def held(self) -> int:
        self._prune()
        return len(self._held)
