"""One real Host with its real doors, in this process, spoken to in raw messages over os.pipe()s.

Until the host process (`askbridge host`, `--host auto`) lands, two askbridge
processes cannot share a data directory, so "an editor answers what an MCP
agent asked" runs here: a Host on a real SQLite data directory, the LSP door
(`LspServer`, as `askbridge serve` runs it) and the MCP door (`serve_mcp`, as
`askbridge mcp` runs it), each on its own pair of real pipes, with raw peers
on the other ends (LSP frames for the editor, JSON lines for the MCP client).
The fan-out, subscriptions, views and late replies are the host's real ones.

    async with bench(tmp_path) as b:
        editor = await b.editor()                  # initialized, renders questions
        agent = await b.agent(elicitation=False)   # initialized MCP client
        call = agent.call_tool("ask_user_question", {...})   # request id
        ask = await editor.request("userQuestions/ask")

Time is a `ManualClock` (`b.clock.advance(ms)`); nothing here sleeps on it.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from askbridge.core import ManualClock
from askbridge.host.host import Host
from askbridge.host.store.datadir import open_store
from askbridge.jsonrpc import FrameReader, LineReader, MessageWriter, line_frame, lsp_connection
from askbridge.jsonrpc.stdio import open_read_pipe, open_write_pipe
from askbridge.lsp.server import LspServer
from askbridge.mcp.door import serve_mcp

WAIT_S = 10.0
CAPABLE = {"experimental": {"userQuestions": {"version": 1}}}
Message = dict[str, Any]
Journal = list[tuple[str, str, Message]]  # (door peer, "client"|"server", message), in order


class Peer:
    """A raw client on one door: send messages, receive them in order, look ahead."""

    def __init__(
        self, name: str, frames: Any, out: MessageWriter, journal: Journal | None = None
    ) -> None:
        self.name = name
        self._frames = frames
        self.out = out
        self.backlog: list[Message] = []
        self.journal = journal if journal is not None else []
        self._ids = 0

    def _record(self, sender: str, message: Message) -> None:
        self.journal.append((self.name, sender, message))

    def send(self, message: Message) -> None:
        self._record("client", message)
        self.out.write_nowait(message)

    def send_raw(self, data: bytes) -> None:
        self.out.flush()
        self.out._writer.write(data)

    def request_id(self) -> int:
        self._ids += 1
        return self._ids

    def call(self, method: str, params: Any = None) -> int:
        msg_id = self.request_id()
        message: Message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return msg_id

    def notify(self, method: str, params: Any = None) -> None:
        message: Message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def respond(self, msg_id: Any, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    async def receive(self, timeout: float = WAIT_S) -> Message:
        with anyio.fail_after(timeout):
            frame = await self._frames.next_frame()
        if frame is None:
            raise EOFError(f"{self.name}: the door closed its output")
        assert frame.problem is None, frame
        message: Message = json.loads(frame.body)
        self._record("server", message)
        return message

    async def expect(self, test: Callable[[Message], bool], timeout: float = WAIT_S) -> Message:
        for i, message in enumerate(self.backlog):
            if test(message):
                return self.backlog.pop(i)
        with anyio.fail_after(timeout):
            while True:
                message = await self.receive(timeout)
                if test(message):
                    return message
                self.backlog.append(message)

    async def response(self, msg_id: Any) -> Message:
        return await self.expect(lambda m: m.get("id") == msg_id and "method" not in m)

    async def result(self, msg_id: Any) -> Any:
        reply = await self.response(msg_id)
        assert "result" in reply, reply
        return reply["result"]

    async def request(self, method: str) -> Message:
        return await self.expect(lambda m: m.get("method") == method and "id" in m)

    async def notification(
        self, method: str, test: Callable[[Any], bool] = lambda p: True
    ) -> Message:
        return await self.expect(
            lambda m: m.get("method") == method and "id" not in m and test(m.get("params"))
        )

    def close(self) -> None:
        if not self.out.is_closing():
            self.out.close()


class Agent(Peer):
    """The MCP client: JSON lines."""

    exit_status: int | None = None

    async def initialize(self, *, elicitation: bool, name: str = "bench-agent") -> Message:
        capabilities: dict[str, Any] = {"elicitation": {"form": {}}} if elicitation else {}
        params = {
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": {"name": name, "version": "1.0"},
        }
        result = await self.result(self.call("initialize", params))
        self.notify("notifications/initialized")
        return dict(result)

    def call_tool(self, name: str, arguments: Any, progress_token: Any = None) -> int:
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        return self.call("tools/call", params)


class Editor(Peer):
    """The editor: LSP frames."""

    async def initialize(self, capabilities: Message) -> None:
        await self.result(
            self.call("initialize", {"processId": None, "capabilities": capabilities})
        )
        self.notify("initialized", {})


@dataclass
class Bench:
    host: Host
    clock: ManualClock
    data_dir: Path
    tg: TaskGroup
    journal: Journal

    async def _pipes(self) -> tuple[Any, Any, Any, Any]:
        c2s_r, c2s_w = os.pipe()
        s2c_r, s2c_w = os.pipe()
        return (
            await open_read_pipe(c2s_r),
            await open_write_pipe(s2c_w),
            await open_read_pipe(s2c_r),
            await open_write_pipe(c2s_w),
        )

    async def editor(
        self, capabilities: Message | None = None, *, initialize: bool = True
    ) -> Editor:
        reader, writer, peer_in, peer_out = await self._pipes()
        conn = lsp_connection(reader, writer)
        server = LspServer(self.host, conn, on_exit=conn.stop, env={})

        async def serve() -> None:
            try:
                await conn.serve()
            finally:
                server.close()
                writer.close()

        self.tg.start_soon(serve)
        editor = Editor("editor", FrameReader(peer_in), MessageWriter(peer_out), self.journal)
        if initialize:
            await editor.initialize(CAPABLE if capabilities is None else capabilities)
        return editor

    async def agent(
        self, *, elicitation: bool = False, ask_timeout: int = 60, name: str = "bench-agent"
    ) -> Agent:
        agent = await self.raw_agent(ask_timeout=ask_timeout)
        await agent.initialize(elicitation=elicitation, name=name)
        return agent

    async def raw_agent(self, *, ask_timeout: int = 60) -> Agent:
        reader, writer, peer_in, peer_out = await self._pipes()
        agent = Agent(
            "agent", LineReader(peer_in), MessageWriter(peer_out, line_frame), self.journal
        )
        options = {"ask_timeout": ask_timeout, "cwd": "/work/project"}

        async def serve() -> None:
            try:
                agent.exit_status = await serve_mcp(
                    self.host, reader, writer, env={}, options=options
                )
            finally:
                writer.close()

        self.tg.start_soon(serve)
        return agent


@asynccontextmanager
async def bench(tmp_path: Path, *, real_time: bool = False) -> AsyncIterator[Bench]:
    """`real_time`: the system clock instead of a ManualClock (transcripts, 1 s deadlines)."""
    data_dir = tmp_path / "data"
    store = open_store(data_dir)
    clock = ManualClock()
    try:
        async with anyio.create_task_group() as tg:
            async with Host(store, clock=None if real_time else clock) as host:
                yield Bench(host, clock, data_dir, tg, [])
            tg.cancel_scope.cancel()
    finally:
        await store.close()


async def settle() -> None:
    """Let every task run until all are blocked (a few loop iterations, no sleeping on time)."""
    for _ in range(50):
        await anyio.lowlevel.checkpoint()


def text_of(result: Message, index: int = 0) -> str:
    return str(result["content"][index]["text"])


def db_question(qid: str = "db") -> Message:
    return {
        "id": qid,
        "header": "Setup",
        "question": "Which database?",
        "options": [{"label": "SQLite"}, {"label": "Postgres"}],
    }
