"""Reading the parts of logged events the `userQuestions` projection cares about (P1–P4).

The projection (projection.py) folds whatever the log holds, including what a
model or a crash produced, so every reader here is total: malformed input
yields None (or `[]` for reply texts, P4), never an exception. Results are
normalized to the wire vocabulary (V1, V2, V4) and are safe to build a
`ProjectionView` from: question ids are non-empty strings, option labels are
non-empty strings, `selected` holds strings. An answer batch already in that
form is the log's own list, not a copy (`read_answers`): events are read-only.

- `declares_timed_tool(tools)` — P1: a request/header's tools include
  `ask_user_question` whose JSON Schema `parameters.properties` has `timeout`.
- `parse_questions(arguments)` — P2: the question items of a tool/call, in
  view form (`multi_select` becomes `multiSelect`, other keys are dropped).
- `read_questions(arguments)` — the same pass, which also says what T4 finds
  wrong with them (the tool's input error, host/agent/tools.py): one reader of the
  tool's arguments for the tool and the view alike.
- `questions_valid(raw)`, `view_questions(raw)` — that reader's usual case in two
  steps: whether T4 takes a batch whole (checked without building anything), and
  its view form. The fold checks every ask when it is folded but builds a call's
  view form only when someone reads it (projection.py `ActiveCall`).
- `read_tool_outcome(event)` — P3: CONTINUED, the answer batch, or None (drop),
  from the kind the result carries (`outcome`, `answers`, `isError`, `error.code`;
  host/log/events.py `tool_result`). Logs written before results carried their
  kind (the previous version's stores) have only the model's text: for a result
  without `outcome` and not an error, that text is read as it was then (`{"pending":
  true}` or an answer batch), so an old store loads into the same view.
- `read_reply(message)` — P4: the batch a late reply answers with (`[]` when none
  is readable), from the `answers` its user/message (or inbox item's message)
  carries since replies carried them (host/log/events.py `user_message`). A reply
  logged before has only the model's text: without `answers`, that text is read
  as it was then, so an old store loads into the same view.
"""

from __future__ import annotations

import json
from enum import Enum
from typing import Any, Final, Literal

from askbridge.protocol.errors import ErrorCode

from .events import OUTCOME_ANSWERED, OUTCOME_PENDING

ASK_USER_QUESTION: Final = "ask_user_question"

# Question or answer items in wire form. Read-only once parsed: the fold keeps them and
# hands the same objects to the changes it reports (host/log/projection.py).
Questions = list[dict[str, Any]]
Answers = list[dict[str, Any]]


class Continued(Enum):
    """P3: the call returned pending or its outcome is unknown; it stays answerable."""

    CONTINUED = "continued"


CONTINUED: Final = Continued.CONTINUED
_OUTCOME_UNKNOWN: Final = str(ErrorCode.TOOL_OUTCOME_UNKNOWN)


def declares_timed_tool(tools: Any) -> bool:
    if not isinstance(tools, list):
        return False
    for tool in tools:
        if isinstance(tool, dict) and tool.get("name") == ASK_USER_QUESTION:
            parameters = tool.get("parameters")
            properties = parameters.get("properties") if isinstance(parameters, dict) else None
            return isinstance(properties, dict) and "timeout" in properties
    return False


# json.loads without its Python wrapper layers (the decoder's C scanner; untyped in typeshed)
_scan_once: Any = getattr(json.JSONDecoder(), "scan_once")  # noqa: B009


def _loads(text: Any) -> Any:
    """`json.loads(text)`, or None for anything that is not JSON text.

    What the log holds is compact JSON without surrounding whitespace, which the
    C scanner reads directly; anything else goes through `json.loads` itself, so
    the result is always exactly its result.
    """
    if type(text) is not str:
        return None
    try:
        value, end = _scan_once(text, 0)
        if end == len(text):
            return value
    except (StopIteration, ValueError, RecursionError):
        pass
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # bad JSON, huge numbers, absurd nesting
        return None


def read_questions(arguments: Any) -> tuple[Questions | None, str | None]:
    """P2's question items of an ask_user_question call (None when unparseable) and T4's
    complaint about the arguments (None when the tool can ask them), in one pass.

    P2 is lenient where T4 is not: optional fields that do not fit the vocabulary
    are left out of the view, while the tool refuses them naming the first one.
    """
    if isinstance(arguments, str):  # some adapters log the model's raw JSON text
        arguments = _loads(arguments)
    if not isinstance(arguments, dict):
        return None, "arguments must be a JSON object"
    raw = arguments.get("questions")
    if not isinstance(raw, list):
        return None, "questions must be an array of question objects"
    valid = _valid_questions(raw)
    if valid is not None:
        return (valid or None), None
    questions: Questions = []
    problem: str | None = None
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            return None, problem or f"questions[{index}] must be an object"
        qid, text = item.get("id"), item.get("question")
        if not isinstance(qid, str) or not qid:
            return None, problem or f"questions[{index}].id must be a non-empty string"
        if not isinstance(text, str):
            return None, problem or f"questions[{index}].question must be a string"
        question: dict[str, Any] = {"id": qid, "question": text}
        header = item.get("header")
        if type(header) is str:
            question["header"] = header
        elif header is not None and problem is None:
            problem = f"questions[{index}].header must be a string"
        multi = item.get("multi_select")
        if multi is not None and type(multi) is not bool and problem is None:
            problem = f"questions[{index}].multi_select must be a boolean"
        raw_options = item.get("options")
        if raw_options is not None:
            options, why = _read_options(raw_options, index)
            if options is not None:
                question["options"] = options
            problem = problem or why
        if type(multi) is bool:
            question["multiSelect"] = multi
        questions.append(question)
    return (questions or None), problem


def _valid_questions(raw: list[Any]) -> Questions | None:
    """`read_questions` of a batch that T4 accepts whole (the usual case); None as soon as
    anything is off, for the careful pass to say what."""
    return view_questions(raw) if questions_valid(raw) else None


def questions_valid(raw: list[Any]) -> bool:
    """Whether T4 accepts the (non-empty) batch whole, checked in one tight loop without
    building anything: the fold builds a call's view form only when it is read
    (projection.py `ActiveCall.questions`), and most calls of a loaded log settle unread."""
    if not raw:
        return False
    for item in raw:
        if type(item) is not dict:
            return False
        qid, text, header = item.get("id"), item.get("question"), item.get("header")
        if type(qid) is not str or not qid or type(text) is not str:
            return False
        if header is not None and type(header) is not str:
            return False
        raw_options = item.get("options")
        if raw_options is not None:
            if type(raw_options) is not list:
                return False
            for option in raw_options:
                if type(option) is not dict:
                    return False
                label, description = option.get("label"), option.get("description")
                if type(label) is not str or not label:
                    return False
                if description is not None and type(description) is not str:
                    return False
        multi = item.get("multi_select")
        if multi is not None and type(multi) is not bool:
            return False
    return True


def view_questions(raw: list[dict[str, Any]]) -> Questions:
    """The view form of a batch `questions_valid` takes (new objects; nothing re-checked)."""
    questions: Questions = []
    for item in raw:
        question: dict[str, Any] = {"id": item["id"], "question": item["question"]}
        header = item.get("header")
        if header is not None:
            question["header"] = header
        raw_options = item.get("options")
        if raw_options is not None:
            options: list[dict[str, str]] = []
            for option in raw_options:
                description = option.get("description")
                if description is None:
                    options.append({"label": option["label"]})
                else:
                    options.append({"label": option["label"], "description": description})
            question["options"] = options
        multi = item.get("multi_select")
        if multi is not None:
            question["multiSelect"] = multi
        questions.append(question)
    return questions


def _read_options(raw: Any, index: int) -> tuple[list[dict[str, Any]] | None, str | None]:
    """A question's options in view form (None unless every one is valid) and T4's
    complaint about them."""
    if not isinstance(raw, list):
        return None, f"questions[{index}].options must be an array"
    options: list[dict[str, Any]] = []
    problem: str | None = None
    for j, opt in enumerate(raw):
        label = opt.get("label") if isinstance(opt, dict) else None
        if type(label) is not str or not label:
            why = f"questions[{index}].options[{j}].label must be a non-empty string"
            return None, problem or why
        description = opt.get("description")
        if type(description) is str:
            options.append({"label": label, "description": description})
        else:
            if description is not None and problem is None:
                problem = f"questions[{index}].options[{j}].description must be a string"
            options.append({"label": label})
    return options, problem


def parse_questions(arguments: Any) -> Questions | None:
    """P2: the question items of an ask_user_question call, or None when unparseable."""
    return read_questions(arguments)[0]


_ANSWER_KEYS: Final = ("id", "selected")
_CUSTOM_ANSWER_KEYS: Final = ("id", "selected", "custom")


def read_answers(payload: Any) -> Answers | None:
    """The V4 batch of `{"answers": [...]}`, or None when it is not one.

    A batch already in view form (each item's keys exactly these, in this order: what
    the host logs and renders) is the payload's own list, not a copy: the log's objects
    are read-only like the fold's, and a load keeps every settled batch.
    """
    if type(payload) is not dict:
        return None
    raw = payload.get("answers")
    if type(raw) is not list:
        return None
    exact = True
    for answer in raw:
        if type(answer) is not dict:
            return None
        qid, selected, custom = answer.get("id"), answer.get("selected"), answer.get("custom")
        if type(qid) is not str or type(selected) is not list:
            return None
        for label in selected:
            if type(label) is not str:
                return None
        if custom is not None and type(custom) is not str:
            return None
        if exact and tuple(answer) != (_ANSWER_KEYS if custom is None else _CUSTOM_ANSWER_KEYS):
            exact = False
    if exact:
        return raw
    return [
        {"id": item["id"], "selected": item["selected"]}
        if item.get("custom") is None
        else {"id": item["id"], "selected": item["selected"], "custom": item["custom"]}
        for item in raw
    ]


def read_tool_outcome(event: dict[str, Any]) -> Literal[Continued.CONTINUED] | Answers | None:
    """P3: CONTINUED (pending, or outcome unknown), the answer batch, or None (drop the call)."""
    error = event.get("error")
    if error is not None and type(error) is dict and error.get("code") == _OUTCOME_UNKNOWN:
        return CONTINUED  # P7's synthetic result after a crash
    if event.get("isError"):
        return None
    outcome = event.get("outcome")
    if outcome == OUTCOME_ANSWERED:
        return read_answers(event)  # the event's own `answers`, checked like any batch
    if outcome == OUTCOME_PENDING:
        return CONTINUED
    # A result logged before results carried their kind: what its text says (module doc).
    # Here, not in a helper: the fold of an old store pays this for every ask's result.
    payload = _loads(event.get("content"))
    if type(payload) is dict and payload.get("pending") is True:
        return CONTINUED
    return read_answers(payload)


def read_reply(message: dict[str, Any]) -> Answers:
    """P4: a late reply's typed batch (L4), checked like any batch; `[]` when unreadable.

    `message` is a user/message event or an inbox item's message: both carry the
    reply's `content` and, since replies carried it, its `answers`.
    """
    if "answers" in message:
        answers = read_answers(message)
        return answers if answers is not None else []
    return _untyped_reply(message.get("content"))


def _untyped_reply(content: Any) -> Answers:
    """The fallback for a reply logged before replies carried `answers` (old stores only):
    the batch in its text blocks (L4's JSON), or `[]` when none is readable. New events
    are never read this way: their text is rendered from their answers, not parsed back."""
    if not isinstance(content, list):
        return []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            answers = read_answers(_loads(block.get("text")))
            if answers is not None:
                return answers
    return []
