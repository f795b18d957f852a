"""An ACP client and an LSP client on one session of one host (M1, M2).

The ACP client (here one without question rendering, like Zed today) starts
the turn; the LSP window following the session renders the question and its
answer becomes the tool result the ACP client sees.
"""

from __future__ import annotations

import json
from pathlib import Path

from acp import text_block
from acp_harness import (
    RecordingClient,
    ask_step,
    open_session,
    question,
    script,
    start_agent,
)

from askbridge.testing import AskbridgeClient

DB = question("db", "SQLite", "Postgres")
SQLITE = {"answers": [{"id": "db", "selected": ["SQLite"]}]}


async def test_M1_M2_an_acp_client_and_an_lsp_client_on_one_session(tmp_path: Path) -> None:
    """The ACP client starts the turn; the LSP window, following the session, answers."""
    data = tmp_path / "data"
    model = script(ask_step("call-1", DB), {"text": "done"})
    acp_client = RecordingClient()
    async with start_agent(acp_client, data, model=model) as (conn, _proc):
        sid = await open_session(conn, tmp_path)
        async with AskbridgeClient.connect(data_dir=data, host="auto") as lsp:
            lsp.answer_with(lambda ask: SQLITE)
            await lsp.load_session(sid)
            stop = await conn.prompt(session_id=sid, prompt=[text_block("go")])
            assert stop.stop_reason == "end_turn"
            assert lsp.asks and lsp.asks[0]["sessionId"] == sid
        result = acp_client.tool_result("call-1")
        assert result is not None and json.loads(result["content"][0]["content"]["text"]) == SQLITE
