"""R7: Web Push as it leaves the door (server/askbridge/web/push.py), seen by a push
service stand-in (push_service.py) that checks the VAPID JWT and decrypts the body
per RFC 8291 with the subscription's own keys: what a browser would get.

Backoff is on the injected clock (core/clock.py ManualClock): a test moves it, so no
retry is slept through; only the slow-service test waits in real time, which is what
it measures.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from push_service import Browser, PushService

from askbridge.core.clock import ManualClock
from askbridge.web.push import MARKERS, PushSender
from askbridge.web.push_keys import VapidKeys, make_vapid_pem, vapid_keys_of
from askbridge.web.push_subscriptions import MemorySubscriptions, parse_subscription

SUBJECT = "mailto:ops@example.org"
QUESTION = "Deploy the release to production now?"


class RecordingClock(ManualClock):
    """The manual clock, telling the test each wait the sender starts."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float] = []
        self._armed = asyncio.Event()

    def call_at(self, when_ms: float, callback: Callable[[], None]) -> Any:
        self.waits.append(when_ms - self.now())
        self._armed.set()
        return super().call_at(when_ms, callback)

    async def armed(self, count: int) -> None:
        while len(self.waits) < count:
            self._armed.clear()
            await self._armed.wait()


@pytest.fixture
async def service() -> AsyncIterator[PushService]:
    service = PushService().start()
    try:
        yield service
    finally:
        service.stop()


@pytest.fixture(scope="module")
def keys() -> VapidKeys:
    return vapid_keys_of(make_vapid_pem())


def sender(keys: VapidKeys, clock: ManualClock | None = None, **kw: Any) -> PushSender:
    return PushSender(keys, SUBJECT, clock=clock or ManualClock(), allow_loopback_http=True, **kw)


async def store_of(*browsers: Browser) -> MemorySubscriptions:
    store = MemorySubscriptions()
    for browser in browsers:
        await store.add(parse_subscription(browser.subscription, allow_loopback_http=True))
    return store


@pytest.mark.parametrize("kind", ["question", "escalation"])
async def test_R7_a_push_arrives_decrypts_and_is_the_marker_alone(
    service: PushService, keys: VapidKeys, kind: str
) -> None:
    """Two browsers each get one push, decrypted with their own key and secret: the
    marker and nothing else; headers as RFC 8030 wants them; the JWT as RFC 8292."""
    a, b = service.subscribe(keys.public_key), service.subscribe(keys.public_key)
    report = await sender(keys).send(await store_of(a, b), kind)
    assert sorted(report.delivered) == sorted([a.endpoint, b.endpoint]), service.refused
    assert not report.failed and not report.dropped
    assert sorted(d.browser for d in service.received) == sorted([a.id, b.id])
    for delivery in service.received:
        assert delivery.plaintext == MARKERS[kind]
        assert json.loads(delivery.plaintext) == {"waits": kind}
        assert QUESTION.encode() not in delivery.body + delivery.plaintext
        assert delivery.headers["ttl"] == "3600"
        assert delivery.headers["urgency"] == "high"
        assert delivery.headers["topic"] == "askbridge-waits"
        assert delivery.claims["aud"] == service.origin
        assert delivery.claims["sub"] == SUBJECT
        assert 11 * 3600 < delivery.claims["exp"] - time.time() <= 12 * 3600
    # Each push has its own one-time key: the two bodies share no header.
    first, second = (d.body[:86] for d in service.received)
    assert first != second


async def test_R7_a_push_signed_with_another_key_is_refused_and_nothing_arrives(
    service: PushService, keys: VapidKeys
) -> None:
    """A subscription is bound to the key the page subscribed with (RFC 8292 §4.2):
    a door whose key was replaced gets 403, which is a failure, not a retry."""
    browser = service.subscribe(keys.public_key)
    other = vapid_keys_of(make_vapid_pem())
    clock = RecordingClock()
    report = await sender(other, clock).send(await store_of(browser))
    assert report.failed == {browser.endpoint: "the push service answered 403"}
    assert service.received == [] and clock.waits == []
    assert service.refused == [(403, "k is not the key this subscription was made with")]


def forged(browser: Browser, keys: VapidKeys, origin: str, how: str) -> dict[str, str]:
    """Headers of a push the stand-in must refuse, each wrong in one way (or none)."""
    from py_vapid import Vapid02

    signer = keys.signer()
    claims: dict[str, Any] = {"aud": origin, "exp": int(time.time()) + 3600, "sub": SUBJECT}
    if how == "aud":
        claims["aud"] = "https://fcm.googleapis.com"
    if how == "exp-past":
        claims["exp"] = int(time.time()) - 10
    if how == "exp-25h":
        claims["exp"] = int(time.time()) + 25 * 3600
    if how == "sub":
        claims["sub"] = "ops"
        signer.conf["no-strict"] = True
    if how == "signature":  # same k, signed by someone else's key
        signer = Vapid02(ec.generate_private_key(ec.SECP256R1()))
    auth = signer.sign(claims)["Authorization"]
    if how == "signature":
        auth = auth.rsplit("k=", 1)[0] + f"k={keys.public_key}"
    return {"Authorization": auth, "TTL": "60"}


@pytest.mark.parametrize(
    ("how", "status", "why"),
    [
        ("signature", 401, "the JWT's signature does not verify against k"),
        ("aud", 401, "aud 'https://fcm.googleapis.com' is not"),
        ("exp-past", 401, "is not within the next 24 h"),
        ("exp-25h", 401, "is not within the next 24 h"),
        ("sub", 401, "sub 'ops' is not a mailto: or https: URL"),
    ],
)
async def test_R7_the_stand_in_refuses_a_forged_or_stale_vapid_jwt(
    service: PushService, keys: VapidKeys, how: str, status: int, why: str
) -> None:
    """What the stand-in checks, shown failing: a sender that got any of these wrong
    would not pass the tests above."""
    browser = service.subscribe(keys.public_key)
    headers = forged(browser, keys, service.origin, how)
    async with httpx.AsyncClient() as client:
        r = await client.post(browser.endpoint, headers=headers)
    assert r.status_code == status
    assert service.refused[0][0] == status and why in service.refused[0][1]
    assert service.received == []


async def test_R7_the_stand_in_refuses_a_body_encrypted_for_another_browser(
    service: PushService, keys: VapidKeys
) -> None:
    """RFC 8291: a body made for browser A does not decrypt with B's keys (400), while
    the same body reaches A."""
    import http_ece

    a, b = service.subscribe(keys.public_key), service.subscribe(keys.public_key)
    body = http_ece.encrypt(
        b"x",
        private_key=ec.generate_private_key(ec.SECP256R1()),
        dh=a.public_key,
        auth_secret=a.auth,
        version="aes128gcm",
    )
    async with httpx.AsyncClient() as client:
        for browser in (b, a):
            headers = {
                **forged(browser, keys, service.origin, "none"),
                "Content-Encoding": "aes128gcm",
            }
            r = await client.post(browser.endpoint, content=body, headers=headers)
            assert r.status_code == (400 if browser is b else 201)
    assert service.refused == [(400, "the record does not decrypt with this subscription's keys")]
    assert [(d.browser, d.plaintext) for d in service.received] == [(a.id, b"x")]


@pytest.mark.parametrize("status", [410, 404])
async def test_R7_a_gone_subscription_is_dropped_and_the_others_kept(
    service: PushService, keys: VapidKeys, status: int
) -> None:
    gone, kept = service.subscribe(keys.public_key), service.subscribe(keys.public_key)
    service.gone.add(gone.id) if status == 410 else service.browsers.pop(gone.id)
    store = await store_of(gone, kept)
    report = await sender(keys).send(store)
    assert report.dropped == [gone.endpoint]
    assert report.delivered == [kept.endpoint]
    assert [s.endpoint for s in await store.all()] == [kept.endpoint]
    assert service.refused[0][0] == status


async def test_R7_retries_back_off_on_the_injected_clock_then_deliver(
    service: PushService, keys: VapidKeys
) -> None:
    """503, 429 and 500 are retried after 1 s, 2 s, 4 s of the sender's clock; the
    fourth attempt delivers. Nothing happens until the clock moves."""
    browser = service.subscribe(keys.public_key)
    service.scripted[browser.id] = [503, 429, 500]
    clock = RecordingClock()
    async with anyio.create_task_group() as tg:
        box: dict[str, Any] = {}

        async def send() -> None:
            box["report"] = await sender(keys, clock).send(await store_of(browser))

        tg.start_soon(send)
        for n, wait in enumerate([1000, 2000, 4000], start=1):
            await clock.armed(n)
            assert clock.waits[-1] == wait and service.posts == n
            clock.advance(wait - 1)
            await anyio.sleep(0.05)
            assert service.posts == n  # not one millisecond early
            clock.advance(1)
            await service.wait_posts(n + 1)
    assert box["report"].delivered == [browser.endpoint]
    assert [d.plaintext for d in service.received] == [MARKERS["question"]]


@pytest.mark.parametrize(
    ("scripted", "retry_after", "posts", "waits"),
    [
        ([503] * 10, None, 4, [1000, 2000, 4000]),  # bounded: four attempts in all
        ([429] * 10, "7", 4, [7000, 7000, 7000]),  # Retry-After seconds are honoured
        ([429] * 10, "3600", 4, [60000, 60000, 60000]),  # up to a minute
        ([400], None, 1, []),  # a refusal is not retried
        ([413], None, 1, []),
    ],
)
async def test_R7_retries_are_bounded_and_only_for_what_may_pass_later(
    service: PushService,
    keys: VapidKeys,
    scripted: list[int],
    retry_after: str | None,
    posts: int,
    waits: list[float],
) -> None:
    browser = service.subscribe(keys.public_key)
    service.scripted[browser.id] = list(scripted)
    service.retry_after = retry_after
    clock = RecordingClock()
    store = await store_of(browser)
    async with anyio.create_task_group() as tg:
        box: dict[str, Any] = {}

        async def send() -> None:
            box["report"] = await sender(keys, clock).send(store)

        tg.start_soon(send)
        for n in range(1, len(waits) + 1):
            await clock.armed(n)
            clock.advance(clock.waits[-1])
    assert service.posts == posts and clock.waits == waits
    assert box["report"].failed == {browser.endpoint: f"the push service answered {scripted[0]}"}
    assert [s.endpoint for s in await store.all()] == [browser.endpoint]  # kept: not gone


async def test_R7_the_event_loop_stays_responsive_during_a_slow_push_service(
    service: PushService, keys: VapidKeys
) -> None:
    """The push service takes 1.5 s to answer each of three browsers; meanwhile a
    10 ms ticker on the same loop never waits long (a blocking send would stall it
    for the whole 1.5 s, or 4.5 s in turn)."""
    service.delay_s = 1.5
    browsers = [service.subscribe(keys.public_key) for _ in range(3)]
    store = await store_of(*browsers)
    gaps: list[float] = []
    done = anyio.Event()

    async def tick() -> None:
        last = time.monotonic()
        while not done.is_set():
            await anyio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    started = time.monotonic()
    async with anyio.create_task_group() as tg:
        tg.start_soon(tick)
        report = await sender(keys).send(store)
        done.set()
    took = time.monotonic() - started
    assert len(report.delivered) == 3
    assert 1.5 <= took < 4.0  # in parallel, not one after the other
    assert max(gaps) < 0.25, sorted(gaps)[-5:]
    assert len(gaps) > 50


@pytest.mark.parametrize(
    "subject", ["ops@example.org", "mailto:ops", "https://example.org/contact", "http://x.org"]
)
def test_R7_a_vapid_subject_the_signer_would_refuse_is_refused_at_once(
    keys: VapidKeys, subject: str
) -> None:
    with pytest.raises(ValueError, match="is not mailto:ADDRESS or https://HOST"):
        PushSender(keys, subject)


async def test_R7_a_key_that_cannot_sign_fails_the_push_not_the_door(
    service: PushService, keys: VapidKeys
) -> None:
    browser = service.subscribe(keys.public_key)
    damaged = VapidKeys(b"-----BEGIN PRIVATE KEY-----\nno\n-----END PRIVATE KEY-----\n", "x")
    report = await sender(damaged).send(await store_of(browser))
    assert list(report.failed) == [browser.endpoint]
    assert report.failed[browser.endpoint].startswith("cannot sign: ")
    assert service.posts == 0
