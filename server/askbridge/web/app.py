"""The web door's HTTP interface (B2, B6, B8; protocol/README.md "Web door").

Public (they hold no data): `GET /`, `/app.js`, `/cards.js`, `/style.css`. Everything under
`/api/` needs the cookie, except `POST /api/login {token}`, which sets it.
Every request passes the Host check (the listen address, `localhost`, a name
given with `--allow-host`, or any IP literal when listening on a wildcard
address: an IP literal cannot be rebound) and the Origin check (when present,
the page's own). Errors are `{error: {code, message}}`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from askbridge.jsonrpc import ConnectionClosed, RpcResponseError

from .bridge import Bridge, Card
from .http import Request, Response, cookie_header, json_response
from .stream import event_stream
from .token import same_token

logger = logging.getLogger("askbridge.web")

COOKIE = "askbridge_web"
MAX_BODY = 1 << 20  # an answer's custom text is at most 64 KiB (S1); 1 MiB is plenty
STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/cards.js": ("cards.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
Route = Callable[[Request], Awaitable[Response]]


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def error_response(status: int, code: str, message: str) -> Response:
    return json_response({"error": {"code": code, "message": message}}, status)


def allowed_hosts(listen_host: str, port: int, extra: list[str]) -> tuple[set[str], bool]:
    """The Host values the door answers, and whether any IP literal is fine (wildcard)."""
    names = {listen_host, "localhost", "127.0.0.1", "[::1]", *extra}
    if ":" in listen_host and not listen_host.startswith("["):
        names.add(f"[{listen_host}]")
    hosts = set(names) | {f"{n}:{port}" for n in names}
    wildcard = listen_host in ("0.0.0.0", "::", "")
    return hosts, wildcard


def _is_ip_literal(host: str) -> bool:
    name = host.rsplit(":", 1)[0] if host.count(":") == 1 or host.startswith("[") else host
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


def build_app(
    bridge: Bridge, token: str, hosts: set[str], wildcard: bool, tls: bool
) -> Callable[[Request], Awaitable[Response]]:
    """The door's request handler: the guard (B2), then the route, then the headers."""
    scheme = "https" if tls else "http"

    async def guard(request: Request) -> Response:
        host = request.headers.get("host", "")
        if host not in hosts and not (wildcard and _is_ip_literal(host)):
            return error_response(403, "FORBIDDEN_HOST", f"this door does not serve host {host!r}")
        origin = request.headers.get("origin")
        if origin is not None and origin != f"{scheme}://{host}":
            return error_response(403, "FORBIDDEN_ORIGIN", "cross-site requests are refused")
        path = request.path
        if path.startswith("/api/") and path != "/api/login":
            if not same_token(request.cookie(COOKIE), token):
                return error_response(401, "UNAUTHORIZED", "open the URL askbridge web printed")
        try:
            response = await route(request)
        except ApiError as exc:
            response = error_response(exc.status, exc.code, exc.message)
        response.headers.update(SECURITY_HEADERS)
        return response

    async def route(request: Request) -> Response:
        allowed = False
        for method, pattern, handler in routes:
            match = pattern.fullmatch(request.path)
            if match is None:
                continue
            if method != request.method and not (method == "GET" and request.method == "HEAD"):
                allowed = True
                continue
            request.params = match.groupdict()
            return await handler(request)
        if allowed:
            raise ApiError(405, "HTTP", "Method Not Allowed")
        raise ApiError(404, "NOT_FOUND", "Not Found")

    async def static(request: Request) -> Response:
        name, kind = STATIC[request.path]
        body = resources.files("askbridge.web").joinpath("static", name).read_bytes()
        return Response(200, body, kind)

    async def login(request: Request) -> Response:
        body = _json(request)
        if not same_token(body.get("token") if isinstance(body.get("token"), str) else None, token):
            raise ApiError(401, "UNAUTHORIZED", "the token is not this door's")
        response = json_response({"ok": True})
        response.headers["Set-Cookie"] = cookie_header(COOKIE, token, secure=tls)
        return response

    async def ping(request: Request) -> Response:
        return json_response({"ok": True})

    async def events(request: Request) -> Response:
        return event_stream(bridge)

    async def answer_card(request: Request) -> Response:
        card_id = request.params["card"]
        body = _json(request)
        card = bridge.cards.get(card_id)
        if card is None or card.reply.done():
            if card is not None or card_id in bridge.closed:
                raise ApiError(
                    409,
                    "ANSWERED_ELSEWHERE",
                    "this question was answered elsewhere or is no longer asked",
                )
            raise ApiError(404, "UNKNOWN_CARD", f"unknown question {card_id}")
        answer = _checked(card.questions, body.get("answer"), card.call_id)
        card.reply.set_result(answer)
        return json_response({"ok": True})

    async def claim(request: Request) -> Response:
        card, client = _card_and_client(request)
        bridge.claim(card, client)
        # What was left when the claim began (null until the deadline is known): the
        # page shows it while its claim holds the host's timer (B4).
        now = asyncio.get_running_loop().time()
        return json_response({"ok": True, "remainingMs": card.public(now)["remainingMs"]})

    async def release(request: Request) -> Response:
        card, client = _card_and_client(request)
        bridge.release(card, client)
        return json_response({"ok": True})

    def _card_and_client(request: Request) -> tuple[Card, str]:
        body = _json(request)
        client = body.get("client")
        if not isinstance(client, str) or not client.startswith("b-"):
            raise ApiError(400, "BAD_REQUEST", "client must be the id the event stream gave")
        card = bridge.cards.get(request.params["card"])
        if card is None:
            raise ApiError(404, "UNKNOWN_CARD", f"unknown question {request.params['card']}")
        return card, client

    async def answer_late(request: Request) -> Response:
        sid, call_id = request.params["session"], request.params["call"]
        body = _json(request)
        view = bridge.views.get(sid)
        if view is None:
            raise ApiError(404, "UNKNOWN_SESSION", f"unknown session {sid}")
        entry = next((e for e in view["active"] if e["callId"] == call_id), None)
        if entry is None:
            if any(s["callId"] == call_id for s in view["settled"]):
                raise ApiError(409, "ANSWERED_ELSEWHERE", f"{call_id} was already answered")
            raise ApiError(404, "UNKNOWN_CALL", f"unknown question {call_id}")
        answer = _checked(entry["questions"], body.get("answer"), call_id)
        try:
            accepted = await bridge.answer_late(sid, call_id, answer)
        except RpcResponseError as exc:
            raise _mapped(exc) from exc
        except ConnectionClosed as exc:
            raise ApiError(503, "HOST_LOST", "askbridge stopped") from exc
        if not accepted:
            raise ApiError(409, "ANSWERED_ELSEWHERE", f"{call_id} was answered elsewhere")
        return json_response({"ok": True})

    part = "(?P<{}>[^/]+)"
    routes: list[tuple[str, re.Pattern[str], Route]] = [
        *(("GET", re.compile(re.escape(path)), static) for path in STATIC),
        ("POST", re.compile("/api/login"), login),
        ("GET", re.compile("/api/events"), events),
        ("GET", re.compile("/api/ping"), ping),
        ("POST", re.compile(f"/api/cards/{part.format('card')}/answer"), answer_card),
        ("POST", re.compile(f"/api/cards/{part.format('card')}/claim"), claim),
        ("POST", re.compile(f"/api/cards/{part.format('card')}/release"), release),
        (
            "POST",
            re.compile(
                f"/api/sessions/{part.format('session')}/calls/{part.format('call')}/answer"
            ),
            answer_late,
        ),
    ]
    return guard


def _json(request: Request) -> dict[str, Any]:
    try:
        body = request.json()
    except ValueError as exc:  # UnicodeDecodeError is one
        raise ApiError(400, "BAD_REQUEST", "the body must be a JSON object") from exc
    if not isinstance(body, dict):
        raise ApiError(400, "BAD_REQUEST", "the body must be a JSON object")
    return body


def _checked(questions: list[dict[str, Any]], raw: Any, call_id: str | None) -> dict[str, Any]:
    """V8 and S1 here, before anything reaches the host: an invalid reply to an ask
    would fail the ask for every window (protocol.md), not just this browser.

    Imported here, at the first answer: the protocol models are not needed while the
    door idles (issue 20: under 40 MiB), and the host checks every answer again."""
    from pydantic import ValidationError

    from askbridge.core.errors import UserQuestionError
    from askbridge.core.question import Question
    from askbridge.core.validation import check_answer, parse_answer
    from askbridge.protocol.vocabulary import QuestionItem

    try:
        items = [Question.of(QuestionItem.model_validate(q)) for q in questions]
        answer = check_answer(items, parse_answer(raw), call_id)
    except UserQuestionError as exc:
        raise ApiError(400, str(exc.code), exc.message) from exc
    except ValidationError as exc:
        raise ApiError(400, "BAD_ANSWER", str(exc.errors()[0]["msg"])) from exc
    out: dict[str, Any] = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
    return out


def _mapped(exc: RpcResponseError) -> ApiError:
    data = exc.data if isinstance(getattr(exc, "data", None), dict) else {}
    code = str(data.get("code") or "HOST_ERROR")
    status = {"BAD_ANSWER": 400, "REPLY_QUEUED": 409, "UNKNOWN_SESSION": 404}.get(code, 502)
    if exc.code == -32602:
        status, code = 400, "BAD_ANSWER"
    return ApiError(status, code, exc.message)
