"""`askbridge serve` fed what another door reads: said in one line on stderr, then read on (S8).

An ACP or MCP client pointed at `serve` writes newline-delimited JSON; a stray line
is no header either. Neither ever ends an LSP header block, so no frame is refused
and, unsaid, the client waits for ever. The real process, in both host modes
(attached, the front door prints what the host tells it): the hint comes while the
input is still open, once, and a valid frame after it is answered.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from askbridge.testing.hosts import stop_idle_host
from askbridge.testing.strict_frames import frame, read_frame

pytestmark = pytest.mark.timeout(60)

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
HINT = "askbridge serve: this is the LSP door (JSON-RPC framed by Content-Length headers)"
DOORS = "an ACP client wants `askbridge acp`, an MCP client `askbridge mcp`"


@pytest.mark.parametrize(
    ("first", "said"),
    [
        (json.dumps(INITIALIZE).encode() + b"\n", "but its input is newline-delimited JSON"),
        (b"garbage\n", "but its input starts with 'garbage', not a Content-Length header"),
        (b"\x1b[31mred\n", r"but its input starts with '\x1b[31mred', not a Content-Length header"),
    ],
    ids=["ndjson", "garbage", "escape-sequence"],
)
async def test_input_for_another_door_is_one_line_on_stderr_then_serving_goes_on(
    tmp_path: Path, host_mode: str, first: bytes, said: str
) -> None:
    data = tmp_path / "data"
    process = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "askbridge.cli", "serve", "--data-dir", str(data)],
        *["--host", host_mode],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(os.environ),
    )
    assert process.stdin and process.stdout and process.stderr
    try:
        process.stdin.write(first)
        await process.stdin.drain()
        with anyio.fail_after(20):  # said while the client still waits, not at end of input
            line = (await process.stderr.readline()).decode()
        assert line == f"{HINT}, {said}; {DOORS}\n"
        process.stdin.write(frame(json.dumps({**INITIALIZE, "id": 2})))
        await process.stdin.drain()
        with anyio.fail_after(20):
            replies = [await read_frame(process.stdout)]
            while replies[-1] is not None and replies[-1].get("id") != 2:
                replies.append(await read_frame(process.stdout))
        assert replies[-1] is not None and "result" in replies[-1], replies
        process.stdin.close()
        with anyio.fail_after(20):
            assert await process.wait() == 0
        assert HINT not in (await process.stderr.read()).decode()  # once
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await anyio.to_thread.run_sync(stop_idle_host, data)


async def test_an_lsp_client_hears_no_hint(tmp_path: Path, host_mode: str) -> None:
    data = tmp_path / "data"
    process = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "askbridge.cli", "serve", "--data-dir", str(data)],
        *["--host", host_mode],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdin and process.stdout and process.stderr
    try:
        # Header split mid-name across writes: still a header, never a hint.
        for part in (b"\r\nContent-Len", frame(json.dumps(INITIALIZE))[len(b"Content-Len") :]):
            process.stdin.write(part)
            await process.stdin.drain()
            await asyncio.sleep(0.1)
        with anyio.fail_after(20):
            reply = await read_frame(process.stdout)
        assert reply is not None and reply["id"] == 1 and "result" in reply
        process.stdin.close()
        with anyio.fail_after(20):
            assert await process.wait() == 0
        assert HINT not in (await process.stderr.read()).decode()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await anyio.to_thread.run_sync(stop_idle_host, data)
