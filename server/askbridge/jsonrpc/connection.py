"""One JSON-RPC 2.0 connection for every door: dispatch in, requests out, cancellation both ways.

    conn = lsp_connection(inbound, writer)        # LSP framing on stdio.open_inbound's protocol
    conn = line_connection(inbound, writer)       # newline framing (ACP, MCP)
    conn.on_request("session/new", handle_new)    # async def handle_new(params) -> result
    await conn.serve()                            # returns when input ends

This module is the incoming side, in the style of the MCP SDK's dispatcher:
handlers get the raw `params` (dict, list or None); each incoming request
runs in its own task and cancel scope in serve()'s task group; the peer's
cancel notification (`$/cancelRequest {id}` for LSP, `$/cancel_request
{requestId}` for ACP, `notifications/cancelled {requestId}` for MCP: the
`Dialect`) cancels it and the reply is -32800 (none for MCP).
Notification handlers run inline, in arrival order (so `exit` completes
before end of input is seen): keep them quick. Every failure a handler raises
becomes a wire error in `messages.error_reply`, and nothing a peer sends ends
the connection (S8): a problem frame (oversized, malformed header) is -32600
with `id: null` (inbound.Inbound); a body that is not JSON is -32700
(after which the LSP reader resyncs inside it); JSON that is not a request
or notification is -32600; a request holding a lone surrogate is -32602
naming the field (S3, messages.surrogate_rejection).

Requests to the peer (`request`, `request_with_callback`) are the one outgoing engine,
outgoing.Outgoing: its responses are taken before dispatch and never answered.

`refuse_requests(reason)` makes every later request -32600 (LSP after
`shutdown`, S9). While more than 4 MiB of output waits for the peer, serve()
pauses its input (S7); a peer that lets 64 MiB pile up is cut off.
At end of input, outstanding requests fail with ConnectionClosed, then the
`when_closed` callback runs, then incoming request tasks are cancelled (so a
door can mark its work as cut off before the cancellation reaches it).
serve() never closes the stream: whoever opened it does. DEBUG logs every
message's direction, method and id.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from askbridge.protocol.errors import RpcErrorCode

from . import messages as m
from .frames import StreamFrames
from .inbound import Inbound
from .messages import MessageId
from .outgoing import ACP, LSP, Dialect, LateReply, Outcome, Outgoing
from .writer import MessageWriter, OutputOverflow

__all__ = ["ACP", "LSP", "Connection", "Dialect", "Handler", "LateReply", "Outcome"]

logger = logging.getLogger("askbridge.jsonrpc")

Handler = Callable[[Any], Awaitable[Any]]


class Connection:
    def __init__(
        self,
        frames: Inbound | StreamFrames,
        out: MessageWriter,
        *,
        dialect: Dialect = LSP,
        id_prefix: str = "ab-",
    ) -> None:
        self._inbound = frames if isinstance(frames, Inbound) else Inbound.of(frames)
        self._out = out
        self._dialect = dialect
        self._requests: dict[str, Handler] = {}
        self._notifications: dict[str, Handler] = {}
        self._incoming: dict[MessageId, anyio.CancelScope] = {}
        self.outgoing = Outgoing(
            out, dialect, id_prefix=id_prefix, on_output_error=self._on_output_error
        )
        self.request = self.outgoing.request
        self.request_with_callback = self.outgoing.request_with_callback
        self._task_group: TaskGroup | None = None
        self._closed = False
        self._on_close: Callable[[], None] | None = None
        self._refusal: str | None = None
        self._debug = logger.isEnabledFor(logging.DEBUG)

    @property
    def closed(self) -> bool:
        """True once input has ended, the peer was cut off, or serve() has returned."""
        return self._closed

    @property
    def writer(self) -> MessageWriter:
        return self._out

    def on_request(self, method: str, handler: Handler) -> None:
        self._requests[method] = handler

    def on_notification(self, method: str, handler: Handler) -> None:
        self._notifications[method] = handler

    def when_closed(self, callback: Callable[[], None]) -> None:
        """`callback()` runs once when the connection closes (end of input, `stop()`, cut
        off, serve() cancelled), after outgoing requests failed and before the incoming
        request tasks are cancelled."""
        self._on_close = callback

    def refuse_requests(self, reason: str) -> None:
        """Answer every later request -32600 with `reason` (S9)."""
        self._refusal = reason

    # -- reading --------------------------------------------------------------------------

    async def serve(self) -> None:
        """Read and dispatch until input ends; then fail outgoing and cancel incoming work."""
        if self._task_group is not None or self._closed:
            raise RuntimeError("serve() runs once per connection")
        async with anyio.create_task_group() as tg:
            self._task_group = tg
            try:
                await self._inbound.serve(
                    self._out, self._dispatch, self._send, lambda: not self._closed
                )
            finally:
                self._close()
                self._out.flush()  # queued frames go out before anyone closes the stream
                tg.cancel_scope.cancel()

    def _close(self) -> None:
        first = not self._closed
        self._closed = True
        self.outgoing.close()
        if first and self._on_close is not None:
            try:
                self._on_close()
            except Exception:
                logger.exception("closing the connection failed")

    def stop(self) -> None:
        """Stop reading: serve() returns as at end of input (LSP `exit`)."""
        if self._closed:
            return
        self._close()
        if self._task_group is not None:
            self._task_group.cancel_scope.cancel()

    def cut_off(self, reason: str) -> None:
        """Stop serving this peer at once (it overflowed its output, S7)."""
        if self._closed:
            return
        logger.warning("cutting the connection off: %s", reason)
        self.stop()

    def _dispatch(self, body: bytes) -> Awaitable[None] | None:
        """Handle one body: what must wait (a request, a notification) is returned for
        the read task to await; the rest (responses, errors) is done when this returns —
        from the transport's `data_received` when no earlier frame waits (inbound.py)."""
        try:
            msg = m.decode(body)
        except m.ParseFailure as exc:
            resync = getattr(self._inbound.framer, "resync_in", None)
            if resync is not None and resync(body):
                logger.warning("resyncing inside a body that is not JSON")
            self._send(m.error(None, RpcErrorCode.PARSE_ERROR, str(exc)))
            return None
        if isinstance(msg, dict) and "method" not in msg:
            if self.outgoing.take(msg):
                return None  # never answered, even when malformed: no reply loops
            if "result" in msg or "error" in msg:
                _stray_response(msg)
                return None
        problem = m.invalid_reason(msg)
        if problem is not None:
            readable = isinstance(msg, dict) and m.is_id(msg.get("id"))
            self._send(
                m.error(msg["id"] if readable else None, RpcErrorCode.INVALID_REQUEST, problem)
            )
            return None
        if self._debug:
            logger.debug(
                "← %s %s id=%r",
                "request" if "id" in msg else "notification",
                msg["method"],
                msg.get("id"),
            )
        if m.refuse_lone_surrogate(msg, body, self._send):
            return None
        if "id" in msg:
            return self._on_request(msg["id"], msg["method"], msg.get("params"))
        return self._on_notification(msg["method"], msg.get("params"))

    async def _on_request(self, msg_id: MessageId, method: str, params: Any) -> None:
        handler = self._requests.get(method)
        if self._refusal is not None:
            reply = m.error(msg_id, RpcErrorCode.INVALID_REQUEST, self._refusal)
        elif handler is None:
            reply = m.error(msg_id, RpcErrorCode.METHOD_NOT_FOUND, f"Method not found: {method}")
        elif params is not None and not isinstance(params, dict | list):
            reply = m.error(msg_id, RpcErrorCode.INVALID_PARAMS, "params must be structured")
        elif msg_id in self._incoming:
            reply = m.error(msg_id, RpcErrorCode.INVALID_REQUEST, f"duplicate id {msg_id!r}")
        else:
            assert self._task_group is not None
            scope = self._incoming[msg_id] = anyio.CancelScope()
            self._task_group.start_soon(self._run_request, scope, msg_id, method, handler, params)
            # Let the handler run up to its first await before the next message is
            # read, so a notification right behind a request sees it started.
            await anyio.lowlevel.checkpoint()
            return
        self._send(reply)

    async def _run_request(
        self, scope: anyio.CancelScope, msg_id: MessageId, method: str, fn: Handler, params: Any
    ) -> None:
        reply: dict[str, Any] | None = None
        try:
            with scope:
                try:
                    reply = m.result(msg_id, await fn(params))
                except Exception as exc:
                    reply = m.error_reply(msg_id, method, exc)
            # Only the peer's cancel hits this scope (a cancellation from outside, end of
            # input, propagates instead): the MCP dialect leaves such a request unanswered
            # whatever its handler made of it; the others answer -32800 if it was cut short.
            if scope.cancel_called and not self._dialect.answers_cancelled:
                return
            if reply is None:
                reply = m.error(msg_id, RpcErrorCode.REQUEST_CANCELLED, "Request cancelled")
        finally:
            self._incoming.pop(msg_id, None)
        self._send(reply, method)
        try:
            await self._out.drain()  # a peer that does not read holds this task, no other
        except ConnectionError:
            pass

    async def _on_notification(self, method: str, params: Any) -> None:
        if method == self._dialect.cancel_method:
            target = params.get(self._dialect.cancel_key) if isinstance(params, dict) else None
            scope = self._incoming.get(target) if m.is_id(target) else None
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

    # -- writing --------------------------------------------------------------------------

    def _send(self, msg: dict[str, Any], method: str = "") -> None:
        """Queue a message; a reply that cannot be serialized becomes -32603."""
        try:
            self._out.write_nowait(msg)
        except (TypeError, ValueError) as exc:
            logger.error("reply to %r (%s) is not JSON", msg.get("id"), method, exc_info=exc)
            text = f"result is not JSON-serializable: {exc}"
            self._send(m.error(msg.get("id"), RpcErrorCode.INTERNAL_ERROR, text))
        except ConnectionError as exc:
            self._on_output_error(exc, method or str(msg.get("id")))

    def _on_output_error(self, exc: ConnectionError, what: str) -> None:
        if isinstance(exc, OutputOverflow):
            self.cut_off(str(exc))
        else:
            logger.debug("output closed; dropped %s", what)

    def notify(self, method: str, params: Any = None) -> None:
        """Queue a notification without waiting (callable from sync host callbacks).

        It leaves with the next request or reply, or within 1 ms (MessageWriter).
        Dropped quietly once the connection is closed.
        """
        if self._closed:
            return
        if self._debug:
            logger.debug("→ notification %s", method)
        try:
            self._out.write_nowait(m.call(method, params), urgent=False)
        except ConnectionError as exc:
            self._on_output_error(exc, method)


def _stray_response(msg: dict[str, Any]) -> None:
    """A response to nothing we sent (or already settled): logged, never answered."""
    msg_id = msg.get("id")
    if msg_id is None:
        logger.warning("peer reported an error without an id: %r", msg.get("error"))
    else:
        logger.info("ignoring a response to unknown or settled id %r", msg_id)
