"""Wire vocabulary and payloads of askbridge (protocol.md v1), as pydantic v2 models.

camelCase on the wire, snake_case in Python. This package imports nothing else
of askbridge; every other layer imports it.

Map: vocabulary (V1–V8 shapes), common (shared small shapes), model_spec
(ModelSpec, AskUserQuestionConfig), session / updates / questions (LSP door
payloads), acp (the ACP door's `_askbridge/*` and `_meta` payloads), methods
(method-name constants), payloads (method → params/result types), parsing
(`parse_params`, `InvalidParams` → -32602), schema (`write_schemas`, `main`);
text (the compact JSON encoder, by orjson; lone surrogates; invisible characters).

Every name here loads on first use: see askbridge.process.lazy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..process.lazy import lazy_exports

if TYPE_CHECKING:
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

_EXPORTS = {
    "methods": ".",
    "WireModel": ".base",
    "ErrorData": ".common",
    "MessageSource": ".common",
    "QuestionsCapability": ".common",
    "StopReason": ".common",
    "TextContent": ".common",
    "TurnCause": ".common",
    "FIXED_MESSAGES": ".errors",
    "ErrorCode": ".errors",
    "RpcErrorCode": ".errors",
    "AskUserQuestionConfig": ".model_spec",
    "ModelSpec": ".model_spec",
    "OpenAIModelSpec": ".model_spec",
    "ScriptModelSpec": ".model_spec",
    "Step": ".model_spec",
    "ToolCallSpec": ".model_spec",
    "parse_model_spec": ".model_spec",
    "parse_model_spec_option": ".model_spec",
    "InvalidParams": ".parsing",
    "parse_params": ".parsing",
    "parse_value": ".parsing",
    "validation_errors": ".parsing",
    "ACP_EXT_METHODS": ".payloads",
    "LSP_METHODS": ".payloads",
    "MethodPayloads": ".payloads",
    "ActiveQuestion": ".vocabulary",
    "Answer": ".vocabulary",
    "AnswerItem": ".vocabulary",
    "ApprovalIntent": ".vocabulary",
    "Intent": ".vocabulary",
    "IntentSubject": ".vocabulary",
    "Option": ".vocabulary",
    "PendingResult": ".vocabulary",
    "PlanReviewIntent": ".vocabulary",
    "ProjectionView": ".vocabulary",
    "QuestionItem": ".vocabulary",
    "SettledQuestion": ".vocabulary",
    "TimedResult": ".vocabulary",
    "UnknownIntent": ".vocabulary",
    "Wait": ".vocabulary",
    "WaitFrame": ".vocabulary",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)


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
