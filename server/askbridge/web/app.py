"""The web door's HTTP interface (B2, B6, B8; protocol/README.md "Web door").

Public (they hold no data): `GET /`, `/app.js`, `/cards.js`, `/push.js`, `/style.css` and
the service worker `/sw.js` (served from the page's origin, so its scope is the page). Everything
under `/api/` needs an open session (session.py: the cookie and the page's key), except
`POST /api/login {token}`, which opens one. Every request passes the Host check
(the listen address, `localhost`, a name given with `--allow-host`, or any IP
literal when listening on a wildcard address: an IP literal cannot be rebound)
and the Origin check (when present, the page's own). These checks judge the head
alone (`admit`), before a byte of the body is read (S14). Errors are
`{error: {code, message}}`.
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
from askbridge.protocol.errors import RpcErrorCode

from .bridge import Bridge, Card
from .messages import Request, Response, cookie_header, json_response
from .push_api import MAX_BODY as MAX_PUSH_BODY
from .push_api import PREFIX as PUSH_PREFIX
from .push_api import PushApi
from .session import HEADER, QUERY_KEY, Sessions
from .stream import event_stream

logger = logging.getLogger("askbridge.web")

MAX_BODY = 1 << 20  # a logged-in answer: S1 lets one custom text alone be 64 Ki characters
MAX_LOGIN_BODY = 1024  # {"token": 64 hex digits}
MAX_PUBLIC_BODY = 0  # the page's files take none
STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/cards.js": ("cards.js", "text/javascript; charset=utf-8"),
    "/push.js": ("push.js", "text/javascript; charset=utf-8"),
    "/sw.js": ("sw.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
}
EXPIRED = (
    "the token of this URL has expired: run `askbridge web --new-token` and open the URL it prints"
)
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


def cookie_name(port: int, tls: bool) -> str:
    """One cookie per door port (two doors on one machine do not log each other out);
    `__Host-` under TLS: the browser then takes it only from a secure, host-only origin."""
    return f"__Host-askbridge-{port}" if tls else f"askbridge-{port}"


class WebApp:
    """The door's request handling: `admit` judges a request's head (B2, S14), `handle`
    routes it once its body is in."""

    def __init__(
        self,
        bridge: Bridge,
        sessions: Sessions,
        hosts: set[str],
        wildcard: bool,
        tls: bool,
        port: int,
        on_expired: Callable[[], None],
        push: PushApi | None = None,
    ) -> None:
        self.sessions, self.hosts, self.wildcard, self.tls = sessions, hosts, wildcard, tls
        self.on_expired = on_expired
        self.push = push
        self.cookie = cookie_name(port, tls)
        self.handle = _routes(self, bridge)

    def admit(self, request: Request) -> Response | int:
        host = request.headers.get("host", "")
        if host not in self.hosts and not (self.wildcard and _is_ip_literal(host)):
            return error_response(403, "FORBIDDEN_HOST", f"this door does not serve host {host!r}")
        origin = request.headers.get("origin")
        scheme = "https" if self.tls else "http"
        if origin is not None and origin != f"{scheme}://{host}":
            return error_response(403, "FORBIDDEN_ORIGIN", "cross-site requests are refused")
        if request.path == "/api/login":
            return MAX_LOGIN_BODY
        if not request.path.startswith("/api/"):
            return MAX_PUBLIC_BODY
        key = request.headers.get(HEADER)
        if key is None and request.path == "/api/events":
            key = request.query.get(QUERY_KEY)  # EventSource cannot send a header
        if self.sessions.valid(request.cookie(self.cookie), key):
            return MAX_PUSH_BODY if request.path.startswith(PUSH_PREFIX) else MAX_BODY
        token = self.sessions.tokens.current()
        if token is not None and self.sessions.tokens.expired(token):
            return error_response(401, "TOKEN_EXPIRED", EXPIRED)
        return error_response(401, "UNAUTHORIZED", "open the URL askbridge web printed")

    def login(self, request: Request) -> Response:
        given = _json(request).get("token")
        token = self.sessions.tokens.current()
        if token is None or not token.matches(given):
            raise ApiError(401, "UNAUTHORIZED", "the token is not this door's")
        if self.sessions.tokens.expired(token):
            self.on_expired()
            raise ApiError(401, "TOKEN_EXPIRED", EXPIRED)
        sid, key = self.sessions.open(token)
        response = json_response({"ok": True, "key": key, "expires": int(token.expires)})
        life = max(1, int(token.expires - self.sessions.tokens.wall()))
        cookie = cookie_header(self.cookie, sid, secure=self.tls, max_age=life)
        response.headers["Set-Cookie"] = cookie
        return response


def _routes(app: WebApp, bridge: Bridge) -> Callable[[Request], Awaitable[Response]]:
    async def handle(request: Request) -> Response:
        try:
            return await route(request)
        except ApiError as exc:
            return error_response(exc.status, exc.code, exc.message)

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
        return app.login(request)

    async def ping(request: Request) -> Response:
        return json_response({"ok": True})

    async def events(request: Request) -> Response:
        sid, key = request.cookie(app.cookie), request.headers.get(HEADER)
        key = key or request.query.get(QUERY_KEY)
        return event_stream(bridge, lambda: app.sessions.valid(sid, key))

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
        *(app.push.routes() if app.push is not None else ()),  # R7
    ]
    return handle


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
    door idles (under 40 MiB), and the host checks every answer again."""
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
    if exc.code == RpcErrorCode.INVALID_PARAMS:
        status, code = 400, "BAD_ANSWER"
    return ApiError(status, code, exc.message)
