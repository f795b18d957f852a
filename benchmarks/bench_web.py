"""A question reaching an open web page vs. an attached LSP window, in the same run.

An MCP agent (`askbridge mcp`) asks 10 questions one after another; each goes
to an editor window (the harness client, `askbridge serve` attached to the
host) and to a page in real headless Chromium behind `askbridge web`. For each,
the time from the `tools/call` to the window's `userQuestions/ask` and to the
card appearing in the page's DOM (a MutationObserver's `Date.now()`, same clock
as ours). Target (issue 20): median page time <= 1.5x median window time, and
under 100 ms. The page is timed when its card is in the DOM, the window when
its client has the request: the window has no rendering of its own, so the page
carries its render and the comparison leans against the page, never for it.

Nothing talks to Chromium while a question is being timed: the bench waits for
the window's request, lets SETTLE_S pass, then reads the observer's time (one
`evaluate`, which waits for the card without polling if it is not there yet).
It used to wait with Playwright's `locator.wait_for()`, which polls the page
from the driver at 0, 20, 50, 100 ms…: its first two probes ran in the renderer
and the driver exactly while the card was on its way (on this 2-core machine),
and they are the bench's work, not the page's. SETTLE_S only says when the
observer's figure is read; it never enters it.

Where the page's extra time goes (traced 2026-12-02: time.time() in every process,
performance.now() in the page; 10-30 questions a run, load 4-11 on 2 cores), per
question, page minus window, median 1.8-5.6 ms:

- the host writes the door's ask after the window's (fan-out in subscription order,
  two pipe writes): median 0.1-1.1 ms between them, up to 14 ms when the host is
  descheduled after the first write (host/asking, jsonrpc/writer.py). Being second
  is what costs: with the fan-out reversed (the door first; an experiment, not
  kept) six runs gave window 13-20 ms, page 9-15 ms, ratio 0.51-0.83x (and one
  6.5x); the window attached first, as an editor open before `askbridge web` is;
- waking the door: like waking the window's client (0.2-1.4 ms vs 0.5-2.6 ms);
- the door, first byte of the ask read -> card written (its view in the same
  write): ~0.3-0.6 ms of CPU;
- Chromium, the door's write -> the page's `onmessage`: 0.4-1.2 ms (two processes:
  the network service, then the renderer);
- the page, `onmessage` -> the card in the DOM: ~0.65 ms.

Traced again (2026-12-02 05:20-05:40 UTC, load ~0, 10-25 questions a run; an
EventSource wrapper in the page stamping `message` with performance.timeOrigin +
performance.now(), `strace -ttt` on the door for its socket reads and writes):

- the clocks agree: Date.now() and timeOrigin+now() lie inside a time.time()
  round trip through `evaluate` (within ~1 ms, Date.now() floored), so the
  page's figure is not skewed against it;
- the observer does not fire late: `onmessage` -> card in the DOM 0.1-0.8 ms
  (medians: window 4.3, onmessage 8.9, DOM 9.3 ms, 25 questions);
- the unaccounted time is Chromium's, between the door's `sendto` of the card
  (the view in the same write) and the renderer's `onmessage`: 0.4-7.9 ms, median
  ~3.5 ms (9 questions), not the 0.4-1.2 ms assumed above. It varies with what
  else runs at that moment on 2 cores: the door's own follow-up for a timed card
  (its probe claim: a request to the host, its reply, a second card event) and the
  host, the bench and Playwright. Two experiments, not kept: the probe deferred by
  10 ms (ratio 1.73-2.27x, 3 runs) and the network service in Chromium's browser
  process (`--enable-features=NetworkServiceInProcess`, 1.74-2.04x, 3 runs) did
  not move it beyond the noise of unchanged main (1.83-2.45x, 4 runs).

Before the fixes of 2026-12-02 the door took a median ~6 ms (up to 13 ms) from the
ask to the card, and the page 3-9 ms from `onmessage` to the DOM. What is left is
two more processes on the page's path than on the window's, the browser's; on a
quiet machine the window takes 3-6 ms, so they weigh 1.5-2x there, and ~1.1-1.3x
at 10 ms and more.

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
SETTLE_S = 0.2
OBSERVE = """() => { window.__seen = []; window.__waiting = [];
  new MutationObserver(() => { document.querySelectorAll('#cards article').forEach(a => {
    if (!a.dataset.seen) { a.dataset.seen = '1'; window.__seen.push(Date.now());
      window.__waiting.splice(0).forEach(wake => wake()); } }); })
  .observe(document.getElementById('cards'), {childList: true, subtree: true}); }"""
# The n-th card's time, waiting (without polling) until it is there.
SHOWN = """n => new Promise(resolve => {
  const check = () => { if (window.__seen.length > n) resolve(window.__seen[n]); else window.__waiting.push(check); };
  check(); })"""


async def main() -> None:
    page_ms: list[float] = []
    window_ms: list[float] = []
    with tempfile.TemporaryDirectory(prefix="askbridge-bench-web-") as tmp:
        async with web_stack(Path(tmp)) as st:
            page = await st.page()
            await page.evaluate(OBSERVE)
            arrived: list[float] = []
            asked = anyio.Event()
            seen = anyio.Event()

            async def window(params: dict[str, Any]) -> dict[str, Any]:
                arrived.append(time.time())
                asked.set()
                await seen.wait()  # the question stays open until the page has shown it
                qid = params["questions"][0]["id"]
                return {"answers": [{"id": qid, "selected": ["A"]}]}

            st.editor.answer_with(window)
            for n in range(QUESTIONS):
                asked, seen = anyio.Event(), anyio.Event()
                q = {"id": f"q{n}", "question": f"Question {n}?", "options": [{"label": "A"}]}
                start = time.time()
                result = st.ask_soon([q], timeout=60)
                with anyio.fail_after(30):
                    await asked.wait()
                await anyio.sleep(SETTLE_S)
                with anyio.fail_after(30):
                    shown = await page.evaluate(SHOWN, n)
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
