"""R7: the door's VAPID key pair (web/push_keys.py) and the subscriptions it takes
(web/push_subscriptions.py), without a door: made once and kept (S5: 0600, never
through a link), and every subscription checked before it is kept.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import anyio
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from askbridge.web.push_keys import (
    KEY_FILE,
    VapidKeyError,
    VapidKeyFile,
    b64url,
    b64url_decode,
    load_or_make_vapid_keys,
    make_vapid_pem,
)
from askbridge.web.push_subscriptions import (
    MAX_SUBSCRIPTIONS,
    BadSubscription,
    MemorySubscriptions,
    parse_subscription,
)


class Kept:
    """A store's side of the seam: one value, insert if absent."""

    def __init__(self, value: bytes | None = None) -> None:
        self.value, self.writes = value, 0

    async def read(self) -> bytes | None:
        return self.value

    async def write(self, pem: bytes) -> bytes:
        self.writes += 1
        if self.value is None:
            self.value = pem
        return self.value


async def test_R7_the_key_is_made_once_and_then_read() -> None:
    kept = Kept()
    first = await load_or_make_vapid_keys(kept.read, kept.write)
    again = await load_or_make_vapid_keys(kept.read, kept.write)
    assert kept.writes == 1 and first == again
    point = b64url_decode(first.public_key)
    assert len(point) == 65 and point[0] == 4  # applicationServerKey: an uncompressed P-256 point
    assert first.private_pem.startswith(b"-----BEGIN PRIVATE KEY-----")


async def test_R7_a_key_kept_meanwhile_by_another_door_wins() -> None:
    """Two doors make a key at once: the store keeps the first, and the second door
    uses that one, not its own (a subscription is bound to one key)."""
    theirs = make_vapid_pem()

    class Raced(Kept):
        async def read(self) -> bytes | None:
            return None  # nothing yet when we looked

        async def write(self, pem: bytes) -> bytes:
            return theirs

    keys = await load_or_make_vapid_keys(Raced().read, Raced().write)
    assert keys.private_pem == theirs


async def test_R7_S5_the_key_file_is_private_stable_and_made_once(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    first = await VapidKeyFile(data).keys()
    path = data / KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.stat().st_nlink == 1
    assert sorted(p.name for p in data.iterdir()) == [KEY_FILE]  # no temporary left
    assert await VapidKeyFile(data).keys() == first  # a restarted door: the same key

    async with anyio.create_task_group() as tg:  # doors starting together on a fresh dir
        fresh = tmp_path / "fresh"
        fresh.mkdir(mode=0o700)
        got: list[Any] = []

        async def one() -> None:
            got.append(await VapidKeyFile(fresh).keys())

        for _ in range(4):
            tg.start_soon(one)
    assert len({k.public_key for k in got}) == 1


async def test_R7_S5_a_linked_loose_or_damaged_key_file_is_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    target = tmp_path / "elsewhere"
    target.write_bytes(make_vapid_pem())
    os.symlink(target, data / KEY_FILE)
    with pytest.raises(VapidKeyError, match=r"cannot read .*web\.vapid"):
        await VapidKeyFile(data).keys()
    os.unlink(data / KEY_FILE)

    (data / KEY_FILE).write_bytes(make_vapid_pem())
    os.chmod(data / KEY_FILE, 0o644)
    with pytest.raises(VapidKeyError, match="must be 0600"):
        await VapidKeyFile(data).keys()

    os.chmod(data / KEY_FILE, 0o600)
    (data / KEY_FILE).write_bytes(b"-----BEGIN PRIVATE KEY-----\nnot a key\n")
    with pytest.raises(VapidKeyError) as caught:
        await VapidKeyFile(data).keys()
    assert "\n" not in str(caught.value) and "remove it to make a new one" in str(caught.value)


def browser_keys() -> dict[str, str]:
    """keys of a PushSubscription: a browser's P-256 public key and auth secret."""
    point = ec.generate_private_key(ec.SECP256R1()).public_key()
    raw = point.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    return {"p256dh": b64url(raw), "auth": b64url(os.urandom(16))}


FCM = "https://fcm.googleapis.com/fcm/send/dGVzdA:APA91bH"


def test_R7_a_browser_subscription_is_taken_as_it_comes() -> None:
    keys = browser_keys()
    raw = {"endpoint": FCM, "expirationTime": None, "keys": keys}
    sub = parse_subscription(raw)
    assert sub.to_json() == {"endpoint": FCM, "keys": keys}


def _with(**change: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {"endpoint": FCM, "keys": browser_keys()}
    for name, value in change.items():
        if name in ("p256dh", "auth"):
            raw["keys"] = {**raw["keys"], name: value}
        else:
            raw[name] = value
    return raw


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ([], "a subscription is a JSON object"),
        (_with(endpoint=None), "endpoint must be a URL"),
        (_with(endpoint="http://push.example.net/x"), "endpoint must be https"),
        (_with(endpoint="ftp://push.example.net/x"), "endpoint must be https"),
        (_with(endpoint="https://" + "a" * 2050), "endpoint has 2058 characters; at most 2048"),
        (_with(endpoint="https://user:pw@push.example.net/x"), "must not hold credentials"),
        (_with(endpoint="https://127.0.0.1:8443/x"), "not an address of this network"),
        (_with(endpoint="https://localhost/x"), "not an address of this network"),
        (_with(endpoint="https://10.1.2.3/x"), "not an address of this network"),
        (_with(endpoint="https://[fe80::1]/x"), "not an address of this network"),
        (_with(endpoint="https://169.254.169.254/latest"), "not an address of this network"),
        (_with(endpoint="https://push.example.net:99999/x"), "endpoint is not a URL"),
        (_with(endpoint="https://push.exämple.net/x"), "endpoint is not a URL"),
        (_with(keys=None), "keys must hold p256dh and auth"),
        (_with(p256dh="AAAA"), "keys.p256dh must be a P-256 public key"),
        (
            _with(p256dh="B" + "A" * 86),
            "keys.p256dh must be a P-256 public key",
        ),  # 0x04, off the curve
        (_with(p256dh="not base64!"), "keys.p256dh must be a P-256 public key"),
        (_with(auth=b64url(os.urandom(15))), "keys.auth must be 16 bytes"),
        (_with(auth=7), "keys.auth must be 16 bytes"),
    ],
)
def test_R7_a_bad_subscription_is_refused_in_one_line(raw: Any, why: str) -> None:
    with pytest.raises(BadSubscription) as caught:
        parse_subscription(raw)
    assert why in str(caught.value) and "\n" not in str(caught.value)


def test_R7_plain_http_to_a_loopback_push_service_only_when_allowed() -> None:
    """The test stand-in's endpoint: refused by default, taken with the explicit flag;
    a non-loopback http endpoint is refused even then."""
    local = _with(endpoint="http://127.0.0.1:8123/push/x")
    with pytest.raises(BadSubscription, match="must be https"):
        parse_subscription(local)
    assert parse_subscription(local, allow_loopback_http=True).endpoint.startswith("http://")
    with pytest.raises(BadSubscription, match="must be https"):
        parse_subscription(_with(endpoint="http://push.example.net/x"), allow_loopback_http=True)


async def test_R7_subscriptions_in_memory_are_bounded_and_keyed_by_endpoint() -> None:
    store = MemorySubscriptions()
    subs = [parse_subscription(_with(endpoint=f"{FCM}{n}")) for n in range(MAX_SUBSCRIPTIONS + 2)]
    for sub in subs:
        await store.add(sub)
    await store.add(subs[-1])  # the same browser again: still one
    kept = await store.all()
    assert len(kept) == MAX_SUBSCRIPTIONS and kept[0] == subs[2]  # the oldest went first
    assert await store.remove(subs[5].endpoint) is True
    assert await store.remove(subs[5].endpoint) is False
