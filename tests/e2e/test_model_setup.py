"""Which model a session runs with, as a client sees it.

- A script with a key it does not know — a typo in a step, or `multiSelect` in
  the arguments of an `ask_user_question` call — is refused by `session/new`
  (-32602, the key and its path named, no session created), over both doors; the
  same script spelled right works, and its values are still the tool's to judge (T4).
- Without any model the agent says so as agent text, logs a warning, ends the
  turn normally, and the session header records `{"kind": "none"}`: what it ran with.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_scripts import ask_step, script, stored_events, text_step, tool_text

from askbridge.jsonrpc import RpcResponseError
from askbridge.testing.wire import RawServer
from lsp_steps import open_session, prompt_params

pytestmark = pytest.mark.timeout(60)

TYPO_QUESTION = {"id": "db", "question": "Which?", "options": [{"label": "a"}], "multiSelect": True}
TYPO_PATH = "steps[0].toolCalls[0].arguments.questions[0]: unknown key 'multiSelect'"


@pytest.mark.parametrize(
    ("steps", "said"),
    [
        ([{"txt": "hello"}], "steps[0]: unknown key 'txt'; expected text, toolCalls"),
        ([ask_step(questions=[TYPO_QUESTION])], TYPO_PATH + " (did you mean 'multi_select'?)"),
        (
            [
                {
                    "toolCalls": [
                        {
                            "id": "d",
                            "name": "delegate",
                            "arguments": {"prompt": "p", "steps": [{"tex": "x"}]},
                        }
                    ]
                }
            ],
            "steps[0].toolCalls[0].arguments.steps[0]: unknown key 'tex'",
        ),
    ],
)
async def test_session_new_refuses_a_script_with_an_unknown_key(
    askbridge_client: Any, steps: list[dict[str, Any]], said: str
) -> None:
    async with askbridge_client() as client:
        with pytest.raises(RpcResponseError) as info:
            await client.request("session/new", {"model": script(*steps)})
        assert info.value.code == -32602
        [error] = info.value.data["errors"]
        assert said in error["message"]
        assert await client.list_sessions() == []


async def test_the_same_script_spelled_right_runs_and_bad_values_stay_the_tools(
    askbridge_client: Any,
) -> None:
    """Only keys are checked at build time: a bad timeout value reaches the tool (T4)."""
    right = {**TYPO_QUESTION, "multi_select": True}
    del right["multiSelect"]
    model = script(ask_step(questions=[right], timeout=0), text_step("ok"))
    async with askbridge_client(model=model, ask_mode="timed") as client:
        sid = await client.new_session()
        assert await client.prompt(sid, "go") == "end_turn"
        [result] = client.updates(sid, "tool_call_update")
        assert (
            tool_text(result)
            == "Error: timeout must be -1 or a positive integer up to 2147483 seconds"
        )


def test_acp_session_new_refuses_a_script_with_an_unknown_key(tmp_path: Path) -> None:
    meta = {"askbridge": {"model": script(ask_step(questions=[TYPO_QUESTION]))}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": str(tmp_path), "mcpServers": [], "_meta": meta},
        },
    ]
    done = subprocess.run(
        [sys.executable, "-m", "askbridge.cli", "acp", "--data-dir", str(tmp_path / "data")],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=30,
    )
    [reply] = [m for m in map(json.loads, done.stdout.splitlines()) if m.get("id") == 2]
    assert reply["error"]["code"] == -32602
    assert TYPO_PATH in json.dumps(reply["error"])


async def test_without_a_model_the_agent_says_so_and_the_header_says_none(tmp_path: Path) -> None:
    async with RawServer.start(tmp_path / "data") as server:
        sid = await open_session(server)
        params = prompt_params(sid, "hello?")
        assert (await server.call("session/prompt", params))["result"]["stopReason"] == "end_turn"
        texts = [
            m["params"]["update"]["content"]["text"]
            for m in server.received
            if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        ]
        assert len(texts) == 1 and texts[0].startswith(
            "askbridge has no model configured; pass --model"
        )
        assert await server.shutdown_and_exit() == 0
        assert (
            f"WARNING askbridge.host.models: session {sid} has no model configured" in server.logs()
        )
    [header] = [
        e for e in await stored_events(tmp_path / "data", sid) if e["type"] == "session/header"
    ]
    assert header["model"] == {"kind": "none"}


SERVE = [sys.executable, "-m", "askbridge.cli", "serve"]
OPENAI_TYPO = "openai model spec: unknown key 'apikeyenv' (did you mean 'apiKeyEnv'?)"
OPENAI_ACCEPTED = "expected kind, model, baseUrl, apiKeyEnv, timeoutS"


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ({"kind": "openai", "model": "m", "apikeyenv": "K"}, OPENAI_TYPO),
        ({"kind": "openai", "model": "m", "temperature": 1}, "unknown key 'temperature'"),
        (
            {"kind": "openai", "model": "m", "baseUrl": "ftp://h/v1"},
            "baseUrl 'ftp://h/v1' must be an http:// or https:// URL",
        ),
    ],
)
async def test_S11_session_new_refuses_an_openai_spec_with_an_unknown_key_or_a_bad_url(
    askbridge_client: Any, spec: dict[str, Any], said: str
) -> None:
    async with askbridge_client() as client:
        with pytest.raises(RpcResponseError) as info:
            await client.request("session/new", {"model": spec})
        assert info.value.code == -32602
        assert said in json.dumps(info.value.data)
        if "unknown key" in said:
            assert OPENAI_ACCEPTED in json.dumps(info.value.data)
        assert await client.list_sessions() == []


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ('{"kind": "openai", "model": "m", "apikeyenv": "K"}', f"{OPENAI_TYPO}; {OPENAI_ACCEPTED}"),
        (
            '{"kind": "openai", "model": "m", "baseUrl": "ftp://h"}',
            "must be an http:// or https://",
        ),
        (
            '{"kind": "script", "steps": [], "stepz": 1}',
            "unknown key 'stepz'; expected kind, steps",
        ),
    ],
)
def test_S11_the_command_line_refuses_every_kind_of_bad_model_spec(
    tmp_path: Path, spec: str, said: str
) -> None:
    done = subprocess.run(
        [*SERVE, "--data-dir", str(tmp_path / "d"), "--model", spec],
        input="",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2, done
    assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
