"""A question reaching an open web page vs. an attached LSP window, in the same run.

An MCP agent (`askbridge mcp`) asks 10 questions one after another; each goes
to an editor window (the harness client, `askbridge serve` attached to the
host) and to a page in real headless Chromium behind `askbridge web`. For each,
the time from the `tools/call` to the window's `userQuestions/ask` and to the
card appearing in the page's DOM (a MutationObserver's `Date.now()`, same clock
as ours). Target: median page time <= 1.5x median window time, and under 100 ms.
Prints one line:

    web: 10 questions, page 14 ms, window 11 ms (median); ratio 1.27x (target <= 1.5x) MET; page 14 ms (target <= 100 ms) MET

Run: `.venv/bin/python benchmarks/bench_web.py`
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "web"))
from _targets import against
from webstack import web_stack

QUESTIONS = 10
OBSERVE = """() => { window.__seen = [];
  new MutationObserver(() => { document.querySelectorAll('#cards article').forEach(a => {
    if (!a.dataset.seen) { a.dataset.seen = '1'; window.__seen.push(Date.now()); } }); })
  .observe(document.getElementById('cards'), {childList: true, subtree: true}); }"""


async def main() -> None:
    page_ms: list[float] = []
    window_ms: list[float] = []
    with tempfile.TemporaryDirectory(prefix="askbridge-bench-web-") as tmp:
        async with web_stack(Path(tmp)) as st:
            page = await st.page()
            await page.evaluate(OBSERVE)
            arrived: list[float] = []
            seen = anyio.Event()

            async def window(params: dict[str, Any]) -> dict[str, Any]:
                arrived.append(time.time())
                await seen.wait()
                qid = params["questions"][0]["id"]
                return {"answers": [{"id": qid, "selected": ["A"]}]}

            st.editor.answer_with(window)
            for n in range(QUESTIONS):
                seen = anyio.Event()
                q = {"id": f"q{n}", "question": f"Question {n}?", "options": [{"label": "A"}]}
                start = time.time()
                result = st.ask_soon([q], timeout=60)
                # The observer took the time; this wait only says when to read it.
                await page.locator("#cards article", has_text=f"Question {n}?").wait_for()
                shown = await page.evaluate(f"window.__seen[{n}]")
                page_ms.append(shown - start * 1000)
                window_ms.append((arrived[n] - start) * 1000)
                seen.set()
                await result()
    page_med, window_med = statistics.median(page_ms), statistics.median(window_ms)
    ratio = page_med / window_med
    print(
        f"web: {QUESTIONS} questions, page {page_med:.0f} ms, window {window_med:.0f} ms "
        f"(median); ratio {against(ratio, '<=', 1.5)}; page {against(page_med, '<=', 100, ' ms', digits=0)}",
        flush=True,
    )


if __name__ == "__main__":
    anyio.run(main)
