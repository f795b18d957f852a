"""Timed questions across windows (behavior.md M4, TW5–TW7, A9), in-process: claims per client,
deadlines on a ManualClock, and what each ending withdraws (tests/unit/asking_helpers.py)."""

from __future__ import annotations

import pytest
from asking_helpers import SESSION, open_room
from core_helpers import settle

from askbridge.core import AbortSignal, UserQuestionError
from askbridge.protocol import ErrorCode, PendingResult, WaitFrame

pytestmark = [pytest.mark.timeout(20), pytest.mark.parametrize("callback", [False, True])]

TIMEOUT_MS = 10_000


async def test_M4_C5_the_deadline_holds_while_any_window_claims_it(callback: bool) -> None:
    async with open_room() as room:
        first_client, first = room.client(callback=callback)
        second_client, second = room.client(callback=callback)
        asked = room.ask(timeout_ms=TIMEOUT_MS)
        await settle()
        # Each window claims with its own connection as the claimant (M4).
        first_claim = room.service.attach_wait(room.root, "c1", first_client.gone)
        second_claim = room.service.attach_wait(room.root, "c1", second_client.gone)
        assert await anext(first_claim) == WaitFrame(remaining_ms=TIMEOUT_MS)
        assert await anext(second_claim) == WaitFrame(remaining_ms=TIMEOUT_MS)
        room.clock.advance(3 * TIMEOUT_MS)
        await settle()
        assert not asked.done.is_set()
        room.detach(first_client)  # its claims end with its connection (M4, C4)
        room.clock.advance(1)
        await settle()
        assert not asked.done.is_set()  # the other window still holds the deadline (C5)
        second_claim.release()
        room.clock.advance(0)  # TW5: re-armed for max(0, deadline - now): due at once
        await asked.done.wait()
        assert asked.result == PendingResult(call_id="c1")
        assert first.card.withdrawn and second.card.withdrawn


async def test_M4_a_claim_by_a_window_that_already_left_holds_nothing(callback: bool) -> None:
    async with open_room() as room:
        gone, _ = room.client(callback=callback)
        asked = room.ask(timeout_ms=TIMEOUT_MS)
        await settle()
        room.detach(gone)
        stream = room.service.attach_wait(room.root, "c1", gone.gone)
        assert [frame async for frame in stream] == []  # C1: the claimant is gone
        room.clock.advance(TIMEOUT_MS)
        await asked.done.wait()
        assert asked.result == PendingResult(call_id="c1")


async def test_TW6_an_unclaimed_deadline_is_pending_and_withdraws_every_window(
    callback: bool,
) -> None:
    async with open_room() as room:
        (first, second), asked = await room.ask_windows(2, callback=callback, timeout_ms=TIMEOUT_MS)
        room.clock.advance(TIMEOUT_MS - 1)
        await settle()
        assert not asked.done.is_set()
        room.clock.advance(1)
        await asked.done.wait()
        assert asked.result == PendingResult(call_id="c1")
        assert first.card.withdrawn and second.card.withdrawn


async def test_TW7_a_windows_countdown_running_out_makes_it_pending_everywhere(
    callback: bool,
) -> None:
    async with open_room() as room:
        (first, second), asked = await room.ask_windows(2, callback=callback, timeout_ms=TIMEOUT_MS)
        first.card.fail(UserQuestionError.of(ErrorCode.ASK_TIMED_OUT))
        await asked.done.wait()
        assert asked.result == PendingResult(call_id="c1")
        assert second.card.withdrawn


@pytest.mark.parametrize("by", ["the turn", "session/cancel"])
async def test_A9_cancelling_withdraws_every_window(callback: bool, by: str) -> None:
    async with open_room() as room:
        _, first = room.client(callback=callback)
        _, second = room.client(callback=callback)
        turn = AbortSignal()
        asked = room.ask(timeout_ms=TIMEOUT_MS, signal=turn)
        await settle()
        if by == "the turn":
            turn.abort("cancelled")
        else:
            room.fanout.abort(SESSION)  # Session.cancel: every open question of the session
        await asked.done.wait()
        asked.failed(ErrorCode.ASK_ABORTED)
        assert first.card.withdrawn and second.card.withdrawn
