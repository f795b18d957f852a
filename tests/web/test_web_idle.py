"""Issue 20's target: the door adds no work to the host while no browser is connected.

The real door (`askbridge web`) runs with its child replaced by the transcript
player (ASKBRIDGE_WEB_SERVE; server/askbridge/web/main.py) on a transcript of just
`initialize`, which logs every message the door sends to its host as it comes,
and with the listing interval cut to 50 ms (ASKBRIDGE_WEB_POLL_S), so each
quiet window below spans ten intervals: a door that polled without a browser
would be seen at once. A browser's event stream (httpx here) must start the
polling (B1: new hosted sessions are followed while someone looks) and its end
must stop it. The door's memory at rest is benchmarks/bench_web_idle.py's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import httpx
from webstack import start_door, stop_door

PLAYER = Path(__file__).with_name("web_transcript_player.py")
POLL_S = 0.05
QUIET_S = 10 * POLL_S
INITIALIZE_ONLY = {
    "title": "the door's start, and nothing else from the host",
    "rules": ["B1"],
    "messages": [
        {
            "from": "client",
            "message": {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"capabilities": {"experimental": {"userQuestions": {"version": 1}}}},
            },
        },
        {
            "from": "server",
            "message": {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"capabilities": {"experimental": {"userQuestions": {"version": 1}}}},
            },
        },
        {"from": "client", "message": {"jsonrpc": "2.0", "method": "initialized", "params": {}}},
    ],
}


async def sent_to_host(log: Path) -> list[str]:
    """The method of every message the door sent its host so far."""
    text = await anyio.Path(log).read_text() if await anyio.Path(log).exists() else ""
    return [json.loads(line)["message"].get("method", "reply") for line in text.splitlines()]


async def test_B1_no_request_to_the_host_while_no_browser_is_connected(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    transcript, log = tmp_path / "initialize.json", tmp_path / "door.log"
    transcript.write_text(json.dumps(INITIALIZE_ONLY))
    player = [sys.executable, str(PLAYER), str(transcript), "--report", str(tmp_path / "r.json")]
    env = {
        "ASKBRIDGE_WEB_SERVE": json.dumps([*player, "--log", str(log)]),
        "ASKBRIDGE_WEB_POLL_S": str(POLL_S),
    }
    door = await start_door(data_dir, env=env)
    try:
        # The URL is printed once the door has started: initialize, then one listing.
        assert await sent_to_host(log) == ["initialize", "initialized", "session/list"]
        await anyio.sleep(QUIET_S)
        assert len(await sent_to_host(log)) == 3  # nobody looks: nothing at all

        async with httpx.AsyncClient(base_url=door.base, timeout=10) as client:
            key = (await client.post("/api/login", json={"token": door.token})).json()["key"]
            client.headers["X-Askbridge-Session"] = key
            async with client.stream("GET", "/api/events") as events:
                lines = events.aiter_lines()
                assert (await anext(lines)).startswith('data: {"type":"state"')
                with anyio.fail_after(10):  # a page looks: the door follows new sessions
                    while True:
                        if (await sent_to_host(log)).count("session/list") >= 3:
                            break
                        await anyio.sleep(POLL_S)
        # The page went: at most the listing that was under way, then nothing.
        gone = len(await sent_to_host(log))
        await anyio.sleep(QUIET_S)
        settled = len(await sent_to_host(log))
        assert settled <= gone + 1
        await anyio.sleep(QUIET_S)
        assert len(await sent_to_host(log)) == settled
        assert set((await sent_to_host(log))[3:]) == {"session/list"}
    finally:
        assert await stop_door(door) == 0
