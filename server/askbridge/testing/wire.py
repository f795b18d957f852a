"""`RawServer`: a real `askbridge serve` process spoken to in raw frames over its stdio.

For tests that need the bytes themselves: framing and error paths, stdout
purity, replies a well-behaved client would never send (a late answer after
`$/cancelRequest`), and transcript replay (`askbridge.testing.transcript`).

    async with RawServer.start(tmp_path / "data", "--ask-mode", "timed") as server:
        init_id = await server.initialize()
        sid = (await server.call("session/new", {}))["result"]["sessionId"]
        server.send_bytes(b"Content-Length: 5\\r\\n\\r\\n{nope")
        assert (await server.receive())["error"]["code"] == -32700

The reader is strict (`strict_frames.read_frame`): anything on stdout but
LSP frames holding JSON-RPC raises `StdoutCorrupted`. stderr goes to a temporary file
(`stderr_text()`). `receive()` returns messages in arrival order; `expect()`
waits for the first message that satisfies a predicate and keeps the others
in `backlog`, where later `expect()` calls look first. On leaving the context
the process is given end of input and, if it is still alive after
`exit_timeout` seconds, killed. `log` keeps both directions in order.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.to_thread

from .hosts import harness_host_mode, stop_idle_host
from .strict_frames import frame, read_frame

Message = dict[str, Any]


def serve_command(data_dir: str | Path, *args: str, host: str | None = None) -> list[str]:
    """The command line of `askbridge serve` with this interpreter and data directory, in the
    harness's host mode (`--host inline` unless ASKBRIDGE_HOST=auto, testing/hosts.py)."""
    mode = host or harness_host_mode()
    command = [sys.executable, "-m", "askbridge.cli", "serve", "--data-dir", str(data_dir)]
    return [*command, "--host", mode, *args]


class RawServer:
    def __init__(self, process: asyncio.subprocess.Process, stderr: IO[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._stderr = stderr
        self._ids = 0
        self.data_dir: Path | None = None
        self.backlog: list[Message] = []
        self.received: list[Message] = []  # every message read, in arrival order
        # Both directions in the order the client sent or read them (raw bytes excluded).
        self.log: list[tuple[str, Message]] = []

    @classmethod
    @asynccontextmanager
    async def start(
        cls,
        data_dir: str | Path,
        *args: str,
        env: dict[str, str] | None = None,
        exit_timeout: float = 10,
        host: str | None = None,
    ) -> AsyncIterator[RawServer]:
        """`host`: `inline` or `auto` (default: the harness's mode). An `auto` host is
        stopped on leaving, so no host outlives the test."""
        mode = host or harness_host_mode()
        with tempfile.TemporaryFile() as stderr:
            process = await asyncio.create_subprocess_exec(
                *serve_command(data_dir, *args, host=mode),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                env={**os.environ, **(env or {})},
            )
            server = cls(process, stderr)
            server.data_dir = Path(data_dir)
            try:
                yield server
            finally:
                with anyio.CancelScope(shield=True):
                    await server._stop(exit_timeout)
                    if mode == "auto":
                        await anyio.to_thread.run_sync(stop_idle_host, data_dir)

    async def _stop(self, timeout: float) -> None:
        if self.process.returncode is None:
            self.close_input()
            with anyio.move_on_after(timeout):
                await self.process.wait()
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()

    # -- sending --------------------------------------------------------------------------

    def send_bytes(self, data: bytes) -> None:
        self._stdin.write(data)

    async def send(self, message: Message) -> None:
        self.log.append(("client", message))
        self.send_bytes(frame(json.dumps(message)))
        await self.drain()

    async def drain(self) -> None:
        """Wait until the pipe to the server has room again (after `send_bytes`)."""
        await self._stdin.drain()

    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    async def request(
        self, method: str, params: Any = None, msg_id: int | str | None = None
    ) -> Any:
        """Send a request (an integer id unless `msg_id` is given); returns its id."""
        msg_id = self.next_id() if msg_id is None else msg_id
        message: Message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return msg_id

    async def notify(self, method: str, params: Any = None) -> None:
        message: Message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def respond(self, msg_id: Any, result: Any) -> None:
        await self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    async def respond_error(self, msg_id: Any, code: int, message: str, data: Any = None) -> None:
        error: Message = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        await self.send({"jsonrpc": "2.0", "id": msg_id, "error": error})

    async def call(self, method: str, params: Any = None, timeout: float = 10) -> Message:
        """Send a request and return its whole response message (result or error)."""
        msg_id = await self.request(method, params)
        return await self.response(msg_id, timeout)

    async def initialize(
        self,
        capabilities: dict[str, Any] | None = None,
        initialization_options: Any = None,
    ) -> Message:
        """`initialize` (by default declaring `experimental.userQuestions`) + `initialized`."""
        caps = (
            {"experimental": {"userQuestions": {"version": 1}}}
            if capabilities is None
            else capabilities
        )
        params: Message = {"processId": os.getpid(), "capabilities": caps}
        if initialization_options is not None:
            params["initializationOptions"] = initialization_options
        reply = await self.call("initialize", params)
        await self.notify("initialized", {})
        return reply

    async def shutdown_and_exit(self, timeout: float = 10) -> int:
        reply = await self.call("shutdown")
        assert reply.get("result", "missing") is None, reply
        await self.notify("exit")
        return await self.wait(timeout)

    def close_input(self) -> None:
        """End of input: the client went away."""
        if not self._stdin.is_closing():
            self._stdin.close()

    # -- receiving ------------------------------------------------------------------------

    async def _read_frame(self) -> Message | None:
        message = await read_frame(self._stdout)
        if message is None:
            return None
        self.received.append(message)
        self.log.append(("server", message))
        return message

    async def receive(self, timeout: float = 10) -> Message:
        """The next message (from `backlog` first); fails at end of output or after `timeout`."""
        if self.backlog:
            return self.backlog.pop(0)
        with anyio.fail_after(timeout):
            message = await self._read_frame()
        if message is None:
            raise EOFError(f"the server's output ended (stderr: {self.stderr_text()[-2000:]})")
        return message

    async def receive_or_eof(self, timeout: float = 10) -> Message | None:
        """The next message, or None when the server's output has ended."""
        if self.backlog:
            return self.backlog.pop(0)
        with anyio.fail_after(timeout):
            return await self._read_frame()

    async def expect(self, predicate: Callable[[Message], bool], timeout: float = 10) -> Message:
        """The first message (backlog first) satisfying `predicate`; the others stay in backlog."""
        for i, held in enumerate(self.backlog):
            if predicate(held):
                return self.backlog.pop(i)
        skipped: list[Message] = []
        try:
            with anyio.fail_after(timeout):
                while True:
                    message = await self._read_frame()
                    if message is None:
                        raise EOFError(f"output ended; unmatched: {skipped!r}")
                    if predicate(message):
                        return message
                    skipped.append(message)
        finally:
            self.backlog.extend(skipped)

    async def response(self, msg_id: Any, timeout: float = 10) -> Message:
        return await self.expect(lambda m: is_response(m) and m.get("id") == msg_id, timeout)

    async def server_request(self, method: str, timeout: float = 10) -> Message:
        return await self.expect(lambda m: m.get("method") == method and "id" in m, timeout)

    async def notification(
        self, method: str, where: Callable[[Any], bool] = lambda params: True, timeout: float = 10
    ) -> Message:
        return await self.expect(
            lambda m: m.get("method") == method and "id" not in m and where(m.get("params")),
            timeout,
        )

    async def read_to_end(self, timeout: float = 10) -> list[Message]:
        """Every remaining message (backlog included) until the server closes stdout."""
        rest, self.backlog = self.backlog, []
        with anyio.fail_after(timeout):
            while (message := await self._read_frame()) is not None:
                rest.append(message)
        return rest

    async def wait(self, timeout: float = 10) -> int:
        with anyio.fail_after(timeout):
            return await self.process.wait()

    def logs(self) -> str:
        """What the server logged: its stderr, and in auto mode its host's log (host.log)."""
        host_log = self.data_dir / "host.log" if self.data_dir is not None else None
        extra = host_log.read_text(errors="replace") if host_log and host_log.exists() else ""
        return self.stderr_text() + extra

    def stderr_text(self) -> str:
        self._stderr.flush()
        self._stderr.seek(0)
        text = self._stderr.read().decode(errors="replace")
        self._stderr.seek(0, os.SEEK_END)
        return text


def is_response(message: Message) -> bool:
    return "method" not in message and ("result" in message or "error" in message)


def updates_of(messages: Sequence[Message], kind: str | None = None) -> list[Message]:
    """The `update` of each `session/update` notification in `messages` (optionally of one kind)."""
    return [
        m["params"]["update"]
        for m in messages
        if m.get("method") == "session/update"
        and (kind is None or m["params"]["update"].get("sessionUpdate") == kind)
    ]
