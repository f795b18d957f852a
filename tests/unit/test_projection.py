"""The `userQuestions` projection fold (behavior.md P1–P6, P7's synthetic results, V7, S2).

Events are built with the constructors of askbridge.host.log.events, as the host logs them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askbridge.host.log import events as ev
from askbridge.host.log.projection import Projection, fold_all
from askbridge.protocol import FIXED_MESSAGES, ErrorCode, ProjectionView
from askbridge.protocol.views import apply_view_changes, empty_view

ASK = "ask_user_question"
QUESTIONS_SCHEMA = {"type": "array", "items": {"type": "object"}}
TIMED_TOOL = {
    "name": ASK,
    "description": "Ask the user. Pending means still answerable.",
    "parameters": {
        "type": "object",
        "properties": {"questions": QUESTIONS_SCHEMA, "timeout": {"type": "integer"}},
        "required": ["questions"],
    },
}
LEGACY_TOOL = {**TIMED_TOOL, "parameters": {"type": "object", "properties": {"q": {}}}}
OTHER_TOOL = {"name": "read_file", "description": "", "parameters": {"type": "object"}}
TIMED = ev.request_header([OTHER_TOOL, TIMED_TOOL])
LEGACY = ev.request_header([OTHER_TOOL, LEGACY_TOOL])

DB_RAW = {
    "id": "db",
    "question": "Which database?",
    "header": "Storage",
    "options": [{"label": "SQLite", "description": "embedded"}, {"label": "Postgres"}],
    "multi_select": False,
    "detail": "models may add keys; they are dropped",
}
DB_VIEW = {
    "id": "db",
    "question": "Which database?",
    "header": "Storage",
    "options": [{"label": "SQLite", "description": "embedded"}, {"label": "Postgres"}],
    "multiSelect": False,
}
NAME_RAW = {"id": "name", "question": "Project name?"}


def ask(call_id: str, *questions: dict[str, Any]) -> ev.Event:
    return ev.tool_call(call_id, ASK, {"questions": list(questions or [NAME_RAW])})


def pending(call_id: str) -> ev.Event:
    text = json.dumps({"pending": True, "callId": call_id, "message": "still answerable"})
    return ev.tool_result(call_id, ASK, text)


def answered(call_id: str, answers: list[dict[str, Any]]) -> ev.Event:
    return ev.tool_result(call_id, ASK, json.dumps({"answers": answers}, separators=(",", ":")))


def outcome_unknown(call_id: str) -> ev.Event:
    """P7: the synthetic result the host appends on resume."""
    code = ErrorCode.TOOL_OUTCOME_UNKNOWN
    error = {"name": "HarnessError", "code": code.value}
    return ev.tool_result(
        call_id, ASK, f"Error: {FIXED_MESSAGES[code]}", is_error=True, error=error
    )


def reply(call_id: str, answers: list[dict[str, Any]] | None, text: str | None = None) -> ev.Event:
    if text is None:
        text = json.dumps(
            {
                "kind": "answer_to_pending_question",
                "tool": ASK,
                "callId": call_id,
                "questions": [NAME_RAW],
                "answers": answers,
            },
            separators=(",", ":"),
        )
    return ev.user_message(ev.text_content(text), source=ev.reply_source(call_id))


NAME_ANSWER = [{"id": "name", "selected": [], "custom": "askbridge"}]


def active_of(state: Projection) -> list[tuple[str, str]]:
    return [(a["callId"], a["state"]) for a in state.view_dict()["active"]]


def settled_of(state: Projection) -> list[tuple[str, list[dict[str, Any]]]]:
    return [(s["callId"], s["answers"]) for s in state.view_dict()["settled"]]


def unchanged(state: Projection, event: ev.Event) -> bool:
    """Folding `event` reports no change and leaves the view as it was (P5)."""
    before = state.view_dict()
    return state.apply([event]) == [] and state.view_dict() == before


def view_dict(state: Projection) -> dict[str, Any]:
    return state.view_dict()


# P1


def test_P1_timed_header_tracks_calls_and_view_matches_protocol_model() -> None:
    state = fold_all([TIMED, ask("c1", DB_RAW)])
    assert view_dict(state) == {
        "active": [{"callId": "c1", "questions": [DB_VIEW], "state": "open"}],
        "settled": [],
    }
    assert isinstance(state.view(), ProjectionView)
    assert state.view().dump() == view_dict(state)


@pytest.mark.parametrize(
    "headers",
    [
        [],
        [LEGACY],
        [ev.request_header([OTHER_TOOL])],
        [ev.request_header([{**TIMED_TOOL, "parameters": "not a schema"}])],
        [TIMED, LEGACY],
    ],
    ids=["no-header", "legacy", "no-ask-tool", "bad-schema", "latest-is-legacy"],
)
def test_P1_calls_are_ignored_unless_latest_header_declares_timed_schema(
    headers: list[ev.Event],
) -> None:
    assert unchanged(fold_all(headers), ask("c1"))


def test_P1_legacy_header_after_timed_stops_new_calls_but_keeps_tracked_ones() -> None:
    state = fold_all([TIMED, ask("c1"), pending("c1"), LEGACY])
    assert unchanged(state, ask("c2"))
    assert active_of(state) == [("c1", "continued")]
    state.apply([reply("c1", NAME_ANSWER)])
    assert settled_of(state) == [("c1", NAME_ANSWER)]


def test_P1_a_header_changes_what_is_tracked_but_never_the_view() -> None:
    state = fold_all([TIMED, ask("c1")])
    assert unchanged(state, TIMED)
    assert unchanged(state, LEGACY)
    assert not state.timed


# P2


def test_P2_asks_append_in_order_and_reask_moves_to_end_with_new_questions() -> None:
    state = fold_all([TIMED, ask("c1"), ask("c2"), pending("c1"), ask("c3")])
    assert active_of(state) == [("c1", "continued"), ("c2", "open"), ("c3", "open")]
    assert state.apply([ask("c1", DB_RAW)]) == [
        {"callId": "c1", "state": "open", "questions": [DB_VIEW]}
    ]
    assert active_of(state) == [("c2", "open"), ("c3", "open"), ("c1", "open")]
    assert view_dict(state)["active"][2]["questions"] == [DB_VIEW]


def test_P2_a_load_builds_a_call_s_view_form_when_read_the_same_as_a_live_fold() -> None:
    """A load keeps an asked call's batch and builds its view form on first read (the
    log's objects untouched); the view is the one a live fold reports."""
    call = ask("c1", DB_RAW, NAME_RAW)
    logged = json.dumps(call)
    loaded, live = fold_all([TIMED, call]), Projection([TIMED])
    (change,) = live.apply([call])
    assert loaded.snapshot()[0]["questions"] == change["questions"] == [DB_VIEW, NAME_RAW]
    assert json.dumps(view_dict(loaded)) == json.dumps(view_dict(live))  # key order too
    assert json.dumps(call) == logged


def test_P3_a_batch_in_view_form_is_kept_and_any_other_is_copied_in_view_order() -> None:
    kept = [{"id": "db", "selected": ["y"]}, {"id": "n", "selected": [], "custom": "x"}]
    other = [{"selected": ["y"], "id": "db", "note": 1}]
    for batch, shown in ((kept, kept), (other, [{"id": "db", "selected": ["y"]}])):
        result = ev.tool_result("c1", ASK, "", outcome="answered", answers=batch)
        (settled,) = fold_all([TIMED, ask("c1"), result]).settled
        assert json.dumps(settled[1]) == json.dumps(shown)
        assert (settled[1] is batch) == (batch is kept)


def test_P2_reask_of_a_continued_call_reopens_it() -> None:
    state = fold_all([TIMED, ask("c1"), pending("c1"), ask("c1")])
    assert active_of(state) == [("c1", "open")]


def test_P2_arguments_logged_as_json_text_are_parsed() -> None:
    call = ev.tool_call("c1", ASK, json.dumps({"questions": [DB_RAW]}))
    assert view_dict(fold_all([TIMED, call]))["active"][0]["questions"] == [DB_VIEW]


def test_P2_malformed_optional_fields_are_left_out() -> None:
    raw = {**NAME_RAW, "header": 3, "options": [{"label": ""}], "multi_select": "yes"}
    state = fold_all([TIMED, ask("c1", raw)])
    assert view_dict(state)["active"][0]["questions"] == [NAME_RAW]


@pytest.mark.parametrize(
    "arguments",
    [
        None,
        "not json",
        "[1]",
        {},
        {"questions": []},
        {"questions": "q"},
        {"questions": [NAME_RAW, "q"]},
        {"questions": [{"question": "no id"}]},
        {"questions": [{"id": 7, "question": "id not a string"}]},
        {"questions": [{"id": "", "question": "empty id"}]},
        {"questions": [{"id": "q"}]},
        {"questions": [{"id": "q", "question": ["not a string"]}]},
    ],
)
def test_P2_unparseable_arguments_change_nothing(arguments: Any) -> None:
    state = fold_all([TIMED, ask("c1")])
    assert unchanged(state, ev.tool_call("c2", ASK, arguments))
    assert unchanged(state, ev.tool_call("c1", ASK, arguments))


def test_P2_other_tools_are_not_tracked() -> None:
    state = fold_all([TIMED])
    assert unchanged(state, ev.tool_call("c1", "read_file", {"questions": [NAME_RAW]}))


# P3 (and P7's synthetic result)


def test_P3_pending_marks_continued_in_place() -> None:
    state = fold_all([TIMED, ask("c1"), ask("c2"), pending("c1")])
    assert active_of(state) == [("c1", "continued"), ("c2", "open")]
    assert unchanged(state, pending("c1"))


def test_P3_P7_outcome_unknown_marks_open_call_continued() -> None:
    state = fold_all([TIMED, ask("c1"), ask("c2"), outcome_unknown("c1")])
    assert active_of(state) == [("c1", "continued"), ("c2", "open")]
    again = fold_all([TIMED, ask("c1"), pending("c1")])
    assert unchanged(again, outcome_unknown("c1"))


def test_P3_answer_batch_settles_in_settlement_order() -> None:
    db_answer = [{"id": "db", "selected": ["SQLite"]}]
    state = fold_all([TIMED, ask("c1"), ask("c2", DB_RAW), answered("c2", db_answer)])
    assert state.apply([answered("c1", NAME_ANSWER)]) == [
        {"callId": "c1", "state": "settled", "answers": NAME_ANSWER}
    ]
    assert active_of(state) == []
    assert settled_of(state) == [("c2", db_answer), ("c1", NAME_ANSWER)]
    assert state.view().dump() == view_dict(state)


def test_P3_answer_after_pending_settles() -> None:
    state = fold_all([TIMED, ask("c1"), pending("c1"), answered("c1", NAME_ANSWER)])
    assert (active_of(state), settled_of(state)) == ([], [("c1", NAME_ANSWER)])


@pytest.mark.parametrize(
    "result",
    [
        ev.tool_result("c1", ASK, "Error: the user cancelled", is_error=True),
        ev.tool_result(
            "c1", ASK, "Error: x", is_error=True, error={"name": "E", "code": "ASK_CANCELLED"}
        ),
        ev.tool_result("c1", ASK, json.dumps({"answers": NAME_ANSWER}), is_error=True),
        ev.tool_result("c1", ASK, json.dumps({"pending": True}), is_error=True),
        ev.tool_result("c1", ASK, "not json"),
        ev.tool_result("c1", ASK, ""),
        ev.tool_result("c1", ASK, "[]"),
        ev.tool_result("c1", ASK, json.dumps({"pending": "yes"})),
        ev.tool_result("c1", ASK, json.dumps({"answers": "none"})),
        ev.tool_result("c1", ASK, json.dumps({"answers": [{"selected": []}]})),
        ev.tool_result("c1", ASK, json.dumps({"answers": [{"id": "n", "selected": "a"}]})),
        ev.tool_result("c1", ASK, json.dumps({"answers": [{"id": "n", "selected": [1]}]})),
        ev.tool_result("c1", ASK, json.dumps({"answers": [{"id": "n"}]})),
    ],
)
def test_P3_anything_else_drops_the_call(result: ev.Event) -> None:
    state = fold_all([TIMED, ask("c1"), ask("c2"), pending("c1")])
    assert state.apply([result]) == [{"callId": "c1", "state": "removed"}]
    assert (active_of(state), settled_of(state)) == ([("c2", "open")], [])


def test_P3_result_for_inactive_call_changes_nothing() -> None:
    state = fold_all([TIMED, ask("c1"), answered("c1", NAME_ANSWER)])
    for result in (pending("c1"), answered("c1", []), outcome_unknown("c9"), pending("c9")):
        assert unchanged(state, result)


# P4


def test_P4_reply_settles_active_call_with_its_batch() -> None:
    state = fold_all([TIMED, ask("c1"), ask("c2"), pending("c1")])
    state.apply([reply("c1", NAME_ANSWER)])
    assert active_of(state) == [("c2", "open")]
    assert settled_of(state) == [("c1", NAME_ANSWER)]


@pytest.mark.parametrize(
    "text", ["not json", "{}", json.dumps({"answers": [{"id": 1}]}), json.dumps([1])]
)
def test_P4_unreadable_reply_settles_with_empty_batch(text: str) -> None:
    state = fold_all([TIMED, ask("c1"), pending("c1"), reply("c1", None, text)])
    assert settled_of(state) == [("c1", [])]


def test_P4_reply_naming_inactive_call_changes_nothing() -> None:
    state = fold_all([TIMED, ask("c1"), pending("c1"), reply("c1", NAME_ANSWER)])
    assert unchanged(state, reply("c1", NAME_ANSWER))
    assert unchanged(state, reply("c404", NAME_ANSWER))


def test_P4_plain_user_message_changes_nothing() -> None:
    state = fold_all([TIMED, ask("c1"), pending("c1")])
    text = json.dumps({"answers": NAME_ANSWER})
    assert unchanged(state, ev.user_message(ev.text_content(text)))
    other = ev.user_message(ev.text_content(text), source={"kind": "prompt", "callId": "c1"})
    assert unchanged(state, other)


# P5

NOISE = [
    ev.session_header(
        session_id="s1",
        agent_id="a1",
        origin="root",
        cwd="/w",
        model={"kind": "script"},
        ask_user_question={"mode": "timed", "timeout": 120},
        created_at="2025-01-01T00:00:00Z",
    ),
    ev.turn_start("t1", "prompt"),
    ev.assistant_message("asking", [{"id": "c1", "name": ASK, "arguments": {}}]),
    ev.inbox_inserted("i1", "next-step", ev.text_content("hi"), ev.reply_source("c1")),
    ev.inbox_claimed("i1"),
    ev.inbox_discarded("i1", "withdrawn"),
    ev.tool_call("r1", "read_file", {"path": "x"}),
    ev.tool_result("r1", "read_file", "text"),
    ev.turn_end("t1", "end_turn"),
    {"type": "something/new", "callId": "c1"},
]


@pytest.mark.parametrize("event", NOISE, ids=lambda e: e["type"])
def test_P5_inbox_and_unrelated_events_report_no_change(event: ev.Event) -> None:
    assert unchanged(fold_all([TIMED, ask("c1"), ask("c2"), pending("c2")]), event)
    assert unchanged(Projection(), event)


# P6


def test_P6_parent_and_child_logs_fold_apart() -> None:
    child_ask = ask("child-c1", DB_RAW)
    parent_log = [
        TIMED,
        ask("p1"),
        pending("p1"),
        ev.tool_call("d1", "delegate", {"task": "pick a database"}),
        reply("child-c1", [{"id": "db", "selected": ["SQLite"]}]),
        ev.tool_result("d1", "delegate", "child needs: which database?"),
    ]
    child_log = [TIMED, child_ask, reply("p1", NAME_ANSWER)]
    parent, child = Projection(parent_log), Projection(child_log)
    assert active_of(parent) == [("p1", "continued")]
    assert settled_of(parent) == []
    assert active_of(child) == [("child-c1", "open")]
    assert child.apply([pending("child-c1")]) == [{"callId": "child-c1", "state": "continued"}]
    assert active_of(parent) == [("p1", "continued")]


# S2: what a client is sent


def test_S2_snapshot_carries_every_active_entry_with_its_questions() -> None:
    state = fold_all([TIMED, ask("c1", DB_RAW), pending("c1"), ask("c2"), answered("c2", [])])
    state.apply([ask("c3")])
    assert state.snapshot() == [
        {"callId": "c1", "state": "continued", "questions": [DB_VIEW]},
        {"callId": "c3", "state": "open", "questions": [NAME_RAW]},
    ]
    view = apply_view_changes(empty_view(), state.snapshot())
    assert view["active"] == view_dict(state)["active"]


def test_S2_changes_of_one_batch_come_in_the_order_they_happened() -> None:
    state = fold_all([TIMED])
    assert state.apply([ask("c1"), ask("c2"), pending("c1"), reply("c1", NAME_ANSWER)]) == [
        {"callId": "c1", "state": "open", "questions": [NAME_RAW]},
        {"callId": "c2", "state": "open", "questions": [NAME_RAW]},
        {"callId": "c1", "state": "continued"},
        {"callId": "c1", "state": "settled", "answers": NAME_ANSWER},
    ]


# Property: the fold against a plain reference model

CALL_IDS = ["c1", "c2", "c3"]
QUESTION_SETS = [([NAME_RAW], [NAME_RAW]), ([DB_RAW, NAME_RAW], [DB_VIEW, NAME_RAW])]
RESULT_KINDS = ["pending", "unknown", "answers", "error", "garbage"]


def _answers_for(call_id: str) -> list[dict[str, Any]]:
    return [{"id": "name", "selected": [], "custom": call_id}]


step_strategy = st.one_of(
    st.tuples(st.just("header"), st.booleans()),
    st.tuples(st.just("call"), st.sampled_from(CALL_IDS), st.integers(-1, 1)),
    st.tuples(st.just("result"), st.sampled_from(CALL_IDS), st.sampled_from(RESULT_KINDS)),
    st.tuples(st.just("reply"), st.sampled_from(CALL_IDS), st.booleans()),
    st.tuples(st.just("noise"), st.integers(0, len(NOISE) - 1)),
)


def _event(step: tuple[Any, ...]) -> ev.Event:
    tag = step[0]
    if tag == "header":
        return TIMED if step[1] else LEGACY
    if tag == "call":
        arguments = {"questions": QUESTION_SETS[step[2]][0]} if step[2] >= 0 else {"q": 1}
        return ev.tool_call(step[1], ASK, arguments)
    if tag == "result":
        cid, kind = step[1], step[2]
        results: dict[str, Callable[[], ev.Event]] = {
            "pending": lambda: pending(cid),
            "unknown": lambda: outcome_unknown(cid),
            "answers": lambda: answered(cid, _answers_for(cid)),
            "error": lambda: ev.tool_result(cid, ASK, "Error: no", is_error=True),
            "garbage": lambda: ev.tool_result(cid, ASK, "{"),
        }
        return results[kind]()
    if tag == "reply":
        return reply(step[1], _answers_for(step[1]) if step[2] else None, None if step[2] else "?")
    return NOISE[int(step[1])]


class Reference:
    """P1–P5 written the obvious way: an insertion-ordered dict and a list."""

    def __init__(self) -> None:
        self.timed = False
        self.active: dict[str, tuple[list[dict[str, Any]], str]] = {}
        self.settled: list[dict[str, Any]] = []

    def apply(self, step: tuple[Any, ...]) -> None:
        tag = step[0]
        if tag == "header":
            self.timed = step[1]
        elif tag == "call" and self.timed and step[2] >= 0:
            self.active.pop(step[1], None)
            self.active[step[1]] = (QUESTION_SETS[step[2]][1], "open")
        elif tag == "result" and step[1] in self.active:
            if step[2] in ("pending", "unknown"):
                questions, _ = self.active[step[1]]
                self.active[step[1]] = (questions, "continued")  # keeps its place
            else:
                del self.active[step[1]]
                if step[2] == "answers":
                    self.settled.append({"callId": step[1], "answers": _answers_for(step[1])})
        elif tag == "reply" and step[1] in self.active:
            del self.active[step[1]]
            answers = _answers_for(step[1]) if step[2] else []
            self.settled.append({"callId": step[1], "answers": answers})

    def snapshot(self) -> tuple[bool, dict[str, Any]]:
        active = [{"callId": c, "questions": q, "state": s} for c, (q, s) in self.active.items()]
        return self.timed, {"active": active, "settled": list(self.settled)}


@settings(max_examples=300, deadline=None)
@given(st.lists(step_strategy, max_size=40), st.lists(st.integers(1, 6), max_size=10))
def test_P5_S2_incremental_fold_matches_reference_and_its_changes_rebuild_the_view(
    steps: list[tuple[Any, ...]], chunk_sizes: list[int]
) -> None:
    events = [_event(step) for step in steps]
    reference = Reference()
    expected = [reference.snapshot()]
    state = Projection()
    client = empty_view()
    for step, event in zip(steps, events, strict=True):
        reference.apply(step)
        expected.append(reference.snapshot())
        changes = state.apply([event])
        # A change exactly when the view changed; an accepted (re-)ask is always one,
        # even if the view looks the same.
        opens = step[0] == "call" and step[2] >= 0 and expected[-2][0]
        assert (changes == []) == (expected[-1][1] == expected[-2][1] and not opens)
        assert len(changes) <= 1  # one event, at most one change: O(changed) bytes (S2)
        assert (state.timed, view_dict(state)) == expected[-1]
        client = apply_view_changes(client, changes)
        assert client == view_dict(state)
    assert view_dict(fold_all(events)) == expected[-1][1]

    batched = Projection()
    client = empty_view()
    start = 0
    for size in [*chunk_sizes, len(events)]:
        end = min(start + size, len(events))
        client = apply_view_changes(client, batched.apply(events[start:end]))
        assert client == expected[end][1]
        start = end
    assert batched.view().dump() == expected[-1][1]
