"""The golden MCP transcript replays against the real doors of one host (X1–X4, M2, L4, L6).

protocol/transcripts/multi-client/mcp-ask-answered-in-editor.json is the contract an
editor's tests and the lead's two-process mode (`--host auto`) hold to; here
it is replayed in one process (bench.py) on the system clock (its second ask
waits 1 s for real).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench import bench
from mcp_transcript import NAME, OUT, replay

from askbridge.testing.transcript import TranscriptMismatch


async def test_X1_X2_X4_M2_the_mcp_transcript_replays(tmp_path: Path) -> None:
    doc = json.loads((OUT / NAME).read_text(encoding="utf-8"))
    async with bench(tmp_path, real_time=True) as b:
        await replay(doc, b)


async def test_the_replayer_fails_on_a_different_answer(tmp_path: Path) -> None:
    """A replay that cannot fail checks nothing: change one expected text and it must."""
    doc = json.loads((OUT / NAME).read_text(encoding="utf-8"))
    for step in doc["messages"]:
        result = step["message"].get("result")
        if step["door"] == "agent" and isinstance(result, dict) and "structuredContent" in result:
            result["structuredContent"] = {"answers": [{"id": "db", "selected": ["Postgres"]}]}
            break
    async with bench(tmp_path, real_time=True) as b:
        with pytest.raises(TranscriptMismatch):
            await replay(doc, b)
