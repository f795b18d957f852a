"""Reading the asks of logged events the `userQuestions` projection cares about (P1, P2).

The projection (projection.py) folds whatever the log holds, including what a
model or a crash produced, so every reader here is total: malformed input
yields None, never an exception. Questions are normalized to the wire
vocabulary (V1, V2) and are safe to build a `ProjectionView` from: question
ids are non-empty strings, option labels are non-empty strings.

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
- `json_value(text)` — `json.loads(text)`, or None for anything that is not JSON text.

What a call came to (results, late replies: P3, P4) is read in projection_outcomes.py.
"""

from __future__ import annotations

import json
from typing import Any, Final

ASK_USER_QUESTION: Final = "ask_user_question"

# Question items in wire form. Read-only once parsed: the fold keeps them and
# hands the same objects to the changes it reports (host/log/projection.py).
Questions = list[dict[str, Any]]


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


def json_value(text: Any) -> Any:
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
        arguments = json_value(arguments)
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
