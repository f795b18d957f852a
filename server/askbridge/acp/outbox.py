"""Server → client notifications of the ACP door, written in the order they were posted.

Host listeners are synchronous (`on_update`, `on_view`) while the SDK's
`Connection.send_notification` is a coroutine, so notifications go through
this queue, drained by one task the door's task group owns. Order on the wire
is the order of `post` calls. A request (an `_askbridge/ask`, an elicitation)
or a response that must follow earlier notifications (`session/load` answers
after its replay; `session/prompt` after the turn's updates) first awaits
`flush()`, which returns once everything posted before it has been written.

When the client is gone, sends fail and are dropped: nothing waits on them.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

log = logging.getLogger("askbridge.acp")


class NotificationSender(Protocol):
    async def send_notification(self, method: str, params: Any = None) -> None: ...


@dataclass(frozen=True)
class _Notification:
    method: str
    params: dict[str, Any]


@dataclass(frozen=True)
class _Marker:
    written: anyio.Event


class Outbox:
    def __init__(self, conn: NotificationSender) -> None:
        self._conn = conn
        self._send, self._receive = anyio.create_memory_object_stream[_Notification | _Marker](
            math.inf
        )
        self._closed = False

    def post(self, method: str, params: dict[str, Any]) -> None:
        """Queue a notification; never blocks, never fails (dropped once closed)."""
        if not self._closed:
            self._send.send_nowait(_Notification(method, params))

    async def flush(self) -> None:
        """Return once every notification posted before this call has been written."""
        if self._closed:
            return
        marker = _Marker(anyio.Event())
        self._send.send_nowait(marker)
        await marker.written.wait()

    async def run(self) -> None:
        """Write queued notifications until cancelled; then release every flush waiter."""
        try:
            async for item in self._receive:
                if isinstance(item, _Marker):
                    item.written.set()
                    continue
                try:
                    await self._conn.send_notification(item.method, item.params)
                except (ConnectionError, OSError, RuntimeError) as exc:
                    log.debug("dropped %s: %s", item.method, exc)  # the client is gone
        finally:
            self.close()

    def close(self) -> None:
        """Stop accepting notifications; wake anyone waiting in `flush` (never hang)."""
        self._closed = True
        while True:
            try:
                item = self._receive.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                break
            if isinstance(item, _Marker):
                item.written.set()
