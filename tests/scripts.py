"""Script-model steps for the tests, written once: the unit, e2e,
ACP and fault tests each kept their own copy of `script()`, `text_step()`, the
ask_user_question step and the question in it; their helpers now build on these.
"""

from __future__ import annotations

from typing import Any

ASK_TOOL = "ask_user_question"


def script(*steps: dict[str, Any]) -> dict[str, Any]:
    """A `{"kind": "script"}` model spec that plays `steps` in order."""
    return {"kind": "script", "steps": list(steps)}


def text_step(text: str) -> dict[str, Any]:
    return {"text": text}


def call_step(call_id: str, name: str, arguments: Any, text: str | None = None) -> dict[str, Any]:
    """A step whose one tool call is `name(arguments)`, with the model's `text` beside it."""
    step: dict[str, Any] = {"toolCalls": [{"id": call_id, "name": name, "arguments": arguments}]}
    if text is not None:
        step["text"] = text
    return step


def question(qid: str, *labels: str, **fields: Any) -> dict[str, Any]:
    """A question as a model writes it: "Which {qid}?", `labels` its options (none: free
    text), `fields` the rest (header, multi_select, …)."""
    item: dict[str, Any] = {"id": qid, "question": f"Which {qid}?", **fields}
    if labels:
        item["options"] = [{"label": label} for label in labels]
    return item


def ask_call(
    call_id: str, questions: list[Any], text: str | None = None, **arguments: Any
) -> dict[str, Any]:
    """A step whose one tool call is ask_user_question with `questions` (and `arguments`)."""
    return call_step(call_id, ASK_TOOL, {"questions": questions, **arguments}, text)
