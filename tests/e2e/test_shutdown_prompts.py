"""S9: a `session/prompt` still running when `shutdown` arrives is answered — its turn
ends `cancelled` — before shutdown's own result, in both host modes. A client that
waits for every reply before `exit` is not left with a request that never ends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e_scripts import ask_step, script, text_step

from askbridge.testing.wire import RawServer
from lsp_steps import until_ask

pytestmark = pytest.mark.timeout(60)


async def test_S9_a_running_prompt_is_answered_before_shutdown(tmp_path: Path) -> None:
    model = script(ask_step(), text_step("after"))
    async with RawServer.start(tmp_path / "data", "--model", json.dumps(model)) as server:
        _sid, prompt_id, ask = await until_ask(server)
        shutdown_id = await server.request("shutdown")
        shutdown = await server.response(shutdown_id)
        assert shutdown["result"] is None
        order = [msg.get("id") for msg in server.received if "method" not in msg]
        assert prompt_id in order, "the prompt was never answered"
        assert order.index(prompt_id) < order.index(shutdown_id)
        [prompt] = [m for m in server.received if m.get("id") == prompt_id and "method" not in m]
        assert prompt["result"] == {"stopReason": "cancelled"}, prompt
        await server.respond_error(ask["id"], -32800, "Request cancelled")
        await server.notify("exit")
        assert await server.wait() == 0
