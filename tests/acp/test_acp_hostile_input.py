"""Lines that used to crash or end `askbridge acp`, each now one error at most (S7, S8, S3).

A raw client writes bytes to the real process's stdin and reads its stdout line
by line: the ACP SDK's client would refuse to send most of these. After each
bad line the same process must answer a normal `initialize`.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

ASKBRIDGE = str(Path(sys.executable).with_name("askbridge"))


class RawAcp:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.ids = 0

    async def send_line(self, data: bytes) -> None:
        self.stdin.write(data + b"\n")
        await self.stdin.drain()

    async def receive(self, timeout: float = 10) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            line = await self.stdout.readline()
        assert line, "the agent's output ended"
        message = json.loads(line)
        assert isinstance(message, dict)
        return message

    async def call(self, method: str, params: Any) -> dict[str, Any]:
        self.ids += 1
        await self.send_line(
            json.dumps(
                {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}
            ).encode()
        )
        while True:
            message = await self.receive()
            if message.get("id") == self.ids:
                return message

    async def still_serving(self) -> None:
        reply = await self.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert reply["result"]["protocolVersion"] == 1, reply


@asynccontextmanager
async def raw_agent(data_dir: Path, *args: str) -> AsyncIterator[RawAcp]:
    process = await asyncio.create_subprocess_exec(
        ASKBRIDGE,
        "acp",
        "--data-dir",
        str(data_dir),
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=16 * 1024 * 1024,
    )
    try:
        yield RawAcp(process)
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"5", -32600),
        (b'"x"', -32600),
        (b"[]", -32600),
        (b'[{"jsonrpc":"2.0","id":9,"method":"initialize"}]', -32600),
        (b"null", -32600),
        (b"{}", -32600),
        (b"{nope", -32700),
        (b'"\xff\xfe"', -32700),
        (b"[" * 5000 + b"]" * 5000, -32700),
        (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":NaN}}', -32700),
    ],
    ids=[
        "number",
        "string",
        "empty-array",
        "batch",
        "null",
        "empty-object",
        "bad-json",
        "bad-utf8",
        "deep",
        "nan",
    ],
)
async def test_S8_a_line_that_is_not_a_json_rpc_object_is_an_error_and_serving_goes_on(
    tmp_path: Path, line: bytes, code: int
) -> None:
    async with raw_agent(tmp_path / "d") as agent:
        await agent.send_line(line)
        reply = await agent.receive()
        assert reply["id"] is None and reply["error"]["code"] == code, reply
        await agent.still_serving()
        agent.stdin.close()
        assert await agent.process.wait() == 0


async def test_S7_a_line_over_8_mib_is_refused_without_ending_the_connection(
    tmp_path: Path,
) -> None:
    async with raw_agent(tmp_path / "d") as agent:
        await agent.send_line(
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":"'
            + b"x" * (9 * 1024 * 1024)
            + b'"}'
        )
        reply = await agent.receive()
        assert reply["id"] is None and reply["error"]["code"] == -32600
        await agent.still_serving()


async def test_S3_a_lone_surrogate_in_a_prompt_is_invalid_params(tmp_path: Path) -> None:
    async with raw_agent(tmp_path / "d") as agent:
        await agent.still_serving()
        sid = (await agent.call("session/new", {"cwd": str(tmp_path), "mcpServers": []}))["result"][
            "sessionId"
        ]
        await agent.send_line(
            b'{"jsonrpc":"2.0","id":77,"method":"session/prompt","params":{"sessionId":"%s","prompt":[{"type":"text","text":"\\ud800"}]}}'
            % sid.encode()
        )
        reply = await agent.receive()
        assert reply["id"] == 77 and reply["error"]["code"] == -32602
        assert reply["error"]["data"]["errors"][0]["field"] == "prompt.0.text"
        ok = await agent.call(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}
        )
        assert ok["result"] == {"stopReason": "end_turn"}


async def test_E_a_missing_api_key_is_model_error_as_on_the_lsp_door(tmp_path: Path) -> None:
    """One error vocabulary: the same -32000 MODEL_ERROR the LSP door answers."""
    meta = {
        "askbridge": {
            "model": {"kind": "openai", "model": "m", "apiKeyEnv": "ASKBRIDGE_TEST_NO_SUCH_KEY"}
        }
    }
    async with raw_agent(tmp_path / "d") as agent:
        reply = await agent.call(
            "session/new", {"cwd": str(tmp_path), "mcpServers": [], "_meta": meta}
        )
        assert reply["error"]["code"] == -32000
        assert reply["error"]["data"] == {"name": "ModelError", "code": "MODEL_ERROR"}
