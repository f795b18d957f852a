"""Error rules E1–E3: the error table, foreign failures, wire-shaped errors, cancellation."""

from __future__ import annotations

import asyncio

import anyio
import pytest
from core_helpers import Answerer, WireError, assert_error, make_service, message, settle
from pygls.exceptions import JsonRpcException

from askbridge.core import (
    HarnessError,
    SessionError,
    ToolError,
    ToolInputError,
    UserQuestionError,
    UserQuestionRequest,
    error_from_wire,
    tool_outcome_unknown,
)
from askbridge.core.waterfall import Next, Settle, Withdraw
from askbridge.protocol import ErrorCode

# A broken rule must fail fast, not hang until the suite-wide timeout.
pytestmark = pytest.mark.timeout(20)

TABLE = {
    "ASK_ABORTED": "ask_user_question was aborted before the user answered",
    "EMPTY_QUESTIONS": "ask_user_question requires at least one question",
    "CALLER_NOT_LIVE": (
        "human interaction requires the exact live calling agent when an agent is supplied"
    ),
    "DELEGATED_CALLER": (
        "human interaction is unavailable while the calling agent is owned by another live "
        "agent; include the unresolved question or decision in the child agent's final result"
    ),
    "NO_PROVIDER": "no user-questions answerer accepted the request",
    "BAD_TIMEOUT": "timeout must fit a positive platform timer",
    "DUPLICATE_WAIT": "the question call already has a foreground wait",
    "ASK_TIMED_OUT": "ask_user_question timed out before the user answered",
    "ASK_CANCELLED": "the user cancelled ask_user_question",
    "REPLY_QUEUED": "a reply is already queued for this question",
    "TOOL_OUTCOME_UNKNOWN": (
        "the tool call was interrupted before it finished; its outcome is unknown"
    ),
}


@pytest.mark.parametrize("code", sorted(TABLE))
def test_E_table_fixed_messages(code: str) -> None:
    """Every fixed-message code of the table builds a UserQuestionError/HarnessError."""
    err = UserQuestionError.of(code)
    assert isinstance(err, HarnessError)
    assert (err.code, err.message, str(err)) == (code, TABLE[code], TABLE[code])
    assert err.to_data() == {"name": "UserQuestionError", "code": code}


def test_E_table_other_error_names() -> None:
    tool_input = ToolInputError('question id "a" must be unique within this call')
    assert tool_input.to_data() == {"name": "ToolInputError", "code": "BAD_TOOL_INPUT"}
    unknown = tool_outcome_unknown()
    assert unknown.to_data() == {"name": "ToolError", "code": "TOOL_OUTCOME_UNKNOWN"}
    assert unknown.message == TABLE["TOOL_OUTCOME_UNKNOWN"]
    session = SessionError.unknown("s-9")
    assert session.to_data() == {"name": "SessionError", "code": "UNKNOWN_SESSION"}
    assert session.message == "unknown session s-9"


def failing(exc: Exception) -> Answerer:
    answerer = Answerer()
    answerer.fail(exc)
    return answerer


# -- E1 --------------------------------------------------------------------------------------


async def test_E1_foreign_failure_becomes_provider_error_with_cause() -> None:
    s = make_service()
    original = RuntimeError("socket closed by peer")
    s.service.register(failing(original))
    with pytest.raises(UserQuestionError) as info:
        await s.service.ask(s.request())
    assert_error(info.value, "PROVIDER_ERROR", "socket closed by peer")
    assert info.value.__cause__ is original


async def test_E1_foreign_failure_in_ask_timed_is_provider_error() -> None:
    s = make_service()
    original = ValueError("client crashed")
    s.service.register(failing(original))
    with pytest.raises(UserQuestionError) as info:
        await s.service.ask_timed(s.request(), "c1", 1000)
    assert_error(info.value, "PROVIDER_ERROR", "client crashed")
    assert info.value.__cause__ is original


# -- E2 --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        ToolError("the tool broke", "SOMETHING_ELSE"),
        SessionError.unknown("s1"),
        UserQuestionError.of(ErrorCode.ASK_CANCELLED),
        HarnessError("plain harness", "CUSTOM"),
    ],
)
async def test_E2_harness_error_keeps_name_and_code(error: HarnessError) -> None:
    s = make_service()
    s.service.register(failing(error))
    with pytest.raises(HarnessError) as info:
        await s.service.ask(s.request())
    assert info.value is error
    assert info.value.to_data() == error.to_data()
    assert info.value.__cause__ is not info.value  # never its own cause


async def test_E2_harness_error_keeps_its_own_cause() -> None:
    s = make_service()
    root_cause = OSError("pipe closed")
    error = UserQuestionError.of(ErrorCode.ASK_CANCELLED)
    error.__cause__ = root_cause
    s.service.register(failing(error))
    with pytest.raises(UserQuestionError) as info:
        await s.service.ask(s.request())
    assert info.value is error and info.value.__cause__ is root_cause


@pytest.mark.parametrize("code", sorted(TABLE))
async def test_E2_wire_error_with_table_code_gets_the_table_message(code: str) -> None:
    s = make_service()
    wire = WireError("the client's own words", {"name": "UserQuestionError", "code": code})
    s.service.register(failing(wire))
    with pytest.raises(UserQuestionError) as info:
        await s.service.ask(s.request())
    assert_error(info.value, code)
    assert info.value.__cause__ is wire


async def test_E2_wire_error_ask_cancelled_from_pygls_exception() -> None:
    """The real JSON-RPC exception type a pygls front door raises carries `.data` too."""
    s = make_service()
    wire = JsonRpcException(
        message="user pressed Escape",
        code=-32000,
        data={"name": "UserQuestionError", "code": "ASK_CANCELLED"},
    )
    s.service.register(failing(wire))
    with pytest.raises(UserQuestionError) as info:
        await s.service.ask(s.request())
    assert_error(info.value, "ASK_CANCELLED", "the user cancelled ask_user_question")


async def test_E2_wire_error_with_unknown_code_keeps_the_client_message() -> None:
    s = make_service()
    wire = WireError("the card was replaced", {"name": "UserQuestionError", "code": "CARD_GONE"})
    s.service.register(failing(wire))
    with pytest.raises(UserQuestionError) as info:
        await s.service.ask(s.request())
    assert_error(info.value, "CARD_GONE", "the card was replaced")


def test_E2_error_from_wire_shapes() -> None:
    rebuilt = error_from_wire("x", {"name": "UserQuestionError", "code": "ASK_CANCELLED"})
    assert isinstance(rebuilt, UserQuestionError)
    assert rebuilt.message == message("ASK_CANCELLED")
    tool = error_from_wire("tool says", {"name": "ToolError", "code": "TOOL_OUTCOME_UNKNOWN"})
    assert isinstance(tool, ToolError) and tool.message == "tool says"
    session = error_from_wire(
        "unknown session s", {"name": "SessionError", "code": "UNKNOWN_SESSION"}
    )
    assert isinstance(session, SessionError) and session.code == "UNKNOWN_SESSION"
    tool_input = error_from_wire("bad input", {"name": "ToolInputError", "code": "BAD_TOOL_INPUT"})
    assert isinstance(tool_input, ToolInputError) and tool_input.message == "bad input"
    for not_ours in (None, "text", {"code": "X"}, {"name": "UserQuestionError", "code": 3}):
        assert error_from_wire("m", not_ours) is None


async def test_E2_wire_error_without_our_data_is_foreign() -> None:
    s = make_service()
    s.service.register(failing(WireError("internal error", {"detail": "trace"})))
    with pytest.raises(UserQuestionError) as info:
        await s.service.ask(s.request())
    assert_error(info.value, "PROVIDER_ERROR", "internal error")


# -- E3 --------------------------------------------------------------------------------------


async def test_E3_caller_cancellation_propagates_from_ask() -> None:
    s = make_service()
    answerer = Answerer()
    s.service.register(answerer)
    outcome: list[str] = []

    async def caller() -> None:
        try:
            await s.service.ask(s.request())
        except anyio.get_cancelled_exc_class():
            outcome.append("cancelled")
            raise
        except BaseException as exc:  # pragma: no cover - the failure being tested for
            outcome.append(repr(exc))
            raise

    async with anyio.create_task_group() as tg:
        tg.start_soon(caller)
        await settle()
        assert len(answerer.requests) == 1
        tg.cancel_scope.cancel()
    assert outcome == ["cancelled"]
    assert answerer.cancelled == 1


async def test_E3_asyncio_task_cancel_raises_cancelled_error() -> None:
    s = make_service()
    answerer = Answerer()
    s.service.register(answerer)
    task = asyncio.get_running_loop().create_task(s.service.ask(s.request()))
    await settle()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert answerer.cancelled == 1


@pytest.mark.parametrize("with_answerer", [True, False])  # False: waiting out NO_PROVIDER (TW8)
async def test_E3_caller_cancellation_propagates_from_ask_timed_and_frees_the_slot(
    with_answerer: bool,
) -> None:
    s = make_service()
    if with_answerer:
        s.service.register(Answerer())
    outcome: list[str] = []

    async def caller() -> None:
        try:
            await s.service.ask_timed(s.request(), "c1", 5000)
        except anyio.get_cancelled_exc_class():
            outcome.append("cancelled")
            raise

    async with anyio.create_task_group() as tg:
        tg.start_soon(caller)
        await settle()
        assert s.service.find_wait("root", "c1") is not None
        tg.cancel_scope.cancel()
    assert outcome == ["cancelled"]
    assert s.service.find_wait("root", "c1") is None


async def test_E3_cancellation_is_not_provider_error_even_with_a_listener_chain() -> None:
    """A listener that delegates with next() is cancelled through the whole chain."""
    s = make_service()
    seen: list[str] = []

    def delegating(request: UserQuestionRequest, next_: Next, settle: Settle) -> Withdraw:
        withdraw_rest = next_(settle)

        def withdraw() -> None:
            seen.append("first")
            withdraw_rest()

        return withdraw

    answerer = Answerer()
    s.service.register(delegating)
    s.service.register(answerer)
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(s.service.ask, s.request())
            await settle()
            scope.cancel()
    assert scope.cancelled_caught
    assert seen == ["first"] and answerer.cancelled == 1
