"""S18 over the real process: a hostile model endpoint on 127.0.0.1.

- A reply of 256 MiB (sized, chunked, close-delimited, or under a `Content-Length`
  that lies) ends its turn with MODEL_ERROR, and the host's peak memory grows by a
  small part of it: the reply is bounded while it is read, never after.
- A reply dripped a byte at a time ends its turn at `timeoutS`.
- `--model` with user information in `baseUrl`, or an `apiKeyEnv` not named as a key,
  is refused with one line; a query string in `baseUrl` stays out of the logs and of
  the error the client gets.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_scripts import script, text_step

from askbridge.jsonrpc import RpcResponseError
from askbridge.testing.hosts import host_pid
from askbridge.testing.wire import RawServer
from lsp_steps import new_session, open_session, prompt_params
from model_endpoint import OK, ModelHandler, serving

pytestmark = pytest.mark.timeout(180)

MIB = 1024 * 1024
HUGE = 256 * MIB
KEY = {"ABK_KEY": "k"}


class _Hostile(ModelHandler):
    """Answers by model name; the huge bodies are made as they are sent, never held."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        model = json.loads(self.read_body())["model"]
        self.close_connection = True
        try:
            if model == "drip":
                self.drip()
            elif model in ("sized", "chunked", "unsized", "lying"):
                self._huge(model)
            elif model == "refused":
                self.reply(b'{"error": "no"}', status=401)
            else:
                self.reply(OK)
        except OSError:
            pass  # the host stopped reading: what this endpoint is for

    def _huge(self, how: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if how == "sized":
            self.send_header("Content-Length", str(HUGE))
        elif how == "lying":
            self.send_header("Content-Length", "1000")
        elif how == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
        else:  # unsized: the body ends when the connection closes
            self.send_header("Connection", "close")
        self.end_headers()
        head = b'{"choices": [{"message": {"role": "assistant", "content": "'
        chunk = b"x" * MIB
        for piece in [head, *[chunk] * (HUGE // MIB)]:
            if how == "chunked":
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            else:
                self.wfile.write(piece)
        if how == "chunked":
            self.wfile.write(b"0\r\n\r\n")


@pytest.fixture
def endpoint() -> Iterator[str]:
    with serving(_Hostile) as url:
        yield f"{url}/v1"


def spec(endpoint: str, model: str, **more: Any) -> dict[str, Any]:
    return {"kind": "openai", "model": model, "baseUrl": endpoint, "apiKeyEnv": "ABK_KEY", **more}


def _peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


@pytest.mark.parametrize("how", ["sized", "chunked", "unsized", "lying"])
async def test_S18_a_256_MiB_reply_fails_its_turn_and_the_host_stays_small(
    askbridge_client: Any, endpoint: str, tmp_path: Path, how: str
) -> None:
    async with askbridge_client(env=KEY) as client:
        huge = await client.new_session(model=spec(endpoint, how))
        small = await client.new_session(model=spec(endpoint, "small"))
        assert await client.prompt(small, "warm up") == "end_turn"
        pid = host_pid(tmp_path / "askbridge-data")
        assert pid is not None
        before = _peak_kib(pid)
        with pytest.raises(RpcResponseError) as info:
            await client.prompt(huge, "go")
        assert info.value.data["code"] == "MODEL_ERROR", info.value.data
        grown = (_peak_kib(pid) - before) // 1024
        assert grown < 64, f"the host's peak grew by {grown} MiB for a 256 MiB reply"
        if how == "sized":
            assert info.value.message == f"the model's reply has {HUGE} bytes; at most 8 MiB"
        elif how == "lying":  # the body ends where its length says: not a completion
            assert "returned a malformed response" in info.value.message
        else:
            assert info.value.message == (
                f"the model's reply has more than {8 * MIB} bytes; at most 8 MiB"
            )
        assert await client.prompt(small, "still there?") == "end_turn"


async def test_S18_a_dripping_reply_ends_its_turn_at_timeoutS(
    askbridge_client: Any, endpoint: str
) -> None:
    """One byte every 0.3 s: httpx's per-read timeout never fires; the request's does."""
    async with askbridge_client(env=KEY) as client:
        sid = await client.new_session(model=spec(endpoint, "drip", timeoutS=1))
        started = time.monotonic()
        with pytest.raises(RpcResponseError) as info:
            await client.prompt(sid, "go")
        assert info.value.data["code"] == "MODEL_ERROR", info.value.data
        assert info.value.message.endswith("did not answer within 1 s"), info.value.message
        assert time.monotonic() - started < 8


SERVE = [sys.executable, "-m", "askbridge.cli", "serve"]


@pytest.mark.parametrize(
    ("model", "said"),
    [
        (
            {"kind": "openai", "model": "m", "baseUrl": "https://me:s3cret@h.example/v1"},
            "argument --model: baseUrl must not hold user information (user:password@); "
            "put the key in the environment variable apiKeyEnv names;",
        ),
        (
            {"kind": "openai", "model": "m", "apiKeyEnv": "AWS_SECRET_ACCESS"},
            "argument --model: apiKeyEnv must name an environment variable ending in _KEY or "
            "_TOKEN, not 'AWS_SECRET_ACCESS';",
        ),
    ],
)
def test_S18_serve_refuses_a_url_with_credentials_and_a_variable_not_named_as_a_key(
    tmp_path: Path, model: dict[str, Any], said: str
) -> None:
    done = subprocess.run(
        [*SERVE, "--data-dir", str(tmp_path / "d"), "--model", json.dumps(model)],
        input="",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2, done
    assert said in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert "s3cret" not in done.stderr


async def test_S18_a_query_string_in_baseUrl_stays_out_of_logs_and_errors(
    tmp_path: Path, endpoint: str
) -> None:
    secret = f"{endpoint}?api-key=s3cret"
    model = spec(secret, "refused")
    args = ("--model", json.dumps(model), "--log-level", "DEBUG")
    async with RawServer.start(tmp_path / "data", *args, env=KEY) as server:
        sid = await open_session(server)
        failed = await server.call("session/prompt", prompt_params(sid), timeout=30)
        assert failed["error"]["data"]["code"] == "MODEL_ERROR", failed
        message = failed["error"]["message"]
        assert message.startswith(f"model endpoint {endpoint}/chat/completions?… answered HTTP 401")
        other = await new_session(server, {"model": script(text_step("fine"))})
        ok = await server.call("session/prompt", prompt_params(other))
        assert ok["result"] == {"stopReason": "end_turn"}
        assert await server.shutdown_and_exit() == 0
        logs = server.logs()
    assert f"model openai at {endpoint}?…" in logs, logs
    assert "s3cret" not in logs and "s3cret" not in json.dumps(failed)
