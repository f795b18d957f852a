"""S7: a model reply over 8 MiB ends its turn with MODEL_ERROR; nothing over 8 MiB is sent.

A real OpenAI-compatible endpoint on 127.0.0.1 answers, by model name, 9 MiB of
text, a tool call with 9 MiB of arguments, or "ok". Over the LSP door (both host
modes) and the ACP door, the huge turn's prompt fails with MODEL_ERROR naming the
size, the connection stays up, another session of the same client answers, and
`session/load` of the failed session replays no huge frame.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from askbridge.jsonrpc import RpcResponseError
from model_endpoint import ModelHandler, serving

pytestmark = pytest.mark.timeout(120)

HUGE = 9 * 1024 * 1024


def _reply(model: str) -> dict[str, Any]:
    if model == "huge-text":
        return {"role": "assistant", "content": "x" * HUGE}
    if model == "huge-args":
        call = {
            "id": "c1",
            "type": "function",
            "function": {"name": "delegate", "arguments": json.dumps({"prompt": "y" * HUGE})},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"role": "assistant", "content": "ok"}


def _body(model: str) -> dict[str, Any]:
    if model == "malformed":
        return {"choices": []}  # not a chat completion: a ModelError naming the endpoint
    return {"choices": [{"message": _reply(model)}]}


class _Completions(ModelHandler):
    def do_POST(self) -> None:
        request = json.loads(self.read_body())
        self.reply(json.dumps(_body(request["model"])).encode())


@pytest.fixture
def endpoint() -> Iterator[str]:
    with serving(_Completions) as url:
        yield f"{url}/v1"


def spec(endpoint: str, model: str) -> dict[str, Any]:
    return {"kind": "openai", "model": model, "baseUrl": endpoint, "apiKeyEnv": "ABK_KEY"}


@pytest.mark.parametrize("model", ["huge-text", "huge-args"])
async def test_S7_a_huge_model_reply_fails_its_turn_and_the_rest_goes_on(
    askbridge_client: Any, endpoint: str, model: str
) -> None:
    async with askbridge_client(env={"ABK_KEY": "k"}) as client:
        huge = await client.new_session(model=spec(endpoint, model))
        small = await client.new_session(model=spec(endpoint, "small"))
        with pytest.raises(RpcResponseError) as info:
            await client.prompt(huge, "go")
        assert info.value.data["code"] == "MODEL_ERROR", info.value.data
        assert "the model's reply has " in info.value.message
        assert info.value.message.endswith(" bytes; at most 8 MiB"), info.value.message
        n = int(info.value.message.split("has ")[1].split(" ")[0])
        assert n > HUGE
        # The connection and the other session go on; the failed one takes a new prompt.
        assert await client.prompt(small, "hi") == "end_turn"
        for update in client.updates():
            assert len(json.dumps(update)) < 8 * 1024 * 1024
        await client.load_session(huge)
        for update in client.updates():
            assert len(json.dumps(update)) < 8 * 1024 * 1024


@pytest.mark.parametrize("model", ["huge-text", "malformed"])
async def test_S4_a_failed_turn_is_told_once_on_turn_ended_not_as_agent_text(
    askbridge_client: Any, endpoint: str, model: str
) -> None:
    """Issue 18 item 7: a model failure reached the client twice, as the prompt's error and
    as an agent_message_chunk "Error: …" the model never said. Now the prompt's caller gets
    the error, and the turn's `turn_ended` carries it ({name, code, message}) for every
    other window and for a turn no prompt started."""
    async with askbridge_client(env={"ABK_KEY": "k"}) as client:
        sid = await client.new_session(model=spec(endpoint, model))
        with pytest.raises(RpcResponseError) as info:
            await client.prompt(sid, "go")
        expected = {"name": "ModelError", "code": "MODEL_ERROR", "message": info.value.message}
        (ended,) = await client.wait_for(lambda: client.updates(sid, "turn_ended"))
        assert ended["error"] == expected, ended
        assert client.updates(sid, "agent_message_chunk") == []


def test_S7_the_acp_door_fails_a_huge_reply_and_serves_another_session(
    tmp_path: Path, endpoint: str
) -> None:
    def new(i: int, model: str) -> dict[str, Any]:
        meta = {"askbridge": {"model": spec(endpoint, model)}}
        params = {"cwd": str(tmp_path), "mcpServers": [], "_meta": meta}
        return {"jsonrpc": "2.0", "id": i, "method": "session/new", "params": params}

    proc = subprocess.Popen(
        [sys.executable, "-m", "askbridge.cli", "acp", "--data-dir", str(tmp_path / "data")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "ABK_KEY": "k"},
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    def reply(i: int) -> dict[str, Any]:
        assert proc.stdout is not None
        while True:
            line = proc.stdout.readline()
            assert line, "the ACP door closed"
            assert len(line) <= 8 * 1024 * 1024
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == i and "method" not in message:
                return message

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        reply(1)
        send(new(2, "huge-text"))
        huge = reply(2)["result"]["sessionId"]
        send(new(3, "small"))
        small = reply(3)["result"]["sessionId"]
        prompt = [{"type": "text", "text": "go"}]
        send(
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "session/prompt",
                "params": {"sessionId": huge, "prompt": prompt},
            }
        )
        failed = reply(4)
        assert "the model's reply has " in json.dumps(failed), failed
        send(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "session/prompt",
                "params": {"sessionId": small, "prompt": prompt},
            }
        )
        assert reply(5)["result"]["stopReason"] == "end_turn"
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
