"""A push service stand-in on 127.0.0.1 (RFC 8030 §5) that checks what a real one checks
and decrypts what it is sent, so a test sees the very bytes a browser would get.

    service = PushService(); service.start()
    browser = service.subscribe(vapid_public_key)   # what pushManager.subscribe makes
    ... PushSender(...).send(store) ...             # browser.subscription in the store
    service.received[0].plaintext                   # decrypted per RFC 8291

Each POST to a subscription's endpoint is judged in order, and the first failure is
the answer (and lands in `refused` with why):

- an unknown endpoint is 404; one marked `gone` is 410; one given `scripted`
  statuses answers those first (with `retry_after`, when set);
- no or a bad `TTL` header is 400 (RFC 8030 §5.2);
- RFC 8292: `Authorization: vapid t=<JWT>, k=<key>`; a `k` other than the
  applicationServerKey the subscription was made with is 403 (§4.2); a JWT whose
  header is not ES256, whose ES256 signature does not verify against `k`, whose
  `aud` is not the endpoint's origin, whose `exp` is past or more than 24 h ahead,
  or whose `sub` is not a mailto: or https: URL is 401;
- RFC 8291: the body must be `Content-Encoding: aes128gcm`, one record of at most
  4096 bytes, decrypting with the subscription's private key and auth secret; else
  400 (413 when too long).

The decryption is written here from RFC 8291 §3.4 and RFC 8188 with cryptography's
primitives (HKDF, AES-GCM, ECDH), not with the library that encrypts, so a mistake
in how the sender uses it is not mirrored here. The server runs in its own threads
(the standard library's ThreadingHTTPServer): `delay_s` stalls its answers without
touching the test's event loop.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

MAX_PUSH = 4096  # RFC 8030 §7.2: a push service takes at least 4096 bytes of payload
MAX_JWT_LIFE_S = 24 * 3600  # RFC 8292 §2


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Refused(Exception):
    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status, self.why = status, why


@dataclass
class Browser:
    """One browser's side of a subscription: what it keeps and what it gives out."""

    id: str
    endpoint: str
    application_server_key: bytes  # the VAPID public key it subscribed with
    private_key: ec.EllipticCurvePrivateKey
    auth: bytes

    @property
    def public_key(self) -> bytes:
        return self.private_key.public_key().public_bytes(
            Encoding.X962, PublicFormat.UncompressedPoint
        )

    @property
    def subscription(self) -> dict[str, Any]:
        """PushSubscription.toJSON(), as the page would post it."""
        keys = {"p256dh": b64url(self.public_key), "auth": b64url(self.auth)}
        return {"endpoint": self.endpoint, "expirationTime": None, "keys": keys}


@dataclass
class Delivery:
    browser: str
    headers: dict[str, str]
    body: bytes
    plaintext: bytes
    claims: dict[str, Any]


@dataclass
class PushService:
    delay_s: float = 0.0
    browsers: dict[str, Browser] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)
    scripted: dict[str, list[int]] = field(default_factory=dict)
    retry_after: str | None = None
    received: list[Delivery] = field(default_factory=list)
    refused: list[tuple[int, str]] = field(default_factory=list)
    posts: int = 0
    _server: ThreadingHTTPServer | None = None
    _waiters: list[tuple[int, asyncio.Future[None], asyncio.AbstractEventLoop]] = field(
        default_factory=list
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- life ----------------------------------------------------------------------------

    def start(self) -> PushService:
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                service._post(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def origin(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def subscribe(self, application_server_key: str) -> Browser:
        """A new subscription bound to that VAPID public key (RFC 8292 §4.1)."""
        sid = secrets.token_urlsafe(12)
        browser = Browser(
            sid,
            f"{self.origin}/push/{sid}",
            unb64url(application_server_key),
            ec.generate_private_key(ec.SECP256R1()),
            os.urandom(16),
        )
        self.browsers[sid] = browser
        return browser

    async def wait_posts(self, count: int) -> None:
        """Until `count` POSTs were judged in all (each answer leaves right after)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self.posts >= count:
                return
            self._waiters.append((count, future, loop))
        await future

    # -- one request ---------------------------------------------------------------------

    def _post(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in request.headers.items()}
        if self.delay_s:
            time.sleep(self.delay_s)
        extra: dict[str, str] = {}
        try:
            status = self._judge(request.path, headers, body, extra)
        except Refused as refused:
            status = refused.status
            with self._lock:
                self.refused.append((refused.status, refused.why))
        # Counted before the answer leaves: a sender that has it finds it counted.
        with self._lock:
            self.posts += 1
            due = [w for w in self._waiters if w[0] <= self.posts]
            self._waiters = [w for w in self._waiters if w[0] > self.posts]
        for _, future, loop in due:
            loop.call_soon_threadsafe(lambda f=future: f.done() or f.set_result(None))
        request.send_response(status)
        for name, value in extra.items():
            request.send_header(name, value)
        request.send_header("Content-Length", "0")
        request.end_headers()

    def _judge(self, path: str, headers: dict[str, str], body: bytes, extra: dict[str, str]) -> int:
        sid = path.removeprefix("/push/")
        browser = self.browsers.get(sid)
        if browser is None or not path.startswith("/push/"):
            raise Refused(404, "no such subscription")
        if sid in self.gone:
            raise Refused(410, "the subscription expired")
        if self.scripted.get(sid):
            if self.retry_after is not None:
                extra["Retry-After"] = self.retry_after
            raise Refused(self.scripted[sid].pop(0), "scripted")
        if not headers.get("ttl", "").isdigit():
            raise Refused(400, "no TTL header (RFC 8030 §5.2)")
        claims = self._check_vapid(browser, headers.get("authorization", ""))
        plaintext = b""
        if body:
            if headers.get("content-encoding") != "aes128gcm":
                raise Refused(400, f"content-encoding {headers.get('content-encoding')!r}")
            if len(body) > MAX_PUSH:
                raise Refused(413, f"{len(body)} bytes")
            plaintext = decrypt_aes128gcm(body, browser.private_key, browser.auth)
        with self._lock:
            self.received.append(Delivery(sid, headers, body, plaintext, claims))
        extra["Location"] = f"{self.origin}/message/{secrets.token_urlsafe(8)}"
        return 201

    def _check_vapid(self, browser: Browser, authorization: str) -> dict[str, Any]:
        scheme, _, rest = authorization.partition(" ")
        if scheme.lower() != "vapid":
            raise Refused(401, "no vapid authorization")
        params = dict(p.strip().split("=", 1) for p in rest.split(",") if "=" in p)
        token, key = params.get("t", ""), params.get("k", "")
        try:
            k = unb64url(key)
        except (ValueError, binascii.Error):
            raise Refused(401, "k is not base64url") from None
        if k != browser.application_server_key:
            raise Refused(403, "k is not the key this subscription was made with")
        return check_jwt(token, k, self.origin)


def check_jwt(token: str, key: bytes, audience: str) -> dict[str, Any]:
    """RFC 8292 §2 and §3: the ES256 JWT's signature, aud, exp and sub."""
    try:
        head64, claims64, sig64 = token.split(".")
        head = json.loads(unb64url(head64))
        claims = json.loads(unb64url(claims64))
        sig = unb64url(sig64)
    except (ValueError, binascii.Error):
        raise Refused(401, "the JWT is not three base64url parts") from None
    if head.get("alg") != "ES256" or len(sig) != 64:
        raise Refused(401, f"the JWT is not ES256: {head}")
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), key)
    der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
    try:
        public.verify(der, f"{head64}.{claims64}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise Refused(401, "the JWT's signature does not verify against k") from None
    if claims.get("aud") != audience:
        raise Refused(401, f"aud {claims.get('aud')!r} is not {audience!r}")
    exp, now = claims.get("exp"), time.time()
    if not isinstance(exp, int) or not now < exp <= now + MAX_JWT_LIFE_S:
        raise Refused(401, f"exp {exp!r} is not within the next 24 h")
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub.startswith(("mailto:", "https:")):
        raise Refused(401, f"sub {sub!r} is not a mailto: or https: URL")
    return dict(claims)


def decrypt_aes128gcm(body: bytes, private_key: ec.EllipticCurvePrivateKey, auth: bytes) -> bytes:
    """RFC 8291 §3.4 on an RFC 8188 body: header (salt, rs, keyid = the sender's
    one-time public key), then one record."""
    if len(body) < 21 + 65 + 17:
        raise Refused(400, "too short for aes128gcm")
    salt, rs, idlen = body[:16], int.from_bytes(body[16:20], "big"), body[20]
    sender, record = body[21 : 21 + idlen], body[21 + idlen :]
    if idlen != 65 or len(record) > rs or rs < 18:
        raise Refused(400, f"not one aes128gcm record with a P-256 keyid (idlen {idlen}, rs {rs})")
    ua_public = private_key.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    try:
        as_public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), sender)
    except ValueError:
        raise Refused(400, "keyid is not a P-256 point") from None
    shared = private_key.exchange(ec.ECDH(), as_public)
    info = b"WebPush: info\x00" + ua_public + sender
    ikm = HKDF(hashes.SHA256(), 32, salt=auth, info=info).derive(shared)
    cek = HKDF(hashes.SHA256(), 16, salt=salt, info=b"Content-Encoding: aes128gcm\x00").derive(ikm)
    nonce = HKDF(hashes.SHA256(), 12, salt=salt, info=b"Content-Encoding: nonce\x00").derive(ikm)
    try:
        padded = AESGCM(cek).decrypt(nonce, record, None)
    except InvalidTag:
        raise Refused(400, "the record does not decrypt with this subscription's keys") from None
    unpadded = padded.rstrip(b"\x00")
    if not unpadded.endswith(b"\x02"):  # RFC 8188 §2: the last record's delimiter
        raise Refused(400, "no last-record delimiter")
    return unpadded[:-1]
