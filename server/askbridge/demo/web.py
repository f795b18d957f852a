"""`askbridge demo --web`: the demo's questions on the web page, without an agent of your own.

A real session on a real host, as in the terminal demo: `AskbridgeClient.connect`
starts `askbridge serve --host inline` on the demo's data directory (a fresh
temporary one, removed at the end, unless `--data-dir`) with the demo's script
model in timed mode, and opens a session. `askbridge web --host auto` then
attaches to that host as it would to any and follows the session, and the demo
prints its URL and sends the guide's prompt: the scripted agent's four questions
appear on the page, one after another. The demo's own client renders no
questions, so the page is where they are answered; the terminal shows what the
agent says and what it receives (the terminal demo's transcript). The last
question is meant to time out: answered under "Continued", it is a late reply
that wakes the agent.

Ctrl-C or SIGTERM stops the door and the host: status 0. A door or host that
cannot start, or a door that ends by itself, is one line on stderr and status 1.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import sys
import tempfile
from collections import deque
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console
from rich.text import Text

from askbridge.testing import AskbridgeClient, ServerStartError

from .guide import load_guide, load_script
from .transcript import Transcript

PROG = "askbridge demo --web"
ASK_TIMEOUT_S = 60  # the script gives every call its own timeout; this is a fallback
URL_LINE = re.compile(r"open (https?://\S+)")
INTRO = (
    "A scripted agent asks four questions on the web page; answer them there. The third "
    "gives you 30 s: the page stops its clock while you look. Let the fourth run out: it "
    "moves to Continued, and your answer there is a late reply that wakes the agent. "
    "What the agent says and receives is printed here. Ctrl-C ends the demo."
)


class DoorFailed(Exception):
    """The web door did not start, or ended by itself; the message says why."""


def run_web_demo(data_dir: str | None, listen: str) -> int:
    from askbridge.web.main import parse_listen

    try:
        parse_listen(listen)
    except ValueError as exc:
        print(f"askbridge demo: error: {exc}; see askbridge demo --help", file=sys.stderr)
        return 2
    console = Console(highlight=False)
    path = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="askbridge-demo-"))
    try:
        return anyio.run(_run, console, path, listen)
    except KeyboardInterrupt:
        return 130
    except ServerStartError as exc:
        reason = exc.stderr_tail[-1] if exc.stderr_tail else str(exc)
        print(f"{PROG}: the askbridge host did not start: {reason}", file=sys.stderr)
        return 1
    except DoorFailed as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    finally:
        if not data_dir:
            shutil.rmtree(path, ignore_errors=True)


async def _run(console: Console, data_dir: Path, listen: str) -> int:
    async with AskbridgeClient.connect(
        data_dir=data_dir,
        host="inline",  # the demo's data directory is its own host's (H3)
        model=load_script(),
        ask_mode="timed",
        ask_timeout=ASK_TIMEOUT_S,
        renders_questions=False,  # the page answers, not this client
        start_new_session=True,  # Ctrl-C reaches the demo, which shuts the host down
        echo_stderr=False,
    ) as client:
        sid = await client.new_session(cwd=os.getcwd())
        door = await _start_door(data_dir, listen)
        try:
            console.print(Text(INTRO), soft_wrap=True)
            console.print(Text.assemble(("open ", "bold"), door.url), soft_wrap=True)
            transcript = Transcript(console, client)
            transcript.session_id = sid
            async with anyio.create_task_group() as tg:
                tg.start_soon(transcript.follow)
                tg.start_soon(_story, console, client, sid)
                tg.start_soon(door.watch, tg.cancel_scope)
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for _ in signals:
                        break
                tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await door.stop()
        if door.ended is not None:
            raise DoorFailed(door.ended)
        client.cancel(sid)  # a turn still waiting on a question ends before the host does
    return 0


async def _story(console: Console, client: AskbridgeClient, sid: str) -> None:
    guide = load_guide()
    console.print(Text.assemble(("you › ", "bold green"), guide.prompt), soft_wrap=True)
    await client.prompt(sid, guide.prompt, timeout=None)
    while True:
        continued = _continued(client, sid)
        if not continued:
            break
        names = ", ".join(str(item["callId"]) for item in continued)
        console.print(
            Text.assemble(
                ("▶ pending: ", "yellow"),
                f"{names}. Answer on the page under Continued; the reply wakes the agent.",
            ),
            soft_wrap=True,
        )
        await _next_turn_ended(client, sid)
    console.print(Text("Every question is answered. Ctrl-C ends the demo.", "bold"))


async def _next_turn_ended(client: AskbridgeClient, sid: str) -> None:
    ended = len(client.updates(sid, "turn_ended"))
    await client.wait_for(
        lambda: len(client.updates(sid, "turn_ended")) > ended, timeout=float("inf")
    )


def _continued(client: AskbridgeClient, sid: str) -> list[dict[str, Any]]:
    view = client.views.get(sid) or {}
    return [item for item in view.get("active", []) if item.get("state") == "continued"]


class Door:
    """`askbridge web` attached to the demo's host, in a process group of its own."""

    def __init__(self, process: asyncio.subprocess.Process, url: str, tail: deque[str]) -> None:
        self.process, self.url, self.tail = process, url, tail
        self.ended: str | None = None  # why the door ended by itself

    async def watch(self, scope: anyio.CancelScope) -> None:
        """Keep reading the door's stderr; if it ends, say why and stop the demo."""
        assert self.process.stderr is not None
        async for raw in self.process.stderr:
            if line := raw.decode(errors="replace").rstrip():
                self.tail.append(line)
        await self.process.wait()
        self.ended = (
            self.tail[-1] if self.tail else f"the web door exited ({self.process.returncode})"
        )
        scope.cancel()

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            with anyio.move_on_after(10):
                await self.process.wait()
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()


async def _start_door(data_dir: Path, listen: str) -> Door:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "askbridge.cli",
        "web",
        "--data-dir",
        str(data_dir),
        "--host",
        "auto",  # attaches to the demo's own host
        "--listen",
        listen,
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stderr is not None
    tail: deque[str] = deque(maxlen=5)
    with anyio.move_on_after(30):
        async for raw in process.stderr:
            line = raw.decode(errors="replace").rstrip()
            tail.append(line)
            if m := URL_LINE.search(line):
                return Door(process, m[1], tail)
    door = Door(process, "", tail)
    await door.stop()
    raise DoorFailed(tail[-1] if tail else "the web door did not start")
