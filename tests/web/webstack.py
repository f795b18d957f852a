"""The real web door beside a real host, an editor window and an MCP agent (B9).

    async with web_stack(tmp_path, host="inline") as st:
        call = st.agent.ask([...], timeout=30)        # an MCP agent asks (X1)
        page = await st.page("desktop")               # real headless Chromium, logged in
        ...

The editor window is the testing harness's client (it owns the host in `inline`
mode; in `auto` a detached host is started and stopped). The door is `askbridge web
--listen 127.0.0.1:0 --host auto` (it attaches to that host); its URL is read from
its stderr. Chromium is the OS's (/usr/bin/chromium), driven by Playwright's Python
package — `playwright install` is never run. Nothing outlives the block.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from askbridge.testing import AskbridgeClient

if TYPE_CHECKING:  # tests/ is not on the path of benchmarks/bench_web.py, which needs no clock
    from clock_host import ClockHost

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORTS = {
    "desktop": {"viewport": {"width": 1280, "height": 800}},
    "phone": {
        "viewport": {"width": 390, "height": 844},
        "is_mobile": True,
        "color_scheme": "dark",
        "has_touch": True,
        "device_scale_factor": 2,
    },
}
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "web"
ASKBRIDGE = str(Path(sys.executable).with_name("askbridge"))


@dataclass
class Door:
    process: asyncio.subprocess.Process
    url: str
    base: str
    token: str
    stderr: list[str] = field(default_factory=list)


@dataclass
class Stack:
    data_dir: Path
    editor: AskbridgeClient
    door: Door
    agent: ClientSession
    browser: Any
    tg: Any
    clock: ClockHost | None = None

    async def page(self, viewport: str = "desktop") -> Any:
        return await open_page(self.browser, self.door, viewport)

    async def tokenless_page(self) -> Any:
        """A page at the door's address without the token, showing its login form."""
        context = await self.browser.new_context()
        page = await context.new_page()
        await page.goto(self.door.base + "/")
        await page.locator("#login").wait_for()
        return page

    def editor_answers_after(self, release: anyio.Event, answer: dict[str, Any]) -> None:
        """The editor window answers every ask with `answer`, once `release` is set."""

        async def answers(params: dict[str, Any]) -> dict[str, Any]:
            await release.wait()
            return answer

        self.editor.answer_with(answers)

    async def advance(self, ms: float) -> None:
        """Move the host's clock (a `web_stack(clock=True)`), firing the deadlines due."""
        assert self.clock is not None, "web_stack(clock=True) drives the host's clock"
        await self.clock.advance(ms)

    async def claims(self, count: int) -> None:
        """Once the host's wait for the last ask has `count` claims: a page's claim goes
        through the door, so the page showing it does not mean the host holds it yet."""
        assert self.clock is not None, "web_stack(clock=True) drives the host's clock"
        ask = await self._last_ask()
        await self.clock.claims(ask["agentId"], ask["wait"]["callId"], count)

    async def timed_card(self, page: Any, question: dict[str, Any], timeout: int) -> Any:
        """A timed ask shown on `page`, blurred so that it does not claim it, once the door's
        probe (a claim taken and dropped to learn the deadline) is gone from the host: the
        next claim the host holds is the page's. The ask's `result` and the card."""
        await page.evaluate("window.dispatchEvent(new Event('blur'))")
        result = self.ask_soon([question], timeout=timeout)
        drawn = await card(page, question["question"])
        await drawn.locator(".countdown", has_text=re.compile(r"^\d+ s left$")).wait_for()
        await self.claims(0)
        return result, drawn

    async def question_state(self) -> str:
        """The state (open, continued, …) of the last question asked, as the host has it
        now: after `advance`, whether the deadline ended the wait."""
        ask = await self._last_ask()
        view = await self.editor.view(ask["sessionId"])
        [question] = [q for q in view["active"] if q["callId"] == ask["wait"]["callId"]]
        return str(question["state"])

    async def _last_ask(self) -> dict[str, Any]:
        """The last `userQuestions/ask` the editor window got (every window gets it, M2)."""
        await self.editor.wait_for(lambda: self.editor.asks)
        return dict(self.editor.asks[-1])

    def ask_soon(self, questions: list[dict[str, Any]], timeout: int = 60) -> Any:
        """The agent's `ask_user_question` in the background; `await result()` for its JSON."""
        return self.call_soon("ask_user_question", {"questions": questions, "timeout": timeout})

    def call_soon(self, tool: str, args: dict[str, Any]) -> Any:
        done = anyio.Event()
        box: dict[str, Any] = {}

        async def call() -> None:
            try:
                box["result"] = await self.agent.call_tool(tool, args)
            finally:
                done.set()

        self.tg.start_soon(call)

        async def result() -> Any:
            with anyio.fail_after(30):
                await done.wait()
            return json.loads(box["result"].content[0].text)

        return result


async def open_page(browser: Any, door: Door, viewport: str = "desktop") -> Any:
    """A new page at the door's printed URL, logged in and connected."""
    context = await browser.new_context(**VIEWPORTS[viewport])
    page = await context.new_page()
    await page.goto(door.url)
    await page.locator("#status", has_text="connected").wait_for()
    return page


@asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    """The OS's headless Chromium (never `playwright install`)."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            await browser.close()


async def spawn_door(
    data_dir: Path, *args: str, host: str = "auto", env: dict[str, str] | None = None
) -> asyncio.subprocess.Process:
    """`askbridge web` on a free port, its stderr piped; `env` adds to the environment (the
    test seams of server/askbridge/web/main.py). A host it starts exits 5 s after it."""
    idle = ("--idle-exit", "5") if host == "auto" else ()
    return await asyncio.create_subprocess_exec(
        ASKBRIDGE,
        "web",
        "--data-dir",
        str(data_dir),
        "--listen",
        "127.0.0.1:0",
        "--host",
        host,
        *idle,
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )


async def start_door(data_dir: Path, *args: str, env: dict[str, str] | None = None) -> Door:
    """`spawn_door`, once it printed its URL."""
    process = await spawn_door(data_dir, *args, env=env)
    assert process.stderr is not None
    lines: list[str] = []
    with anyio.fail_after(30):
        while True:
            raw = await process.stderr.readline()
            assert raw, f"askbridge web exited: {lines}"
            lines.append(raw.decode().rstrip())
            m = re.search(r"open (https?://[^/]+)/#token=([0-9a-f]{64})", lines[-1])
            if m:
                return Door(process, f"{m[1]}/#token={m[2]}", m[1], m[2], lines)


async def stop_door(door: Door) -> int:
    if door.process.returncode is None:
        door.process.send_signal(signal.SIGTERM)
    with anyio.fail_after(15):
        return await door.process.wait()


@asynccontextmanager
async def mcp_agent(data_dir: Path, cwd: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=ASKBRIDGE,
        args=["mcp", "--data-dir", str(data_dir), "--host", "auto"],
        cwd=str(cwd),
        env=dict(os.environ),
    )
    with (cwd / "mcp-stderr.log").open("a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            info = types.Implementation(name="web-test-agent", version="1.0")
            async with ClientSession(read, write, client_info=info) as session:
                await session.initialize()
                yield session


@asynccontextmanager
async def web_stack(
    tmp_path: Path, host: str = "inline", browser: bool = True, clock: bool = False
) -> AsyncIterator[Stack]:
    """`browser=False`: no Playwright Chromium (`Stack.browser` is None) for a caller that
    runs its own (benchmarks/bench_web.py --plain). `clock=True`: the host is
    tests/lsp_driver.py on a ManualClock (`Stack.advance`) and every client, the editor
    window included, attaches to it (`host` does not apply)."""
    data_dir = tmp_path / "data"
    async with AsyncExitStack() as stack:
        driven_clock = None
        if clock:
            from clock_host import clock_host

            driven_clock = await stack.enter_async_context(clock_host(data_dir))
        editor = await stack.enter_async_context(
            AskbridgeClient.connect(
                data_dir=data_dir, host="auto" if clock else host, echo_stderr=False
            )
        )
        door = await start_door(data_dir)
        stack.push_async_callback(stop_door, door)
        driven = await stack.enter_async_context(chromium()) if browser else None
        agent = await stack.enter_async_context(mcp_agent(data_dir, tmp_path))
        tg = await stack.enter_async_context(anyio.create_task_group())
        yield Stack(data_dir, editor, door, agent, driven, tg, driven_clock)
        tg.cancel_scope.cancel()


async def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


FEATURES = {  # a multi-select question several page tests ask
    "id": "features",
    "question": "Which features?",
    "multi_select": True,
    "options": [{"label": "Auth"}, {"label": "Search"}, {"label": "Billing"}],
}


async def card(page: Any, text: str, where: str = "#cards") -> Any:
    """The first card under `where` (the open questions, or "#continued") showing `text`,
    once it is drawn."""
    loc = page.locator(f"{where} article.card", has_text=text).first
    await loc.wait_for()
    return loc
