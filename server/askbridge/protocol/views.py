"""A client's copy of a session's question view, kept by folding `didChange` changes (S2).

    view = {"active": [], "settled": []}
    view = apply_view_changes(view, params["changes"])   # each userQuestions/didChange

The same rules every client follows (the editors implement them in their own
language; the golden transcripts check they agree): `open` puts the call at
the end of `active` with its questions (a re-ask moves it there), `continued`
changes the state in place (or appends the entry when it carries questions and
the client did not have it: a new subscriber's first didChange), `settled`
moves it to the end of `settled` with its answers, `removed` drops it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def empty_view() -> dict[str, Any]:
    return {"active": [], "settled": []}


def apply_view_changes(view: dict[str, Any], changes: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """`view` (V7 wire form) after `changes`, as a new dict; `view` itself is not modified."""
    active = [dict(entry) for entry in view.get("active", [])]
    settled = list(view.get("settled", []))
    for change in changes:
        call_id, state = change["callId"], change["state"]
        index = next((i for i, e in enumerate(active) if e["callId"] == call_id), None)
        if state == "open" or (index is None and "questions" in change and state == "continued"):
            if index is not None:
                del active[index]
            active.append({"callId": call_id, "questions": change["questions"], "state": state})
        elif state == "continued":
            if index is not None:
                active[index]["state"] = "continued"
        elif state == "settled":
            if index is not None:
                del active[index]
            settled.append({"callId": call_id, "answers": change.get("answers", [])})
        elif state == "removed" and index is not None:
            del active[index]
    return {"active": active, "settled": settled}
