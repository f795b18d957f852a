"""`ServerRecord`: what the test client has received from the server, and waiting for more.

Every notification (`session/update`, `userQuestions/didChange`, `$/progress`),
every question request and every request the server withdrew lands here, and
`wait_for(predicate)` wakes after each one. Separate from `AskbridgeClient`
(client.py), which starts the server and sends it requests, and from
`QuestionAnswerer` (answering.py), which replies to the server's questions:
this part only records, so a test reads one list per kind of message
(`notifications`, `asks`, `views`, `withdrawn`, `updates()`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from askbridge.jsonrpc import Connection
from askbridge.protocol.views import apply_view_changes, empty_view


class ServerRecord:
    def __init__(self, conn: Connection) -> None:
        self.notifications: list[tuple[str, Any]] = []
        self.asks: list[dict[str, Any]] = []
        self.views: dict[str, dict[str, Any]] = {}
        # (method, params) of every server request the server withdrew ($/cancelRequest),
        # or that was still open when the connection ended.
        self.withdrawn: list[tuple[str, Any]] = []
        self._changed = anyio.Event()
        # The first `$/progress` value of each token (a claim's frame, see client.claim).
        self._progress: dict[Any, dict[str, Any]] = {}
        conn.on_request("window/workDoneProgress/create", self._on_progress_create)
        for method in ("session/update", "userQuestions/didChange", "$/progress"):
            conn.on_notification(method, self._recorder(method))

    def _recorder(self, method: str) -> Callable[[Any], Awaitable[None]]:
        async def record(params: Any) -> None:
            self.notifications.append((method, params))
            if method == "userQuestions/didChange":
                sid = params["sessionId"]
                self.views[sid] = apply_view_changes(
                    self.views.get(sid, empty_view()), params["changes"]
                )
            elif method == "$/progress" and isinstance(params, dict):
                value = params.get("value")
                if isinstance(value, dict):
                    self._progress.setdefault(params.get("token"), value)
            self._notify_change()

        return record

    async def _on_progress_create(self, params: Any) -> None:
        self.notifications.append(("window/workDoneProgress/create", params))
        return None

    def _withdrawn(self, method: str, params: Any) -> None:
        self.withdrawn.append((method, params))
        self._notify_change()

    def _notify_change(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_changed(self) -> None:
        await self._changed.wait()

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 10) -> Any:
        """Wait until `predicate()` is truthy (checked after every message); returns its value."""
        with anyio.fail_after(timeout):
            while not (value := predicate()):
                await self.wait_changed()
            return value

    def updates(
        self, session_id: str | None = None, kind: str | None = None
    ) -> list[dict[str, Any]]:
        """The `session/update` updates received, optionally of one session and kind."""
        return [
            p["update"]
            for m, p in self.notifications
            if m == "session/update"
            and (session_id is None or p["sessionId"] == session_id)
            and (kind is None or p["update"].get("sessionUpdate") == kind)
        ]
