"""Web Push from the web door (R7): RFC 8030 delivery, VAPID (RFC 8292), aes128gcm
(RFC 8291) — to every browser that subscribed, when a question waits.

What a push carries: one of MARKERS, encrypted, and nothing else. R7: a push says
only that something waits; the service worker (static/sw.js) shows "a question
waits" and the page fetches the rest over its authenticated API. No question
text, title or session name is ever an argument here, so none can leak.

Subscriptions: the PushSubscription JSON a browser gives (`endpoint`,
`keys.p256dh`, `keys.auth`), checked by `parse_subscription` (https only; plain
http to a loopback address only where a caller allows it, which tests do; sizes
and key lengths bounded), and kept behind `SubscriptionStore`, three async
calls a store implements; `MemorySubscriptions` keeps them in the door's memory
until then (a door restart forgets them; the page subscribes again on load).

Sending (`PushSender.send`): each subscription gets a POST with a fresh VAPID
JWT (aud = the endpoint's origin, exp 12 h ahead, sub = the contact given) and
the marker encrypted to its keys. 404 and 410 mean the subscription is gone: it
is dropped. 429, 5xx and network errors are retried, at most ATTEMPTS times in
all, after 1 s, 2 s, 4 s (or the Retry-After seconds, up to MAX_BACKOFF_MS), on
the injected clock; any other status fails that subscription for this push only.
Everything is asynchronous (httpx), so a slow push service never stalls the
door's event loop; the encryption and signing are well under a millisecond.

Why not pywebpush itself: it is glue over the two libraries used here (py-vapid
signs, http-ece encrypts, both from the same web-push-libs project), and it
imports both `requests` and `aiohttp` at load: 0.55 s and +40 MiB RSS measured
on this machine, against 0.17 s and +30 MiB for py-vapid, http-ece and httpx
(already a dependency), whose async client sends without a thread. All of them
load at the first push, never at start-up (tests/web/test_web_push_page.py).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio

from askbridge.core.clock import Clock, MonotonicClock

from .push_keys import VapidKeys, b64url_decode
from .push_subscriptions import PushSubscription, SubscriptionStore

logger = logging.getLogger("askbridge.web")

MARKERS = {"question": b'{"waits":"question"}', "escalation": b'{"waits":"escalation"}'}
ATTEMPTS = 4
FIRST_BACKOFF_MS = 1000
MAX_BACKOFF_MS = 60_000
TIMEOUT_S = 10.0
TTL_S = 3600  # a phone that is off for an hour still hears of it; older news is stale
JWT_LIFE_S = 12 * 3600  # RFC 8292 §2: at most 24 h
CONCURRENCY = 8
# RFC 8030 §5.4: an undelivered push with the same Topic is replaced, so a phone that
# comes back online shows one "a question waits", not one per question.
TOPIC = "askbridge-waits"
# What py-vapid signs (its own check, stricter than RFC 8292's "a mailto: or https: URI").
SUBJECT = re.compile(r"(mailto:[^@\s]+@|https://)(localhost|[\w-]+(\.[\w-]+)+)")


@dataclass
class PushReport:
    delivered: list[str] = field(default_factory=list)  # endpoints
    dropped: list[str] = field(default_factory=list)  # gone (404, 410): removed
    failed: dict[str, str] = field(default_factory=dict)  # endpoint -> why, in one line


class PushSender:
    """Sends MARKERS to a store's subscriptions (see the module doc)."""

    def __init__(
        self,
        keys: VapidKeys,
        subject: str,
        *,
        clock: Clock | None = None,
        wall: Callable[[], float] = time.time,
        allow_loopback_http: bool = False,
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        if not SUBJECT.fullmatch(subject):
            raise ValueError(
                f"the VAPID subject {subject!r} is not mailto:ADDRESS or https://HOST "
                "(RFC 8292 §2.1)"
            )
        self.keys, self.subject = keys, subject
        self.clock = clock or MonotonicClock()
        self.wall = wall
        self.allow_loopback_http = allow_loopback_http
        self.timeout_s = timeout_s
        self._signer: Any = None
        self._tls: Any = None

    async def send(self, store: SubscriptionStore, kind: str = "question") -> PushReport:
        """One push of MARKERS[kind] to every subscription in `store`, all at once."""
        marker = MARKERS[kind]
        report = PushReport()
        subscriptions = await store.all()
        if not subscriptions:
            return report
        # Loading the libraries, the signer and the CA certificates, and even making a
        # client, each take tens of milliseconds: in a thread, so the loop goes on.
        if self._signer is None:
            try:
                self._signer, self._tls = await anyio.to_thread.run_sync(_load, self.keys)
            except Exception as exc:  # a damaged key fails this push, never the door
                logger.exception("push: cannot load the VAPID key")
                report.failed = {s.endpoint: f"cannot sign: {exc}" for s in subscriptions}
                return report
        client = await anyio.to_thread.run_sync(self._client)
        limiter = anyio.CapacityLimiter(CONCURRENCY)
        async with client, anyio.create_task_group() as tg:
            for sub in subscriptions:
                tg.start_soon(self._deliver, client, limiter, store, sub, marker, report)
        return report

    async def _deliver(
        self,
        client: Any,
        limiter: anyio.CapacityLimiter,
        store: SubscriptionStore,
        sub: PushSubscription,
        marker: bytes,
        report: PushReport,
    ) -> None:
        import httpx

        delay_ms = float(FIRST_BACKOFF_MS)
        why = ""
        for attempt in range(1, ATTEMPTS + 1):
            retry_after: float | None = None
            try:
                body, headers = self._body(sub, marker), self._headers(sub)
            except Exception as exc:  # a bug of ours or theirs ends this push, never the door
                logger.exception("push to %s: cannot sign or encrypt", _origin(sub))
                report.failed[sub.endpoint] = f"cannot sign or encrypt: {exc}"
                return
            try:
                async with limiter:
                    response = await client.post(sub.endpoint, content=body, headers=headers)
                status = response.status_code
            except httpx.HTTPError as exc:
                status, why = 0, f"{type(exc).__name__}: {exc}"
            if status in (200, 201, 202):
                report.delivered.append(sub.endpoint)
                return
            if status in (404, 410):
                await store.remove(sub.endpoint)
                report.dropped.append(sub.endpoint)
                logger.info("push subscription %s is gone (%d): dropped", _origin(sub), status)
                return
            if status:
                why = f"the push service answered {status}"
                retry_after = _seconds(response.headers.get("retry-after"))
            if status and status != 429 and status < 500:
                break
            if attempt < ATTEMPTS:
                wait_ms = delay_ms if retry_after is None else retry_after * 1000
                await self._sleep(min(wait_ms, MAX_BACKOFF_MS))
                delay_ms *= 2
        report.failed[sub.endpoint] = why
        logger.warning("push to %s failed: %s", _origin(sub), why)

    def _client(self) -> Any:
        import httpx

        return httpx.AsyncClient(verify=self._tls, timeout=self.timeout_s, follow_redirects=False)

    def _headers(self, sub: PushSubscription) -> dict[str, str]:
        claims = {"aud": _origin(sub), "exp": int(self.wall()) + JWT_LIFE_S, "sub": self.subject}
        headers: dict[str, str] = self._signer.sign(claims)  # {"Authorization": "vapid t=…,k=…"}
        headers.update(
            {
                "TTL": str(TTL_S),
                "Urgency": "high",
                "Topic": TOPIC,
                "Content-Encoding": "aes128gcm",
                "Content-Type": "application/octet-stream",
            }
        )
        return headers

    def _body(self, sub: PushSubscription, marker: bytes) -> bytes:
        """RFC 8291: the marker encrypted to the subscription's key and auth secret,
        from a key pair made for this message alone."""
        import http_ece
        from cryptography.hazmat.primitives.asymmetric import ec

        ephemeral = ec.generate_private_key(ec.SECP256R1())
        body: bytes = http_ece.encrypt(
            marker,
            private_key=ephemeral,
            dh=b64url_decode(sub.p256dh),
            auth_secret=b64url_decode(sub.auth),
            version="aes128gcm",
        )
        return body

    async def _sleep(self, ms: float) -> None:
        due = anyio.Event()
        timer = self.clock.call_at(self.clock.now() + ms, due.set)
        try:
            await due.wait()
        finally:
            timer.cancel()


def _load(keys: VapidKeys) -> tuple[Any, Any]:
    """The signer and the TLS context (the CA certificates httpx trusts by default)."""
    import ssl

    import certifi
    import http_ece  # noqa: F401
    import httpx  # noqa: F401

    return keys.signer(), ssl.create_default_context(cafile=certifi.where())


def _origin(sub: PushSubscription) -> str:
    url = urlsplit(sub.endpoint)
    return f"{url.scheme}://{url.netloc}"


def _seconds(value: str | None) -> float | None:
    """Retry-After in seconds (its HTTP-date form is left to the backoff)."""
    if value is None or not value.strip().isdigit():
        return None
    return float(value.strip())
