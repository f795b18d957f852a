"""One JSON-RPC 2.0 connection for every door: dispatch in, requests out, cancellation both ways.

    conn = Connection(FrameReader(reader), MessageWriter(writer))   # LSP framing
    conn = Connection(LineReader(reader), MessageWriter(writer, line_frame), dialect=ACP)
    conn.on_request("session/new", handle_new)    # async def handle_new(params) -> result
    await conn.serve()                            # returns when input ends

Handlers get the raw `params` (dict, list or None). Each incoming request runs
in its own task and cancel scope in serve()'s task group; the peer's cancel
notification (`$/cancelRequest {id}` for LSP, `$/cancel_request {requestId}`
for ACP: the `Dialect`) cancels it and the reply is -32800. Notification
handlers run inline, in arrival order (so `exit` completes before end of input
is seen): keep them quick. Every failure a handler raises becomes a wire error
in `messages.error_reply`, and nothing a peer sends ends the connection (S8):
a problem frame (oversized, malformed header) is -32600 with `id: null`; a
body that is not JSON is -32700 (after which the LSP reader resyncs inside
it); JSON that is not a request or notification is -32600; a request holding a
lone surrogate is -32602 naming the field (S3).

`request()` sends with string ids (`ab-1`, …); `request_soon()` sends the
same way with a callback instead of a waiting task (10,000 questions may be
out at once). When the awaiting task is cancelled or times out, or the
request is withdrawn, the cancel notification is queued without waiting for
the peer (A9). Its late reply then goes, in this one place, to the
request's `on_late(result, error)` callback when it has one (the relays take
a late answer to a question as a late reply, L7), else it is dropped with a
log line. A response that is neither result nor error, or an error that is not
an error object, is an error reply (MalformedReply, S8): the server never
answers a response.

`refuse_requests(reason)` makes every later request -32600 (LSP after
`shutdown`, S9). While more than 4 MiB of output waits for the peer, serve()
stops reading its input (S7); a peer that lets 64 MiB pile up is cut off.
At end of input, outstanding requests fail with ConnectionClosed and incoming
request tasks are cancelled. serve() never closes the stream: whoever opened
it does. DEBUG logs every message's direction, method and id.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from askbridge.protocol.errors import RpcErrorCode
from askbridge.protocol.text import LONE_SURROGATE_MESSAGE

from . import messages as m
from .framing import Frame
from .messages import ConnectionClosed, MessageId, RpcResponseError
from .writer import MessageWriter, OutputOverflow

logger = logging.getLogger("askbridge.jsonrpc")

Handler = Callable[[Any], Awaitable[Any]]
LateReply = Callable[[Any, RpcResponseError | None], None]
# How many abandoned requests keep a late-reply callback (L7); older ones are dropped.
MAX_ABANDONED = 4096


class FrameSource(Protocol):
    async def next_frame(self) -> Frame | None: ...


@dataclass(frozen=True)
class Dialect:
    """How a protocol names request cancellation: LSP `$/cancelRequest {id}`, ACP
    `$/cancel_request {requestId}`."""

    cancel_method: str = "$/cancelRequest"
    cancel_key: str = "id"


LSP = Dialect()
ACP = Dialect("$/cancel_request", "requestId")


class _Done:
    """A one-shot event for one waiter, on a bare asyncio future.

    Semantics of `anyio.Event` (`wait()` is a checkpoint even once set), at a fifth
    of its size: 10,000 outgoing questions may be waiting at once.
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


# What `request_soon` calls with the outcome: (result, None) or (None, the error).
Outcome = Callable[[Any, Exception | None], None]


@dataclass(slots=True)
class _Pending:
    done: _Done = field(default_factory=_Done)
    result: Any = None
    error: Exception | None = None
    on_done: Outcome | None = None  # request_soon's callback instead of a waiting task

    def settle(self, result: Any, error: Exception | None) -> None:
        self.result, self.error = result, error
        self.done.set()
        if self.on_done is not None:
            try:
                self.on_done(result, error)
            except Exception:
                logger.exception("the callback of an outgoing request failed")


class Connection:
    def __init__(
        self,
        frames: FrameSource,
        out: MessageWriter,
        *,
        dialect: Dialect = LSP,
        id_prefix: str = "ab-",
    ) -> None:
        self._frames = frames
        self._out = out
        self._dialect = dialect
        self._requests: dict[str, Handler] = {}
        self._notifications: dict[str, Handler] = {}
        self._incoming: dict[MessageId, anyio.CancelScope] = {}
        self._outgoing: dict[str, _Pending] = {}
        self._abandoned: OrderedDict[str, LateReply | None] = OrderedDict()
        self._id_prefix = id_prefix
        self._ids = itertools.count(1)
        self._task_group: TaskGroup | None = None
        self._closed = False
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
                while not self._closed:
                    await self._out.wait_writable()  # S7: a peer that does not read waits
                    frame = await self._frames.next_frame()
                    if frame is None:
                        break
                    if frame.problem is None:
                        await self._dispatch(frame.body)
                    else:
                        detail = f"{frame.problem.value}: {frame.detail}"
                        logger.warning("refused a frame: %s", detail)
                        self._send(m.error(None, RpcErrorCode.INVALID_REQUEST, detail))
            finally:
                self._close()
                self._out.flush()  # queued frames go out before anyone closes the stream
                tg.cancel_scope.cancel()

    def _close(self) -> None:
        self._closed = True
        for msg_id, pending in list(self._outgoing.items()):
            if not pending.done.is_set():
                if pending.on_done is not None:
                    del self._outgoing[msg_id]
                pending.settle(None, ConnectionClosed("the peer's input ended"))

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
        self._close()
        if self._task_group is not None:
            self._task_group.cancel_scope.cancel()

    async def _dispatch(self, body: bytes) -> None:
        try:
            msg = m.decode(body)
        except m.ParseFailure as exc:
            resync = getattr(self._frames, "resync_in", None)
            if resync is not None and resync(body):
                logger.warning("resyncing inside a body that is not JSON")
            self._send(m.error(None, RpcErrorCode.PARSE_ERROR, str(exc)))
            return
        if isinstance(msg, dict) and "method" not in msg:
            msg_id = msg.get("id")
            ours = isinstance(msg_id, str) and (
                msg_id in self._outgoing or msg_id in self._abandoned
            )
            if "result" in msg or "error" in msg or ours:
                self._on_response(msg)
                return  # never answered, even when malformed: no reply loops
        problem = m.invalid_reason(msg)
        if problem is not None:
            readable = isinstance(msg, dict) and m.is_id(msg.get("id"))
            self._send(
                m.error(msg["id"] if readable else None, RpcErrorCode.INVALID_REQUEST, problem)
            )
            return
        method, params = msg["method"], msg.get("params")
        bad = m.lone_surrogate_path(params) if m.may_hold_surrogates(body) else None
        if "id" not in msg:
            if self._debug:
                logger.debug("← notification %s", method)
            if bad is not None:
                logger.warning("dropped notification %s: %s holds a lone surrogate", method, bad)
                return
            await self._on_notification(method, params)
            return
        msg_id = msg["id"]
        if self._debug:
            logger.debug("← request %s id=%r", method, msg_id)
        if bad is not None:
            field_name = bad or "params"
            text = LONE_SURROGATE_MESSAGE
            err = {"errors": [{"field": field_name, "message": text}]}
            detail = f"invalid params: {field_name}: {text}"
            self._send(m.error(msg_id, RpcErrorCode.INVALID_PARAMS, detail, err))
            return
        await self._on_request(msg_id, method, params)

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
            # Reaching here without a reply means the peer's cancel hit the scope;
            # a cancellation from outside (end of input) propagates instead.
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

    def _on_response(self, msg: dict[str, Any]) -> None:
        msg_id = msg.get("id")
        if self._debug:
            logger.debug("← response id=%r", msg_id)
        if not isinstance(msg_id, str):
            if msg_id is None:
                logger.warning("peer reported an error without an id: %r", msg.get("error"))
            else:  # ours are strings
                logger.info("ignoring a response to unknown or settled id %r", msg_id)
            return
        value, err = m.response_outcome(msg)
        pending = self._outgoing.get(msg_id)
        if pending is not None and not pending.done.is_set():
            if pending.on_done is not None:
                del self._outgoing[msg_id]  # nobody waits to clean up after it
            pending.settle(value, err)
            return
        if msg_id in self._abandoned:
            on_late = self._abandoned.pop(msg_id)
            if on_late is not None:
                try:
                    on_late(value, err)
                except Exception:
                    logger.exception("late reply to %s failed", msg_id)
                return
            logger.info("dropped the late reply to %s: the request was withdrawn", msg_id)
            return
        logger.info("ignoring a response to unknown or settled id %r", msg_id)

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

    async def request(
        self,
        method: str,
        params: Any = None,
        timeout: float | None = None,  # noqa: ASYNC109 - sends the cancel notification
        on_late: LateReply | None = None,
    ) -> Any:
        """Send a request and wait for its result.

        Raises RpcResponseError for an error reply, ConnectionClosed when input ends
        first, TimeoutError after `timeout` seconds. On timeout or cancellation the
        peer gets the cancel notification, and a late reply goes to `on_late`.
        """
        msg_id = self._send_request(method, params)
        pending = self._outgoing[msg_id] = _Pending()
        try:
            if timeout is None:  # no deadline: skip fail_after's cancel scope (a hot path)
                await pending.done.wait()
            else:
                with anyio.fail_after(timeout):
                    await pending.done.wait()
        except BaseException:
            if not pending.done.is_set():
                self._abandon(msg_id, on_late)
            raise
        finally:
            del self._outgoing[msg_id]
        if pending.error is not None:
            raise pending.error
        return pending.result

    def request_soon(
        self, method: str, params: Any, on_done: Outcome, on_late: LateReply | None = None
    ) -> Callable[[], None]:
        """`request` without a waiting task: `on_done(result, error)` is called once with
        its outcome (the errors of `request`), unless the returned `withdraw()` is called
        first, which sends the cancel notification (A9) and routes a late reply to
        `on_late`, as a cancelled `request` does. Raises ConnectionClosed at once when
        the request cannot be sent."""
        msg_id = self._send_request(method, params)
        pending = self._outgoing[msg_id] = _Pending(on_done=on_done)

        def withdraw() -> None:
            if self._outgoing.get(msg_id) is pending and not pending.done.is_set():
                del self._outgoing[msg_id]
                pending.done.set()
                self._abandon(msg_id, on_late)

        return withdraw

    def _send_request(self, method: str, params: Any) -> str:
        if self._closed:
            raise ConnectionClosed("the peer's input ended")
        msg_id = f"{self._id_prefix}{next(self._ids)}"
        if self._debug:
            logger.debug("→ request %s id=%s", method, msg_id)
        try:
            self._out.write_nowait(m.call(method, params, msg_id))
        except ConnectionError as exc:
            self._on_output_error(exc, method)
            raise ConnectionClosed(f"output closed; {method} not sent") from exc
        return msg_id

    def _abandon(self, msg_id: str, on_late: LateReply | None) -> None:
        self._abandoned[msg_id] = on_late
        if len(self._abandoned) > MAX_ABANDONED:
            self._abandoned.popitem(last=False)
        if self._closed:
            return
        # No await: this runs in a cancelled task and must not wait on the peer (A9).
        cancel = {self._dialect.cancel_key: msg_id}
        try:
            self._out.write_nowait(m.call(self._dialect.cancel_method, cancel))
        except ConnectionError as exc:
            self._on_output_error(exc, self._dialect.cancel_method)
