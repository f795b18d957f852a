"""B9: the web page as a person uses it — real door, real host, real headless Chromium.

Each card case runs at a desktop and a phone viewport; screenshots go to
test-artifacts/web/. The questions come from an MCP agent (an external session,
X1), which every rendering client of the host follows; one test uses a hosted
session an editor created (B1: the door finds it with session/list).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from webstack import FEATURES, shot, web_stack

VIEWPORT = pytest.mark.parametrize("viewport", ["desktop", "phone"])
DB = {
    "id": "db",
    "question": "Which database?",
    "header": "Setup",
    "options": [
        {"label": "SQLite", "description": "a file next to the app"},
        {"label": "Postgres", "description": "a server"},
    ],
}


async def card(page: Any, text: str) -> Any:
    loc = page.locator("article.card", has_text=text)
    await loc.first.wait_for()
    return loc.first


@VIEWPORT
async def test_B3_plain_question_answered_in_the_page(tmp_path: Path, viewport: str) -> None:
    async with web_stack(tmp_path) as st:
        page = await st.page(viewport)
        result = st.ask_soon([DB])
        c = await card(page, "Which database?")
        assert await page.title() == "(1) askbridge"  # B7: the title counts open questions
        await shot(page, f"plain-{viewport}")
        if viewport == "phone":  # B7: 44 px touch targets
            box = await c.get_by_role("button", name="Answer").bounding_box()
            assert box is not None and box["height"] >= 44
        await c.get_by_text("Postgres", exact=True).click()
        await c.get_by_role("button", name="Answer").click()
        assert await result() == {"answers": [{"id": "db", "selected": ["Postgres"]}]}
        await page.locator("#empty").wait_for()


@VIEWPORT
async def test_B3_multi_select_and_other(tmp_path: Path, viewport: str) -> None:
    async with web_stack(tmp_path) as st:
        page = await st.page(viewport)
        result = st.ask_soon([FEATURES, DB])
        c = await card(page, "Which features?")
        await c.get_by_text("Auth", exact=True).click()
        await c.get_by_text("Billing", exact=True).click()
        await c.get_by_label("Other answer to: Which database?").fill("DuckDB")
        await shot(page, f"multi-other-{viewport}")
        await c.get_by_role("button", name="Answer").click()
        assert await result() == {
            "answers": [
                {"id": "features", "selected": ["Auth", "Billing"]},
                {"id": "db", "selected": [], "custom": "DuckDB"},
            ]
        }


@VIEWPORT
async def test_B3_approval_allow(tmp_path: Path, viewport: str) -> None:
    async with web_stack(tmp_path) as st:
        page = await st.page(viewport)
        tool_input = {"command": "rm -rf build", "description": "Clean the build"}
        result = st.call_soon("approval_prompt", {"tool_name": "Bash", "input": tool_input})
        c = await card(page, "rm -rf build")
        assert await c.locator("pre").inner_text() == "rm -rf build"  # Markdown code block
        assert "Tool: Bash" in await c.inner_text()
        await shot(page, f"approval-{viewport}")
        await c.get_by_role("button", name="Allow").click()
        assert await result() == {"behavior": "allow", "updatedInput": tool_input}


async def test_S17_an_approval_renders_the_whole_command_as_code(tmp_path: Path) -> None:
    """S17: a ``` line inside the command's heredoc does not close the code block (the
    page's Markdown closes a fence only with one at least as long), so nothing of the
    command turns into prose or a link; the bidi override shows as <U+202E>."""
    command = (
        "cat > n.md <<'EOF'\n```\n[Allow is safe](https://evil.example/)\nEOF\nrm -rf ~ \u202e,x"
    )
    async with web_stack(tmp_path) as st:
        page = await st.page()
        tool_input = {"command": command}
        result = st.call_soon("approval_prompt", {"tool_name": "Bash", "input": tool_input})
        c = await card(page, "rm -rf ~")
        assert await c.locator(".detail pre").count() == 1
        shown = command.replace("\u202e", "<U+202E>")
        assert await c.locator(".detail pre").inner_text() == shown
        assert await c.locator(".detail a").count() == 0
        await c.get_by_role("button", name="Deny").click()
        assert (await result())["behavior"] == "deny"


@VIEWPORT
async def test_B3_plan_review_feedback(tmp_path: Path, viewport: str) -> None:
    async with web_stack(tmp_path) as st:
        page = await st.page(viewport)
        plan = "# Plan\n\n- Add the table\n- Migrate <script>alert(1)</script>"
        result = st.call_soon(
            "approval_prompt", {"tool_name": "ExitPlanMode", "input": {"plan": plan}}
        )
        c = await card(page, "Add the table")
        assert await c.locator("script").count() == 0  # B3: no raw HTML from Markdown
        assert "<script>alert(1)</script>" in await c.inner_text()
        await c.get_by_label("Feedback (sent with Keep planning)").fill("Also add an index")
        await shot(page, f"plan-review-{viewport}")
        await c.get_by_role("button", name="Keep planning").click()
        assert await result() == {"behavior": "deny", "message": "Also add an index"}


async def test_B3_header_question_and_options_are_text_never_html(tmp_path: Path) -> None:
    # The card's header, question, labels and descriptions are set as text (app.js
    # textEl), not parsed: markup in them shows as typed and makes no element.
    q = {
        "id": "q",
        "question": "Pick <i>one</i>?",
        "header": "<b>Setup</b>",
        "options": [{"label": "<u>A</u>", "description": "<img src=x onerror=alert(1)>"}],
    }
    async with web_stack(tmp_path) as st:
        page = await st.page()
        result = st.ask_soon([q])
        c = await card(page, "Pick <i>one</i>?")
        assert await c.locator("b, i, u, img").count() == 0
        assert await c.locator(".header").text_content() == "<b>Setup</b>"
        assert await c.locator(".option small").inner_text() == "<img src=x onerror=alert(1)>"
        await c.get_by_text("<u>A</u>", exact=True).click()
        await c.get_by_role("button", name="Answer").click()
        assert await result() == {"answers": [{"id": "q", "selected": ["<u>A</u>"]}]}


async def blur(page: Any) -> None:
    await page.evaluate("window.dispatchEvent(new Event('blur'))")


@VIEWPORT
async def test_B4_focus_holds_the_countdown_and_blur_lets_it_continue(
    tmp_path: Path, viewport: str
) -> None:
    async with web_stack(tmp_path, clock=True) as st:
        page = await st.page(viewport)
        result, c = await st.timed_card(page, DB, timeout=2)
        await page.evaluate("window.dispatchEvent(new Event('focus'))")
        await c.locator(".countdown", has_text="clock stopped while you look").wait_for()
        await st.claims(1)
        await shot(page, f"timed-held-{viewport}")
        # Past the 2 s deadline the claim still holds the wait (TW5): no pending yet.
        await st.advance(3000)
        assert await st.question_state() == "open"
        await blur(page)  # released: the deadline has passed, so it continues now
        assert (await result())["pending"] is True
        # B4/B5: the card is now a continued question, still answerable (late reply).
        late = page.locator("#continued article.card", has_text="Which database?")
        await late.wait_for()
        await shot(page, f"continued-{viewport}")
        await late.get_by_text("SQLite", exact=True).click()
        await late.get_by_role("button", name="Answer").click()
        await late.get_by_text("late reply").wait_for()
        got = await st.call_soon("get_answers", {})()
        assert got["answers"][0]["answers"] == [{"id": "db", "selected": ["SQLite"]}]
        del c


async def test_B4_take_time_holds_after_blur(tmp_path: Path) -> None:
    async with web_stack(tmp_path, clock=True) as st:
        page = await st.page()
        result, c = await st.timed_card(page, DB, timeout=2)  # blurred: no look
        await c.get_by_role("button", name="Take time").click()
        await st.claims(1)
        await st.advance(3000)  # past the deadline: Take time holds it (TW5)
        assert await st.question_state() == "open"
        await c.get_by_text("SQLite", exact=True).click()
        await c.get_by_role("button", name="Answer").click()
        assert await result() == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


@pytest.mark.parametrize("host", ["inline", "auto"])
async def test_B3_M2_first_answer_wins_against_an_editor_window(tmp_path: Path, host: str) -> None:
    async with web_stack(tmp_path, host=host) as st:
        release = anyio.Event()
        st.editor_answers_after(release, {"answers": [{"id": "db", "selected": ["SQLite"]}]})
        page = await st.page()
        result = st.ask_soon([DB])
        c = await card(page, "Which database?")
        release.set()  # the editor window answers first
        assert await result() == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
        await c.get_by_text("Answered elsewhere.").wait_for()
        await shot(page, f"answered-elsewhere-{host}")
        # And the other way round: the page answers, the editor's card is withdrawn.
        st.editor.answer_with(None)
        result = st.ask_soon([FEATURES])
        c = await card(page, "Which features?")
        await st.editor.wait_for(lambda: len(st.editor.asks) == 2)
        await c.get_by_text("Search", exact=True).click()
        await c.get_by_role("button", name="Answer").click()
        assert await result() == {"answers": [{"id": "features", "selected": ["Search"]}]}
        await st.editor.wait_for(lambda: st.editor.withdrawn)


async def test_B1_follows_a_hosted_session_an_editor_created(tmp_path: Path) -> None:
    async with web_stack(tmp_path) as st:
        page = await st.page()
        step = {
            "toolCalls": [
                {
                    "id": "call-1",
                    "name": "ask_user_question",
                    "arguments": {"questions": [DB], "timeout": 60},
                }
            ]
        }
        sid = await st.editor.new_session(
            model={"kind": "script", "steps": [step, {"text": "done"}]},
            askUserQuestion={"mode": "timed", "timeout": 60},
        )
        run = st.editor.start_prompt(sid, "go")
        c = await card(page, "Which database?")
        await c.get_by_text("SQLite", exact=True).click()
        await c.get_by_role("button", name="Answer").click()
        assert await run.result() == "end_turn"


async def test_B6_reconnect_gets_the_whole_state(tmp_path: Path) -> None:
    async with web_stack(tmp_path) as st:
        page = await st.page("phone")
        await page.context.set_offline(True)
        result = st.ask_soon([DB])
        await st.editor.wait_for(lambda: st.editor.asks)
        await page.evaluate("S.es.close(); S.es.onerror()")  # the phone slept: stream gone
        await page.locator("#stopped").wait_for()
        await shot(page, "stopped-phone")
        await page.context.set_offline(False)
        await page.locator("#retry").click()
        c = await card(page, "Which database?")
        assert await page.locator("article.card").count() == 1  # nothing shown twice
        await c.get_by_text("SQLite", exact=True).click()
        await c.get_by_role("button", name="Answer").click()
        assert await result() == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


async def test_B6_a_resync_keeps_what_was_filled_in_and_drops_nothing_twice(tmp_path: Path) -> None:
    """The whole state after a reconnect keeps the element of a card that is still open
    as it was: what the person selected and typed before the phone slept is there."""
    async with web_stack(tmp_path) as st:
        page = await st.page("phone")
        result = st.ask_soon([FEATURES, DB])
        c = await card(page, "Which features?")
        await c.get_by_text("Auth", exact=True).click()
        await c.get_by_label("Other answer to: Which database?").fill("DuckDB")
        await page.evaluate("S.es.close(); S.es.onerror()")  # the stream gone; it comes back
        await page.locator("#stopped").wait_for()
        await page.locator("#stopped").wait_for(state="hidden")  # the whole state again
        assert await page.locator("article.card").count() == 1
        c = await card(page, "Which features?")
        assert await c.get_by_label("Auth").is_checked()
        assert await c.get_by_label("Other answer to: Which database?").input_value() == "DuckDB"
        await c.get_by_role("button", name="Answer").click()
        assert await result() == {
            "answers": [
                {"id": "features", "selected": ["Auth"]},
                {"id": "db", "selected": [], "custom": "DuckDB"},
            ]
        }


async def test_B2_page_without_token_is_401_and_says_so(tmp_path: Path) -> None:
    async with web_stack(tmp_path) as st:
        page = await st.tokenless_page()
        response = await page.request.get(st.door.base + "/api/events")
        assert response.status == 401
        await shot(page, "login-desktop")


async def test_B8_door_exits_with_one_line_when_the_host_stops(tmp_path: Path) -> None:
    async with web_stack(tmp_path, host="auto") as st:
        page = await st.page()
        from askbridge.testing.hosts import kill_host

        await anyio.to_thread.run_sync(kill_host, st.data_dir)
        with anyio.fail_after(15):
            status = await st.door.process.wait()
        assert status == 1
        assert st.door.process.stderr is not None
        rest = (await st.door.process.stderr.read()).decode().strip().splitlines()
        assert len(rest) == 1 and rest[0].startswith("askbridge web: "), rest
        await page.locator("#stopped").wait_for()


async def test_B5_dismiss_only_hides_the_question_stays_for_the_editors(tmp_path: Path) -> None:
    async with web_stack(tmp_path) as st:
        release = anyio.Event()
        st.editor_answers_after(release, {"answers": [{"id": "db", "selected": ["Postgres"]}]})
        page = await st.page()
        result = st.ask_soon([DB])
        c = await card(page, "Which database?")
        await st.editor.wait_for(lambda: st.editor.asks)
        await c.get_by_role("button", name="Dismiss").click()
        await c.wait_for(state="hidden")
        assert await page.title() == "askbridge"
        assert not st.editor.withdrawn  # dismissing withdrew nothing: the editor still has it
        release.set()
        assert await result() == {"answers": [{"id": "db", "selected": ["Postgres"]}]}


async def test_B7_a_notification_announces_a_question_while_the_page_is_hidden(
    tmp_path: Path,
) -> None:
    async with web_stack(tmp_path) as st:
        page = await st.page("phone")
        # The user allowed notifications, and the tab is in the background. (Chromium's
        # real notification service is not in a headless run: a stand-in records them.)
        await page.evaluate(
            """() => { window.__shown = [];
            window.Notification = class { constructor(t, o) { window.__shown.push(o.body); } };
            window.Notification.permission = "granted";
            Object.defineProperty(document, "hidden", { get: () => true }); }"""
        )
        result = st.ask_soon([DB])
        await card(page, "Which database?")
        assert await page.evaluate("window.__shown") == ["Which database?"]
        assert await page.title() == "(1) askbridge"
        del result
