"""Browser sessions of the web door (S14): what a logged-in page holds instead of the token.

Logging in with the token opens a session: a random id, sent as an HttpOnly,
SameSite=Strict cookie, and a random key, given to the page in the login answer,
which the page keeps (localStorage: per origin, so per port) and sends with every
API request in the `X-Askbridge-Session` header (the event stream, which
EventSource cannot give headers, in its `key` query parameter). A browser sends
its cookies for 127.0.0.1 to every port, so another local service gets the cookie;
alone it is refused, and it is never the token.

A session lives as long as the token it was opened with: it ends when the token
expires or is replaced (`--new-token`, even by another process: the token file is
checked on every request) or when the door stops (sessions are kept in memory
only; the page then asks for the printed URL again).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections import OrderedDict
from dataclasses import dataclass

from .token import Token, TokenFile

HEADER = "x-askbridge-session"
QUERY_KEY = "key"
MAX_SESSIONS = 256  # each login opens one; the oldest goes first


@dataclass(frozen=True)
class Session:
    key_digest: bytes
    token_digest: bytes


class Sessions:
    def __init__(self, tokens: TokenFile) -> None:
        self.tokens = tokens
        self._open: OrderedDict[bytes, Session] = OrderedDict()

    def open(self, token: Token) -> tuple[str, str]:
        """A new session for a page that gave `token`: (cookie value, the page's key)."""
        sid, key = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        self._open[_digest(sid)] = Session(_digest(key), token.digest)
        while len(self._open) > MAX_SESSIONS:
            self._open.popitem(last=False)
        return sid, key

    def valid(self, sid: str | None, key: str | None) -> bool:
        """Both halves given, of one open session, whose token is still the door's and
        has not expired."""
        if not sid or not key:
            return False
        session = self._open.get(_digest(sid))
        if session is None or not hmac.compare_digest(session.key_digest, _digest(key)):
            return False
        token = self.tokens.current()
        if token is None or token.digest != session.token_digest or self.tokens.expired(token):
            self._open.pop(_digest(sid), None)
            return False
        return True

    def __len__(self) -> int:
        return len(self._open)


def _digest(text: str) -> bytes:
    # Kept and compared as digests: a lookup's timing says nothing about the secret.
    return hashlib.sha256(text.encode("utf-8", "replace")).digest()
