"""B4: what a timed card's countdown means on the page — real door, host, headless Chromium.

While the page holds a claim (a look: the page visible, focused and touched lately, or
the card just arrived; a hold: typing, choosing or "Take time") the host's timer is
stopped, and the card says so with a number that does not tick: what was left when
it stopped (TW5: the deadline never moves). A look lapses after LOOK_MS without
input, so a page left open with nobody at it releases its claims; unclaimed, the card
counts down what is left, and at zero the question becomes continued while the page
is still open. Neither clock is slept through: the page's is Playwright's
(`clock.install`), moved past LOOK_MS; the host's is a ManualClock (`web_stack(clock=True)`),
moved past the deadline, after which the host's view says whether the wait still holds.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
from webstack import VIEWPORTS, Stack, card, shot, web_stack

LOOK_MS = 20_000  # app.js LOOK_MS
DB = {
    "id": "db",
    "question": "Which database?",
    "options": [{"label": "SQLite"}, {"label": "Postgres"}],
}


async def clocked_page(st: Stack) -> Any:
    """The door's page with Playwright's clock in place of the page's own (it still runs)."""
    context = await st.browser.new_context(**VIEWPORTS["desktop"])
    await context.clock.install()
    page = await context.new_page()
    await page.goto(st.door.url)
    await page.locator("#status", has_text="connected").wait_for()
    return page


async def focus(page: Any) -> None:
    await page.evaluate("window.dispatchEvent(new Event('focus'))")


async def test_B4_a_focused_page_nobody_touches_lets_the_question_go_pending_while_open(
    tmp_path: Path,
) -> None:
    """The finding: a visible, focused, unattended page held a timed question until the
    page closed. Now its look lapses, it releases the claim, and the question becomes
    continued (the agent gets pending) while the page is still open and focused."""
    async with web_stack(tmp_path, clock=True) as st:
        page = await clocked_page(st)
        result, c = await st.timed_card(page, DB, timeout=2)
        await focus(page)  # someone looks, then leaves the page as it is
        countdown = c.locator(".countdown")
        await countdown.filter(
            has_text=re.compile(r"clock stopped while you look · [12] s were left")
        ).wait_for()  # the door counts what is left on its own clock
        await st.claims(1)
        shown = await countdown.inner_text()
        await shot(page, "countdown-stopped-look")
        # Held past the 2 s deadline (TW5), and the number stays what it was.
        await st.advance(3000)
        assert await st.question_state() == "open"
        assert await countdown.inner_text() == shown
        # Nobody touches the page for LOOK_MS: the look lapses and the claim goes. The
        # deadline has passed, so what is left is nothing: pending at once.
        await page.clock.fast_forward(LOOK_MS)
        with anyio.fail_after(10):
            assert (await result())["pending"] is True
        late = page.locator("#continued article.card", has_text="Which database?")
        await late.wait_for()
        assert not page.is_closed() and await page.evaluate("focused") is True
        assert await page.locator("#cards article.card:not(.settled)").count() == 0
        await shot(page, "countdown-continued-while-open")


async def test_B4_released_the_card_counts_down_what_is_left_and_goes_continued_at_zero(
    tmp_path: Path,
) -> None:
    async with web_stack(tmp_path, clock=True) as st:
        page = await st.page()
        await focus(page)
        result = st.ask_soon([DB], timeout=4)
        c = await card(page, "Which database?")
        countdown = c.locator(".countdown")
        await countdown.filter(has_text="clock stopped while you look").wait_for()
        # The claim's answer says what was left as it began (what the card shows).
        claimed = await page.evaluate(
            "async () => (await post('/api/cards/c-1/claim', {client: S.client})).data"
        )
        assert 0 < claimed["remainingMs"] <= 4000, claimed  # the door counts on its own clock
        await page.evaluate("window.dispatchEvent(new Event('blur'))")  # released
        ticking = countdown.filter(has_text=re.compile(r"^\d s left$"))
        await ticking.wait_for()
        first = await countdown.inner_text()
        await (
            countdown.filter(has_text=re.compile(r"^\d s left$"))
            .filter(has_not_text=first)
            .wait_for()
        )  # it ticks (on the page's own clock)
        await st.advance(4000)  # the host's deadline: unclaimed, the wait ends
        with anyio.fail_after(10):
            assert (await result())["pending"] is True
        await page.locator("#continued article.card", has_text="Which database?").wait_for()


async def test_B4_typing_holds_until_answered_even_after_the_look_lapses(tmp_path: Path) -> None:
    async with web_stack(tmp_path, clock=True) as st:
        page = await clocked_page(st)
        result, c = await st.timed_card(page, DB, timeout=2)
        await focus(page)
        await st.claims(1)
        await c.get_by_label("Other answer to: Which database?").fill("DuckDB")
        countdown = c.locator(".countdown")
        await countdown.filter(has_text="clock stopped until you answer").wait_for()
        assert await c.get_by_role("button", name="Take time").is_disabled()
        await page.clock.fast_forward(LOOK_MS)  # no input for longer than a look
        await st.advance(3000)  # and past the deadline
        assert await st.question_state() == "open"
        assert "clock stopped until you answer" in await countdown.inner_text()
        await shot(page, "countdown-stopped-typing")
        await c.get_by_role("button", name="Answer").click()
        assert await result() == {"answers": [{"id": "db", "selected": [], "custom": "DuckDB"}]}


async def test_B4_input_after_a_lapsed_look_stops_the_clock_again(tmp_path: Path) -> None:
    async with web_stack(tmp_path) as st:
        page = await clocked_page(st)
        await focus(page)
        result = st.ask_soon([DB], timeout=60)
        c = await card(page, "Which database?")
        countdown = c.locator(".countdown")
        await countdown.filter(has_text="clock stopped while you look").wait_for()
        await page.clock.fast_forward(LOOK_MS)
        await countdown.filter(
            has_text=re.compile(r"^\d+ s left · touch the page to stop the clock$")
        ).wait_for()
        await page.mouse.move(10, 10)
        await page.mouse.move(40, 60)  # someone is there again
        await countdown.filter(has_text="clock stopped while you look").wait_for()
        await c.get_by_text("SQLite", exact=True).click()
        await c.get_by_role("button", name="Answer").click()
        assert await result() == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
