"""Wire vocabulary and payloads of askbridge (protocol.md v1), as pydantic v2 models.

camelCase on the wire, snake_case in Python. This package imports nothing else
of askbridge; every other layer imports it.
"""

from .base import WireModel
from .errors import FIXED_MESSAGES, ErrorCode, RpcErrorCode
from .vocabulary import (
    ActiveQuestion,
    Answer,
    AnswerItem,
    ApprovalIntent,
    Intent,
    IntentSubject,
    Option,
    PendingResult,
    PlanReviewIntent,
    ProjectionView,
    QuestionItem,
    SettledQuestion,
    TimedResult,
    UnknownIntent,
    Wait,
    WaitFrame,
)

__all__ = [
    "FIXED_MESSAGES",
    "ActiveQuestion",
    "Answer",
    "AnswerItem",
    "ApprovalIntent",
    "ErrorCode",
    "Intent",
    "IntentSubject",
    "Option",
    "PendingResult",
    "PlanReviewIntent",
    "ProjectionView",
    "QuestionItem",
    "RpcErrorCode",
    "SettledQuestion",
    "TimedResult",
    "UnknownIntent",
    "Wait",
    "WaitFrame",
    "WireModel",
]
