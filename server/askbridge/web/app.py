"""The web door's HTTP interface (B2, B6, B8; protocol/README.md "Web door").

Public (they hold no data): `GET /`, `/app.js`, `/style.css`. Everything under
`/api/` needs the cookie, except `POST /api/login {token}`, which sets it.
Every request passes the Host check (the listen address, `localhost`, a name
given with `--allow-host`, or any IP literal when listening on a wildcard
address: an IP literal cannot be rebound) and the Origin check (when present,
the page's own). Errors are `{error: {code, message}}`.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from askbridge.core.errors import UserQuestionError
from askbridge.core.validation import check_answer, parse_answer
from askbridge.jsonrpc import ConnectionClosed, RpcResponseError
from askbridge.protocol.vocabulary import QuestionItem

from .bridge import Bridge
from .stream import event_stream
from .token import same_token

logger = logging.getLogger("askbridge.web")

COOKIE = "askbridge_web"
MAX_BODY = 1 << 20  # an answer's custom text is at most 64 KiB (S1); 1 MiB is plenty
STATIC = {
    "/": ("index.html", "text/html"),
    "/app.js": ("app.js", "text/javascript"),
    "/style.css": ("style.css", "text/css"),
}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def error_response(status: int, code: str, message: str) -> web.Response:
    body = json.dumps({"error": {"code": code, "message": message}})
    return web.Response(status=status, text=body, content_type="application/json")


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
) -> web.Application:
    scheme = "https" if tls else "http"

    @web.middleware
    async def guard(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        host = request.headers.get("Host", "")
        if host not in hosts and not (wildcard and _is_ip_literal(host)):
            return error_response(403, "FORBIDDEN_HOST", f"this door does not serve host {host!r}")
        origin = request.headers.get("Origin")
        if origin is not None and origin != f"{scheme}://{host}":
            return error_response(403, "FORBIDDEN_ORIGIN", "cross-site requests are refused")
        path = request.path
        if path.startswith("/api/") and path != "/api/login":
            if not same_token(request.cookies.get(COOKIE), token):
                return error_response(401, "UNAUTHORIZED", "open the URL askbridge web printed")
        try:
            response = await handler(request)
        except ApiError as exc:
            response = error_response(exc.status, exc.code, exc.message)
        except web.HTTPException as exc:
            response = error_response(
                exc.status, "NOT_FOUND" if exc.status == 404 else "HTTP", exc.reason
            )
        response.headers.update(SECURITY_HEADERS)
        return response

    async def static(request: web.Request) -> web.Response:
        name, kind = STATIC[request.path]
        body = resources.files("askbridge.web").joinpath("static", name).read_bytes()
        return web.Response(body=body, content_type=kind, charset="utf-8")

    async def login(request: web.Request) -> web.Response:
        body = await _json(request)
        if not same_token(body.get("token") if isinstance(body.get("token"), str) else None, token):
            raise ApiError(401, "UNAUTHORIZED", "the token is not this door's")
        response = web.json_response({"ok": True})
        response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", secure=tls, path="/")
        return response

    async def ping(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def events(request: web.Request) -> web.StreamResponse:
        return await event_stream(request, bridge)

    async def answer_card(request: web.Request) -> web.Response:
        card_id = request.match_info["card"]
        body = await _json(request)
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
        return web.json_response({"ok": True})

    async def claim(request: web.Request) -> web.Response:
        card, client = await _card_and_client(request)
        bridge.claim(card, client)
        return web.json_response({"ok": True})

    async def release(request: web.Request) -> web.Response:
        card, client = await _card_and_client(request)
        bridge.release(card, client)
        return web.json_response({"ok": True})

    async def _card_and_client(request: web.Request) -> tuple[Any, str]:
        body = await _json(request)
        client = body.get("client")
        if not isinstance(client, str) or not client.startswith("b-"):
            raise ApiError(400, "BAD_REQUEST", "client must be the id the event stream gave")
        card = bridge.cards.get(request.match_info["card"])
        if card is None:
            raise ApiError(404, "UNKNOWN_CARD", f"unknown question {request.match_info['card']}")
        return card, client

    async def answer_late(request: web.Request) -> web.Response:
        sid, call_id = request.match_info["session"], request.match_info["call"]
        body = await _json(request)
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
        return web.json_response({"ok": True})

    app = web.Application(middlewares=[guard], client_max_size=MAX_BODY)
    for path in STATIC:
        app.router.add_get(path, static)
    app.router.add_post("/api/login", login)
    app.router.add_get("/api/events", events)
    app.router.add_get("/api/ping", ping)
    app.router.add_post("/api/cards/{card}/answer", answer_card)
    app.router.add_post("/api/cards/{card}/claim", claim)
    app.router.add_post("/api/cards/{card}/release", release)
    app.router.add_post("/api/sessions/{session}/calls/{call}/answer", answer_late)
    return app


async def _json(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json(loads=json.loads)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, "BAD_REQUEST", "the body must be a JSON object") from exc
    if not isinstance(body, dict):
        raise ApiError(400, "BAD_REQUEST", "the body must be a JSON object")
    return body


def _checked(questions: list[dict[str, Any]], raw: Any, call_id: str | None) -> dict[str, Any]:
    """V8 and S1 here, before anything reaches the host: an invalid reply to an ask
    would fail the ask for every window (protocol.md), not just this browser."""
    try:
        items = [QuestionItem.model_validate(q) for q in questions]
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
