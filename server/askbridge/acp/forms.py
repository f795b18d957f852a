"""Questions as ACP form elicitations and permission requests, and their replies as Answers.

Tier 2 (`elicitation.form`): one session-scoped form per batch, built by the
mapping both doors share (core/forms.py, behavior.md F1–F3) and wrapped here
in ACP's `CreateFormSessionElicitationRequest`.

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
    PermissionOption,
    PermissionOptionKind,
    RequestPermissionRequest,
    TextContentBlock,
    ToolCallUpdate,
)

from askbridge.core import UserQuestionError
from askbridge.core.forms import form_message, form_schema
from askbridge.core.question import Question
from askbridge.protocol.errors import ErrorCode
from askbridge.protocol.vocabulary import Answer, AnswerItem, ApprovalIntent


def form_request(
    session_id: str, tool_call_id: str | None, questions: Sequence[Question]
) -> dict[str, Any]:
    """The params of `elicitation/create` for one batch, checked against ACP's own model."""
    request = CreateFormSessionElicitationRequest.model_validate(
        {
            "sessionId": session_id,
            "toolCallId": tool_call_id,
            "mode": "form",
            "message": form_message(questions),
            "requestedSchema": form_schema(questions),
        }
    )
    return request.model_dump(mode="json", by_alias=True, exclude_none=True)


# -- tier 3: approval through session/request_permission -----------------------------------


def approval_question(questions: Sequence[Question]) -> Question | None:
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


def permission_request(session_id: str, tool_call_id: str, q: Question) -> dict[str, Any]:
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


def answer_from_permission(q: Question, option_id: str) -> Answer:
    assert isinstance(q.intent, ApprovalIntent)
    label = permission_labels(q.intent).get(option_id)
    if label is None:
        raise UserQuestionError(
            f"the client selected an unknown permission option {option_id!r}",
            ErrorCode.BAD_ANSWER,
        )
    return Answer(answers=[AnswerItem(id=q.id, selected=[label])])
