"""Questions as forms, and form replies as answers: the one mapping of behavior.md F1–F3,
shared by the ACP door (`elicitation/create`, tier 2) and the MCP door (X3).

It lives in the core rather than in `askbridge.protocol` because a reply maps
to the core's errors (`UserQuestionError`: ASK_DECLINED, ASK_CANCELLED,
BAD_ANSWER); it builds plain JSON so that neither door's SDK types leak into
the other (each door wraps the schema in its own request model).

- F1 `form_message`: a single question's text, then its detail after a blank
  line; several: "<n> questions", then each numbered on its own line. Plain
  text (Zed shows the message as one label): no `[header]`.
- F2 `form_schema`: keys `q1`, `q1_other`, … zero-padded to the batch's width
  so they sort in ask order (Zed sorts fields by key); title = header, else
  the question; description = the question when the title is the header.
  Every question with options has its `_other` field, titled "Other" and
  described as replacing the choice (single-select) or added to the choices
  (multi-select). No field is required.
- F3 `form_answer(questions, action, content, timed=…)`: accept → the answer
  (on a single-select question a non-empty `_other` wins with `selected` empty;
  on a multi-select one it is `custom` beside the chosen labels); decline → ASK_DECLINED;
  cancel → ASK_TIMED_OUT for a timed ask, which the core turns into pending at
  once with the question continued (TW7, X3), ASK_CANCELLED for a blocking one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.vocabulary import Answer, AnswerItem

from .errors import UserQuestionError
from .question import Question

OTHER_SUFFIX = "_other"
OTHER_TITLE = "Other"
OTHER_REPLACES = "Your own answer (replaces the choice)"  # single-select
OTHER_ADDED = "Your own answer (added to the choices)"  # multi-select


def question_text(q: Question) -> str:
    """The question, then a blank line and the detail when there is one."""
    return f"{q.question}\n\n{q.detail}" if q.detail else q.question


def form_message(questions: Sequence[Question]) -> str:
    if len(questions) == 1:
        return question_text(questions[0])
    lines = [f"{len(questions)} questions"]
    lines += [f"{n}. {q.question}" for n, q in enumerate(questions, start=1)]
    return "\n".join(lines)


def field_keys(questions: Sequence[Question]) -> list[str]:
    """`q1`… zero-padded to the batch's width, one per question in ask order."""
    width = len(str(len(questions)))
    return [f"q{n:0{width}d}" for n in range(1, len(questions) + 1)]


def _titled(q: Question) -> dict[str, Any]:
    if q.header:
        return {"title": q.header, "description": q.question}
    return {"title": q.question}


def _options(q: Question) -> list[dict[str, Any]]:
    options = []
    for o in q.options or []:
        option: dict[str, Any] = {"const": o.label, "title": o.label}
        if o.description:
            option["description"] = o.description
        options.append(option)
    return options


def form_schema(questions: Sequence[Question]) -> dict[str, Any]:
    """The `requestedSchema` (JSON) of one form for the batch."""
    properties: dict[str, Any] = {}
    for key, q in zip(field_keys(questions), questions, strict=True):
        if not q.options:
            properties[key] = {"type": "string", **_titled(q)}
            continue
        if q.is_multi:
            properties[key] = {"type": "array", **_titled(q), "items": {"anyOf": _options(q)}}
        else:
            properties[key] = {"type": "string", **_titled(q), "oneOf": _options(q)}
        properties[key + OTHER_SUFFIX] = {
            "type": "string",
            "title": OTHER_TITLE,
            "description": OTHER_ADDED if q.is_multi else OTHER_REPLACES,
        }
    return {"type": "object", "properties": properties, "required": []}


def _bad(message: str) -> UserQuestionError:
    return UserQuestionError(
        f"the client's form reply is not an answer: {message}", ErrorCode.BAD_ANSWER
    )


def answer_from_form(questions: Sequence[Question], content: dict[str, Any] | None) -> Answer:
    """An accepted form's content as an Answer; values of the wrong type are BAD_ANSWER."""
    content = content or {}
    items = []
    for key, q in zip(field_keys(questions), questions, strict=True):
        value = content.get(key)
        other = content.get(key + OTHER_SUFFIX) if q.options else None
        if other is not None and not isinstance(other, str):
            raise _bad(f"{key}{OTHER_SUFFIX} must be a string")
        custom = other if other and other.strip() else None
        selected: list[str] = []
        if value is None or value == "" or (custom is not None and q.options and not q.is_multi):
            pass  # F3: on a single-select question a non-empty Other wins, `selected` stays []
        elif not q.options:
            if not isinstance(value, str):
                raise _bad(f"{key} must be a string")
            custom = value if value.strip() else None
        elif q.is_multi:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise _bad(f"{key} must be an array of option labels")
            selected = list(value)
        else:
            if not isinstance(value, str):
                raise _bad(f"{key} must be one option label")
            selected = [value]
        items.append(AnswerItem(id=q.id, selected=selected, custom=custom))
    return Answer(answers=items)


def form_answer(
    questions: Sequence[Question],
    action: str,
    content: dict[str, Any] | None,
    *,
    timed: bool,
) -> Answer:
    """F3: the reply's action and content as the answer, or the error it means."""
    if action == "accept":
        return answer_from_form(questions, content)
    if action == "decline":
        raise UserQuestionError.of(ErrorCode.ASK_DECLINED)
    if action == "cancel":
        # A cancel is not the user's answer (`claude -p` cancels every form unseen): a
        # timed ask goes pending at once and stays answerable in every editor (TW7, X3).
        raise UserQuestionError.of(ErrorCode.ASK_TIMED_OUT if timed else ErrorCode.ASK_CANCELLED)
    raise UserQuestionError(
        f"the client answered the form with an unknown action {action!r}",
        ErrorCode.PROVIDER_ERROR,
    )
