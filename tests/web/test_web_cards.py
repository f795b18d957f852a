"""What a card shows is what the agent gets, and the page never says what it cannot know.

Real door, real host, an MCP agent and the OS's headless Chromium (B9):

- F2/F3 on the page: on a single-select question Other *replaces* the choice (typing
  in it clears the radio, a radio clears it, and the box says so); on a multi-select
  one it is *added to* the ticked choices. The agent receives exactly what is shown.
- B3/B7: a card answered here (or elsewhere) shrinks to a line and goes, so
  "Questions" never lists a sent card beside "No open questions."; a page without
  the token does not say "No open questions." (it cannot know); no request of the
  page fails (no /favicon.ico 404); long unbroken text wraps, so the page is never
  wider than a phone's viewport.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from webstack import FEATURES, card, shot, web_stack

DB = {
    "id": "db",
    "question": "Which database?",
    "options": [{"label": "SQLite"}, {"label": "Postgres"}],
}
CACHE = {
    "id": "cache",
    "question": "Which cache?",
    "options": [{"label": "Redis"}, {"label": "None"}],
}


async def test_F2_F3_other_replaces_a_single_choice_and_adds_to_a_multi_select(
    tmp_path: Path,
) -> None:
    async with web_stack(tmp_path) as st:
        page = await st.page("phone")
        result = st.ask_soon([DB, CACHE, FEATURES])
        c = await card(page, "Which database?")
        db_other = c.get_by_label("Other answer to: Which database?")
        cache_other = c.get_by_label("Other answer to: Which cache?")
        features_other = c.get_by_label("Other answer to: Which features?")
        assert await db_other.get_attribute("placeholder") == "Other (replaces the choice)"
        assert await features_other.get_attribute("placeholder") == "Other (added to the choices)"
        # Single choice, radio then Other: the radio is cleared, visibly.
        await c.get_by_text("Postgres", exact=True).click()
        await db_other.fill("DuckDB")
        assert not await c.get_by_label("Postgres").is_checked()
        # Single choice, Other then a radio: Other is emptied.
        await cache_other.fill("Memcached")
        await c.get_by_text("Redis", exact=True).click()
        assert await cache_other.input_value() == ""
        assert await c.get_by_label("Redis").is_checked()
        # Multi-select: Other is added, the ticks stay.
        await c.get_by_text("Auth", exact=True).click()
        await c.get_by_text("Billing", exact=True).click()
        await features_other.fill("Audit log")
        assert await c.get_by_label("Auth").is_checked()
        assert await c.get_by_label("Billing").is_checked()
        await shot(page, "other-replaces-or-adds-phone")
        await c.get_by_role("button", name="Answer").click()
        assert await result() == {
            "answers": [
                {"id": "db", "selected": [], "custom": "DuckDB"},
                {"id": "cache", "selected": ["Redis"]},
                {"id": "features", "selected": ["Auth", "Billing"], "custom": "Audit log"},
            ]
        }


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
async def test_B3_an_answered_card_goes_and_no_request_of_the_page_fails(
    tmp_path: Path, viewport: str
) -> None:
    async with web_stack(tmp_path) as st:
        failed: list[str] = []
        page = await st.page(viewport)
        page.on(
            "response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None
        )
        page.on("console", lambda m: failed.append(m.text) if m.type == "error" else None)
        await page.reload()  # every request of a load, watched from the start
        await page.locator("#status", has_text="connected").wait_for()
        await page.locator("#empty").wait_for()
        result = st.ask_soon([DB])
        c = await card(page, "Which database?")
        await c.get_by_text("SQLite", exact=True).click()
        await c.get_by_role("button", name="Answer").click()
        assert await result() == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
        await c.get_by_text("Sent.").wait_for()
        await shot(page, f"sent-line-{viewport}")
        await c.wait_for(state="detached")  # the sent line goes
        assert await page.locator("#cards article").count() == 0
        assert await page.locator("#empty").is_visible()
        await shot(page, f"after-sent-{viewport}")
        assert failed == []


async def test_B2_a_page_without_the_token_does_not_say_no_open_questions(tmp_path: Path) -> None:
    async with web_stack(tmp_path) as st:
        page = await st.tokenless_page()
        assert not await page.locator("#empty").is_visible()
        await shot(page, "login-no-claims-desktop")


async def test_B7_long_unbroken_text_wraps_within_a_phone_viewport(tmp_path: Path) -> None:
    long = "x" * 300
    q = {
        "id": "q",
        "header": "H" * 100,
        "question": "Pick " + "y" * 400 + "?",
        "options": [{"label": long[:200], "description": "d" * 900}, {"label": "short"}],
    }
    async with web_stack(tmp_path) as st:
        page = await st.page("phone")
        result = st.ask_soon([q])
        c = await card(page, "Pick yyy")
        await shot(page, "long-text-phone")
        widths = await page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert widths[0] <= widths[1], widths
        await c.get_by_text("short", exact=True).click()
        await c.get_by_role("button", name="Answer").click()
        assert await result() == {"answers": [{"id": "q", "selected": ["short"]}]}
        # A detail's code block (an approval's command) scrolls inside its box.
        command = "echo " + "w" * 600
        tool_input = {"command": command, "description": "d" * 300}
        result = st.call_soon("approval_prompt", {"tool_name": "Bash", "input": tool_input})
        c = await card(page, "echo www")
        await shot(page, "long-command-phone")
        widths = await page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert widths[0] <= widths[1], widths
        await c.get_by_role("button", name="Deny").click()
        assert (await result())["behavior"] == "deny"
