"""The baseline the bridge benchmarks compare against, and the lean client they all share.

Run as a script, this file is the *raw-pipe JSON-RPC echo server*: it reads
LSP-framed (`Content-Length: N\\r\\n\\r\\n` + JSON) JSON-RPC requests on stdin
with asyncio pipes and answers each one inline with `{"result": <its params>}`
on stdout. No pygls, no pydantic, no task per request: the least a Python
process must pay to take a JSON-RPC message off a pipe and put a reply back.

As a module it provides `RawClient`, the one client every benchmark drives its
server with (the echo server and `askbridge serve` alike), so the client's own
cost is the same on both sides of every ratio:

    async with RawClient.spawn(echo_command()) as client:
        result = await client.request("echo", {"x": 1})

The client answers server→client requests (e.g. `userQuestions/ask`) inline in
its read loop with a synchronous `on_request(method, params) -> result`, and
only counts notifications (`client.notified[method]`), which is the least any
editor does with them. Frames are sliced out of 64 KiB reads without awaiting
per frame, on both the client and the echo server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

_CHUNK = 64 * 1024
_HEADER_END = b"\r\n\r\n"
_COMPACT = (",", ":")

RequestHandler = Callable[[str, Any], Any]
HOLD = object()  # returned by an `on_request` handler: leave that request unanswered


def frame(msg: Any) -> bytes:
    """One LSP frame holding `msg` as compact JSON."""
    body = json.dumps(msg, separators=_COMPACT, ensure_ascii=False).encode()
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


class FrameSplitter:
    """Feed raw bytes, get back the complete frame bodies (well-formed input assumed)."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        buf = self._buf
        buf += data
        bodies: list[bytes] = []
        pos = 0
        while True:
            end = buf.find(_HEADER_END, pos)
            if end < 0:
                break
            length = 0
            for line in bytes(buf[pos:end]).split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            start = end + len(_HEADER_END)
            if len(buf) - start < length:
                break
            bodies.append(bytes(buf[start : start + length]))
            pos = start + length
        del buf[:pos]
        return bodies


# -- the echo server (this file run as a script) ---------------------------------------------


async def _echo_serve() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_CHUNK)
    stdin = os.fdopen(os.dup(0), "rb", buffering=0)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    stdout = os.fdopen(os.dup(1), "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, stdout)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    splitter = FrameSplitter()
    while chunk := await reader.read(_CHUNK):
        for body in splitter.feed(chunk):
            msg = json.loads(body)
            if "id" in msg and "method" in msg:
                writer.write(
                    frame({"jsonrpc": "2.0", "id": msg["id"], "result": msg.get("params")})
                )
            elif msg.get("method") == "exit":
                return
        await writer.drain()


def echo_command() -> list[str]:
    """The command line that starts the echo server."""
    return [sys.executable, os.path.abspath(__file__)]


INITIALIZE_PARAMS: dict[str, Any] = {
    "processId": os.getpid(),
    "capabilities": {"experimental": {"userQuestions": {"version": 1}}},
}


QUESTION: dict[str, Any] = {
    "id": "db",
    "question": "Which database should the service use?",
    "header": "Storage",
    "options": [
        {"label": "SQLite", "description": "embedded, no server"},
        {"label": "Postgres", "description": "a server to run"},
    ],
}
# What the echo baseline sends: the params of one `userQuestions/ask` carrying QUESTION.
ASK_PARAMS: dict[str, Any] = {"sessionId": "s-1", "agentId": "a-1", "questions": [QUESTION]}


def ask_script(steps: int, calls_per_step: int = 1) -> dict[str, Any]:
    """A script ModelSpec: `steps` steps of `calls_per_step` ask_user_question calls, then text."""

    def step(n: int) -> dict[str, Any]:
        calls = [
            {
                "id": f"ask-{n}-{i}",
                "name": "ask_user_question",
                "arguments": {"questions": [QUESTION]},
            }
            for i in range(calls_per_step)
        ]
        return {"toolCalls": calls}

    return {"kind": "script", "steps": [*map(step, range(steps)), {"text": "done"}]}


def text_prompt(session_id: str, text: str = "ask away") -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


def answer_first_options(params: dict[str, Any]) -> dict[str, Any]:
    """An instant answer to a `userQuestions/ask`: each question's first option (or text)."""
    answers = []
    for q in params["questions"]:
        options = q.get("options")
        if options:
            answers.append({"id": q["id"], "selected": [options[0]["label"]]})
        else:
            answers.append({"id": q["id"], "selected": [], "custom": "ok"})
    return {"answers": answers}


# -- the client ------------------------------------------------------------------------------


class RawClient:
    """A lean JSON-RPC client over a subprocess's stdin/stdout (see the module docstring)."""

    def __init__(
        self, process: asyncio.subprocess.Process, on_request: RequestHandler | None = None
    ) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.on_request = on_request
        self.notified: Counter[str] = Counter()
        self.on_notification: Callable[[str, Any], None] | None = None
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0

    @classmethod
    @contextlib.asynccontextmanager
    async def spawn(
        cls,
        command: Sequence[str],
        on_request: RequestHandler | None = None,
        env: Mapping[str, str] | None = None,
    ) -> AsyncIterator[RawClient]:
        """`env`: the server's whole environment (default: this process's)."""
        process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env
        )
        client = cls(process, on_request)
        reading = asyncio.create_task(client._read_loop())
        try:
            yield client
        finally:
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reading
            if process.returncode is None:
                process.kill()
            await process.wait()

    def send(self, msg: Any) -> None:
        self._stdin.write(frame(msg))

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request_nowait(self, method: str, params: Any) -> asyncio.Future[Any]:
        """Send a request; the future gets its result (or a RuntimeError for an error reply)."""
        self._next_id += 1
        future = self._pending[self._next_id] = asyncio.get_running_loop().create_future()
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return future

    async def request(self, method: str, params: Any) -> Any:
        future = self.request_nowait(method, params)
        await self._stdin.drain()
        return await future

    async def _read_loop(self) -> None:
        splitter = FrameSplitter()
        while chunk := await self._stdout.read(_CHUNK):
            for body in splitter.feed(chunk):
                self._dispatch(json.loads(body))
            await self._stdin.drain()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the server's output ended"))

    def _dispatch(self, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        if method is None:
            future = self._pending.pop(msg["id"], None)
            if future is None or future.done():
                return
            if "error" in msg:
                future.set_exception(RuntimeError(f"error reply: {msg['error']}"))
            else:
                future.set_result(msg.get("result"))
        elif "id" in msg:
            if self.on_request is None:
                error = {"code": -32601, "message": f"no handler for {method}"}
                self.send({"jsonrpc": "2.0", "id": msg["id"], "error": error})
            else:
                result = self.on_request(method, msg.get("params"))
                if result is not HOLD:
                    self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        else:
            self.notified[method] += 1
            if self.on_notification is not None:
                self.on_notification(method, msg.get("params"))


if __name__ == "__main__":
    asyncio.run(_echo_serve())
