"""ask(request) rules A1–A9: checks in order, dispatch, failure mapping, abort while waiting."""

from __future__ import annotations

import anyio
import pytest
from core_helpers import (
    Agent,
    Answerer,
    WireError,
    assert_error,
    expect,
    first_choice,
    make_service,
    question,
    settle,
)

from askbridge.core import AbortSignal, UserQuestionError, UserQuestionRequest
from askbridge.core.waterfall import Listener, Next, Settle, Withdraw
from askbridge.protocol import Answer, AnswerItem, ErrorCode

# A broken rule must fail fast, not hang until the suite-wide timeout.
pytestmark = pytest.mark.timeout(20)

BAD_PLAN = {"kind": "plan-review", "approve": "Nope"}  # names no option, and no detail below


# -- A1–A5: the checks, in order, before any answerer runs -----------------------------------


async def test_A1_signal_already_aborted() -> None:
    s = make_service()
    answerer = Answerer(reply=first_choice([question()]))
    s.service.register(answerer)
    signal = AbortSignal()
    signal.abort()
    await expect(s.service.ask(s.request(signal=signal)), "ASK_ABORTED")
    assert answerer.requests == []


async def test_A1_wins_over_every_later_check() -> None:
    s = make_service()
    signal = AbortSignal()
    signal.abort()
    ghost = Agent("ghost")  # not registered: A3 would fail
    await expect(s.service.ask(s.request([], agent=ghost, signal=signal)), "ASK_ABORTED")


async def test_A2_empty_questions() -> None:
    s = make_service()
    answerer = Answerer()
    s.service.register(answerer)
    await expect(
        s.service.ask(s.request([])),
        "EMPTY_QUESTIONS",
        "ask_user_question requires at least one question",
    )
    assert answerer.requests == []


async def test_A2_wins_over_A3() -> None:
    s = make_service()
    await expect(s.service.ask(s.request([], agent=Agent("ghost"))), "EMPTY_QUESTIONS")


async def test_A3_caller_not_the_live_instance() -> None:
    """Identity, not equality: an equal agent object that is not the registered one fails."""
    s = make_service()
    answerer = Answerer(reply=first_choice([question()]))
    s.service.register(answerer)
    impostor = Agent("root")
    assert impostor == s.root and impostor is not s.root
    await expect(s.service.ask(s.request(agent=impostor)), "CALLER_NOT_LIVE")
    assert answerer.requests == []
    await s.service.ask(s.request(agent=s.root))  # the live instance asks fine
    assert len(answerer.requests) == 1


async def test_A3_unregistered_or_removed_agent() -> None:
    s = make_service()
    s.service.register(Answerer(reply=first_choice([question()])))
    await expect(s.service.ask(s.request(agent=Agent("nobody"))), "CALLER_NOT_LIVE")
    s.registry.remove(s.root)
    await expect(s.service.ask(s.request(agent=s.root)), "CALLER_NOT_LIVE")


async def test_A3_no_agent_is_allowed_for_ask() -> None:
    s = make_service()
    s.service.register(Answerer(reply=first_choice([question()])))
    answer = await s.service.ask(s.request(use_root=False))
    assert answer.answers[0].selected == ["Yes"]


async def test_A3_wins_over_A5() -> None:
    s = make_service()
    bad = [question(intent=BAD_PLAN)]
    await expect(s.service.ask(s.request(bad, agent=Agent("ghost"))), "CALLER_NOT_LIVE")


async def test_A4_subagent_origin_is_delegated_caller() -> None:
    s = make_service()
    answerer = Answerer(reply=first_choice([question()]))
    s.service.register(answerer)
    child = Agent("child")
    s.registry.add(child, parent="root", subagent=True)
    await expect(
        s.service.ask(s.request(agent=child)),
        "DELEGATED_CALLER",
        "human interaction is unavailable while the calling agent is owned by another live "
        "agent; include the unresolved question or decision in the child agent's final result",
    )
    assert answerer.requests == []


async def test_A4_origin_decides_not_history_resumed_root_asks() -> None:
    """A root agent resumed from a stored session is a new live instance of root origin."""
    s = make_service()
    s.service.register(Answerer(reply=first_choice([question()])))
    resumed = Agent("root")
    s.registry.add(resumed)  # replaces the earlier instance, as a resume does
    await s.service.ask(s.request(agent=resumed))
    await expect(s.service.ask(s.request(agent=s.root)), "CALLER_NOT_LIVE")


async def test_A4_wins_over_A5() -> None:
    s = make_service()
    child = Agent("child")
    s.registry.add(child, parent="root", subagent=True)
    bad = [question(intent=BAD_PLAN)]
    await expect(s.service.ask(s.request(bad, agent=child)), "DELEGATED_CALLER")


async def test_A5_approve_label_rule_before_detail_rule() -> None:
    s = make_service()
    answerer = Answerer()
    s.service.register(answerer)
    bad = [question(options=["Yes", "No"], intent=BAD_PLAN)]  # both rules broken
    await expect(
        s.service.ask(s.request(bad)),
        "BAD_INTENT",
        'question q1 declares intent plan-review whose approve label "Nope" '
        "names none of its options",
    )
    no_detail = [question(options=["Yes", "No"], intent={"kind": "plan-review", "approve": "Yes"})]
    await expect(
        s.service.ask(s.request(no_detail)),
        "BAD_INTENT",
        "question q1 declares intent plan-review without the detail it reviews",
    )
    assert answerer.requests == []


async def test_A5_first_failing_question_wins() -> None:
    s = make_service()
    qs = [
        question("a"),
        question("b", intent={"kind": "plan-review", "approve": "Yes"}),
        question("c", intent=BAD_PLAN),
    ]
    await expect(
        s.service.ask(s.request(qs)),
        "BAD_INTENT",
        "question b declares intent plan-review without the detail it reviews",
    )


async def test_A5_approval_on_blocking_ask_is_allowed() -> None:
    s = make_service()
    q = question(
        options=["Allow", "Deny"],
        detail="rm -rf build",
        intent={"kind": "approval", "approve": "Allow", "reject": "Deny"},
    )
    s.service.register(Answerer(reply=first_choice([q])))
    answer = await s.service.ask(s.request([q]))
    assert answer.answers[0].selected == ["Allow"]


# -- A6, A7 ----------------------------------------------------------------------------------


async def test_A6_duplicate_question_ids_are_not_a_core_error() -> None:
    s = make_service()
    qs = [question("same"), question("same")]
    answerer = Answerer(reply=first_choice(qs))
    s.service.register(answerer)
    answer = await s.service.ask(s.request(qs))
    assert len(answerer.requests) == 1
    assert [a.id for a in answer.answers] == ["same", "same"]


async def test_A7_first_answer_wins_and_is_returned() -> None:
    s = make_service()
    first = Answerer(reply=Answer(answers=[AnswerItem(id="q1", selected=["No"])]))
    second = Answerer()
    s.service.register(first)
    s.service.register(second)
    answer = await s.service.ask(s.request())
    assert answer.dump() == {"answers": [{"id": "q1", "selected": ["No"]}]}
    assert len(first.requests) == 1 and second.requests == []


# -- A8 failure mapping ----------------------------------------------------------------------


def aborting_then_raising(signal: AbortSignal, error: Exception) -> Listener:
    """An answerer that aborts the turn's signal and fails in the same step."""

    def listener(request: UserQuestionRequest, next_: Next, settle: Settle) -> Withdraw:
        signal.abort()
        raise error

    return listener


async def test_A8_user_question_error_wins_even_if_the_signal_aborted() -> None:
    s = make_service()
    signal = AbortSignal()
    cancelled = UserQuestionError.of(ErrorCode.ASK_CANCELLED)
    s.service.register(aborting_then_raising(signal, cancelled))
    err = await expect(s.service.ask(s.request(signal=signal)), "ASK_CANCELLED")
    assert err is cancelled and signal.aborted


async def test_A8_wire_shaped_error_wins_even_if_the_signal_aborted() -> None:
    s = make_service()
    signal = AbortSignal()
    wire = WireError("user closed the card", {"name": "UserQuestionError", "code": "ASK_CANCELLED"})
    s.service.register(aborting_then_raising(signal, wire))
    err = await expect(
        s.service.ask(s.request(signal=signal)),
        "ASK_CANCELLED",
        "the user cancelled ask_user_question",
    )
    assert err.__cause__ is wire


async def test_A8_foreign_error_with_aborted_signal_is_ask_aborted_with_cause() -> None:
    s = make_service()
    signal = AbortSignal()
    original = ConnectionResetError("client went away")
    s.service.register(aborting_then_raising(signal, original))
    err = await expect(s.service.ask(s.request(signal=signal)), "ASK_ABORTED")
    assert err.__cause__ is original


async def test_A8_foreign_error_otherwise_is_provider_error() -> None:
    s = make_service()
    original = KeyError("missing")
    answerer = Answerer()
    answerer.fail(original)
    s.service.register(answerer)
    err = await expect(
        s.service.ask(s.request(signal=AbortSignal())), "PROVIDER_ERROR", str(original)
    )
    assert err.__cause__ is original


# -- A9 abort while an answerer waits --------------------------------------------------------


async def test_A9_signal_abort_ends_the_ask_at_once_and_cancels_the_answerer() -> None:
    s = make_service()
    answerer = Answerer()  # a silent client: never replies, never acknowledges
    s.service.register(answerer)
    signal = AbortSignal()
    outcome: list[BaseException] = []

    async def caller() -> None:
        try:
            await s.service.ask(s.request(signal=signal))
        except UserQuestionError as exc:
            outcome.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(caller)
        await settle()
        assert len(answerer.requests) == 1 and outcome == []
        signal.abort()
        await settle()  # no clock moves, no reply arrives: the ask ends by itself
        assert answerer.cancelled == 1
        assert len(outcome) == 1
    assert_error(
        outcome[0], "ASK_ABORTED", "ask_user_question was aborted before the user answered"
    )


async def test_A9_abort_cancels_the_whole_listener_chain() -> None:
    s = make_service()
    delegated: list[str] = []

    def front(request: UserQuestionRequest, next_: Next, settle: Settle) -> Withdraw:
        withdraw_rest = next_(settle)

        def withdraw() -> None:
            delegated.append("front cancelled")
            withdraw_rest()

        return withdraw

    answerer = Answerer()
    s.service.register(front)
    s.service.register(answerer)
    signal = AbortSignal()
    async with anyio.create_task_group() as tg:

        async def abort_soon() -> None:
            await settle()
            signal.abort()

        tg.start_soon(abort_soon)
        await expect(s.service.ask(s.request(signal=signal)), "ASK_ABORTED")
    assert delegated == ["front cancelled"] and answerer.cancelled == 1


async def test_A9_answer_before_abort_is_kept() -> None:
    s = make_service()
    answerer = Answerer()
    s.service.register(answerer)
    signal = AbortSignal()
    results: list[Answer] = []

    async def caller() -> None:
        results.append(await s.service.ask(s.request(signal=signal)))

    async with anyio.create_task_group() as tg:
        tg.start_soon(caller)
        await settle()
        answerer.answer(first_choice([question()]))
        await settle()
        signal.abort()
    assert results[0].answers[0].selected == ["Yes"] and answerer.cancelled == 0
