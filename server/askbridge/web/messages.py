"""What the web door's HTTP server and its handlers pass each other: a request (its
head parsed, its body once admitted), a response, and the headers every response
carries (S14: refusals too)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
Write = Callable[[bytes], None]


@dataclass
class Request:
    method: str
    path: str  # percent-decoded, without the query
    headers: dict[str, str]  # lower-case names
    body: bytes = b""
    params: dict[str, str] = field(default_factory=dict)  # the route's captures
    query: dict[str, str] = field(default_factory=dict)  # each name's first value

    def cookie(self, name: str) -> str | None:
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(self.headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is no cookie, not a crash (B8)
            return None
        morsel = jar.get(name)
        return None if morsel is None else morsel.value

    def json(self) -> Any:
        """The body as JSON; ValueError for anything that is not plain JSON (B8): broken
        or non-UTF-8 text, NaN or Infinity, and nesting too deep for the parser."""
        try:
            return json.loads(self.body, parse_constant=_no_constant)
        except RecursionError as exc:
            raise ValueError("nested too deeply") from exc


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    # A streaming response: called with a writer once the head is sent; its end ends
    # the body. Cancelled when the client goes away.
    stream: Callable[[Write], Awaitable[None]] | None = None


def json_response(value: Any, status: int = 200) -> Response:
    return Response(status, json.dumps(value).encode())


def cookie_header(name: str, value: str, *, secure: bool, max_age: int) -> str:
    jar: SimpleCookie = SimpleCookie()
    jar[name] = value
    morsel = jar[name]
    morsel["httponly"] = True
    morsel["samesite"] = "Strict"
    morsel["path"] = "/"
    morsel["max-age"] = max_age
    if secure:
        morsel["secure"] = True
    return morsel.OutputString()


Handler = Callable[[Request], Awaitable[Response]]
# Judges a request by its head: a refusal, sent without reading the body, or how many
# body bytes the request may have.
Admit = Callable[[Request], "Response | int"]


def refusal(status: int, code: str, message: str) -> Response:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    return Response(status, body, headers={"connection": "close"})
