"""The web door's VAPID key pair (R7; RFC 8292): made once, then kept.

A push service binds each subscription to the public key the page subscribed
with (`applicationServerKey`) and refuses a push signed by any other key, so
the pair must outlive the door: a new pair would silently orphan every
subscription. It is one P-256 private key, serialized as PKCS#8 PEM
(`VapidKeys.private_pem`); the public key is derived from it.

`load_or_make_vapid_keys(read, write)` is the whole seam to where the key is
kept: `read()` gives the stored bytes or None, `write(pem)` stores them unless
some were stored meanwhile and returns the bytes that are kept (insert if
absent), so two doors making a key at once end up with one. `VapidKeyFile` is
that seam on a file of the data directory (`web.vapid`, 0600, created through
host/store/private_files.py and published with `link()`, which fails when the
file exists); a store keeps the same bytes in a row instead.

cryptography is imported on first use and the work runs in a worker thread:
the door never loads it to start or to serve a page (its import and a key's
making cost tens of milliseconds that would stall every event stream).
"""

from __future__ import annotations

import base64
import os
import secrets
import stat
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from askbridge.host.store.private_files import open_private_fd

KEY_FILE = "web.vapid"
MAX_KEY_FILE = 4096  # a P-256 PKCS#8 PEM is 241 bytes


class VapidKeyError(Exception):
    """The key cannot be read or kept; the message is one line naming where."""


@dataclass(frozen=True)
class VapidKeys:
    private_pem: bytes  # PKCS#8 PEM of the P-256 private key: what is kept
    public_key: str  # the uncompressed point, base64url without padding: applicationServerKey

    def signer(self) -> Any:
        """A py_vapid signer (RFC 8292 `vapid t=…, k=…`) for this key."""
        from cryptography.hazmat.primitives.serialization import load_pem_private_key
        from py_vapid import Vapid02

        return Vapid02(load_pem_private_key(self.private_pem, password=None))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Base64url with or without padding; ValueError for anything else."""
    if not text or len(text) > 1024 or not text.isascii():
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def make_vapid_pem() -> bytes:
    """A new P-256 key pair, its private key as PKCS#8 PEM."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
    )

    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())


def vapid_keys_of(pem: bytes) -> VapidKeys:
    """The pair a kept PEM holds; ValueError unless it is a P-256 private key."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        PublicFormat,
        load_pem_private_key,
    )

    key = load_pem_private_key(pem, password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        raise ValueError("not a P-256 private key")
    point = key.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    return VapidKeys(pem, b64url(point))


async def load_or_make_vapid_keys(
    read: Callable[[], Awaitable[bytes | None]],
    write: Callable[[bytes], Awaitable[bytes]],
    where: str = "the VAPID key",
) -> VapidKeys:
    """The kept pair, made and kept first when there is none (see the module doc)."""
    kept = await read()
    if kept is None:
        kept = await write(await anyio.to_thread.run_sync(make_vapid_pem))
    try:
        return await anyio.to_thread.run_sync(vapid_keys_of, kept)
    except ValueError as exc:
        raise VapidKeyError(
            f"{where} is not a P-256 private key ({exc}); remove it to make a new one, "
            "and every browser subscribes again"
        ) from None


class VapidKeyFile:
    """The key kept in `<data-dir>/web.vapid` (0600, ours, never through a link)."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / KEY_FILE

    async def keys(self) -> VapidKeys:
        return await load_or_make_vapid_keys(self.read, self.write, str(self.path))

    async def read(self) -> bytes | None:
        return await anyio.to_thread.run_sync(self._read)

    async def write(self, pem: bytes) -> bytes:
        return await anyio.to_thread.run_sync(self._write, pem)

    def _read(self) -> bytes | None:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise VapidKeyError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
                raise VapidKeyError(f"{self.path} is not a file of this user; askbridge uses none")
            if stat.S_IMODE(info.st_mode) & 0o077:
                raise VapidKeyError(f"{self.path} may be read by others: it must be 0600 (S5)")
            return f.read(MAX_KEY_FILE)

    def _write(self, pem: bytes) -> bytes:
        tmp = self.path.with_name(f"{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
        try:
            fd = open_private_fd(tmp, os.O_EXCL | os.O_TRUNC)
            with os.fdopen(fd, "wb") as f:
                f.write(pem)
                f.flush()
                os.fsync(f.fileno())
            try:
                os.link(tmp, self.path)  # whole or not at all, and only if absent
            except FileExistsError:
                pass  # another door made one first: that one is kept
        except OSError as exc:
            raise VapidKeyError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        finally:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        kept = self._read()
        if kept is None:
            raise VapidKeyError(f"{self.path} vanished as it was made")
        return kept
