"""A bounded fuzz of both doors: hostile bytes, hostile field values, hostile model output (S1–S9).

Each case is generated from a fixed seed (reproducible: the failing case's
index and bytes are in the assertion message). After every case the same
server must answer a normal request, and its process — the host — must be the
one that started: nothing a client or a model sends takes it down or makes it
restart. Run in both host modes.

Model output comes from a real OpenAI-compatible endpoint on loopback whose
every completion is hostile: NaN and Infinity in tool arguments, lone
surrogates, nesting far deeper than 64, labels far over the S1 limits, bodies
that are not chat completions, not JSON, or nested beyond the parser.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from askbridge.testing.hosts import host_pid, stop_host
from askbridge.testing.strict_frames import frame
from askbridge.testing.wire import RawServer
from model_endpoint import ModelHandler, serving

SEED = 20261201
CASES = 80
OPEN_FRAME_S = 1.5  # no reply by then: the case left a frame open (a reply takes ms)
METHODS = [
    "initialize", "session/new", "session/load", "session/list", "session/prompt",
    "session/cancel", "userQuestions/attachWait", "userQuestions/answer",
    "userQuestions/withdrawReply", "userQuestions/list", "$/cancelRequest", "shutdownX", "",
]  # fmt: skip


def _hostile_value(rng: random.Random, depth: int = 0) -> Any:
    choice = rng.randrange(12)
    if choice == 0 or depth > 3:
        return rng.choice([None, True, 0, -1, 2**70, 1.5, "", "x" * rng.randrange(1, 5000)])
    if choice == 1:
        return "\ud800" + "a"  # a lone surrogate (encoded as \\ud800 by json.dumps)
    if choice == 2:
        value: Any = "deep"
        for _ in range(rng.randrange(50, 400)):
            value = [value]
        return value
    if choice == 3:
        return {"sessionId": rng.choice(["s-nope", "", 7, None]), "callId": rng.choice(["c", 3])}
    if choice == 4:
        return {"answer": {"answers": [{"id": "db", "selected": [_hostile_value(rng, depth + 1)]}]}}
    if choice == 5:
        return {
            "prompt": [{"type": "text", "text": _hostile_value(rng, depth + 1)}],
            "sessionId": "s-x",
        }
    if choice == 6:
        return {"model": {"kind": "script", "steps": [_hostile_value(rng, depth + 1)]}}
    if choice == 7:
        return [_hostile_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    if choice == 8:
        return {
            "partialResultToken": _hostile_value(rng, depth + 1),
            "sessionId": "s",
            "callId": "c",
        }
    if choice == 9:
        return {
            "askUserQuestion": {
                "mode": rng.choice(["timed", 5]),
                "timeout": rng.choice([0, -2, 2**40, "1"]),
            }
        }
    if choice == 10:
        return {"\ud800": 1}
    return {str(rng.randrange(100)): _hostile_value(rng, depth + 1)}


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value).encode()  # ensure_ascii: lone surrogates become \\ud800 escapes


def hostile_bodies(rng: random.Random) -> Iterator[bytes]:
    """JSON-RPC bodies (and things that are not): what goes inside a frame or on a line."""
    while True:
        kind = rng.randrange(10)
        if kind == 0:
            yield bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
        elif kind == 1:
            yield b"[" * rng.randrange(900, 3000) + b"]" * rng.randrange(0, 3000)
        elif kind == 2:
            yield rng.choice(
                [b"NaN", b"-Infinity", b'{"a": NaN}', b"null", b"5", b'"x"', b"[]", b"{}", b"[{}]"]
            )
        elif kind == 3:  # a response to an id the server never sent, or to one of its own
            yield _json_bytes(
                {
                    "jsonrpc": "2.0",
                    "id": rng.choice(["ab-1", "ab-999", 5, None, [1]]),
                    **rng.choice([{}, {"result": None}, {"error": "x"}, {"error": {"code": "x"}}]),
                }
            )
        elif kind == 4:
            yield _json_bytes(
                {
                    "jsonrpc": rng.choice(["2.0", "1.0", 2, None]),
                    "id": rng.randrange(1000, 9999),
                    "method": rng.choice(METHODS),
                    "params": _hostile_value(rng),
                }
            )
        elif kind == 5:
            yield _json_bytes(
                {"jsonrpc": "2.0", "method": rng.choice(METHODS), "params": _hostile_value(rng)}
            )
        elif kind == 6:
            yield _json_bytes(
                {"jsonrpc": "2.0", "id": _hostile_value(rng), "method": _hostile_value(rng)}
            )
        elif kind == 7:
            yield _json_bytes(
                {
                    "jsonrpc": "2.0",
                    "id": 77,
                    "method": "session/new",
                    "params": {
                        "model": {
                            "kind": "script",
                            "steps": [
                                {
                                    "toolCalls": [
                                        {
                                            "id": "c",
                                            "name": "ask_user_question",
                                            "arguments": _hostile_value(rng),
                                        }
                                    ]
                                }
                            ],
                        }
                    },
                }
            )
        elif kind == 8:
            yield "\u00e9\u4e2d\U0001f600".encode() * rng.randrange(1, 100)
        else:
            yield _json_bytes(
                [{"jsonrpc": "2.0", "id": 1, "method": "session/list"}] * rng.randrange(1, 5)
            )


def hostile_frames(rng: random.Random) -> Iterator[bytes]:
    bodies = hostile_bodies(rng)
    while True:
        body = next(bodies)
        kind = rng.choices(range(6), weights=[6, 4, 3, 1, 3, 3])[0]  # the 8 MiB case is slow
        if kind == 0:
            yield frame(body)
        elif kind == 1:
            yield b"Content-Length: %d\r\n\r\n" % max(0, len(body) + rng.randrange(-20, 20)) + body
        elif kind == 2:
            yield (
                rng.choice(
                    [
                        b"content-length: ",
                        b"Content-Length:",
                        b"Content-Length: -",
                        b"X: y\r\nContent-Length: ",
                    ]
                )
                + str(len(body)).encode()
                + b"\r\n\r\n"
                + body
            )
        elif kind == 3:
            # Over the 8 MiB cap: that many bytes are discarded unparsed (protocol.md), so
            # what follows is eaten until the padding below has made up the difference.
            yield b"Content-Length: %d\r\n\r\n" % (8 * 1024 * 1024 + 1) + body[:100]
        elif kind == 4:
            yield rng.choice(
                [b"\r\n\r\n", b"GET / HTTP/1.1\r\n\r\n", b"Content-Length: 1\n\nx", b"garbage"]
            ) + frame(body)
        else:
            yield b"Content-Length: %d\r\nContent-Type: x\r\n\r\n" % len(body) + body


@pytest.mark.timeout(300)
async def test_S8_S3_the_lsp_door_survives_hostile_frames(tmp_path: Path, host_mode: str) -> None:
    rng = random.Random(SEED)
    frames = hostile_frames(rng)
    data = tmp_path / "data"
    async with RawServer.start(data, host=host_mode) as server:
        await server.initialize()
        pid = host_pid(data)
        for index in range(CASES):
            sent = next(frames)
            server.send_bytes(sent)
            await server.drain()
            # The next request's reply must come; whatever the case made the server say
            # before it stays in the backlog. A frame left open by a too-long length is
            # closed by padding (the reader waits for the bytes it was promised); a reply
            # that is only slow is still taken after the padding.
            msg_id = await server.request("session/list", {})
            try:
                reply = await server.response(msg_id, timeout=OPEN_FRAME_S)
            except TimeoutError:
                server.send_bytes(b" " * (9 * 1024 * 1024))
                await server.drain()
                msg_id = await server.request("session/list", {})
                reply = await server.response(msg_id, timeout=10)
            assert "result" in reply or "error" in reply, (index, sent[:300])
            assert host_pid(data) == pid and server.process.returncode is None, (index, sent[:300])
            server.backlog.clear()
        assert "sessions" in (await server.call("session/list", {}))["result"]


async def _line_agent(data: Path) -> Any:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "askbridge.cli", "acp", "--data-dir", str(data),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, limit=64 * 1024 * 1024,
    )  # fmt: skip


@pytest.mark.timeout(300)
async def test_S8_S3_the_acp_door_survives_hostile_lines(tmp_path: Path, host_mode: str) -> None:
    rng = random.Random(SEED + 1)
    bodies = hostile_bodies(rng)
    data = tmp_path / "data"
    agent = await _line_agent(data)
    assert agent.stdin is not None and agent.stdout is not None
    try:
        pid = None
        for index in range(CASES):
            body = next(bodies).replace(b"\n", b" ")
            agent.stdin.write(body + b"\n")
            ping = {
                "jsonrpc": "2.0",
                "id": f"ping-{index}",
                "method": "initialize",
                "params": {"protocolVersion": 1},
            }
            agent.stdin.write(json.dumps(ping).encode() + b"\n")
            await agent.stdin.drain()
            with anyio.fail_after(10):
                while True:
                    line = await agent.stdout.readline()
                    assert line, (index, body[:300])
                    message = json.loads(line)
                    if isinstance(message, dict) and message.get("id") == f"ping-{index}":
                        break
            assert "result" in message, (index, body[:300], message)
            pid = pid or host_pid(data)
            assert host_pid(data) == pid and agent.returncode is None, (index, body[:300])
    finally:
        if agent.returncode is None:
            agent.stdin.close()
            with anyio.move_on_after(10):
                await agent.wait()
        if agent.returncode is None:
            agent.kill()
            await agent.wait()
        stop_host(data)


def _hostile_completion(rng: random.Random, label_size: int) -> bytes:
    arguments = rng.choice(
        [
            '{"questions": [{"id": "q", "question": "?", "options": [{"label": NaN}]}]}',
            '{"questions": [{"id": "q", "question": "\\ud800?"}], "timeout": Infinity}',
            json.dumps(
                {
                    "questions": [
                        {"id": "q", "question": "?", "options": [{"label": "x" * label_size}]}
                    ]
                }
            ),
            "[" * 200 + "]" * 200,
            '{"questions": ' + "[" * 100 + "]" * 100 + "}",
            "not json at all",
        ]
    )
    kind = rng.randrange(5)
    if kind == 0:
        return b"{" * 100_000
    if kind == 1:
        return b"<html>not a completion</html>"
    if kind == 2:
        return json.dumps(
            {"choices": [{"message": {"content": "\ud800 text", "tool_calls": "no"}}]}
        ).encode()
    message = {
        "content": rng.choice(["", "\udfff", None]),
        "tool_calls": [
            {
                "id": rng.choice(["c1", "\ud801"]),
                "type": "function",
                "function": {
                    "name": rng.choice(["ask_user_question", "delegate", "nope", "\ud800"]),
                    "arguments": arguments,
                },
            }
        ],
    }
    return json.dumps({"choices": [{"message": message}]}).encode()


class _HostileEndpoint(ModelHandler):
    next_body: Callable[[], bytes]

    def do_POST(self) -> None:
        self.read_body()
        self.reply(type(self).next_body())


@pytest.fixture
def hostile_model() -> Iterator[dict[str, Any]]:
    """The model spec of an endpoint whose every completion is hostile (seeded: reproducible)."""
    rng = random.Random(SEED + 2)
    _HostileEndpoint.next_body = staticmethod(
        lambda: _hostile_completion(rng, 7_500_000 if rng.random() < 0.1 else 300)
    )
    with serving(_HostileEndpoint) as url:
        yield {
            "kind": "openai",
            "model": "m",
            "baseUrl": f"{url}/v1",
            "apiKeyEnv": "ASKBRIDGE_FUZZ_KEY",
        }


@pytest.mark.timeout(300)
async def test_S3_S4_hostile_model_output_ends_a_turn_at_most(
    tmp_path: Path, host_mode: str, hostile_model: dict[str, Any]
) -> None:
    data = tmp_path / "data"
    try:
        async with RawServer.start(
            data,
            "--model",
            json.dumps(hostile_model),
            "--max-turn-requests",
            "3",
            "--ask-mode",
            "timed",
            "--ask-timeout",
            "1",
            host=host_mode,
            env={"ASKBRIDGE_FUZZ_KEY": "k"},
        ) as server:
            await server.initialize({})
            sid = (await server.call("session/new", {}))["result"]["sessionId"]
            pid = host_pid(data)
            for index in range(30):
                reply = await server.call(
                    "session/prompt",
                    {"sessionId": sid, "prompt": [{"type": "text", "text": f"go {index}"}]},
                    timeout=30,
                )
                # A turn ends, with a stop reason or a model error; the session goes on.
                assert "result" in reply or reply["error"]["data"]["code"] == "MODEL_ERROR", (
                    index,
                    reply,
                )
                assert host_pid(data) == pid and server.process.returncode is None, index
            listed = (await server.call("session/list", {}))["result"]["sessions"]
            assert [s["sessionId"] for s in listed] == [sid]
        db = (data / "askbridge.db").stat().st_size + sum(
            p.stat().st_size for p in data.glob("askbridge.db-*")
        )
        assert db < 20 * 1024 * 1024  # S1: no 7.5 MB label was written
    finally:
        stop_host(data)
