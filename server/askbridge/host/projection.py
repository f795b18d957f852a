"""The `userQuestions` projection: a pure, incremental fold of one session log (behavior.md P1–P6).

The view (V7) is `{active: [{callId, questions, state: "open"|"continued"}],
settled: [{callId, answers}]}`. Nothing about waits, focus or deadlines is
logged, so the view is exactly what the session's events say. Events are the
plain dicts of host/events.py.

Use it like this:

    state = fold_all(store.load(session_id))   # from scratch (session/load)
    state = fold(state, event)                 # one more event
    view(state)                                # -> ProjectionView; view_dict(state) -> wire dict

`fold` returns the SAME object when an event changes nothing (P5), so callers
detect change by identity. The host keeps one `SessionProjection` per session
log (P6): `apply(events)` folds newly committed events, tells subscribers
`(session_id, view)` and returns True when the view changed.

Cost: `fold` does constant work per event whatever the log length — active
calls live in a PersistentMap (structural sharing), settled ones in a cons
list — and every earlier state stays valid. Only building a view is O(view).
Parsing what the log carries (tool arguments, results, reply texts) lives in
projection_parse.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal, NamedTuple

from askbridge.protocol.vocabulary import ProjectionView

from .events import (
    INBOX_CLAIMED,
    INBOX_DISCARDED,
    INBOX_INSERTED,
    REPLY_SOURCE_KIND,
    REQUEST_HEADER,
    TOOL_CALL,
    TOOL_RESULT,
    USER_MESSAGE,
    Event,
)
from .persistent_map import PersistentMap
from .projection_parse import (
    ASK_USER_QUESTION,
    CONTINUED,
    Answers,
    Questions,
    declares_timed_tool,
    parse_questions,
    read_reply_answers,
    read_tool_outcome,
)

QuestionState = Literal["open", "continued"]


class ActiveCall(NamedTuple):
    """An asked, unsettled call. `seq` orders `active` by (re-)ask time."""

    seq: int
    call_id: str
    questions: Questions
    state: QuestionState


class SettledCell(NamedTuple):
    """One settled call; `previous` links to the one settled before it (newest first)."""

    call_id: str
    answers: Answers
    previous: SettledCell | None


class ProjectionState(NamedTuple):
    """An immutable snapshot of the fold. Compare snapshots by identity, views by value."""

    timed: bool  # P1: the latest request/header declares the timed ask_user_question
    active: PersistentMap[str, ActiveCall]
    settled: SettledCell | None
    next_seq: int


EMPTY = ProjectionState(False, PersistentMap(), None, 0)


def _on_request_header(state: ProjectionState, event: Event) -> ProjectionState:
    timed = declares_timed_tool(event.get("tools"))
    return state if timed is state.timed else state._replace(timed=timed)


def _on_tool_call(state: ProjectionState, event: Event) -> ProjectionState:
    # P1: a call is tracked only while the latest header declares the timed schema.
    # The header gates what starts being tracked; a call already tracked keeps
    # folding its result and late reply even if a later header is legacy.
    if not state.timed or event.get("name") != ASK_USER_QUESTION:
        return state
    call_id = event.get("callId")
    questions = parse_questions(event.get("arguments"))
    if not isinstance(call_id, str) or questions is None:
        return state  # P2: unparseable arguments change nothing
    # A fresh seq puts a re-ask of a known call id at the end (P2). A re-ask is
    # always a new state, even when it leaves the view as it was; SessionProjection
    # compares views by value before telling anyone.
    entry = ActiveCall(state.next_seq, call_id, questions, "open")
    return ProjectionState(
        state.timed, state.active.set(call_id, entry), state.settled, state.next_seq + 1
    )


def _settle(state: ProjectionState, call_id: str, answers: Answers) -> ProjectionState:
    return ProjectionState(
        state.timed,
        state.active.delete(call_id),
        SettledCell(call_id, answers, state.settled),
        state.next_seq,
    )


def _on_tool_result(state: ProjectionState, event: Event) -> ProjectionState:
    call_id = event.get("callId")
    entry = state.active.get(call_id) if isinstance(call_id, str) else None
    if entry is None:
        return state
    outcome = read_tool_outcome(event)  # P3
    if outcome is CONTINUED:
        if entry.state == "continued":
            return state
        # The same seq keeps it in place. (Direct constructors: `_replace` is slow.)
        continued = ActiveCall(entry.seq, entry.call_id, entry.questions, "continued")
        active = state.active.set(entry.call_id, continued)
        return ProjectionState(state.timed, active, state.settled, state.next_seq)
    if outcome is None:
        active = state.active.delete(entry.call_id)
        return ProjectionState(state.timed, active, state.settled, state.next_seq)
    return _settle(state, entry.call_id, outcome)


def _on_user_message(state: ProjectionState, event: Event) -> ProjectionState:
    source = event.get("source")
    if not isinstance(source, dict) or source.get("kind") != REPLY_SOURCE_KIND:
        return state
    call_id = source.get("callId")
    if not isinstance(call_id, str) or call_id not in state.active:
        return state  # P4: a reply naming an inactive call changes nothing
    return _settle(state, call_id, read_reply_answers(event.get("content")))


def _unchanged(state: ProjectionState, event: Event) -> ProjectionState:
    return state


_Handler = Callable[[ProjectionState, Event], ProjectionState]
_HANDLERS: dict[Any, _Handler] = {
    REQUEST_HEADER: _on_request_header,
    TOOL_CALL: _on_tool_call,
    TOOL_RESULT: _on_tool_result,
    USER_MESSAGE: _on_user_message,
    # P5: inbox events never change the view (an admitted reply is its user/message).
    INBOX_INSERTED: _unchanged,
    INBOX_CLAIMED: _unchanged,
    INBOX_DISCARDED: _unchanged,
}


def fold(state: ProjectionState, event: Event) -> ProjectionState:
    """`state` after `event`; the same object when the event changes nothing (P5)."""
    handler = _HANDLERS.get(event.get("type"))
    return state if handler is None else handler(state, event)


def fold_all(events: Iterable[Event], state: ProjectionState = EMPTY) -> ProjectionState:
    """Fold `events` in order, starting from `state` (the empty projection by default)."""
    handlers = _HANDLERS
    for event in events:
        handler = handlers.get(event.get("type"))
        if handler is not None:
            state = handler(state, event)
    return state


def view_dict(state: ProjectionState) -> dict[str, Any]:
    """The V7 view in wire form (camelCase, absent fields left out); fresh objects each call."""
    active = sorted(state.active.values(), key=lambda entry: entry.seq)
    settled: list[SettledCell] = []
    cell = state.settled
    while cell is not None:
        settled.append(cell)
        cell = cell.previous
    settled.reverse()
    return {
        "active": [
            {
                "callId": entry.call_id,
                "questions": [_copy_question(q) for q in entry.questions],
                "state": entry.state,
            }
            for entry in active
        ],
        "settled": [
            {"callId": cell.call_id, "answers": [_copy_answer(a) for a in cell.answers]}
            for cell in settled
        ],
    }


def _copy_question(question: dict[str, Any]) -> dict[str, Any]:
    copy = dict(question)
    if "options" in copy:
        copy["options"] = [dict(option) for option in copy["options"]]
    return copy


def _copy_answer(item: dict[str, Any]) -> dict[str, Any]:
    copy = dict(item)
    copy["selected"] = list(copy["selected"])
    return copy


def view(state: ProjectionState) -> ProjectionView:
    """The V7 view as the protocol model (a new object each call)."""
    return ProjectionView.model_validate(view_dict(state))


ViewListener = Callable[[str, ProjectionView], None]


class SessionProjection:
    """The live projection of one session's log (P6) with change notification.

    Feed it each batch of events right after the store commits them (D1);
    subscribers hear `(session_id, view)` once per batch that changes the view.
    A listener that raises does not stop the others; its error is re-raised
    after all have been told.
    """

    def __init__(self, session_id: str, events: Iterable[Event] = ()) -> None:
        self.session_id = session_id
        self._state = fold_all(events)
        self._view = view_dict(self._state)
        self._listeners: list[ViewListener] = []

    @property
    def state(self) -> ProjectionState:
        return self._state

    def view(self) -> ProjectionView:
        return ProjectionView.model_validate(self._view)

    def apply(self, events: Iterable[Event]) -> bool:
        """Fold newly committed events; True (and listeners told) when the view changed."""
        before = self._state
        after = fold_all(events, before)
        self._state = after
        if after.active is before.active and after.settled is before.settled:
            return False  # nothing, or only the P1 schema flag, changed
        # Identity differs; compare by value so open-then-dropped in one batch is no change.
        new_view = view_dict(after)
        if new_view == self._view:
            return False
        self._view = new_view
        self._notify()
        return True

    def subscribe(self, listener: ViewListener) -> Callable[[], None]:
        """Call `listener(session_id, view)` on each change; returns the unsubscribe function."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _notify(self) -> None:
        current = ProjectionView.model_validate(self._view)
        errors: list[Exception] = []
        for listener in list(self._listeners):  # a listener may unsubscribe while told
            try:
                listener(self.session_id, current)
            except Exception as error:  # tell every listener, then re-raise
                errors.append(error)
        if len(errors) == 1:
            raise errors[0]
        if errors:
            raise ExceptionGroup("projection listeners failed", errors)
