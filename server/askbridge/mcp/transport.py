"""The MCP door's wire: newline-delimited JSON-RPC on the host's asyncio streams, handed to
the SDK as its `SessionMessage` streams (protocol.md "MCP front door"; S3, S7, S8, L7).

The SDK's own stdio transport reads `sys.stdin` in a worker thread; a front door
of the host serves descriptors it was handed (H4), so this bridge takes any
`asyncio.StreamReader`/`StreamWriter` pair instead and keeps the project's
input rules, which the SDK's transport does not:

- reading (`jsonrpc.LineReader`): one message per line, a line over 8 MiB is
  refused (-32600, id null) without being buffered whole, and reading pauses
  while more than 4 MiB of output wait for the client (S7);
- decoding (`jsonrpc.messages.decode`): invalid JSON, NaN and nesting too
  deep for the parser are -32700 (id null); a request holding a lone
  surrogate is -32602 naming the field (S3); JSON that is not a JSON-RPC
  message, or a batch, is -32600 — and the connection goes on (S8);
- writing (`jsonrpc.MessageWriter`): compact frames, queued without
  interleaving, a client that stops reading is cut off past 64 MiB (S7).

`ServerRequests` sends the door's own requests to the client (form
elicitation) on the same writer and resolves their responses before the SDK
sees them: when the door stops waiting (another client answered, the deadline
passed) it sends `notifications/cancelled` at once, and a response that still
arrives goes to the request's late handler — an answer to a question that went
pending becomes a late reply (L7). The SDK's dispatcher drops such responses.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from askbridge.jsonrpc import LineReader, MessageWriter, line_frame
from askbridge.jsonrpc import messages as m
from askbridge.jsonrpc.messages import ConnectionClosed, RpcResponseError
from askbridge.protocol.errors import RpcErrorCode
from askbridge.protocol.text import LONE_SURROGATE_MESSAGE

log = logging.getLogger("askbridge.mcp")

LateResponse = Callable[[Any, RpcResponseError | None], None]
MAX_ABANDONED = 1024  # abandoned requests that keep a late handler (L7); older ones drop


class ServerRequests:
    """Requests from the door to the client, answered through the bridge."""

    def __init__(self, out: MessageWriter) -> None:
        self._out = out
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self._abandoned: OrderedDict[str, LateResponse] = OrderedDict()
        self._closed = False

    async def request(self, method: str, params: Any, on_late: LateResponse | None = None) -> Any:
        """The result; RpcResponseError for an error reply, ConnectionClosed when gone."""
        if self._closed:
            raise ConnectionClosed("the MCP client is gone")
        request_id = f"askbridge-{next(self._ids)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            self._out.write_nowait(m.call(method, params, request_id))
            return await future
        except ConnectionError as exc:
            raise ConnectionClosed(str(exc)) from exc
        except anyio.get_cancelled_exc_class():
            self._abandon(request_id, on_late)
            raise
        finally:
            self._pending.pop(request_id, None)

    def _abandon(self, request_id: str, on_late: LateResponse | None) -> None:
        """Tell the client at once, without waiting for it (A9); keep the late handler."""
        if on_late is not None:
            self._abandoned[request_id] = on_late
            while len(self._abandoned) > MAX_ABANDONED:
                self._abandoned.popitem(last=False)
        params = {"requestId": request_id, "reason": "askbridge no longer needs this answer"}
        try:
            self._out.write_nowait(m.call("notifications/cancelled", params))
        except ConnectionError:
            pass

    def take(self, msg: dict[str, Any]) -> bool:
        """Resolve `msg` when it answers one of our requests; False for anything else."""
        request_id = msg.get("id")
        if "method" in msg or not isinstance(request_id, str):
            return False
        future = self._pending.get(request_id)
        late = None if future is not None else self._abandoned.pop(request_id, None)
        if future is None and late is None:
            return False
        result, error = m.response_outcome(msg)
        if future is not None:
            if not future.done():
                future.set_exception(error) if error is not None else future.set_result(result)
        elif late is not None:
            late(result, error)
        return True

    def close(self) -> None:
        self._closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionClosed("the MCP client's input ended"))
        self._abandoned.clear()


class Wire:
    """One connection's bridge; `streams()` runs the pumps while the SDK serves."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        on_end_of_input: Callable[[], None] | None = None,
    ) -> None:
        self._lines = LineReader(reader)
        self.out = MessageWriter(writer, line_frame)
        self.requests = ServerRequests(self.out)
        self._on_end_of_input = on_end_of_input

    @asynccontextmanager
    async def streams(
        self,
    ) -> AsyncIterator[
        tuple[
            MemoryObjectReceiveStream[SessionMessage | Exception],
            MemoryObjectSendStream[SessionMessage],
        ]
    ]:
        to_sdk, from_wire = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        to_wire, from_sdk = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._pump_in, to_sdk)
            tg.start_soon(self._pump_out, from_sdk)
            try:
                yield from_wire, to_wire
            finally:
                tg.cancel_scope.cancel()
                self.out.flush()

    async def _pump_in(self, to_sdk: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        async with to_sdk:
            while True:
                await self.out.wait_writable()  # S7: a client that does not read waits
                frame = await self._lines.next_frame()
                if frame is None:
                    break
                if frame.problem is not None:
                    log.warning("refused a line: %s", frame.detail)
                    self._reply_error(None, RpcErrorCode.INVALID_REQUEST, frame.detail)
                    continue
                message = self._decode(frame.body)
                if message is not None:
                    await to_sdk.send(SessionMessage(message))
            # End of input: the door marks its calls as cut off before the SDK cancels them.
            self.requests.close()
            if self._on_end_of_input is not None:
                self._on_end_of_input()

    def _decode(self, body: bytes) -> types.JSONRPCMessage | None:
        """The SDK's message, or None when this line was answered (or dropped) here."""
        try:
            obj = m.decode(body)
        except m.ParseFailure as exc:
            self._reply_error(None, RpcErrorCode.PARSE_ERROR, str(exc))
            return None
        if not isinstance(obj, dict):
            self._reply_error(None, RpcErrorCode.INVALID_REQUEST, m.invalid_reason(obj) or "")
            return None
        if self.requests.take(obj):
            return None
        msg_id = obj.get("id") if m.is_id(obj.get("id")) else None
        if m.may_hold_surrogates(body):
            path = m.lone_surrogate_path(obj.get("params"), "params")
            if path is not None:
                if msg_id is not None and "method" in obj:
                    self._reply_error(
                        msg_id, RpcErrorCode.INVALID_PARAMS, f"{path} {LONE_SURROGATE_MESSAGE}"
                    )
                return None  # a notification or response nobody could store: dropped
        try:
            return types.jsonrpc_message_adapter.validate_python(obj, by_name=False)
        except ValidationError:
            reason = m.invalid_reason(obj) or "Invalid request: not a JSON-RPC 2.0 message"
            self._reply_error(msg_id, RpcErrorCode.INVALID_REQUEST, reason)
            return None

    def _reply_error(self, msg_id: m.MessageId | None, code: int, message: str) -> None:
        try:
            self.out.write_nowait(m.error(msg_id, code, message))
        except ConnectionError:
            pass

    async def _pump_out(self, from_sdk: MemoryObjectReceiveStream[SessionMessage]) -> None:
        broken = False
        async with from_sdk:
            async for session_message in from_sdk:
                if broken:
                    continue  # keep taking what the SDK writes, so no handler blocks on it
                wire = session_message.message.model_dump(
                    by_alias=True, mode="json", exclude_unset=True
                )
                try:
                    await self.out.write(wire)
                except ConnectionError as exc:  # gone, or cut off (S7): the rest is dropped
                    log.info("MCP client output closed: %s", exc)
                    broken = True
