"""The user-questions core: errors, waterfall, service, timed waits with claims.

No I/O and no pygls here; only `askbridge.protocol` is imported. The host
supplies agent identity (`AgentIdentity`) and late-reply handling
(`LateReplyHandler`); front doors register listeners on the waterfall.

Names load on first use (askbridge.process.lazy says why).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..process.lazy import lazy_exports

if TYPE_CHECKING:
    from .clock import Clock, ManualClock, MonotonicClock
    from .errors import (
        HarnessError,
        ModelError,
        SessionError,
        StoreDamaged,
        StoreError,
        StoreLost,
        StoreUnavailable,
        ToolError,
        ToolInputError,
        UserQuestionError,
        error_from_wire,
        tool_failed,
        tool_outcome_unknown,
        unknown_tool,
    )
    from .identity import AgentIdentity, AgentLike, SimpleAgentRegistry
    from .question import Question
    from .service import LateReplyHandler, UserQuestionService
    from .signal import AbortSignal
    from .timed_wait import ClaimStream, TimedQuestionWait, WaitClaim
    from .validation import check_answer, check_batch_ids, parse_answer, validate_intents
    from .waterfall import Listener, NextListener, UserQuestionRequest, UserQuestionWaterfall

_EXPORTS = {
    "Clock": ".clock",
    "ManualClock": ".clock",
    "MonotonicClock": ".clock",
    "HarnessError": ".errors",
    "ModelError": ".errors",
    "SessionError": ".errors",
    "StoreDamaged": ".errors",
    "StoreError": ".errors",
    "StoreLost": ".errors",
    "StoreUnavailable": ".errors",
    "ToolError": ".errors",
    "ToolInputError": ".errors",
    "UserQuestionError": ".errors",
    "error_from_wire": ".errors",
    "tool_failed": ".errors",
    "tool_outcome_unknown": ".errors",
    "unknown_tool": ".errors",
    "AgentIdentity": ".identity",
    "AgentLike": ".identity",
    "SimpleAgentRegistry": ".identity",
    "Question": ".question",
    "LateReplyHandler": ".service",
    "UserQuestionService": ".service",
    "AbortSignal": ".signal",
    "ClaimStream": ".timed_wait",
    "TimedQuestionWait": ".timed_wait",
    "WaitClaim": ".timed_wait",
    "check_answer": ".validation",
    "check_batch_ids": ".validation",
    "parse_answer": ".validation",
    "validate_intents": ".validation",
    "Listener": ".waterfall",
    "NextListener": ".waterfall",
    "UserQuestionRequest": ".waterfall",
    "UserQuestionWaterfall": ".waterfall",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "AbortSignal",
    "AgentIdentity",
    "AgentLike",
    "ClaimStream",
    "Clock",
    "HarnessError",
    "LateReplyHandler",
    "Listener",
    "ManualClock",
    "ModelError",
    "MonotonicClock",
    "NextListener",
    "Question",
    "SessionError",
    "SimpleAgentRegistry",
    "StoreDamaged",
    "StoreError",
    "StoreLost",
    "StoreUnavailable",
    "TimedQuestionWait",
    "ToolError",
    "ToolInputError",
    "UserQuestionError",
    "UserQuestionRequest",
    "UserQuestionService",
    "UserQuestionWaterfall",
    "WaitClaim",
    "check_answer",
    "check_batch_ids",
    "error_from_wire",
    "parse_answer",
    "tool_failed",
    "tool_outcome_unknown",
    "unknown_tool",
    "validate_intents",
]
