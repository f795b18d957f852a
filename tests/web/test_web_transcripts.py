"""The golden transcripts (protocol/transcripts) replayed against the web door's question handler.

What "the page's question handler" is here (the spec leaves it open): the door's
whole way from a `userQuestions/ask` to its reply — bridge.py, the door's LSP
client of the host, and the page (static/app.js) in real headless Chromium, which
shows the card and sends what the user chose. Neither half alone answers a
question, and a protocol change can break either (the ask's shape is read by the
page, the reply's by the door), so both run for real: `askbridge web` as itself,
with its child `askbridge serve` replaced (ASKBRIDGE_WEB_SERVE) by
tests/web/web_transcript_player.py, which plays each transcript's server side and
checks every message the door sends (the editors' matching rules; the player's
docstring says what differs for a door). The test is the user at the page: it
picks what the transcript's recorded answer says. No askbridge host runs.

Not replayed, by design:
- generic-client-fallback.json: the door declares `experimental.userQuestions`,
  so a server never falls back to `window/showMessageRequest` for it (W1);
- errors.json: every client message in it is a request no user action at the
  page makes (an unknown session or method, invalid settings, an answer without
  `answer`);
- multi-client/*.json: several doors of one host (the MCP agent's side is the
  host's); the page against a real host and agent is tests/web/test_web_page.py.
pending-late-reply.json is replayed without its ask exchange (`--omit-asks`), as
the editors do: the recorded client replied ASK_TIMED_OUT without claiming, while
the door claims every timed wait (its probe); the late reply is the page's own.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from webstack import card, chromium, open_page, shot, start_door, stop_door

REPO = Path(__file__).resolve().parents[2]
TRANSCRIPTS = REPO / "protocol" / "transcripts"
PLAYER = Path(__file__).with_name("web_transcript_player.py")
SERVE_ENV = "ASKBRIDGE_WEB_SERVE"
NOT_A_DOOR_EXCHANGE = {"generic-client-fallback.json", "errors.json"}
# Each replayed transcript and the test that replays it.
REPLAYED = {
    "blocking-ask.json": "test_blocking_ask_transcript_A7_T3_V8_B3",
    "multi-select-custom.json": "test_multi_select_custom_transcript_V2_V4_V8_B3",
    "session-cancel-during-ask.json": "test_session_cancel_during_ask_transcript_A9_B3",
    "timed-claim.json": "test_timed_claim_transcript_TW4_C3_P2_B4",
    "pending-late-reply.json": "test_pending_late_reply_transcript_L1_L4_V7_B5",
}
User = Callable[[Any, Path], Awaitable[None]]


async def read_report(path: Path, done: bool = True) -> dict[str, Any]:
    """The player's report, once it says the steps are done (or a problem)."""
    file = anyio.Path(path)
    with anyio.fail_after(30):
        while True:
            if await file.exists():
                try:
                    report: dict[str, Any] = json.loads(await file.read_text())
                except ValueError:  # being written
                    report = {}
                if report and (report["done"] or not done or report["problem"]):
                    return report
            await anyio.sleep(0.05)


async def replay(tmp_path: Path, name: str, user: User, omit_asks: bool = False) -> dict[str, Any]:
    """`user` plays the person at the page; returns the player's final report."""
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    report_path, cue = tmp_path / "report.json", tmp_path / "cue"
    player = [sys.executable, str(PLAYER), str(TRANSCRIPTS / name), "--report", str(report_path)]
    player += ["--cue", str(cue)] + (["--omit-asks"] if omit_asks else [])
    door = await start_door(data_dir, env={SERVE_ENV: json.dumps(player)})
    try:
        async with chromium() as browser:
            page = await open_page(browser, door)
            await user(page, cue)
            report = await read_report(report_path)
            assert report["ok"], report["problem"]
            await shot(page, f"transcript-{name.removesuffix('.json')}")
    except Exception as exc:  # the player's mismatch ends the door: say that, not the page's
        with anyio.move_on_after(5):
            problem = (await read_report(report_path, done=False))["problem"]
            if problem:
                raise AssertionError(f"transcript player: {problem}") from exc
        raise
    finally:
        status = await stop_door(door)
    report = await read_report(report_path)  # rewritten at end of input: nothing after
    assert report["ok"] and report["done"], report["problem"]
    assert status == 0, door.stderr
    return report


def sent(report: dict[str, Any], method: str) -> list[dict[str, Any]]:
    return [
        e["message"]
        for e in report["exchange"]
        if e["from"] == "client" and e["message"].get("method") == method
    ]


def test_every_transcript_is_replayed_or_left_out_by_design() -> None:
    """A new transcript needs a decision here (and a test)."""
    assert {p.name for p in TRANSCRIPTS.glob("*.json")} == REPLAYED.keys() | NOT_A_DOOR_EXCHANGE
    assert all(callable(globals().get(test)) for test in REPLAYED.values())


async def test_blocking_ask_transcript_A7_T3_V8_B3(tmp_path: Path) -> None:
    """blocking-ask.json: the page's answer is the recorded reply; no wait, no claim (V5)."""

    async def user(page: Any, cue: Path) -> None:
        c = await card(page, "Which database?")
        assert "zero setup" in await c.inner_text()  # the option's description (B3)
        await c.get_by_text("SQLite (Recommended)", exact=True).click()
        await c.get_by_role("button", name="Answer").click()
        await c.get_by_text("Sent.").wait_for()

    report = await replay(tmp_path, "blocking-ask.json", user)
    assert sent(report, "userQuestions/attachWait") == []


async def test_multi_select_custom_transcript_V2_V4_V8_B3(tmp_path: Path) -> None:
    """multi-select-custom.json: two labels plus Other text, and only text for the
    question without options (`selected: []`, V4), exactly as recorded."""

    async def user(page: Any, cue: Path) -> None:
        c = await card(page, "Which languages?")
        await c.get_by_text("Python", exact=True).click()
        await c.get_by_text("Rust", exact=True).click()
        await c.get_by_label("Other answer to: Which languages?").fill("plus a little Zig")
        await c.get_by_label("Answer to: What is the service called?").fill("orders-api")
        await c.get_by_role("button", name="Answer").click()
        await c.get_by_text("Sent.").wait_for()

    await replay(tmp_path, "multi-select-custom.json", user)


async def test_session_cancel_during_ask_transcript_A9_B3(tmp_path: Path) -> None:
    """session-cancel-during-ask.json: the card is open in the page when the turn is
    cancelled elsewhere; `$/cancelRequest` closes it there and the door replies -32800."""

    async def user(page: Any, cue: Path) -> None:
        c = await card(page, "Which database?")
        await anyio.Path(cue).touch()  # the editor's user cancels the turn now
        await page.locator("article.card.closed", has_text="Which database?").wait_for()
        assert await c.locator("button.submit").is_disabled()  # shrunk to a line: hidden too

    report = await replay(tmp_path, "session-cancel-during-ask.json", user)
    replies = [e["message"] for e in report["exchange"] if e["message"].get("id") == 101]
    assert [r.get("error", {}).get("code") for r in replies if "method" not in r] == [-32800]


async def test_timed_claim_transcript_TW4_C3_P2_B4(tmp_path: Path) -> None:
    """timed-claim.json: the door claims with the recorded attachWait params and counts
    down from the one `$/progress` frame; the focused page holds the wait (B4) until
    the user answers with the recorded reply. The probe's early release and the page's
    own claim are the door's allowed extras (web_transcript_player.py)."""

    async def user(page: Any, cue: Path) -> None:
        await page.evaluate("window.dispatchEvent(new Event('focus'))")
        c = await card(page, "Which database?")
        countdown = c.locator(
            ".countdown", has_text=re.compile(r"clock stopped while you look · \d+ s")
        )
        await countdown.wait_for()
        seconds = int(re.findall(r"(\d+) s were left", await countdown.inner_text())[0])
        assert 50 <= seconds <= 60  # from the frame's remainingMs (the stand-in 60000)
        await c.get_by_text("SQLite (Recommended)", exact=True).click()
        await c.get_by_role("button", name="Answer").click()
        await c.get_by_text("Sent.").wait_for()

    report = await replay(tmp_path, "timed-claim.json", user)
    # B4/TW5: when the reply went, a claim was held (no release between it and the reply).
    exchange = [e["message"] for e in report["exchange"] if e["from"] == "client"]
    reply_at = next(i for i, m in enumerate(exchange) if m.get("id") == 101)
    claims = [m["id"] for m in exchange[:reply_at] if m.get("method") == "userQuestions/attachWait"]
    released = {
        m["params"]["id"] for m in exchange[:reply_at] if m.get("method") == "$/cancelRequest"
    }
    assert claims and claims[-1] not in released, exchange


async def test_pending_late_reply_transcript_L1_L4_V7_B5(tmp_path: Path) -> None:
    """pending-late-reply.json without its ask exchange: the continued question is
    listed from the views (B5); the page's answer is the recorded late reply, and
    the settled view tells the page it went through."""

    async def user(page: Any, cue: Path) -> None:
        c = await card(page, "Which database?", where="#continued")
        await c.get_by_text("SQLite (Recommended)", exact=True).click()
        await c.get_by_role("button", name="Answer").click()
        await c.get_by_text("late reply").wait_for()

    report = await replay(tmp_path, "pending-late-reply.json", user, omit_asks=True)
    assert len(sent(report, "userQuestions/answer")) == 1
