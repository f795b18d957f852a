"""How fast the `userQuestions` projection folds a long session log (behavior.md P1–P5).

Builds one synthetic session of 1,000,000 events in a realistic mix — turns
with request headers declaring the timed ask_user_question schema, assistant
messages, questions whose results are pending, answered, failed or outcome
unknown, unrelated tool calls, late replies arriving through the inbox
(inserted, claimed, admitted as user/message) — and times `fold_all` over it.
The events are the ones this version writes: an ask's result says its `outcome`
(with its `answers`) and a late reply carries its `answers`, so the fold reads no
text back (P3, P4). A log written before they carried their kind folds through
projection_outcomes.py's text fallback, ~1.7x the instructions per event
(callgrind: 5,120 vs 3,000), and is not what is timed.
Not every continued question gets its late reply, so the active set grows to
about 16,000 by the end (a stress well beyond a real session); the fold's
per-event work must not grow with it (it grows as log32 of the active set).

The baseline, measured in the same run, is the least any Python fold over
these events pays: a loop that reads each event's `type` and looks up its
handler. Each is timed best-of-3. The input log is built first and then
`gc.freeze()`d, so that no timing includes the cyclic collector walking the
million input dicts (that cost depends on when a full collection happens to
fire, not on the fold). Target (f): ≥ 1M events/s; the rate is an
absolute figure, so the baseline's rate is shown for scale. Prints one line:

    fold: 1000000 events, 1.20M events/s (target >= 1M events/s) MET; for scale, the baseline loop 9.8M events/s

Run: `.venv/bin/python benchmarks/bench_fold.py`
"""

from __future__ import annotations

import gc
import json
import random
import time
from collections.abc import Callable
from typing import Any

from _targets import against

from askbridge.host.log import events as ev
from askbridge.host.log.projection import fold_all

EVENT_COUNT = 1_000_000
REPEATS = 3
ASK = "ask_user_question"
COMPACT = (",", ":")

TOOLS = [
    {"name": "read_file", "description": "Read a file.", "parameters": {"type": "object"}},
    {
        "name": ASK,
        "description": "Ask the user structured questions. A pending result is still answerable.",
        "parameters": {
            "type": "object",
            "properties": {
                "questions": {"type": "array", "items": {"type": "object"}},
                "timeout": {"type": "integer"},
            },
            "required": ["questions"],
        },
    },
]

QUESTION_SETS: list[list[dict[str, Any]]] = [
    [{"id": "name", "question": "What should the project be called?"}],
    [
        {
            "id": "db",
            "question": "Which database?",
            "header": "Storage",
            "options": [
                {"label": "SQLite (Recommended)", "description": "embedded, no server"},
                {"label": "Postgres"},
            ],
        },
        {
            "id": "features",
            "question": "Which features?",
            "options": [{"label": "auth"}, {"label": "search"}, {"label": "export"}],
            "multi_select": True,
        },
    ],
]


def _answers(questions: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = []
    for q in questions:
        labels = [o["label"] for o in q.get("options", [])]
        if labels:
            answers.append({"id": q["id"], "selected": [rng.choice(labels)]})
        else:
            answers.append({"id": q["id"], "selected": [], "custom": "askbridge"})
    return answers


def _reply(call_id: str, questions: list[dict[str, Any]], rng: random.Random) -> list[ev.Event]:
    answers = _answers(questions, rng)
    payload = {
        "kind": "answer_to_pending_question",
        "tool": ASK,
        "callId": call_id,
        "questions": questions,
        "answers": answers,
    }
    content = ev.text_content(json.dumps(payload, separators=COMPACT))
    source = ev.reply_source(call_id)
    inbox_id = f"inbox-{call_id}"
    return [
        ev.inbox_inserted(inbox_id, "next-step", content, source, answers),
        ev.inbox_claimed(inbox_id),
        ev.user_message(content, source=source, inbox_id=inbox_id, answers=answers),
    ]


def _ask_result(
    call_id: str, questions: list[dict[str, Any]], rng: random.Random
) -> tuple[ev.Event, bool]:
    """The logged result of one ask, and whether it left the question continued (P3)."""
    roll = rng.random()
    if roll < 0.55:
        text = json.dumps(
            {"pending": True, "callId": call_id, "message": "No answer yet; still answerable."},
            separators=COMPACT,
        )
        return ev.tool_result(call_id, ASK, text, outcome=ev.OUTCOME_PENDING), True
    if roll < 0.90:
        answers = _answers(questions, rng)
        text = json.dumps({"answers": answers}, separators=COMPACT)
        result = ev.tool_result(call_id, ASK, text, outcome=ev.OUTCOME_ANSWERED, answers=answers)
        return result, False
    if roll < 0.95:
        error = {"name": "UserQuestionError", "code": "ASK_CANCELLED"}
        return ev.tool_result(call_id, ASK, "Error: cancelled", is_error=True, error=error), False
    error = {"name": "HarnessError", "code": "TOOL_OUTCOME_UNKNOWN"}
    text = "Error: outcome unknown"
    return ev.tool_result(call_id, ASK, text, is_error=True, error=error), True


def make_events(count: int, rng: random.Random) -> list[ev.Event]:
    made: list[ev.Event] = []
    waiting: list[tuple[str, list[dict[str, Any]]]] = []  # continued calls not yet replied
    turn = 0
    while len(made) < count:
        turn += 1
        call_id, read_id = f"ask-{turn}", f"read-{turn}"
        questions = rng.choice(QUESTION_SETS)
        made.append(ev.turn_start(f"turn-{turn}", "prompt" if turn % 3 else "inbox"))
        made.append(ev.request_header(TOOLS))
        made.append(
            ev.assistant_message(
                "Let me check and ask.",
                [{"id": read_id, "name": "read_file", "arguments": {"path": "README.md"}}],
            )
        )
        made.append(ev.tool_call(read_id, "read_file", {"path": "README.md"}))
        made.append(ev.tool_result(read_id, "read_file", "# askbridge\n" * 4))
        made.append(ev.request_header(TOOLS))
        made.append(ev.assistant_message("", [{"id": call_id, "name": ASK, "arguments": {}}]))
        made.append(ev.tool_call(call_id, ASK, {"questions": questions}))
        result, continued = _ask_result(call_id, questions, rng)
        made.append(result)
        if continued:
            waiting.append((call_id, questions))
        # Most waiting questions get a late reply within a few turns; some never do.
        if waiting and rng.random() < 0.5:
            late_id, late_questions = waiting.pop(rng.randrange(len(waiting)))
            if rng.random() < 0.83:
                made.extend(_reply(late_id, late_questions, rng))
        made.append(ev.turn_end(f"turn-{turn}", "end_turn"))
    return made[:count]


def best_of(repeats: int, work: Callable[[], Any]) -> tuple[float, Any]:
    """The best wall time of `repeats` runs, and what the last run returned."""
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - start)
    return best, result


def type_dispatch_baseline(events: list[ev.Event]) -> None:
    handlers: dict[str, int] = {ev.TOOL_CALL: 1, ev.TOOL_RESULT: 2, ev.USER_MESSAGE: 3}
    for event in events:
        handlers.get(event["type"])


def main() -> None:
    events = make_events(EVENT_COUNT, random.Random(11))
    gc.collect()
    gc.freeze()
    fold_s, final = best_of(REPEATS, lambda: fold_all(events))
    base_s, _ = best_of(REPEATS, lambda: type_dispatch_baseline(events))
    # Sanity: the mix really exercised the fold (an unsettled tail and many settlements).
    final_view = final.view_dict()
    assert final_view["active"] and len(final_view["settled"]) > EVENT_COUNT // 100
    fold_rate, base_rate = EVENT_COUNT / fold_s, EVENT_COUNT / base_s
    print(
        f"fold: {EVENT_COUNT} events, {against(fold_rate / 1e6, '>=', 1, 'M events/s')}; "
        f"for scale, the baseline loop {base_rate / 1e6:.1f}M events/s"
    )


if __name__ == "__main__":
    main()
