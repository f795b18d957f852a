"""The page's Web Push endpoints (R7), under `/api/` and so behind the same session
checks as every other API call (app.py `admit`, S14: cookie and page key):

- `GET /api/push/key` → `{publicKey}`: the VAPID public key the page subscribes with
  (made on the first call, push_keys.py);
- `POST /api/push/subscribe` with the browser's `PushSubscription.toJSON()` →
  `{ok: true}`; 400 BAD_SUBSCRIPTION saying why (push.py `parse_subscription`);
- `POST /api/push/unsubscribe {endpoint}` → `{ok: true, removed}`.

A body is at most MAX_BODY bytes (admitted as such before it is read). Errors are
`{error: {code, message}}` like the rest of the API.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from .messages import Request, Response, json_response
from .push_keys import VapidKeyError, VapidKeys
from .push_subscriptions import BadSubscription, SubscriptionStore, parse_subscription

logger = logging.getLogger("askbridge.web")

PREFIX = "/api/push/"
MAX_BODY = 4096  # a subscription is ~500 bytes; FCM's and Mozilla's endpoints are the longest
Route = Callable[[Request], Awaitable[Response]]


def _error(status: int, code: str, message: str) -> Response:
    return json_response({"error": {"code": code, "message": message}}, status)


class PushApi:
    def __init__(
        self,
        keys: Callable[[], Awaitable[VapidKeys]],
        subscriptions: SubscriptionStore,
        *,
        allow_loopback_http: bool = False,
    ) -> None:
        self._keys = keys
        self.subscriptions = subscriptions
        self.allow_loopback_http = allow_loopback_http
        self._lock = anyio.Lock()
        self._loaded: VapidKeys | None = None

    async def keys(self) -> VapidKeys:
        """The door's pair, loaded (or made) once."""
        async with self._lock:
            if self._loaded is None:
                self._loaded = await self._keys()
            return self._loaded

    def routes(self) -> list[tuple[str, re.Pattern[str], Route]]:
        return [
            ("GET", re.compile("/api/push/key"), self.public_key),
            ("POST", re.compile("/api/push/subscribe"), self.subscribe),
            ("POST", re.compile("/api/push/unsubscribe"), self.unsubscribe),
        ]

    async def public_key(self, request: Request) -> Response:
        try:
            keys = await self.keys()
        except VapidKeyError as exc:
            logger.warning("push: %s", exc)
            return _error(503, "PUSH_UNAVAILABLE", str(exc))
        return json_response({"publicKey": keys.public_key})

    async def subscribe(self, request: Request) -> Response:
        body = _json(request)
        if isinstance(body, Response):
            return body
        try:
            # The key check loads cryptography: in a thread, as everything of push does.
            sub = await anyio.to_thread.run_sync(
                lambda: parse_subscription(body, allow_loopback_http=self.allow_loopback_http)
            )
        except BadSubscription as exc:
            return _error(400, "BAD_SUBSCRIPTION", str(exc))
        await self.subscriptions.add(sub)
        return json_response({"ok": True})

    async def unsubscribe(self, request: Request) -> Response:
        body = _json(request)
        if isinstance(body, Response):
            return body
        endpoint = body.get("endpoint")
        if not isinstance(endpoint, str):
            return _error(400, "BAD_REQUEST", "endpoint must be the subscription's URL")
        removed = await self.subscriptions.remove(endpoint)
        return json_response({"ok": True, "removed": removed})


def _json(request: Request) -> dict[str, Any] | Response:
    try:
        body = request.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return _error(400, "BAD_REQUEST", "the body must be a JSON object")
    return body
