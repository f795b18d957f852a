"""One question, every window (behavior.md M2, M3, M7), in-process: the real fan-out on the real
question service, fake clients, a ManualClock (tests/unit/asking_helpers.py).

Each rule runs against both ways a door asks: a task per card that the fan-out
cancels to withdraw it (the ACP relay) and a callback with a withdraw function
(the LSP relay's `ask_with_callback`).
"""

from __future__ import annotations

import pytest
from asking_helpers import SESSION, FakeLink, open_room
from core_helpers import question, settle

from askbridge.core import UserQuestionError
from askbridge.host.asking.clients import Client
from askbridge.protocol import Answer, AnswerItem, ErrorCode, Wait
from askbridge.protocol.errors import ClientGone

pytestmark = [pytest.mark.timeout(20), pytest.mark.parametrize("callback", [False, True])]


def pick(label: str) -> Answer:
    return Answer(answers=[AnswerItem(id="q1", selected=[label])])


async def test_M2_every_window_is_asked_at_once_and_the_first_valid_answer_wins(
    callback: bool,
) -> None:
    async with open_room() as room:
        _, first = room.client(callback=callback)
        _, second = room.client(callback=callback)
        _, plain = room.client(renders=False, callback=callback)
        asked = room.ask()
        await settle()
        assert len(first.cards) == len(second.cards) == 1
        assert plain.cards == [] and plain.fallbacks == []  # a renderer is there: no fallback
        second.card.answer(pick("No"))
        await asked.done.wait()
        assert asked.answer == pick("No")
        assert first.card.withdrawn  # M2: withdrawn from every other window
        first.card.answer(pick("Yes"))  # too late: the question is settled
        await settle()
        assert asked.answer == pick("No")


async def test_M2_V8_an_invalid_answer_drops_only_that_window(callback: bool) -> None:
    async with open_room() as room:
        (first, second), asked = await room.ask_windows(2, callback=callback)
        first.card.answer(Answer(answers=[AnswerItem(id="nope", selected=["Yes"])]))
        await settle()
        assert not asked.done.is_set()  # the other window may still answer
        second.card.answer(pick("Yes"))
        await asked.done.wait()
        assert asked.answer == pick("Yes")


async def test_A7_V8_the_answer_is_checked_against_the_questions(callback: bool) -> None:
    """V8 applies to the answer a window returns; the call id names the batch."""
    async with open_room() as room:
        _, window = room.client(callback=callback)
        named = room.ask(wait=Wait(call_id="c5"))
        unnamed = room.ask()
        await settle()
        for card in window.cards:
            card.answer(Answer(answers=[AnswerItem(id="other")]))
        await settle()
        named.failed(
            ErrorCode.BAD_ANSWER,
            "the answer batch for c5 must name each of its 1 questions exactly once",
        )
        unnamed.failed(
            ErrorCode.BAD_ANSWER, "the answer batch must name each of its 1 questions exactly once"
        )


async def test_TW9_V8_a_timed_answer_is_checked_with_the_call_id(callback: bool) -> None:
    async with open_room() as room:
        (window,), asked = await room.ask_windows(1, callback=callback, timeout_ms=1000)
        window.card.answer(Answer(answers=[]))
        await asked.done.wait()
        asked.failed(
            ErrorCode.BAD_ANSWER,
            "the answer batch for c1 must name each of its 1 questions exactly once",
        )
        assert room.service.find_wait(room.root.id, "c1") is None


async def test_M2_a_dismissal_in_one_window_ends_the_question_everywhere(callback: bool) -> None:
    async with open_room() as room:
        (first, second), asked = await room.ask_windows(2, callback=callback)
        first.card.fail(UserQuestionError.of(ErrorCode.ASK_CANCELLED))
        await asked.done.wait()
        asked.failed(ErrorCode.ASK_CANCELLED)
        assert second.card.withdrawn


async def test_M2_when_every_window_failed_the_last_failure_is_the_outcome(callback: bool) -> None:
    async with open_room() as room:
        (first, second), asked = await room.ask_windows(2, callback=callback)
        first.card.fail(RuntimeError("first broke"))
        await settle()
        assert not asked.done.is_set()
        second.card.fail(RuntimeError("second broke"))
        await asked.done.wait()
        asked.failed(ErrorCode.PROVIDER_ERROR, "second broke")


async def test_M2_with_no_window_the_fallback_of_the_turns_requester_asks(callback: bool) -> None:
    async with open_room() as room:
        _, follower = room.client(renders=False, callback=callback)
        prompter, prompting = room.client(renders=False, callback=callback)
        room.requesters[SESSION] = prompter
        prompting.fallback_answer = pick("Yes")
        asked = room.ask()
        await asked.done.wait()
        assert asked.answer == pick("Yes")
        assert len(prompting.fallbacks) == 1 and follower.fallbacks == []


async def test_M2_outside_a_turn_the_first_followers_fallback_asks(callback: bool) -> None:
    async with open_room() as room:
        _, first = room.client(renders=False, callback=callback)
        _, second = room.client(renders=False, callback=callback)
        first.fallback_answer = pick("No")
        asked = room.ask()
        await asked.done.wait()
        assert asked.answer == pick("No")
        assert len(first.fallbacks) == 1 and second.fallbacks == []


async def test_M2_W_a_session_the_host_does_not_hold_goes_down_the_waterfall(
    callback: bool,
) -> None:
    async with open_room() as room:
        room.roots.clear()  # e.g. a delegated child: not a root session (P6)
        _, window = room.client(callback=callback)
        asked = room.ask()
        await asked.done.wait()
        asked.failed(ErrorCode.NO_PROVIDER)
        assert window.cards == []


async def test_M3_a_window_that_attaches_later_gets_the_open_question(callback: bool) -> None:
    async with open_room() as room:
        _, first = room.client(callback=callback)
        asked = room.ask()
        await settle()
        late, later = room.client(callback=callback)
        room.follow(late)  # following twice shows it once
        elsewhere = FakeLink(callback=callback)
        room.follow(Client(elsewhere, {}), "s-other")
        await settle()
        assert len(later.cards) == 1
        assert elsewhere.cards == []  # it follows another session
        later.card.answer(pick("No"))
        await asked.done.wait()
        assert asked.answer == pick("No")
        assert first.card.withdrawn


async def test_M3_TW8_a_timed_question_nobody_can_show_waits_for_a_later_window(
    callback: bool,
) -> None:
    async with open_room() as room:
        asked = room.ask(timeout_ms=30_000)
        await settle()
        room.clock.advance(10_000)
        await settle()
        assert not asked.done.is_set()  # pending only at its deadline (TW8)
        _, window = room.client(callback=callback)
        await settle()
        window.card.answer(pick("Yes"))
        await asked.done.wait()
        assert asked.answer == pick("Yes")


async def test_M3_a_departed_window_drops_out_silently_and_the_question_waits(
    callback: bool,
) -> None:
    async with open_room() as room:
        gone, leaving = room.client(callback=callback)
        asked = room.ask()
        await settle()
        room.detach(gone)
        leaving.card.fail(ClientGone("the client has shut down"))
        await settle()
        assert not asked.done.is_set()  # no failure: another window may still come
        _, window = room.client(callback=callback)
        await settle()
        window.card.answer(pick("No"))
        await asked.done.wait()
        assert asked.answer == pick("No")


async def test_M7_a_stalled_window_does_not_hold_up_the_others(callback: bool) -> None:
    async with open_room() as room:
        _, stalled = room.client(callback=callback)
        _, window = room.client(callback=callback)
        first = room.ask(question("q1"), timeout_ms=60_000, call_id="c1")
        second = room.ask(question("q1"), timeout_ms=60_000, call_id="c2")
        await settle()
        assert len(stalled.cards) == len(window.cards) == 2  # the stalled one never answers
        for card in window.cards:
            card.answer(pick("Yes"))
        await first.done.wait()
        await second.done.wait()
        assert first.answer == second.answer == pick("Yes")
        assert room.clock.now() == 0  # answered without any time passing
        assert all(card.withdrawn for card in stalled.cards)
