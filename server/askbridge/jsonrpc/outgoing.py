"""The one outgoing-request engine: every door's requests to its client (cards, forms,
permission requests) — ids, timeouts, withdrawal, late replies (A9, L7, X1–X6).

    requests = Outgoing(writer, LSP)               # Connection builds one; the MCP door too
    result = await requests.request("userQuestions/ask", params, on_late=late)
    withdraw = requests.request_with_callback("userQuestions/ask", params, on_done, late)
    requests.take(msg)                             # a response: True when it was ours

Ids are strings (`ab-1`, …), so a peer's integer ids never collide with ours.
`request()` waits; `request_with_callback()` calls `on_done(result, error)` instead of
holding a task, so 10,000 questions may be out at once for the size of a
small record each. When the awaiting task is cancelled or times out, or the
request is withdrawn, the peer's cancel notification (the `Dialect`: LSP
`$/cancelRequest {id}`, ACP `$/cancel_request {requestId}`, MCP
`notifications/cancelled {requestId, reason}`) is queued without waiting for
the peer (A9), as a notification: it leaves with the next frame or within the
writer's `notify_delay` (1 ms) — after a first answer, with the updates and the
next card, in one write per window. A reply that still comes goes, in this one place, to the
request's `on_late(result, error)` when it has one (the doors take a late
answer to a question as a late reply, L7); without one, an error reply is the
peer closing what we withdrew (first answer won elsewhere, the wait ended:
DEBUG), and only a result is a late reply that nobody takes (INFO). A response
that is neither result nor error, or an error that is not an error object, is
an error reply (MalformedReply, S8).

`close()` (end of input) fails what is outstanding with ConnectionClosed.
`client_failure(exc)` is the one mapping of such a failure for every door:
what it means to the host that asked (ClientGone, ClientErrorReply).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel

from askbridge.protocol.errors import ClientErrorReply, ClientGone, RpcErrorCode

from . import messages as m
from .messages import ConnectionClosed, MessageId, RpcResponseError
from .writer import MessageWriter

logger = logging.getLogger("askbridge.jsonrpc")

LateReply = Callable[[Any, RpcResponseError | None], None]
# What `request_with_callback` calls with the outcome: (result, None) or (None, the error).
Outcome = Callable[[Any, Exception | None], None]
# How many withdrawn requests keep a late-reply callback (L7); older ones are dropped.
MAX_ABANDONED = 4096


@dataclass(frozen=True)
class Dialect:
    """How a protocol names request cancellation."""

    cancel_method: str = "$/cancelRequest"
    cancel_key: str = "id"
    cancel_reason: str | None = None  # MCP's notifications/cancelled says why
    # Whether a request the peer cancelled is answered (-32800): MCP's never is, the
    # peer no longer waits for it (its specification: no response to a cancelled request).
    answers_cancelled: bool = True

    def cancel(self, msg_id: MessageId) -> m.Message:
        params: dict[str, Any] = {self.cancel_key: msg_id}
        if self.cancel_reason is not None:
            params["reason"] = self.cancel_reason
        return m.call(self.cancel_method, params)


LSP = Dialect()
ACP = Dialect("$/cancel_request", "requestId")
MCP = Dialect(
    "notifications/cancelled",
    "requestId",
    "askbridge no longer needs this answer",
    answers_cancelled=False,
)


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


@dataclass(slots=True)
class _Pending:
    done: _Done | None = None  # what `request` waits on (`request_with_callback` has `on_done`)
    result: Any = None
    error: Exception | None = None
    on_done: Outcome | None = None  # request_with_callback's callback instead of a waiting task
    settled: bool = False

    def settle(self, result: Any, error: Exception | None) -> None:
        self.result, self.error = result, error
        self.settled = True
        if self.done is not None:
            self.done.set()
        if self.on_done is not None:
            try:
                self.on_done(result, error)
            except Exception:
                logger.exception("the callback of an outgoing request failed")


def client_failure(exc: Exception) -> Exception:
    """What a request's failure means to the host, for every door: the connection gone
    (ClientGone), or the client's error reply — its own message (E1, not the RPC error's
    str), its data (E2 rebuilds ours) and its code (a door may take -32601 as "does not
    have it"). Anything else as it is."""
    if isinstance(exc, RpcResponseError):
        return ClientErrorReply(exc.message, exc.data, exc.code)
    if isinstance(exc, ConnectionClosed):
        return ClientGone(str(exc))
    return exc


def is_method_not_found(failure: Exception) -> bool:
    """The client answered -32601: it does not have the method (a door stops using it)."""
    return isinstance(failure, ClientErrorReply) and failure.code == RpcErrorCode.METHOD_NOT_FOUND


def _log_output_error(exc: ConnectionError, what: str) -> None:
    logger.debug("output closed; dropped %s (%s)", what, exc)


class Outgoing:
    def __init__(
        self,
        out: MessageWriter,
        dialect: Dialect = LSP,
        *,
        id_prefix: str = "ab-",
        on_output_error: Callable[[ConnectionError, str], None] = _log_output_error,
    ) -> None:
        """`on_output_error(exc, what)`: a write failed (the Connection cuts an overflowing
        peer off, S7)."""
        self._out = out
        self._dialect = dialect
        self._id_prefix = id_prefix
        self._on_output_error = on_output_error
        self._ids = itertools.count(1)
        self._pending: dict[str, _Pending] = {}
        self._abandoned: OrderedDict[str, LateReply | None] = OrderedDict()
        self._closed = False
        self._debug = logger.isEnabledFor(logging.DEBUG)

    def close(self, reason: str = "the peer's input ended") -> None:
        """No more requests; the outstanding ones fail with ConnectionClosed(reason)."""
        self._closed = True
        for msg_id, pending in list(self._pending.items()):
            if not pending.settled:
                if pending.on_done is not None:
                    del self._pending[msg_id]
                pending.settle(None, ConnectionClosed(reason))

    def take(self, msg: m.Message) -> bool:
        """Settle the request `msg` answers (or hand it to its late handler); False when
        `msg` is not a response to one of ours."""
        msg_id = msg.get("id")
        if "method" in msg or not isinstance(msg_id, str):
            return False
        pending = self._pending.get(msg_id)
        if pending is None and msg_id not in self._abandoned:
            return False
        if self._debug:
            logger.debug("← response id=%r", msg_id)
        value, err = m.response_outcome(msg)
        if pending is not None:
            if pending.settled:  # a second response to one request
                logger.info("ignoring a response to settled id %r", msg_id)
            else:
                if pending.on_done is not None:
                    del self._pending[msg_id]  # nobody waits to clean up after it
                pending.settle(value, err)
            return True
        on_late = self._abandoned.pop(msg_id)
        if on_late is not None:
            try:
                on_late(value, err)
            except Exception:
                logger.exception("late reply to %s failed", msg_id)
        elif err is not None:
            logger.debug("the peer closed %s after it was withdrawn: %s", msg_id, err)
        else:
            logger.info("dropped the late reply to %s: the request was withdrawn", msg_id)
        return True

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
        msg_id = self._send(method, params)
        done = _Done()
        pending = self._pending[msg_id] = _Pending(done)
        try:
            if timeout is None:  # no deadline: skip fail_after's cancel scope (a hot path)
                await done.wait()
            else:
                with anyio.fail_after(timeout):
                    await done.wait()
        except BaseException:
            if not pending.settled:
                self._abandon(msg_id, on_late)
            raise
        finally:
            del self._pending[msg_id]
        if pending.error is not None:
            raise pending.error
        return pending.result

    def request_with_callback(
        self, method: str, params: Any, on_done: Outcome, on_late: LateReply | None = None
    ) -> Callable[[], None]:
        """`request` without a waiting task: `on_done(result, error)` is called once with
        its outcome (the errors of `request`), unless the returned `withdraw()` is called
        first, which sends the cancel notification (A9) and routes a late reply to
        `on_late`, as a cancelled `request` does. Raises ConnectionClosed at once when
        the request cannot be sent."""
        msg_id = self._send(method, params)
        pending = self._pending[msg_id] = _CallbackRequest(self, msg_id, on_done, on_late)
        return pending

    def callback_requests(self) -> list[tuple[Callable[[], None], Outcome]]:
        """The `request_with_callback` requests still out, each as (its withdraw, its callback): a
        door that must end its own (LSP `shutdown`) finds them here, not in a copy."""
        return [
            (p, p.on_done)
            for p in self._pending.values()
            if isinstance(p, _CallbackRequest) and p.on_done
        ]

    def _send(self, method: str, params: Any) -> str:
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
        # No await: this runs in a cancelled task and must not wait on the peer (A9). A
        # notification, so it rides with whatever follows within notify_delay (writer.py).
        try:
            self._out.write_nowait(self._dialect.cancel(msg_id), urgent=False)
        except ConnectionError as exc:
            self._on_output_error(exc, self._dialect.cancel_method)


class _CallbackRequest(_Pending):
    """A `request_with_callback` request while it is out, and its withdraw (calling it): one record,
    not an event and a closure, as it lives as long as its request (a question's card may
    wait for hours; thousands may wait at once)."""

    __slots__ = ("_msg_id", "_on_late", "_owner")

    def __init__(
        self, owner: Outgoing, msg_id: str, on_done: Outcome, on_late: LateReply | None
    ) -> None:
        super().__init__(on_done=on_done)
        self._owner, self._msg_id, self._on_late = owner, msg_id, on_late

    def __call__(self) -> None:
        owner, msg_id = self._owner, self._msg_id
        if owner._pending.get(msg_id) is self and not self.settled:
            del owner._pending[msg_id]
            self.settled = True
            owner._abandon(msg_id, self._on_late)
