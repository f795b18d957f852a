"""Push subscriptions (R7): what a browser gives the door, checked, and where it is kept.

`parse_subscription` takes a browser's `PushSubscription.toJSON()` (`endpoint`,
`keys.p256dh`, `keys.auth`): the endpoint https to a named host (plain http to a
loopback address only where a caller allows it, which tests do), at most
MAX_ENDPOINT characters, no credentials; p256dh a P-256 point, auth 16 bytes.
Anything else is BadSubscription with one line saying why.

`SubscriptionStore` is the seam to where subscriptions are kept: three async calls
a store implements. `MemorySubscriptions` keeps them in the door's memory until
then: a door restart forgets them, and the page subscribes again on load
(static/push.js).
"""

from __future__ import annotations

import ipaddress
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from .push_keys import b64url_decode

MAX_ENDPOINT = 2048
MAX_SUBSCRIPTIONS = 256


class BadSubscription(ValueError):
    """Not a PushSubscription this door sends to; the message says why, in one line."""


@dataclass(frozen=True)
class PushSubscription:
    endpoint: str
    p256dh: str  # the browser's P-256 public key (65 bytes), base64url
    auth: str  # its 16-byte auth secret, base64url

    def to_json(self) -> dict[str, Any]:
        return {"endpoint": self.endpoint, "keys": {"p256dh": self.p256dh, "auth": self.auth}}


def parse_subscription(raw: Any, *, allow_loopback_http: bool = False) -> PushSubscription:
    """A browser's `PushSubscription.toJSON()`, checked; BadSubscription otherwise."""
    if not isinstance(raw, dict):
        raise BadSubscription("a subscription is a JSON object")
    endpoint, keys = raw.get("endpoint"), raw.get("keys")
    if not isinstance(endpoint, str) or not endpoint:
        raise BadSubscription("endpoint must be a URL")
    if len(endpoint) > MAX_ENDPOINT:
        raise BadSubscription(f"endpoint has {len(endpoint)} characters; at most {MAX_ENDPOINT}")
    check_endpoint(endpoint, allow_loopback_http)
    if not isinstance(keys, dict):
        raise BadSubscription("keys must hold p256dh and auth")
    p256dh, auth = keys.get("p256dh"), keys.get("auth")
    try:
        point = b64url_decode(p256dh) if isinstance(p256dh, str) else b""
    except ValueError:
        point = b""
    if len(point) != 65 or point[0] != 4 or not _on_p256(point):
        raise BadSubscription("keys.p256dh must be a P-256 public key (65 bytes, base64url)")
    try:
        secret = b64url_decode(auth) if isinstance(auth, str) else b""
    except ValueError:
        secret = b""
    if len(secret) != 16:
        raise BadSubscription("keys.auth must be 16 bytes, base64url")
    assert isinstance(p256dh, str) and isinstance(auth, str)
    return PushSubscription(endpoint, p256dh, auth)


def check_endpoint(endpoint: str, allow_loopback_http: bool) -> None:
    """https to a named host (a push service); never credentials, never an address of
    this machine or its network, which would turn the door into a way to reach them."""
    try:
        url = urlsplit(endpoint)
        host, port = url.hostname or "", url.port
    except ValueError:
        raise BadSubscription("endpoint is not a URL") from None
    if url.username is not None or url.password is not None or url.fragment:
        raise BadSubscription("endpoint must not hold credentials or a fragment")
    if not host or not endpoint.isascii() or any(c.isspace() for c in endpoint):
        raise BadSubscription("endpoint is not a URL")
    try:
        address: Any = ipaddress.ip_address(host)
    except ValueError:
        address = None
    loopback = host == "localhost" or (address is not None and address.is_loopback)
    if url.scheme == "http" and loopback and allow_loopback_http and port is not None:
        return
    if url.scheme != "https":
        raise BadSubscription("endpoint must be https")
    if loopback or (address is not None and not address.is_global):
        raise BadSubscription("endpoint must be a push service, not an address of this network")


def _on_p256(point: bytes) -> bool:
    from cryptography.hazmat.primitives.asymmetric import ec

    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    except ValueError:
        return False
    return True


class SubscriptionStore(Protocol):
    """Where subscriptions are kept: the door's memory now, a store's table later."""

    async def add(self, subscription: PushSubscription) -> None: ...

    async def remove(self, endpoint: str) -> bool: ...

    async def all(self) -> list[PushSubscription]: ...


class MemorySubscriptions:
    """At most MAX_SUBSCRIPTIONS, by endpoint; the oldest goes first."""

    def __init__(self) -> None:
        self._subs: OrderedDict[str, PushSubscription] = OrderedDict()

    async def add(self, subscription: PushSubscription) -> None:
        self._subs.pop(subscription.endpoint, None)
        self._subs[subscription.endpoint] = subscription
        while len(self._subs) > MAX_SUBSCRIPTIONS:
            self._subs.popitem(last=False)

    async def remove(self, endpoint: str) -> bool:
        return self._subs.pop(endpoint, None) is not None

    async def all(self) -> list[PushSubscription]:
        return list(self._subs.values())
