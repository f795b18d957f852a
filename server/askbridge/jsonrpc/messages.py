"""JSON-RPC 2.0 messages: decoding what a peer sent, building what we send, and the one
mapping from exceptions to wire errors (protocol.md "Errors"; S3, S8).

Decoding (`decode`) never raises anything but `ParseFailure`: invalid UTF-8,
invalid JSON, `NaN`/`Infinity` (not JSON, though Python's parser takes them)
and nesting too deep for the parser (RecursionError) are all -32700.
A request carrying a string that cannot be stored (a lone UTF-16 surrogate,
`askbridge.protocol.text`) is -32602 naming the field (S3) before any handler
sees it, for every door (`refuse_lone_surrogate`); a peer's error message is
kept with U+FFFD instead.

`error_reply` is the only place a handler's exception becomes a wire error:
RpcError → its own code; HarnessError → -32000 `{name, code}`; InvalidParams
(or a bare pydantic ValidationError) → -32602 `{errors}`; anything else →
-32603, logged with its traceback.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any, TypeGuard

from pydantic import ValidationError

from askbridge.protocol.errors import HarnessError, RpcErrorCode
from askbridge.protocol.parsing import InvalidParams, validation_errors
from askbridge.protocol.text import LONE_SURROGATE_MESSAGE, lone_surrogate_path, scrub

logger = logging.getLogger("askbridge.jsonrpc")

MessageId = int | str
Message = dict[str, Any]

# A JSON escape of a UTF-16 surrogate, lone or paired: only bodies holding one are walked.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")


class ParseFailure(Exception):
    """The body is not JSON we accept (-32700)."""


class RpcError(Exception):
    """Raise from a handler to answer with an explicit JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message
        self.data = data


class RpcResponseError(Exception):
    """The peer answered one of our requests with an error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data


class MalformedReply(RpcResponseError):
    """The peer's reply to our request is neither a result nor an error object (S8)."""

    def __init__(self, message: str) -> None:
        super().__init__(RpcErrorCode.INVALID_REQUEST, message)


class ConnectionClosed(ConnectionError):
    """The peer's input ended (or output broke) before a request was answered."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# json.loads with any option builds a new decoder (and its C scanner) on every call.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


# The decoder's C scanner, without `decode`'s Python layers (untyped in typeshed).
_SCAN_ONCE: Any = getattr(_DECODER, "scan_once")  # noqa: B009


def decode(body: bytes) -> Any:
    """`json.loads(body, parse_constant=…)` refusing NaN and Infinity, with one decoder.

    What a peer sends is a UTF-8 object with nothing around it: a body starting `{x` with
    `x` not NUL is UTF-8 to `json.detect_encoding` (no BOM, not UTF-16/32), and its
    scanner reads it at once. Anything else, or a scan that stops short or fails, takes
    the full path, so the result (or the failure) is always `json.loads`' own."""
    if body[:1] == b"{" and body[1:2] not in (b"\x00", b""):
        try:
            text = body.decode("utf-8", "surrogatepass")
            value, end = _SCAN_ONCE(text, 0)
            if end == len(text):
                return value
        except (StopIteration, ValueError, RecursionError):
            pass
    try:
        return _DECODER.decode(body.decode(json.detect_encoding(body), "surrogatepass"))
    except RecursionError:
        raise ParseFailure("Parse error: JSON nested too deep") from None
    except ValueError as exc:  # includes UnicodeDecodeError
        raise ParseFailure(f"Parse error: {exc}") from None


def refuse_lone_surrogate(msg: Message, body: bytes, reply: Callable[[Message], None]) -> bool:
    """S3, the one rejection for every door: True when `msg`'s params hold a lone surrogate.

    A request is answered -32602 naming the field (`params.a.0.b holds …`, with
    `data.errors[0].field` = `a.0.b`); a notification or a response is dropped,
    logged. Only a body holding a surrogate escape is walked (the common case is free).
    """
    if _SURROGATE_ESCAPE.search(body) is None:
        return False
    path = lone_surrogate_path(msg.get("params"), "params")
    if path is None:
        return False
    method, msg_id = msg.get("method"), msg.get("id")
    if not isinstance(method, str) or not is_id(msg_id):
        logger.warning("dropped %s: %s %s", method or "a response", path, LONE_SURROGATE_MESSAGE)
        return True
    field = path.removeprefix("params.")
    data = {"errors": [{"field": field, "message": LONE_SURROGATE_MESSAGE}]}
    reply(error(msg_id, RpcErrorCode.INVALID_PARAMS, f"{path} {LONE_SURROGATE_MESSAGE}", data))
    return True


def is_id(value: object) -> TypeGuard[MessageId]:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def invalid_reason(msg: Any) -> str | None:
    """Why a decoded value is not a request or notification we accept, or None."""
    if isinstance(msg, list):
        return "Invalid request: batches are not supported"
    if not isinstance(msg, dict):
        return "Invalid request: not a JSON object"
    if msg.get("jsonrpc") != "2.0":
        return 'Invalid request: jsonrpc must be "2.0"'
    if "id" in msg and not is_id(msg["id"]):
        return "Invalid request: id must be an integer or a string"
    if "method" not in msg:
        return "Invalid request: neither a request, a notification nor a response"
    if not isinstance(msg["method"], str):
        return "Invalid request: method must be a string"
    return None


def call(method: str, params: Any, msg_id: MessageId | None = None) -> Message:
    """An outgoing request (with `msg_id`) or notification."""
    msg: Message = {"jsonrpc": "2.0", "method": method}
    if msg_id is not None:
        msg["id"] = msg_id
    if params is not None:
        msg["params"] = params
    return msg


def result(msg_id: MessageId, value: Any) -> Message:
    return {"jsonrpc": "2.0", "id": msg_id, "result": value}


def error(msg_id: MessageId | None, code: int, message: str, data: Any = None) -> Message:
    body: dict[str, Any] = {"code": int(code), "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": body}


def error_reply(msg_id: MessageId, method: str, exc: BaseException) -> Message:
    """The one mapping from a handler's exception to the JSON-RPC error sent back."""
    if isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        return error_reply(msg_id, method, exc.exceptions[0])
    if isinstance(exc, RpcError):
        return error(msg_id, exc.code, exc.message, exc.data)
    if isinstance(exc, HarnessError):
        return error(msg_id, RpcErrorCode.DOMAIN_ERROR, exc.message, exc.to_data())
    if isinstance(exc, ValidationError):  # a handler validated without parse_params
        exc = InvalidParams(validation_errors(exc))
    if isinstance(exc, InvalidParams):
        return error(msg_id, RpcErrorCode.INVALID_PARAMS, exc.message, exc.data())
    logger.error("request %r (%s) failed", msg_id, method, exc_info=exc)
    return error(msg_id, RpcErrorCode.INTERNAL_ERROR, str(exc) or type(exc).__name__)


def response_outcome(msg: Message) -> tuple[Any, RpcResponseError | None]:
    """(result, None) or (None, the error) of a peer's response to our request (S8).

    An error's text is scrubbed of lone surrogates (S3); a result is whoever
    asked's to check (answers go through V8, which refuses them).
    """
    if "error" in msg:
        err = msg["error"]
        if isinstance(err, dict) and isinstance(err.get("code"), int):
            message = scrub(str(err.get("message", "")))
            return None, RpcResponseError(err["code"], message, scrub(err.get("data")))
        return None, MalformedReply(f"the reply's error is not an error object: {err!r:.200}")
    if "result" not in msg:
        return None, MalformedReply("the reply has neither result nor error")
    return msg["result"], None
