"""`askbridge demo --web`: the demo's questions on the page, with no agent of one's own.

The real command, as a new user runs it: a host with the demo's script model, the
web door attached to it, and the OS's headless Chromium on the printed URL. The first
question is on the page; answering it brings the next; the terminal shows what the
agent received; SIGTERM (as Ctrl-C) ends it all with status 0.
"""

from __future__ import annotations

import asyncio
import re
import signal
from pathlib import Path

import anyio
from webstack import ASKBRIDGE, VIEWPORTS, chromium, shot


def _running_on(data_dir: Path) -> list[str]:
    """The command lines of live processes that name `data_dir`."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if str(data_dir) in cmdline:
            found.append(cmdline)
    return found


async def test_B1_demo_web_shows_the_demos_questions_on_the_page(tmp_path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        ASKBRIDGE,
        "demo",
        "--web",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        str(tmp_path / "data"),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=tmp_path,
    )
    assert process.stdout is not None
    printed: list[str] = []
    try:
        with anyio.fail_after(60):
            while not (m := re.search(r"open (http://\S+#token=[0-9a-f]{64})", "".join(printed))):
                line = await process.stdout.readline()
                assert line, f"askbridge demo --web exited: {printed}"
                printed.append(line.decode())
        async with chromium() as browser:
            context = await browser.new_context(**VIEWPORTS["phone"])
            page = await context.new_page()
            await page.goto(m[1])
            first = page.locator(
                "#cards article.card", has_text="Which language should the new service use?"
            )
            await first.wait_for()
            await shot(page, "demo-web-first-question")
            await first.get_by_text("Go", exact=True).click()
            await first.get_by_role("button", name="Answer").click()
            second = page.locator("#cards article.card", has_text="Which extras should I set up?")
            await second.wait_for()
            await shot(page, "demo-web-second-question")
        with anyio.fail_after(30):  # the terminal tells what the agent received
            while '"selected": ["Go"]' not in "".join(printed):
                line = await process.stdout.readline()
                assert line, printed
                printed.append(line.decode())
        process.send_signal(signal.SIGTERM)
        with anyio.fail_after(30):
            assert await process.wait() == 0
        assert _running_on(tmp_path / "data") == []  # the door and the host went with it
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_demo_web_bad_flags_are_one_line_each(tmp_path: Path) -> None:
    for argv in (["--web", "--auto"], ["--listen", "127.0.0.1:0"], ["--web", "--listen", "x"]):
        process = await asyncio.create_subprocess_exec(
            ASKBRIDGE,
            "demo",
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=tmp_path,
        )
        out, err = await process.communicate()
        lines = err.decode().splitlines()
        assert process.returncode == 2 and out == b"", (argv, out)
        assert len(lines) == 1 and lines[0].startswith("askbridge demo: error: "), (argv, lines)
