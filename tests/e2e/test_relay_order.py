"""M2 "relays first" (host/asking/fanout.py, protocol/README.md Lifecycle): a follower that
declares `userQuestions.relay` (the web door does) is asked before the windows.

A real `askbridge serve` (both host modes) with a window that owns the session and a
relay that attached after it: the S12 line names the clients in the order they were
asked, the relay first; both get the card, and the window's answer still wins (first
answer wins is unchanged).
"""

from __future__ import annotations

from pathlib import Path

from e2e_scripts import SQLITE, ask_step, script, text_step

from askbridge.testing import AskbridgeClient
from askbridge.testing.hosts import stop_host


async def test_M2_a_relay_is_asked_before_the_window_and_the_first_answer_wins(
    tmp_path: Path, host_mode: str
) -> None:
    data, log_file = tmp_path / "data", tmp_path / "serve.log"
    args = ["--log-file", str(log_file), "--log-level", "INFO"]
    try:
        async with (
            AskbridgeClient.connect(
                data_dir=data, model=script(ask_step(), text_step("done")), args=args
            ) as window,
            AskbridgeClient.connect(data_dir=data, host="auto", relays_questions=True) as relay,
        ):
            window.answer_with(lambda ask: SQLITE)
            relay.answer_with(None)  # shows the card, never answers
            session = await window.new_session()
            await relay.load_session(session)
            assert await window.prompt(session, "go") == "end_turn"
            assert len(window.asks) == len(relay.asks) == 1
    finally:
        stop_host(data)
    text = log_file.read_text() if log_file.exists() else ""
    host_log = data / "host.log"
    text += host_log.read_text() if host_log.exists() else ""
    assert "asked in session" in text
    assert "to 2 windows (clients 2, 1)" in text  # the relay (client 2) first
    assert "answered by client 1; withdrawn from 1 other card" in text
