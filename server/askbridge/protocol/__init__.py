"""Wire vocabulary and payloads of askbridge (protocol.md v1), as pydantic v2 models.

camelCase on the wire, snake_case in Python. This package imports nothing else
of askbridge; every other layer imports it.

Map: vocabulary (V1–V8 shapes), common (shared small shapes), model_spec
(ModelSpec, AskUserQuestionConfig), session / updates / questions (LSP door
payloads), acp (the ACP door's `_askbridge/*` and `_meta` payloads), methods
(method-name constants), payloads (method → params/result types), parsing
(`parse_params`, `InvalidParams` → -32602), schema (`write_schemas`, `main`).
"""

from . import methods
from .base import WireModel
from .common import (
    ErrorData,
    MessageSource,
    QuestionsCapability,
    StopReason,
    TextContent,
    TurnCause,
)
from .errors import FIXED_MESSAGES, ErrorCode, RpcErrorCode
from .model_spec import (
    AskUserQuestionConfig,
    ModelSpec,
    OpenAIModelSpec,
    ScriptModelSpec,
    Step,
    ToolCallSpec,
    parse_model_spec,
    parse_model_spec_option,
)
from .parsing import InvalidParams, parse_params, parse_value, validation_errors
from .payloads import ACP_EXT_METHODS, LSP_METHODS, MethodPayloads
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
    "ACP_EXT_METHODS",
    "FIXED_MESSAGES",
    "LSP_METHODS",
    "ActiveQuestion",
    "Answer",
    "AnswerItem",
    "ApprovalIntent",
    "AskUserQuestionConfig",
    "ErrorCode",
    "ErrorData",
    "Intent",
    "IntentSubject",
    "InvalidParams",
    "MessageSource",
    "MethodPayloads",
    "ModelSpec",
    "OpenAIModelSpec",
    "Option",
    "PendingResult",
    "PlanReviewIntent",
    "ProjectionView",
    "QuestionItem",
    "QuestionsCapability",
    "RpcErrorCode",
    "ScriptModelSpec",
    "SettledQuestion",
    "Step",
    "StopReason",
    "TextContent",
    "TimedResult",
    "ToolCallSpec",
    "TurnCause",
    "UnknownIntent",
    "Wait",
    "WaitFrame",
    "WireModel",
    "methods",
    "parse_model_spec",
    "parse_model_spec_option",
    "parse_params",
    "parse_value",
    "validation_errors",
]
