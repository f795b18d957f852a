"""Golden transcripts (protocol/transcripts/*.json) replayed against the real server.

Each transcript names the rules it shows (`rules`); its test id is the file name.
The matcher itself is tested too: strict about order within a stream, content,
placeholders and leftovers, and indifferent to how streams interleave.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from askbridge.testing.transcript import (
    Transcript,
    TranscriptMatcher,
    TranscriptMismatch,
    replay,
)

pytestmark = pytest.mark.timeout(60)

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "protocol" / "transcripts"
FILES = sorted(TRANSCRIPTS.glob("*.json"))
REQUIRED = {
    "blocking-ask",
    "multi-select-custom",
    "timed-claim",
    "pending-late-reply",
    "session-cancel-during-ask",
    "generic-client-fallback",
}


def test_the_required_transcripts_exist_and_name_their_rules() -> None:
    assert REQUIRED <= {f.stem for f in FILES}
    for path in FILES:
        raw = json.loads(path.read_text())
        assert raw["title"] and raw["rules"], path.name
        assert {m["from"] for m in raw["messages"]} == {"client", "server"}


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
async def test_transcript_replays_against_the_server(path: Path, tmp_path: Path) -> None:
    """Every server message arrives as the transcript says (rules: the file's `rules`)."""
    bindings = await replay(Transcript.load(path), tmp_path / "data")
    sid = bindings.values.get("$sessionId")
    assert sid is None or sid.startswith("s-")


def altered(path: Path, change: Any) -> Transcript:
    raw = json.loads(path.read_text())
    change(raw["messages"])
    return Transcript.from_json(copy.deepcopy(raw), path)


def server_index(messages: list[dict[str, Any]], predicate: Any) -> int:
    return next(
        i for i, m in enumerate(messages) if m["from"] == "server" and predicate(m["message"])
    )


async def test_a_wrong_expected_value_fails_the_replay(tmp_path: Path) -> None:
    """The matcher is strict: one changed label in an expected message is a mismatch."""

    def change(messages: list[dict[str, Any]]) -> None:
        i = server_index(messages, lambda m: m.get("method") == "userQuestions/ask")
        messages[i]["message"]["params"]["questions"][0]["options"][1]["label"] = "MySQL"

    with pytest.raises(TranscriptMismatch, match="unexpected server message"):
        await replay(
            altered(TRANSCRIPTS / "blocking-ask.json", change), tmp_path / "data", timeout=5
        )


async def test_a_missing_expected_message_fails_the_replay(tmp_path: Path) -> None:
    """A server message the transcript does not list is a mismatch, even at the very end."""

    def change(messages: list[dict[str, Any]]) -> None:
        i = server_index(
            messages,
            lambda m: m.get("params", {}).get("update", {}).get("sessionUpdate") == "turn_ended",
        )
        del messages[i]

    with pytest.raises(TranscriptMismatch):
        await replay(
            altered(TRANSCRIPTS / "blocking-ask.json", change), tmp_path / "data", timeout=5
        )


# -- the matcher without a server -------------------------------------------------------


def note(method: str, sid: str, **update: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": {"sessionId": sid, **update}}


def transcript(*server: dict[str, Any]) -> Transcript:
    return Transcript.from_json({"messages": [{"from": "server", "message": m} for m in server]})


def test_streams_may_interleave_but_each_keeps_its_order() -> None:
    a1 = note("session/update", "$s", update={"n": 1})
    a2 = note("session/update", "$s", update={"n": 2})
    b1 = note("userQuestions/didChange", "$s", view={"v": 1})
    reply = {"jsonrpc": "2.0", "id": 3, "result": {"ok": True}}
    matcher = TranscriptMatcher(transcript(a1, a2, b1, reply))
    for actual in (
        {"jsonrpc": "2.0", "id": 3, "result": {"ok": True}},
        note("userQuestions/didChange", "s-1", view={"v": 1}),
        note("session/update", "s-1", update={"n": 1}),
        note("session/update", "s-1", update={"n": 2}),
    ):
        matcher.feed(actual)
    assert matcher.unmatched_before(4) == [] and matcher.bindings.values == {"$s": "s-1"}

    out_of_order = TranscriptMatcher(transcript(a1, a2))
    with pytest.raises(TranscriptMismatch):
        out_of_order.feed(note("session/update", "s-1", update={"n": 2}))


def test_placeholders_bind_once_and_wildcards_match_anything() -> None:
    matcher = TranscriptMatcher(
        transcript(
            {
                "jsonrpc": "2.0",
                "id": "$ask",
                "method": "userQuestions/ask",
                "params": {"agentId": "$a", "n": "$*"},
            },
            {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "$ask"}},
        )
    )
    matcher.feed(
        {
            "jsonrpc": "2.0",
            "id": "ab-1",
            "method": "userQuestions/ask",
            "params": {"agentId": "a-1", "n": [1]},
        }
    )
    with pytest.raises(TranscriptMismatch):  # a different id than the one bound
        matcher.feed({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "ab-2"}})
    matcher.feed({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "ab-1"}})
    reply = matcher.client_message(
        transcript_step({"jsonrpc": "2.0", "id": "$ask", "result": "$$literal"})
    )
    assert reply == {"jsonrpc": "2.0", "id": "ab-1", "result": "$literal"}


def test_extra_keys_and_json_types_are_not_glossed_over() -> None:
    matcher = TranscriptMatcher(transcript({"jsonrpc": "2.0", "id": 1, "result": True}))
    with pytest.raises(TranscriptMismatch):
        matcher.feed({"jsonrpc": "2.0", "id": 1, "result": 1})
    with pytest.raises(TranscriptMismatch):
        matcher.feed({"jsonrpc": "2.0", "id": 1, "result": True, "extra": None})
    matcher.feed({"jsonrpc": "2.0", "id": 1, "result": True})


def transcript_step(message: dict[str, Any]) -> Any:
    return Transcript.from_json({"messages": [{"from": "client", "message": message}]}).steps[0]
