"""What the logs say (protocol.md "Command line"): at INFO, at start, what is
served — door, data dir, host pid, model kind and endpoint — and every model, store and tool
failure; at DEBUG every message's direction, method and id. Logs never go to stdout.

In `[inline]` the front door's stderr has them; in `[auto]` the host's log, `host.log`
(the front door's `--log-level` goes to the host it starts).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from e2e_scripts import script, text_step

from askbridge.testing.wire import RawServer
from lsp_steps import new_session, open_session, prompt_params

BROKEN = {"toolCalls": [{"id": "c1", "name": "no_such_tool", "arguments": {}}]}


async def test_INFO_says_what_is_served_and_every_failure(tmp_path: Path) -> None:
    data = tmp_path / "data"
    model = {
        "kind": "openai",
        "model": "m",
        "baseUrl": "http://127.0.0.1:9/v1",
        "apiKeyEnv": "K_KEY",
    }
    args = ("--model", json.dumps(script(BROKEN, text_step("done"))), "--log-level", "INFO")
    async with RawServer.start(data, *args, env={"K_KEY": "k"}) as server:
        sid = await open_session(server)
        ok = await server.call("session/prompt", prompt_params(sid))
        assert ok["result"] == {"stopReason": "end_turn"}
        dead = await new_session(server, {"model": model})
        failed = await server.call("session/prompt", prompt_params(dead), timeout=30)
        assert failed["error"]["data"]["code"] == "MODEL_ERROR"
        assert await server.shutdown_and_exit() == 0
        logs = server.logs()
    assert re.search(
        rf"INFO askbridge\.daemon: serving lsp \((inline|attached, pid \d+)\) for {re.escape(str(data))}, host pid \d+, model script",
        logs,
    ), logs
    assert (
        "cannot connect to model endpoint http://127.0.0.1:9/v1/chat/completions" in logs
    )  # the model failure
    assert "unknown tool no_such_tool" in logs  # the tool failure


async def test_DEBUG_logs_every_message_method_and_id(tmp_path: Path) -> None:
    async with RawServer.start(tmp_path / "data", "--log-level", "DEBUG") as server:
        await server.initialize()
        await server.call("session/list", {})
        await server.notify("no/suchNotification", {})
        assert await server.shutdown_and_exit() == 0
        await server.read_to_end()  # nothing but frames on stdout
        logs = server.logs()
    assert "← request initialize id=1" in logs and "← request session/list id=2" in logs
    assert "← notification no/suchNotification" in logs
