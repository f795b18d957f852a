"""Waterfall rules W1–W4: the ordered, scoped chain of `user-questions/request` listeners."""

from __future__ import annotations

import anyio
import pytest
from core_helpers import Agent, Answerer, assert_error, first_choice, make_service, question, settle

from askbridge.core import (
    AbortSignal,
    SimpleAgentRegistry,
    UserQuestionError,
    UserQuestionRequest,
    UserQuestionWaterfall,
)
from askbridge.core.waterfall import Listener, Next, Settle, Withdraw, await_callback
from askbridge.protocol import Answer, AnswerItem, Wait

# A broken rule must fail fast, not hang until the suite-wide timeout.
pytestmark = pytest.mark.timeout(20)


def named(name: str, log: list[str], *, delegate: bool) -> Listener:
    """A listener that logs its name, then delegates or answers with its name."""

    def listener(request: UserQuestionRequest, next_: Next, settle: Settle) -> Withdraw:
        log.append(name)
        if delegate:
            return next_(settle)
        settle(Answer(answers=[AnswerItem(id=q.id, custom=name) for q in request.questions]), None)
        return lambda: None

    return listener


async def dispatch(fall: UserQuestionWaterfall, request: UserQuestionRequest) -> Answer:
    """Ask the waterfall and await what its chain settles."""
    answer: Answer = await await_callback(lambda settle: fall.start(request, settle))
    return answer


# -- W1 --------------------------------------------------------------------------------------


async def test_W1_returning_an_answer_claims_the_request() -> None:
    fall = UserQuestionWaterfall(SimpleAgentRegistry())
    log: list[str] = []
    fall.register(named("a", log, delegate=False))
    fall.register(named("b", log, delegate=False))
    answer = await dispatch(fall, UserQuestionRequest(questions=[question()]))
    assert log == ["a"] and answer.answers[0].custom == "a"


async def test_W1_next_delegates_to_the_following_listener() -> None:
    fall = UserQuestionWaterfall(SimpleAgentRegistry())
    log: list[str] = []
    fall.register(named("a", log, delegate=True))
    fall.register(named("b", log, delegate=False))
    answer = await dispatch(fall, UserQuestionRequest(questions=[question()]))
    assert log == ["a", "b"] and answer.answers[0].custom == "b"


async def test_W1_next_past_the_last_listener_is_no_provider() -> None:
    fall = UserQuestionWaterfall(SimpleAgentRegistry())
    log: list[str] = []
    fall.register(named("a", log, delegate=True))
    with pytest.raises(UserQuestionError) as info:
        await dispatch(fall, UserQuestionRequest(questions=[question()]))
    assert_error(info.value, "NO_PROVIDER", "no user-questions answerer accepted the request")
    assert log == ["a"]


async def test_W1_empty_waterfall_is_no_provider_through_ask() -> None:
    s = make_service()
    with pytest.raises(UserQuestionError) as info:
        await s.service.ask(s.request())
    assert_error(info.value, "NO_PROVIDER")


async def test_W1_a_listener_may_inspect_the_next_answer() -> None:
    """Awaiting next() returns the following listener's answer to the delegating one."""
    fall = UserQuestionWaterfall(SimpleAgentRegistry())
    log: list[str] = []

    def wrapper(request: UserQuestionRequest, next_: Next, settle: Settle) -> Withdraw:
        def inspect(inner: Answer | None, error: Exception | None) -> None:
            assert inner is not None
            log.append(f"saw {inner.answers[0].custom}")
            settle(inner, error)

        return next_(inspect)

    fall.register(wrapper)
    fall.register(named("b", log, delegate=False))
    await dispatch(fall, UserQuestionRequest(questions=[question()]))
    assert log == ["b", "saw b"]


# -- W2 --------------------------------------------------------------------------------------


async def test_W2_registration_order_and_prepend() -> None:
    fall = UserQuestionWaterfall(SimpleAgentRegistry())
    log: list[str] = []
    fall.register(named("a", log, delegate=True))
    fall.register(named("b", log, delegate=True))
    fall.register(named("first", log, delegate=True), prepend=True)
    fall.register(named("c", log, delegate=False))
    await dispatch(fall, UserQuestionRequest(questions=[question()]))
    assert log == ["first", "a", "b", "c"]


async def test_W2_disposer_removes_and_is_harmless_twice() -> None:
    fall = UserQuestionWaterfall(SimpleAgentRegistry())
    log: list[str] = []
    dispose_a = fall.register(named("a", log, delegate=False))
    fall.register(named("b", log, delegate=False))
    dispose_a()
    dispose_a()
    await dispatch(fall, UserQuestionRequest(questions=[question()]))
    assert log == ["b"]


async def test_W2_disposing_twice_does_not_remove_an_equal_second_registration() -> None:
    """Registering the same callable twice makes two entries; each disposer removes its own."""
    fall = UserQuestionWaterfall(SimpleAgentRegistry())
    log: list[str] = []
    same = named("a", log, delegate=True)
    dispose_first = fall.register(same)
    fall.register(same)
    fall.register(named("end", log, delegate=False))
    dispose_first()
    dispose_first()
    await dispatch(fall, UserQuestionRequest(questions=[question()]))
    assert log == ["a", "end"]


# -- W3 --------------------------------------------------------------------------------------


def family() -> tuple[SimpleAgentRegistry, dict[str, Agent]]:
    """root → child → grandchild, plus an unrelated `other` root."""
    registry = SimpleAgentRegistry()
    agents = {name: Agent(name) for name in ("root", "child", "grandchild", "other")}
    registry.add(agents["root"])
    registry.add(agents["child"], parent="root", subagent=True)
    registry.add(agents["grandchild"], parent="child", subagent=True)
    registry.add(agents["other"])
    return registry, agents


async def reached(fall: UserQuestionWaterfall, agent: Agent | None, log: list[str]) -> list[str]:
    """Dispatch a request through delegating listeners; the log says who saw it, in order."""
    log.clear()
    with pytest.raises(UserQuestionError):  # everyone delegates: NO_PROVIDER at the end
        await dispatch(fall, UserQuestionRequest(questions=[question()], agent=agent))
    return list(log)


async def test_W3_scoped_listener_sees_its_agent_and_descendants_only() -> None:
    registry, agents = family()
    fall = UserQuestionWaterfall(registry)
    log: list[str] = []
    fall.register(named("global", log, delegate=True))
    fall.register(named("child-scope", log, delegate=True), agent_id="child")
    fall.register(named("root-scope", log, delegate=True), agent_id="root")
    assert await reached(fall, agents["root"], log) == ["global", "root-scope"]
    assert await reached(fall, agents["child"], log) == ["global", "child-scope", "root-scope"]
    assert await reached(fall, agents["grandchild"], log) == [
        "global",
        "child-scope",
        "root-scope",
    ]
    assert await reached(fall, agents["other"], log) == ["global"]


async def test_W3_request_without_agent_reaches_only_global_listeners() -> None:
    registry, _ = family()
    fall = UserQuestionWaterfall(registry)
    log: list[str] = []
    fall.register(named("root-scope", log, delegate=True), agent_id="root")
    fall.register(named("global", log, delegate=True))
    assert await reached(fall, None, log) == ["global"]


async def test_W3_scoping_through_service_ask() -> None:
    """Through ask: a descendant's request reaches its ancestor's scoped answerer.

    The descendant is registered as a root-origin agent with a parent (A4 would
    refuse a subagent-origin caller before dispatch)."""
    s = make_service()
    descendant = Agent("resumed-child")
    s.registry.add(descendant, parent="root")
    stranger = Agent("stranger")
    s.registry.add(stranger)
    log: list[str] = []
    s.service.register(named("root-answerer", log, delegate=False), agent_id="root")
    s.service.register(named("global", log, delegate=False))

    answer = await s.service.ask(s.request(agent=descendant))
    assert answer.answers[0].custom == "root-answerer"
    answer = await s.service.ask(s.request(agent=stranger))
    assert answer.answers[0].custom == "global"
    answer = await s.service.ask(s.request(use_root=False))
    assert answer.answers[0].custom == "global"
    assert log == ["root-answerer", "global", "global"]


async def test_W3_scoped_only_and_unrelated_caller_is_no_provider() -> None:
    s = make_service()
    stranger = Agent("stranger")
    s.registry.add(stranger)
    s.service.register(Answerer(), agent_id="root")
    with pytest.raises(UserQuestionError) as info:
        await s.service.ask(s.request(agent=stranger))
    assert_error(info.value, "NO_PROVIDER")


# -- W4 --------------------------------------------------------------------------------------


async def test_W4_ask_passes_the_callers_request_object_unchanged() -> None:
    s = make_service()
    answerer = Answerer(reply=first_choice([question()]))
    s.service.register(answerer)
    signal = AbortSignal()
    request = UserQuestionRequest(
        questions=[question()],
        agent=s.root,
        signal=signal,
        wait=Wait(call_id="c1"),
        session_id="sess-1",
        extra={"k": "v"},
    )
    await s.service.ask(request)
    (seen,) = answerer.requests
    assert seen is request
    assert seen.signal is signal and seen.wait == Wait(call_id="c1")


async def test_W4_ask_without_wait_adds_no_wait() -> None:
    s = make_service()
    answerer = Answerer(reply=first_choice([question()]))
    s.service.register(answerer)
    request = s.request()
    await s.service.ask(request)
    assert answerer.requests[0] is request and answerer.requests[0].wait is None


async def test_W4_ask_timed_supplies_private_signal_and_timed_wait() -> None:
    s = make_service()
    answerer = Answerer()
    s.service.register(answerer)
    turn = AbortSignal()
    questions = [question()]
    request = UserQuestionRequest(
        questions=questions, agent=s.root, signal=turn, session_id="sess-1", extra={"k": "v"}
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(s.service.ask_timed, request, "call-9", 1000)
        await settle()
        (seen,) = answerer.requests
        wait = s.service.find_wait("root", "call-9")
        assert wait is not None
        assert seen is not request
        assert seen.signal is wait.signal and seen.signal is not turn
        assert seen.wait is not None and seen.wait.dump() == {"callId": "call-9", "timed": True}
        # Everything else is the caller's, untouched.
        assert seen.questions is questions and seen.agent is s.root
        assert seen.session_id == "sess-1" and seen.extra == {"k": "v"}
        assert request.wait is None and request.signal is turn
        answerer.answer(first_choice(questions))


async def test_W3_a_scoped_listener_disposed_leaves_the_global_chain_for_every_caller() -> None:
    registry, agents = family()
    fall = UserQuestionWaterfall(registry)
    log: list[str] = []
    fall.register(named("global", log, delegate=True))
    dispose = fall.register(named("root-scope", log, delegate=True), agent_id="root")
    assert await reached(fall, agents["child"], log) == ["global", "root-scope"]
    dispose()
    dispose()  # harmless twice: counted once
    assert await reached(fall, agents["child"], log) == ["global"]
    fall.register(named("child-scope", log, delegate=True), agent_id="child")
    assert await reached(fall, agents["child"], log) == ["global", "child-scope"]
    assert await reached(fall, agents["other"], log) == ["global"]
