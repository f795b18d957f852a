"""The `userQuestions` projection: an incremental fold of one session log (behavior.md P1–P6, S2).

The view (V7) is `{active: [{callId, questions, state: "open"|"continued"}],
settled: [{callId, answers}]}`. Nothing about waits, focus or deadlines is
logged, so the view is exactly what the session's events say. Events are the
plain dicts of host/log/events.py.

    projection = Projection(store.load(session_id))   # from scratch (session/load)
    changes = projection.apply(new_events)             # [] when the view did not change (P5)
    projection.view_dict()                             # the whole V7 view, wire form
    projection.snapshot()                              # every active entry, for a new subscriber

The fold works in place: one event costs the same whatever the log length,
and what stays in memory is the view itself, not the events (S10). A load
folds without building changes (`report=False`); the changes a live fold
reports share the fold's (read-only) question and answer lists.

`apply` returns the view's changes in the order they happened, in the wire
form of `userQuestions/didChange` (protocol.md): `{callId, state: "open",
questions}` when a call is asked or re-asked (a re-ask moves it to the end),
`{callId, state: "continued"}` when it returns pending, `{callId, state:
"settled", answers}` and `{callId, state: "removed"}`. A client folding them
in order (`askbridge.protocol.views.apply_view_changes`) holds the same view,
so every change costs bytes in proportion to what changed (S2), never the
whole view.

Parsing what the log carries lives in projection_parse.py (tool arguments) and
projection_outcomes.py (results, late replies).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from askbridge.protocol.vocabulary import ProjectionView

from .events import REPLY_SOURCE_KIND, REQUEST_HEADER, TOOL_CALL, TOOL_RESULT, USER_MESSAGE, Event
from .gcpause import paused_gc
from .projection_outcomes import CONTINUED, Answers, read_reply, read_tool_outcome
from .projection_parse import (
    ASK_USER_QUESTION,
    Questions,
    declares_timed_tool,
    parse_questions,
    questions_valid,
    view_questions,
)

QuestionState = Literal["open", "continued"]
Change = dict[str, Any]


class ActiveCall:
    """An asked, unsettled call (read-only for everyone but the fold).

    A call folded from a batch T4 accepts whole keeps that batch (the event's own,
    read-only like every event) and builds its view form when `questions` is first
    read: a load folds every ask of the log, yet most of them settle unread.
    """

    __slots__ = ("_questions", "_raw", "call_id", "state")

    def __init__(
        self,
        call_id: str,
        questions: Questions | None,
        state: QuestionState,
        raw: list[dict[str, Any]] | None = None,
    ) -> None:
        self.call_id = call_id
        self._questions = questions
        self._raw = raw  # when `questions` is None: a batch `questions_valid` accepts
        self.state: QuestionState = state

    @property
    def questions(self) -> Questions:
        questions = self._questions
        if questions is None:
            questions = self._questions = view_questions(self._raw or [])
            self._raw = None
        return questions


def _copy_question(question: dict[str, Any]) -> dict[str, Any]:
    copy = dict(question)
    if "options" in copy:
        copy["options"] = [dict(option) for option in copy["options"]]
    return copy


def _copy_answer(item: dict[str, Any]) -> dict[str, Any]:
    copy = dict(item)
    copy["selected"] = list(copy["selected"])
    return copy


class Projection:
    """The live projection of one session's log (P6): fold committed events, report changes."""

    def __init__(self, events: Iterable[Event] = ()) -> None:
        self.timed = False  # P1: the latest request/header declares the timed ask_user_question
        self._tools: Any = None  # the latest header's tools (a session logs one list per step)
        self.active: dict[str, ActiveCall] = {}  # insertion order is ask order (V7)
        self.settled: list[tuple[str, Answers]] = []  # settlement order
        with paused_gc():  # a whole log: many objects, no cycles (gcpause.py)
            self.apply(events, report=False)

    # -- folding --------------------------------------------------------------------------

    def apply(self, events: Iterable[Event], *, report: bool = True) -> list[Change]:
        """Fold newly committed events; the view's changes in order ([] when none, P5).

        `report=False` folds without building the changes (a load: nobody hears them).
        The changes share the fold's question and answer lists: read-only, like events.
        """
        changes: list[Change] = []
        active = self.active
        settled = self.settled
        for event in events:
            kind = event.get("type")
            if kind == TOOL_RESULT:
                if not active:
                    continue
                call_id = event.get("callId")
                if type(call_id) is not str:
                    continue
                entry = active.get(call_id)
                if entry is None:
                    continue
                outcome = read_tool_outcome(event)  # P3
                if outcome is CONTINUED:
                    if entry.state != "continued":
                        entry.state = "continued"  # in place: its position does not change
                        if report:
                            changes.append({"callId": call_id, "state": "continued"})
                elif outcome is None:
                    del active[call_id]
                    if report:
                        changes.append({"callId": call_id, "state": "removed"})
                else:
                    del active[call_id]
                    settled.append((call_id, outcome))
                    if report:
                        changes.append({"callId": call_id, "state": "settled", "answers": outcome})
            elif kind == TOOL_CALL:
                # P1: a call is tracked only while the latest header declares the timed
                # schema. The header gates what starts being tracked; a call already
                # tracked keeps folding its result and late reply if a later one is legacy.
                if not self.timed or event.get("name") != ASK_USER_QUESTION:
                    continue
                call_id = event.get("callId")
                if type(call_id) is not str:
                    continue
                arguments = event.get("arguments")
                raw = arguments.get("questions") if isinstance(arguments, dict) else None
                if type(raw) is list and questions_valid(raw):
                    entry = ActiveCall(call_id, None, "open", raw)  # built when read
                else:
                    questions = parse_questions(arguments)  # the careful (lenient) pass
                    if questions is None:
                        continue  # P2: unparseable arguments change nothing
                    entry = ActiveCall(call_id, questions, "open")
                if call_id in active:
                    del active[call_id]  # a re-ask moves to the end (P2)
                active[call_id] = entry
                if report:
                    changes.append(
                        {"callId": call_id, "state": "open", "questions": entry.questions}
                    )
            elif kind == REQUEST_HEADER:
                tools = event.get("tools")
                if tools is not self._tools:
                    self._tools = tools
                    self.timed = declares_timed_tool(tools)
            elif kind == USER_MESSAGE:
                if not active:
                    continue
                source = event.get("source")
                if type(source) is not dict or source.get("kind") != REPLY_SOURCE_KIND:
                    continue
                call_id = source.get("callId")
                if type(call_id) is not str or call_id not in active:
                    continue  # P4: a reply naming an inactive call changes nothing
                answers = read_reply(event)
                del active[call_id]
                settled.append((call_id, answers))
                if report:
                    changes.append({"callId": call_id, "state": "settled", "answers": answers})
            # P5: every other event (inbox events included: an admitted reply is its
            # user/message) never changes the view.
        return changes

    # -- reading --------------------------------------------------------------------------

    def entry(self, call_id: str) -> ActiveCall | None:
        return self.active.get(call_id)

    def snapshot(self) -> list[Change]:
        """Every active entry with its questions: the first didChange of a new subscriber
        (sharing the fold's question lists: read-only)."""
        return [
            {"callId": e.call_id, "state": e.state, "questions": e.questions}
            for e in self.active.values()
        ]

    def view_dict(self) -> dict[str, Any]:
        """The V7 view in wire form (camelCase, absent fields left out); fresh objects."""
        return {
            "active": [
                {
                    "callId": e.call_id,
                    "questions": [_copy_question(q) for q in e.questions],
                    "state": e.state,
                }
                for e in self.active.values()
            ],
            "settled": [
                {"callId": call_id, "answers": [_copy_answer(a) for a in answers]}
                for call_id, answers in self.settled
            ],
        }

    def view(self) -> ProjectionView:
        """The V7 view as the protocol model (a new object each call)."""
        return ProjectionView.model_validate(self.view_dict())


def fold_all(events: Iterable[Event]) -> Projection:
    """The projection of a whole log, from scratch."""
    return Projection(events)
