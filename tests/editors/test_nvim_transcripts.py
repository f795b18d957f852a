"""The golden transcripts (protocol/transcripts) replayed against the Neovim plugin.

Each test starts a headless Neovim with the plugin (as tests/editors/test_nvim.py
does) whose server command is tests/editors/transcript_player.py: the player
plays the transcript's server side over the plugin's real stdio transport and
checks every message the plugin sends against the transcript's client messages
(exactly for the question handler's replies and requests; see the player's
docstring for the rules and the one allowed extra, a claim release). A Lua
scenario (tests/editors/nvim/transcript_*.lua) is the user: it answers the
pickers with what the transcript's recorded answer says, and runs the session
commands the transcript's client sent. No askbridge server runs.

Transcripts not replayed here, by design:
- generic-client-fallback.json: the plugin declares
  `experimental.userQuestions`, so a server never falls back to
  `window/showMessageRequest` for it (W1 is the server's path for clients
  without the capability).
- errors.json: the plugin plays no part in it that its handlers could
  reproduce: every client message is a request a user never makes that way
  (unknown session, an unknown method, invalid settings, an answer without
  `answer`), and every server message is an error reply.
- pending-late-reply.json is replayed without its ask exchange
  (`--omit-asks`): the recorded client replied ASK_TIMED_OUT without ever
  claiming the wait, while the plugin claims every timed wait and only times
  out from the claim's countdown (C3/TW7). The late reply that follows is
  the plugin's own and is checked.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from test_nvim import REPO, VIM_LOG_ERROR, VIM_LOG_WARN, run_nvim

TRANSCRIPTS = REPO / "protocol" / "transcripts"
PLAYER = Path(__file__).with_name("transcript_player.py")
NOT_A_PLUGIN_EXCHANGE = {"generic-client-fallback.json", "errors.json"}
REPLAYED = {
    "blocking-ask.json",
    "multi-select-custom.json",
    "session-cancel-during-ask.json",
    "timed-claim.json",
    "pending-late-reply.json",
}


def replay(
    tmp_path: Path,
    transcript: str | Path,
    scenario: str,
    omit_asks: bool = False,
    builtin_picker: bool = False,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Runs `scenario` against the player of `transcript` (a golden transcript's
    name, or a path); returns (scenario record, report)."""
    report_path = tmp_path / "report.json"
    player = [
        sys.executable,
        str(PLAYER),
        str(TRANSCRIPTS / transcript if isinstance(transcript, str) else transcript),
        "--report",
        str(report_path),
    ]
    if omit_asks:
        player.append("--omit-asks")
    try:
        result = run_nvim(tmp_path, scenario, player, tmp_path / "data", None, builtin_picker)
    except AssertionError as exc:
        if not report_path.exists():
            raise
        problem = json.loads(report_path.read_text())["problem"]
        raise AssertionError(f"transcript player: {problem}\n\nNeovim: {exc}") from None
    assert report_path.exists(), f"the player wrote no report; Neovim recorded {result}"
    report: dict[str, Any] = json.loads(report_path.read_text())
    assert report["ok"], report["problem"]
    errors = [note for note in result["notes"] if note["level"] == VIM_LOG_ERROR]
    assert errors == [], errors
    assert result["server_exit_code"] == 0, result
    assert result["pending_selects"] == 0 and result["pending_inputs"] == 0, result
    return result, report


def sent(report: dict[str, Any], method: str) -> list[dict[str, Any]]:
    return [e["message"] for e in report["exchange"] if e["message"].get("method") == method]


def test_every_transcript_is_replayed_or_left_out_by_design() -> None:
    """A new transcript needs a decision here (and a test)."""
    on_disk = {p.name for p in TRANSCRIPTS.glob("*.json")}
    assert on_disk == REPLAYED | NOT_A_PLUGIN_EXCHANGE


def test_blocking_ask_transcript_A7_T3_V8(tmp_path: Path) -> None:
    """blocking-ask.json: the plugin's reply to the blocking ask is the recorded Answer."""
    result, report = replay(tmp_path, "blocking-ask.json", "transcript_blocking.lua")
    assert result["stop_reason"] == "end_turn"
    assert result["prompts"][0]["prompt"] == "[Setup] Which database?"
    assert sent(report, "userQuestions/attachWait") == []  # V5: no wait, no claim
    assert report["extras"] == []


def test_multi_select_custom_transcript_V2_V4_V8(tmp_path: Path) -> None:
    """multi-select-custom.json: labels plus custom text, and `selected: []` with
    custom text for the question without options (V4), exactly as recorded."""
    result, report = replay(tmp_path, "multi-select-custom.json", "transcript_multi.lua")
    assert result["stop_reason"] == "end_turn"
    assert [p["ui"] for p in result["prompts"]] == ["select"] * 3 + ["input", "select", "input"]
    assert report["extras"] == []


def test_session_cancel_during_ask_transcript_A9(tmp_path: Path) -> None:
    """session-cancel-during-ask.json: `$/cancelRequest` closes the card, the
    plugin replies -32800, and the picker's late choice sends nothing more."""
    result, report = replay(tmp_path, "session-cancel-during-ask.json", "transcript_cancel.lua")
    closed = [e for e in result["events"] if e["name"] == "AskbridgePromptClosed"]
    assert [e["data"]["reason"] for e in closed] == ["server_cancelled"]
    assert result["stop_reason"] == "cancelled"
    replies = [e["message"] for e in report["exchange"] if e["message"].get("id") == 101]
    assert [r.get("error", {}).get("code") for r in replies if "method" not in r] == [-32800]


def test_session_cancel_during_ask_with_the_blocking_picker_A9_L7(tmp_path: Path) -> None:
    """session-cancel-during-ask.json with the builtin picker, which cannot be
    closed: the plugin replies -32800 and nothing else, also after the user picks
    an option (a blocking ask cannot be answered late), and tells the user."""
    result, report = replay(
        tmp_path,
        "session-cancel-during-ask.json",
        "transcript_cancel_blocking.lua",
        builtin_picker=True,
    )
    assert result["stop_reason"] == "cancelled"
    closed = [e for e in result["events"] if e["name"] == "AskbridgePromptClosed"]
    assert [e["data"]["reason"] for e in closed] == ["server_cancelled"]
    replies = [e["message"] for e in report["exchange"] if e["message"].get("id") == 101]
    assert [r.get("error", {}).get("code") for r in replies if "method" not in r] == [-32800]
    assert report["extras"] == []
    notes = [n["msg"] for n in result["notes"]]
    assert any("was withdrawn before you answered: your answer was not sent" in m for m in notes)


def test_timed_claim_transcript_TW4_C3_P2(tmp_path: Path) -> None:
    """timed-claim.json: the plugin claims the wait with the recorded attachWait
    params, counts down from the one `$/progress` frame, replies the recorded
    Answer; releasing the claim afterwards (C4) is the one allowed extra."""
    result, report = replay(tmp_path, "timed-claim.json", "transcript_timed_claim.lua")
    assert result["stop_reason"] == "end_turn"
    (card,) = result["prompts"]
    assert card["seconds_left"] == 60  # the player's frame: remainingMs 60000
    assert card["prompt"] == "[Setup] Which database? (60s left)"
    (claim,) = sent(report, "userQuestions/attachWait")
    assert all(e["method"] == "$/cancelRequest" for e in report["extras"])
    assert [e["params"]["id"] for e in report["extras"]] in ([], [claim["id"]])


def test_pending_late_reply_transcript_L1_L4_V7(tmp_path: Path) -> None:
    """pending-late-reply.json without its ask exchange: the continued question
    from userQuestions/didChange is answered late with the recorded
    `userQuestions/answer` params (L4), then `userQuestions/list` (V7)."""
    result, report = replay(
        tmp_path, "pending-late-reply.json", "transcript_late.lua", omit_asks=True
    )
    assert result["stop_reason"] == "end_turn"
    assert [(e["session_id"], e["call_id"]) for e in result["continued"]] == [
        ("sessionId-replayed", "call-1")
    ]
    assert result["answered"]["accepted"] is True
    assert result["continued_after"] == []
    assert sent(report, "userQuestions/ask") == []
    assert report["extras"] == []


# Hand-written exchanges (tests/editors/nvim/transcripts/): what no recorded
# transcript holds yet — intents (script models cannot produce them; the lead
# adds an end-to-end test through `askbridge mcp`) and refused late replies.
HAND_WRITTEN = Path(__file__).with_name("nvim") / "transcripts"


def test_approval_card_offers_exactly_allow_always_deny_V3(tmp_path: Path) -> None:
    """An `approval` intent is an approval card: subject name and question, the
    detail (the command, markdown) in the prompt, and exactly approve / always /
    reject — no Other, no Skip; without `always`, only Allow / Deny. The answer is
    the chosen label; dismissing is ASK_CANCELLED (the player checks both)."""
    result, report = replay(tmp_path, HAND_WRITTEN / "approval.json", "transcript_approval.lua")
    first, second = result["prompts"]
    assert first["kind"] == second["kind"] == "askbridge.approval"
    assert first["prompt"] == (
        "[Permission] Bash: Allow this call?\n\n```sh\nrm -rf build && make\n```\n"
    )
    assert first["items"] == ["Allow", "Always allow", "Deny"]
    assert first["item_kinds"] == ["option"] * 3
    assert second["prompt"].startswith("Edit: Allow this call?\n\n`src/app.py`")
    assert second["items"] == ["Allow", "Deny"]
    assert report["extras"] == []


def test_plan_review_card_approve_other_options_and_feedback_V3_V4(tmp_path: Path) -> None:
    """A `plan-review` intent shows the plan (markdown) in the prompt and offers the
    `approve` label first, then the other option(s), then free-text feedback, which
    is sent as `custom` with `selected: []` (V4); no Skip."""
    result, report = replay(
        tmp_path, HAND_WRITTEN / "plan-review.json", "transcript_plan_review.lua"
    )
    first, feedback, second = result["prompts"]
    assert first["kind"] == "askbridge.plan_review"
    assert first["prompt"] == (
        "Approve this plan?\n\n# Plan\n\n1. Add a `users` table\n2. Migrate the data\n\n"
    )
    assert first["items"] == [
        "Approve plan",
        "Keep planning",
        "Give feedback… (type what to change)",
    ]
    assert feedback["ui"] == "input"
    assert second["items"] == first["items"]
    assert report["extras"] == []


def test_refused_late_replies_are_told_to_the_user_L1_L2(tmp_path: Path) -> None:
    """A late reply refused with REPLY_QUEUED, then with `false`: each is told to
    the user as a warning naming the call, never as an error."""
    result, report = replay(
        tmp_path, HAND_WRITTEN / "late-reply-refused.json", "transcript_late_refused.lua"
    )
    queued, refused = result["answered"]
    assert queued["accepted"] is False and queued["error"]["data"]["code"] == "REPLY_QUEUED"
    assert refused["accepted"] is False and refused.get("error") is None
    warnings = [n["msg"] for n in result["notes"] if n["level"] == VIM_LOG_WARN]
    assert warnings == [
        "askbridge: a reply to call-1 is already queued for the agent: yours was not sent",
        "askbridge: call-1 is no longer waiting for a reply (answered elsewhere or its turn"
        " ended): your answer was not sent",
    ]
    assert report["extras"] == []
