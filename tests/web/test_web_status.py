"""`askbridge host --status` names the web door `web`, apart from the editor windows it lists
as `lsp`: the web door's own `askbridge serve --for-web` says so in its hello."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import anyio.to_thread
from webstack import start_door, stop_door

from askbridge.testing import AskbridgeClient
from askbridge.testing.hosts import stop_host, wait_status


async def test_host_status_lists_the_web_door_as_web(tmp_path: Path) -> None:
    data = tmp_path / "data"
    try:
        async with AskbridgeClient.connect(data_dir=data, host="auto", echo_stderr=False):
            door = await start_door(data)
            try:
                await anyio.to_thread.run_sync(wait_status, data, 2)
                status = [sys.executable, "-m", "askbridge.cli", "host", "--status"]
                done = await anyio.run_process([*status, "--data-dir", str(data)])
            finally:
                await stop_door(door)
    finally:
        await anyio.to_thread.run_sync(stop_host, data)
    listing = done.stdout.decode()
    kinds = sorted(line.split()[0] for line in listing.splitlines() if "(pid " in line)
    assert kinds == ["lsp", "web"], listing
