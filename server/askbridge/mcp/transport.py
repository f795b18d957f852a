"""The MCP door's wire: newline-delimited JSON-RPC on the host's asyncio streams, handed to
the SDK as its `SessionMessage` streams (protocol.md "MCP front door"; S3, S7, S8, L7).

The SDK's own stdio transport reads `sys.stdin` in a worker thread; a front door
of the host serves descriptors it was handed (H4), so this bridge takes any read
side (`jsonrpc.Input`: a read pipe's protocol or a stream) and `StreamWriter`
instead and keeps the project's input rules, which the SDK's transport does
not — with the same code every other door runs on:

- reading (`jsonrpc.LineFramer`, `jsonrpc.Inbound`): one message per
  line, a line over 8 MiB is refused (-32600, id null) without being buffered
  whole, and reading pauses while more than 4 MiB of output wait for the
  client (S7); a response to the door's own request is taken in the loop turn its
  bytes arrive;
- decoding (`jsonrpc.messages`): invalid JSON, NaN and nesting too deep for
  the parser are -32700 (id null); a request whose id is not a string or an
  integer is -32600 (id null, S19); a request holding a lone surrogate is
  -32602 naming the field (S3); JSON that is not a JSON-RPC message, or a
  batch, is -32600 — and the connection goes on (S8);
- writing (`jsonrpc.MessageWriter`): compact frames, queued without
  interleaving, a client that stops reading is cut off past 64 MiB (S7);
- the door's own requests to the client (form elicitation) go through
  `jsonrpc.Outgoing`, the engine every door uses (`wire.requests`), with the
  MCP dialect: ids `askbridge-N`, withdrawal by `notifications/cancelled` at
  once, and a response that still arrives goes to the request's late handler —
  an answer to a question that went pending becomes a late reply (L7). Its
  responses are taken before the SDK sees them (the SDK's dispatcher would
  drop them).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from askbridge.jsonrpc import (
    MCP,
    Inbound,
    Input,
    LineFramer,
    MessageWriter,
    Outgoing,
    line_frame,
)
from askbridge.jsonrpc import messages as m
from askbridge.protocol.errors import RpcErrorCode

log = logging.getLogger("askbridge.mcp")


class Wire:
    """One connection's bridge; `streams()` runs the pumps while the SDK serves."""

    def __init__(
        self,
        reader: Input,
        writer: asyncio.StreamWriter,
        on_end_of_input: Callable[[], None] | None = None,
    ) -> None:
        self._lines = Inbound.over(reader, LineFramer())
        self.out = MessageWriter(writer, line_frame)
        self.requests = Outgoing(self.out, MCP, id_prefix="askbridge-")
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
        def on_body(body: bytes) -> Awaitable[None] | None:
            message = self._decode(body)  # None: answered (or taken) here, at once
            return None if message is None else to_sdk.send(SessionMessage(message))

        async with to_sdk:
            await self._lines.serve(self.out, on_body, self._reply)
            # End of input: the door marks its calls as cut off before the SDK cancels them.
            self.requests.close("the MCP client's input ended")
            if self._on_end_of_input is not None:
                self._on_end_of_input()

    def _decode(self, body: bytes) -> types.JSONRPCMessage | None:
        """The SDK's message, or None when this line was answered (or dropped) here."""
        try:
            obj = m.decode(body)
        except m.ParseFailure as exc:
            self._reply(m.error(None, RpcErrorCode.PARSE_ERROR, str(exc)))
            return None
        if not isinstance(obj, dict):
            self._reply(m.error(None, RpcErrorCode.INVALID_REQUEST, m.invalid_reason(obj) or ""))
            return None
        if self.requests.take(obj):
            return None
        # S19: the SDK reads a request with an id it cannot use (null, an object, a bool)
        # as a notification, or coerces it (1.0 → 1); the peer would wait for ever.
        problem = m.invalid_reason(obj) if "method" in obj else None
        if problem is not None:
            msg_id = obj.get("id") if m.is_id(obj.get("id")) else None
            self._reply(m.error(msg_id, RpcErrorCode.INVALID_REQUEST, problem))
            return None
        if m.refuse_lone_surrogate(obj, body, self._reply):
            return None
        try:
            return types.jsonrpc_message_adapter.validate_python(obj, by_name=False)
        except ValidationError:
            msg_id = obj.get("id") if m.is_id(obj.get("id")) else None
            reason = m.invalid_reason(obj) or "Invalid request: not a JSON-RPC 2.0 message"
            self._reply(m.error(msg_id, RpcErrorCode.INVALID_REQUEST, reason))
            return None

    def _reply(self, message: m.Message) -> None:
        try:
            self.out.write_nowait(message)
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
