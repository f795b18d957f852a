"""S19 at every door: a request whose id is not a string or an integer is -32600 with id null.

Each door (`serve`, `acp`, `mcp`) is a real process spoken to in raw bytes over its
stdio, in each host mode; one process per door and mode serves the whole module,
so each case also shows the earlier ones left the connection usable. "Nothing else
was answered" is checked by order: the first response after the bad request is
its error, and the first after the next valid request is that request's reply.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
import pytest_asyncio

from askbridge.testing.hosts import stop_idle_host
from askbridge.testing.strict_frames import frame, read_frame

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(60),
    pytest.mark.own_host_modes,  # one process per door and mode, for the module
]

Message = dict[str, Any]

BAD_IDS: dict[str, object] = {
    "object": {"n": 1},
    "float": 1.5,
    "integral-float": 1.0,
    "true": True,
    "false": False,
    "null": None,
    "array": [1],
}

# The door's first request (with its params) and the one it answers in order afterwards.
HANDSHAKE: dict[str, tuple[str, Message, str | None]] = {
    "serve": ("initialize", {"processId": None, "capabilities": {}}, "initialized"),
    "acp": ("initialize", {"protocolVersion": 1, "clientCapabilities": {}}, None),
    "mcp": (
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
        "notifications/initialized",
    ),
}
PROBE: dict[str, tuple[str, Message]] = {
    "serve": ("session/list", {}),
    "acp": ("initialize", {"protocolVersion": 1, "clientCapabilities": {}}),
    "mcp": ("ping", {}),
}


class RawDoor:
    """One door process: JSON-RPC messages framed as the door reads them."""

    def __init__(self, door: str, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.door = door
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.ids = 0

    async def send(self, message: Message) -> None:
        body = json.dumps(message).encode()
        self.stdin.write(frame(body) if self.door == "serve" else body + b"\n")
        await self.stdin.drain()

    async def call(self, method: str, params: Message) -> int:
        self.ids += 1
        await self.send({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        return self.ids

    async def next_response(self) -> Message:
        """The next message that is no request or notification of the door's own."""
        with anyio.fail_after(15):
            while True:
                if self.door == "serve":
                    message = await read_frame(self.stdout)
                else:
                    line = await self.stdout.readline()
                    message = json.loads(line) if line else None
                assert message is not None, f"askbridge {self.door} closed its output"
                if "method" not in message:
                    return message


@pytest_asyncio.fixture(
    loop_scope="module",
    scope="module",
    params=[(door, mode) for door in ("serve", "acp", "mcp") for mode in ("inline", "auto")],
    ids=lambda p: f"{p[0]}-{p[1]}",
)
async def door(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[RawDoor]:
    name, mode = request.param
    data: Path = tmp_path_factory.mktemp(f"ids-{name}-{mode}") / "data"
    process = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "askbridge.cli", name, "--data-dir", str(data), "--host", mode],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "ASKBRIDGE_HOST": mode},
    )
    raw = RawDoor(name, process)
    try:
        method, params, initialized = HANDSHAKE[name]
        init_id = await raw.call(method, params)
        reply = await raw.next_response()
        assert reply["id"] == init_id and "result" in reply, reply
        if initialized is not None:
            await raw.send({"jsonrpc": "2.0", "method": initialized, "params": {}})
        yield raw
        raw.stdin.close()
        with anyio.fail_after(15):
            await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        if mode == "auto":
            await anyio.to_thread.run_sync(stop_idle_host, data)


def _is_invalid_request_without_id(reply: Message) -> bool:
    return reply.get("id", "absent") is None and reply.get("error", {}).get("code") == -32600


@pytest.mark.parametrize("kind", list(BAD_IDS))
async def test_S19_a_request_with_an_unusable_id_is_invalid_request_with_id_null(
    door: RawDoor, kind: str
) -> None:
    """S19: -32600 with id null for an id that is an object, a float, a bool, null or an
    array, and the next valid request is answered."""
    method, params = PROBE[door.door]
    await door.send({"jsonrpc": "2.0", "id": BAD_IDS[kind], "method": method, "params": params})
    reply = await door.next_response()
    assert _is_invalid_request_without_id(reply), reply
    assert "id" in reply["error"]["message"], reply
    probe_id = await door.call(method, params)
    answer = await door.next_response()
    assert answer["id"] == probe_id and "result" in answer, answer


async def test_S19_a_notification_is_not_answered(door: RawDoor) -> None:
    """S19 counts a message without an id as a notification: no reply, the next request is."""
    method, params = PROBE[door.door]
    await door.send({"jsonrpc": "2.0", "method": "$/askbridge-unknown", "params": {}})
    probe_id = await door.call(method, params)
    reply = await door.next_response()
    assert reply["id"] == probe_id and "result" in reply, reply
