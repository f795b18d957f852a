"""A JSON-RPC 2.0 connection over LSP framing: dispatch in, requests out, one error mapping.

    conn = RpcConnection(reader, writer)       # asyncio streams, e.g. from open_stdio()
    conn.on_request("session/new", handle_new)  # async def handle_new(params) -> result
    await conn.serve()                          # returns when input ends

Handlers get the raw `params` (dict, list or None). Each incoming request runs in
its own task and cancel scope in serve()'s task group; the client's `$/cancelRequest`
cancels it and the reply is -32800. Notification handlers run inline, in arrival
order (so `exit` completes before end of input is seen): keep them quick.

`_error_reply` is the one place exceptions become wire errors: RpcError → its code;
HarnessError → -32000 `{name, code}`; protocol.parsing.InvalidParams (or a bare
pydantic ValidationError, converted the same way) → -32602 with `data.errors`; anything
else → -32603, logged with traceback on `askbridge.bridge`. Invalid JSON → -32700; JSON
that is not JSON-RPC (incl. batches) → -32600 with the id when readable; an oversized
frame or a malformed header block → -32600 with id null (and a log line).

`request()` uses string ids ("ab-1", …). When the awaiting task is cancelled or times
out, `$/cancelRequest` is queued without waiting for the client (A9) and the late
reply is dropped as an unknown id. At end of input, outstanding requests fail with
ConnectionClosed and incoming request tasks are cancelled. serve() never closes the
writer: whoever opened the streams closes them.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup
from pydantic import ValidationError

from askbridge.core.errors import HarnessError
from askbridge.protocol.errors import RpcErrorCode
from askbridge.protocol.parsing import InvalidParams, validation_errors

from .framing import MAX_BODY, FrameReader, FrameWriter

logger = logging.getLogger("askbridge.bridge")

Handler = Callable[[Any], Awaitable[Any]]
MessageId = int | str


class RpcError(Exception):
    """Raise from a handler to answer with an explicit JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message
        self.data = data


class RpcResponseError(Exception):
    """The client answered one of our requests with an error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data


class ConnectionClosed(ConnectionError):
    """The client's input ended (or output broke) before a request was answered."""


class _Done:
    """A one-shot event for one waiter, on a bare asyncio future.

    Semantics of `anyio.Event` (`wait()` is a checkpoint even once set), at a fifth
    of its size: an anyio.Event carries an asyncio.Event and its waiter deque, and
    10,000 outgoing questions may be waiting at once (benchmarks/bench_bridge_memory.py).
    """

    __slots__ = ("_future", "_set")

    def __init__(self) -> None:
        self._future: asyncio.Future[None] | None = None
        self._set = False

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        self._set = True
        if self._future is not None and not self._future.done():
            self._future.set_result(None)

    async def wait(self) -> None:
        if self._set:
            await anyio.lowlevel.checkpoint()
            return
        if self._future is None or self._future.done():  # done here: a cancelled earlier wait
            self._future = asyncio.get_running_loop().create_future()
        await self._future


@dataclass(slots=True)
class _Pending:
    done: _Done = field(default_factory=_Done)
    result: Any = None
    error: Exception | None = None


def _is_id(value: object) -> TypeGuard[MessageId]:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _call(method: str, params: Any, msg_id: str | None = None) -> dict[str, Any]:
    """An outgoing request (with `msg_id`) or notification."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if msg_id is not None:
        msg["id"] = msg_id
    if params is not None:
        msg["params"] = params
    return msg


def _message(msg_id: MessageId | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": int(code), "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


def _error_reply(msg_id: MessageId, method: str, exc: BaseException) -> dict[str, Any]:
    """The one mapping from a handler's exception to the JSON-RPC error sent back."""
    if isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        return _error_reply(msg_id, method, exc.exceptions[0])
    if isinstance(exc, RpcError):
        return _message(msg_id, exc.code, exc.message, exc.data)
    if isinstance(exc, HarnessError):
        return _message(msg_id, RpcErrorCode.DOMAIN_ERROR, exc.message, exc.to_data())
    if isinstance(exc, ValidationError):  # a handler validated without parse_params
        exc = InvalidParams(validation_errors(exc))
    if isinstance(exc, InvalidParams):
        return _message(msg_id, RpcErrorCode.INVALID_PARAMS, exc.message, exc.data())
    logger.error("request %r (%s) failed", msg_id, method, exc_info=exc)
    return _message(msg_id, RpcErrorCode.INTERNAL_ERROR, str(exc) or type(exc).__name__)


class RpcConnection:
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        max_body: int = MAX_BODY,
        unread: bytes = b"",
    ) -> None:
        """`unread`: input already taken from `reader`'s stream, parsed before the rest."""
        self._frames = FrameReader(reader, max_body=max_body, unread=unread)
        self._out = FrameWriter(writer)
        self._requests: dict[str, Handler] = {}
        self._notifications: dict[str, Handler] = {}
        self._incoming: dict[MessageId, anyio.CancelScope] = {}
        self._outgoing: dict[str, _Pending] = {}
        self._ids = itertools.count(1)
        self._task_group: TaskGroup | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        """True once input has ended (or serve() has returned)."""
        return self._closed

    def on_request(self, method: str, handler: Handler) -> None:
        self._requests[method] = handler

    def on_notification(self, method: str, handler: Handler) -> None:
        self._notifications[method] = handler

    async def serve(self) -> None:
        """Read and dispatch until input ends; then fail outgoing and cancel incoming work."""
        if self._task_group is not None or self._closed:
            raise RuntimeError("serve() runs once per connection")
        async with anyio.create_task_group() as tg:
            self._task_group = tg
            try:
                async for frame in self._frames:
                    if frame.problem is None:
                        await self._dispatch(frame.body)
                    else:
                        detail = f"{frame.problem.value}: {frame.detail}"
                        await self._send(_message(None, RpcErrorCode.INVALID_REQUEST, detail))
            finally:
                self._close()
                self._out.flush()  # queued frames go out before anyone closes the stream
                tg.cancel_scope.cancel()

    def _close(self) -> None:
        self._closed = True
        for pending in self._outgoing.values():
            if not pending.done.is_set():
                pending.error = ConnectionClosed("the client's input ended")
                pending.done.set()

    async def _dispatch(self, body: bytes) -> None:
        try:
            msg = json.loads(body)
        except ValueError as exc:  # includes UnicodeDecodeError
            await self._send(_message(None, RpcErrorCode.PARSE_ERROR, f"Parse error: {exc}"))
            return
        if isinstance(msg, dict) and "method" not in msg and ("result" in msg or "error" in msg):
            self._on_response(msg)  # never answered, even when malformed: no reply loops
            return
        problem = self._invalid(msg)
        if problem is not None:
            readable = isinstance(msg, dict) and _is_id(msg.get("id"))
            msg_id = msg["id"] if readable else None
            await self._send(_message(msg_id, RpcErrorCode.INVALID_REQUEST, problem))
        elif "id" not in msg:
            await self._on_notification(msg["method"], msg.get("params"))
        else:
            await self._on_request(msg["id"], msg["method"], msg.get("params"))

    @staticmethod
    def _invalid(msg: Any) -> str | None:
        """Why a parsed JSON value is not a JSON-RPC message we accept, or None."""
        if isinstance(msg, list):
            return "Invalid request: batches are not supported"
        if not isinstance(msg, dict):
            return "Invalid request: not a JSON object"
        if msg.get("jsonrpc") != "2.0":
            return 'Invalid request: jsonrpc must be "2.0"'
        if "id" in msg and not _is_id(msg["id"]):
            return "Invalid request: id must be an integer or a string"
        if "method" not in msg:
            return "Invalid request: neither a request, a notification nor a response"
        if not isinstance(msg["method"], str):
            return "Invalid request: method must be a string"
        return None

    async def _on_request(self, msg_id: MessageId, method: str, params: Any) -> None:
        handler = self._requests.get(method)
        if handler is None:
            reply = _message(msg_id, RpcErrorCode.METHOD_NOT_FOUND, f"Method not found: {method}")
        elif params is not None and not isinstance(params, dict | list):
            reply = _message(msg_id, RpcErrorCode.INVALID_PARAMS, "params must be structured")
        elif msg_id in self._incoming:
            reply = _message(msg_id, RpcErrorCode.INVALID_REQUEST, f"duplicate id {msg_id!r}")
        else:
            assert self._task_group is not None
            scope = self._incoming[msg_id] = anyio.CancelScope()
            self._task_group.start_soon(self._run_request, scope, msg_id, method, handler, params)
            # Let the handler run up to its first await before the next message is
            # read, so a notification right behind a request sees it started.
            await anyio.lowlevel.checkpoint()
            return
        await self._send(reply)

    async def _run_request(
        self, scope: anyio.CancelScope, msg_id: MessageId, method: str, fn: Handler, params: Any
    ) -> None:
        reply: dict[str, Any] | None = None
        try:
            with scope:
                try:
                    reply = {"jsonrpc": "2.0", "id": msg_id, "result": await fn(params)}
                except Exception as exc:
                    reply = _error_reply(msg_id, method, exc)
            # Reaching here without a reply means the client's $/cancelRequest hit the
            # scope; a cancellation from outside (end of input) propagates instead.
            if reply is None:
                reply = _message(msg_id, RpcErrorCode.REQUEST_CANCELLED, "Request cancelled")
        finally:
            self._incoming.pop(msg_id, None)
        await self._send(reply, method)

    async def _on_notification(self, method: str, params: Any) -> None:
        if method == "$/cancelRequest":
            target = params.get("id") if isinstance(params, dict) else None
            scope = self._incoming.get(target) if _is_id(target) else None
            if scope is not None:
                scope.cancel()
            return
        handler = self._notifications.get(method)
        if handler is None:
            logger.debug("ignoring notification %s", method)
            return
        try:
            await handler(params)
        except Exception:
            logger.exception("notification %s failed", method)

    def _on_response(self, msg: dict[str, Any]) -> None:
        msg_id = msg.get("id")
        if msg_id is None:
            logger.warning("client reported an error without an id: %r", msg.get("error"))
            return
        pending = self._outgoing.get(msg_id) if isinstance(msg_id, str) else None
        if pending is None or pending.done.is_set():
            logger.debug("ignoring response to unknown or settled id %r", msg_id)
            return
        error = msg.get("error")
        if error is None:
            pending.result = msg.get("result")
        elif isinstance(error, dict) and isinstance(error.get("code"), int):
            message = error.get("message")
            pending.error = RpcResponseError(error["code"], str(message), error.get("data"))
        else:
            pending.error = RpcResponseError(RpcErrorCode.INTERNAL_ERROR, "malformed error", error)
        pending.done.set()

    async def _send(self, msg: dict[str, Any], method: str = "") -> None:
        """Write a message; a reply that cannot be serialized becomes -32603."""
        try:
            await self._out.write(msg)
        except (TypeError, ValueError) as exc:
            logger.error("reply to %r (%s) is not JSON", msg.get("id"), method, exc_info=exc)
            text = f"result is not JSON-serializable: {exc}"
            await self._send(_message(msg.get("id"), RpcErrorCode.INTERNAL_ERROR, text))
        except ConnectionError:
            logger.debug("output closed; dropped %s", method or msg.get("id"))

    def notify(self, method: str, params: Any = None) -> None:
        """Queue a notification without waiting (callable from sync host callbacks).

        Not awaiting drain() means a client that stops reading grows the transport
        buffer; replies and requests still apply backpressure. It leaves with the
        next request or reply, or within 1 ms (FrameWriter). Dropped quietly
        once the connection is closed.
        """
        try:
            if self._closed:
                raise ConnectionClosed
            self._out.write_nowait(_call(method, params), urgent=False)
        except ConnectionError:
            logger.debug("connection closed; dropped notification %s", method)

    async def request(
        self,
        method: str,
        params: Any = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the lead's API; sends $/cancelRequest
    ) -> Any:
        """Send a request and wait for its result.

        Raises RpcResponseError for an error reply, ConnectionClosed when input ends
        first, TimeoutError after `timeout` seconds. On timeout or cancellation the
        client gets `$/cancelRequest` and its late reply is ignored.
        """
        if self._closed:
            raise ConnectionClosed("the client's input ended")
        msg_id = f"ab-{next(self._ids)}"
        try:
            self._out.write_nowait(_call(method, params, msg_id))
        except ConnectionError as exc:
            raise ConnectionClosed(f"output closed; {method} not sent") from exc
        pending = self._outgoing[msg_id] = _Pending()
        try:
            await self._out.drain()
            if timeout is None:  # no deadline: skip fail_after's cancel scope (a hot path)
                await pending.done.wait()
            else:
                with anyio.fail_after(timeout):
                    await pending.done.wait()
        except BaseException:
            if not pending.done.is_set():
                self._cancel_outgoing(msg_id)
            raise
        finally:
            del self._outgoing[msg_id]
        if pending.error is not None:
            raise pending.error
        return pending.result

    def _cancel_outgoing(self, msg_id: str) -> None:
        # No await: this runs in a cancelled task and must not wait on the client (A9).
        try:
            self._out.write_nowait(_call("$/cancelRequest", {"id": msg_id}))
        except ConnectionError:
            logger.debug("output closed; $/cancelRequest for %s not sent", msg_id)
