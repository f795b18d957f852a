"""Questions as ACP form elicitations and permission requests, and their replies as Answers.

Tier 2 (`elicitation.form`): one session-scoped form per batch. The message
shows each question as `[header] question` with its detail, separated by
blank lines. The schema has one field per question, keyed by its id (titled
by its header, else the question): single-select → a string with `oneOf`
options, multi-select → an array whose `items.anyOf` are the options, no
options → a plain string; a question with options also gets `<id>.other`, a
free-text field titled "Other". Nothing is required. An accepted form becomes
an Answer (a non-empty Other is `custom`); the core then applies V8.

Tier 3 (`session/request_permission`) serves only a lone question with an
`approval` intent (V3): options `approve`/`always`/`reject` named by the
intent's labels; the chosen option's label is the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp.schema import (
    ContentToolCallContent,
    CreateFormSessionElicitationRequest,
    ElicitationMultiSelectPropertySchema,
    ElicitationSchema,
    ElicitationStringPropertySchema,
    EnumOption,
    PermissionOption,
    PermissionOptionKind,
    RequestPermissionRequest,
    TextContentBlock,
    TitledMultiSelectItems,
    ToolCallUpdate,
)

from askbridge.core import UserQuestionError
from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.vocabulary import Answer, AnswerItem, ApprovalIntent, QuestionItem

OTHER_SUFFIX = ".other"
OTHER_TITLE = "Other"


def question_text(q: QuestionItem) -> str:
    """`[header] question`, then a blank line and the detail when there is one."""
    text = f"[{q.header}] {q.question}" if q.header else q.question
    return f"{text}\n\n{q.detail}" if q.detail else text


def form_message(questions: Sequence[QuestionItem]) -> str:
    return "\n\n".join(question_text(q) for q in questions)


def _options(q: QuestionItem) -> list[EnumOption]:
    return [
        EnumOption(const=o.label, title=o.label, description=o.description) for o in q.options or []
    ]


def form_schema(questions: Sequence[QuestionItem]) -> ElicitationSchema:
    properties: dict[str, Any] = {}
    for q in questions:
        title = q.header or q.question
        if not q.options:
            properties[q.id] = ElicitationStringPropertySchema(type="string", title=title)
            continue
        if q.is_multi:
            items = TitledMultiSelectItems(any_of=_options(q))
            properties[q.id] = ElicitationMultiSelectPropertySchema(
                type="array", title=title, items=items
            )
        else:
            properties[q.id] = ElicitationStringPropertySchema(
                type="string", title=title, one_of=_options(q)
            )
        properties[q.id + OTHER_SUFFIX] = ElicitationStringPropertySchema(
            type="string", title=OTHER_TITLE
        )
    return ElicitationSchema(type="object", properties=properties, required=[])


def form_request(
    session_id: str, tool_call_id: str | None, questions: Sequence[QuestionItem]
) -> dict[str, Any]:
    """The params of `elicitation/create` for one batch."""
    request = CreateFormSessionElicitationRequest(
        session_id=session_id,
        tool_call_id=tool_call_id,
        mode="form",
        message=form_message(questions),
        requested_schema=form_schema(questions),
    )
    return request.model_dump(mode="json", by_alias=True, exclude_none=True)


def _bad(message: str) -> UserQuestionError:
    return UserQuestionError(
        f"the client's form reply is not an answer: {message}", ErrorCode.BAD_ANSWER
    )


def answer_from_form(questions: Sequence[QuestionItem], content: dict[str, Any] | None) -> Answer:
    """An accepted form's content as an Answer; values of the wrong type are BAD_ANSWER."""
    content = content or {}
    items = []
    for q in questions:
        value = content.get(q.id)
        other = content.get(q.id + OTHER_SUFFIX) if q.options else None
        if other is not None and not isinstance(other, str):
            raise _bad(f"{q.id}{OTHER_SUFFIX} must be a string")
        custom = other if other and other.strip() else None
        selected: list[str] = []
        if value is None or value == "":
            pass
        elif not q.options:
            if not isinstance(value, str):
                raise _bad(f"{q.id} must be a string")
            custom = value if value.strip() else None
        elif q.is_multi:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise _bad(f"{q.id} must be an array of option labels")
            selected = list(value)
        else:
            if not isinstance(value, str):
                raise _bad(f"{q.id} must be one option label")
            selected = [value]
        items.append(AnswerItem(id=q.id, selected=selected, custom=custom))
    return Answer(answers=items)


# -- tier 3: approval through session/request_permission -----------------------------------


def approval_question(questions: Sequence[QuestionItem]) -> QuestionItem | None:
    """The question when the batch is one question with an approval intent, else None."""
    if len(questions) == 1 and isinstance(questions[0].intent, ApprovalIntent):
        return questions[0]
    return None


def permission_labels(intent: ApprovalIntent) -> dict[str, str]:
    """option id → label, in the order shown: approve, always (when given), reject."""
    labels = {"approve": intent.approve}
    if intent.always is not None:
        labels["always"] = intent.always
    labels["reject"] = intent.reject
    return labels


_KINDS: dict[str, PermissionOptionKind] = {
    "approve": "allow_once",
    "always": "allow_always",
    "reject": "reject_once",
}


def permission_request(session_id: str, tool_call_id: str, q: QuestionItem) -> dict[str, Any]:
    """The params of `session/request_permission` for an approval question."""
    assert isinstance(q.intent, ApprovalIntent)
    options = [
        PermissionOption(option_id=option_id, name=label, kind=_KINDS[option_id])
        for option_id, label in permission_labels(q.intent).items()
    ]
    title = f"[{q.header}] {q.question}" if q.header else q.question
    detail = [
        ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=q.detail))
    ]
    tool_call = ToolCallUpdate(
        tool_call_id=tool_call_id,
        title=title,
        status="pending",
        content=detail if q.detail else None,
    )
    request = RequestPermissionRequest(session_id=session_id, tool_call=tool_call, options=options)
    return request.model_dump(mode="json", by_alias=True, exclude_none=True)


def answer_from_permission(q: QuestionItem, option_id: str) -> Answer:
    assert isinstance(q.intent, ApprovalIntent)
    label = permission_labels(q.intent).get(option_id)
    if label is None:
        raise UserQuestionError(
            f"the client selected an unknown permission option {option_id!r}",
            ErrorCode.BAD_ANSWER,
        )
    return Answer(answers=[AnswerItem(id=q.id, selected=[label])])
