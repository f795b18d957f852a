"""`askbridge mcp` spoken to in raw JSON lines over its real stdio (S3, S7, S8, L7, X6).

What a well-behaved SDK client never sends: invalid JSON, a line over 8 MiB, a
lone surrogate, a form accepted after the server cancelled it. The process
keeps serving after each, and stdout holds nothing but JSON-RPC lines.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from sdk_client import ASKBRIDGE, QUESTION

pytestmark = pytest.mark.timeout(60)
WAIT_S = 15.0


class RawMcp:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.backlog: list[dict[str, Any]] = []
        self._ids = 0

    def send(self, message: Any) -> None:
        self.stdin.write(json.dumps(message).encode() + b"\n")

    def send_raw(self, data: bytes) -> None:
        self.stdin.write(data)

    def call(self, method: str, params: Any = None) -> int:
        self._ids += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._ids, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self._ids

    async def receive(self) -> dict[str, Any]:
        with anyio.fail_after(WAIT_S):
            line = await self.stdout.readline()
        if not line:
            raise EOFError("askbridge mcp closed its output")
        message = json.loads(line)  # stdout holds nothing but JSON lines
        assert isinstance(message, dict), message
        return message

    async def expect(self, test: Any) -> dict[str, Any]:
        for i, message in enumerate(self.backlog):
            if test(message):
                return self.backlog.pop(i)
        while True:
            message = await self.receive()
            if test(message):
                return message
            self.backlog.append(message)

    async def reply(self, msg_id: int) -> dict[str, Any]:
        return await self.expect(lambda m: m.get("id") == msg_id and "method" not in m)

    async def initialize(self, capabilities: dict[str, Any] | None = None) -> None:
        params = {
            "protocolVersion": "2025-06-18",
            "capabilities": capabilities or {},
            "clientInfo": {"name": "raw", "version": "0"},
        }
        assert "result" in await self.reply(self.call("initialize", params))
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    # -- the question steps the X3/L7 tests share ---------------------------------------------

    async def ask_as_form(self, timeout: int) -> tuple[int, dict[str, Any]]:
        """ask_user_question(QUESTION, timeout) sent: (its request id, the form it raised)."""
        arguments = {"questions": [QUESTION], "timeout": timeout}
        call = self.call("tools/call", {"name": "ask_user_question", "arguments": arguments})
        return call, await self.expect(lambda m: m.get("method") == "elicitation/create")

    def cancel(self, request_id: Any) -> None:
        """`notifications/cancelled` for our request (an agent's own tool timeout)."""
        self.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": request_id},
            }
        )

    def accept(self, form: dict[str, Any], content: dict[str, Any]) -> None:
        """The user's accept of `form`, with `content`."""
        self.send(
            {"jsonrpc": "2.0", "id": form["id"], "result": {"action": "accept", "content": content}}
        )

    async def get_answers(self) -> dict[str, Any]:
        """get_answers' result, as JSON."""
        got = await self.reply(self.call("tools/call", {"name": "get_answers", "arguments": {}}))
        return json.loads(got["result"]["content"][0]["text"])  # type: ignore[no-any-return]

    async def first_answers(self) -> dict[str, Any]:
        """get_answers once it lists an answer (the host queues a late reply in its own task)."""
        for _ in range(50):
            answers = await self.get_answers()
            if answers["answers"]:
                break
            await anyio.sleep(0.05)
        return answers


@asynccontextmanager
async def raw_mcp(tmp_path: Path, *args: str) -> AsyncIterator[RawMcp]:
    process = await asyncio.create_subprocess_exec(
        ASKBRIDGE,
        "mcp",
        "--data-dir",
        str(tmp_path / "data"),
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=16 * 1024 * 1024,
    )
    raw = RawMcp(process)
    try:
        yield raw
    finally:
        if process.returncode is None:
            raw.stdin.close()
            try:
                with anyio.fail_after(10):
                    await process.wait()
            except TimeoutError:
                process.kill()
                await process.wait()


async def test_S8_broken_lines_are_answered_and_serving_goes_on(tmp_path: Path) -> None:
    async with raw_mcp(tmp_path) as mcp:
        mcp.send_raw(b'{"jsonrpc": "2.0", "id": 1, \n')
        parse = await mcp.receive()
        assert parse["id"] is None and parse["error"]["code"] == -32700
        mcp.send([1, 2])
        batch = await mcp.receive()
        assert batch["id"] is None and batch["error"]["code"] == -32600
        mcp.send({"jsonrpc": "2.0", "id": 7})
        neither = await mcp.receive()
        assert neither["error"]["code"] == -32600
        mcp.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":NaN}}\n')
        assert (await mcp.receive())["error"]["code"] == -32700
        await mcp.initialize()
        tools = await mcp.reply(mcp.call("tools/list", {}))
        assert len(tools["result"]["tools"]) == 3


async def test_S7_a_line_over_8_MiB_is_refused_unbuffered(tmp_path: Path) -> None:
    async with raw_mcp(tmp_path) as mcp:
        await mcp.initialize()
        huge = (
            b'{"jsonrpc":"2.0","id":99,"method":"tools/list","params":{"x":"'
            + b"a" * (9 << 20)
            + b'"}}\n'
        )
        mcp.send_raw(huge)
        refused = await mcp.receive()
        assert refused["id"] is None and refused["error"]["code"] == -32600
        assert "result" in await mcp.reply(mcp.call("tools/list", {}))


async def test_S3_a_lone_surrogate_is_invalid_params_naming_the_field(tmp_path: Path) -> None:
    async with raw_mcp(tmp_path) as mcp:
        await mcp.initialize()
        body = (
            b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask_user_question",'
            b'"arguments":{"questions":[{"id":"q","question":"\\ud800"}]}}}\n'
        )
        mcp.send_raw(body)
        reply = await mcp.reply(5)
        assert reply["error"]["code"] == -32602
        assert reply["error"]["message"] == (
            "params.arguments.questions.0.question holds a lone surrogate, which is not text"
        )
        unknown = await mcp.reply(mcp.call("tools/call", {"name": "nope", "arguments": {}}))
        assert unknown["error"]["code"] == -32602


async def test_L7_a_form_accepted_after_the_deadline_is_a_late_reply(tmp_path: Path) -> None:
    async with raw_mcp(tmp_path) as mcp:
        await mcp.initialize({"elicitation": {}})
        call, form = await mcp.ask_as_form(timeout=1)
        pending = await mcp.reply(call)
        body = json.loads(pending["result"]["content"][0]["text"])
        assert body["pending"] is True
        cancelled = await mcp.expect(lambda m: m.get("method") == "notifications/cancelled")
        assert cancelled["params"]["requestId"] == form["id"]
        mcp.accept(form, {"q1": "SQLite"})
        answers = await mcp.first_answers()
        assert answers == {
            "answers": [
                {
                    "callId": body["callId"],
                    "questions": [QUESTION],
                    "answers": [{"id": "db", "selected": ["SQLite"]}],
                }
            ],
            "pending": [],
        }


async def test_X3_a_cancelled_timed_ask_stays_answerable_and_end_of_input_exits_0(
    tmp_path: Path,
) -> None:
    async with raw_mcp(tmp_path) as mcp:
        await mcp.initialize({"elicitation": {}})
        call, form = await mcp.ask_as_form(timeout=30)
        mcp.cancel(call)  # the agent's own tool timeout (Claude Code MCP_TOOL_TIMEOUT)
        cancelled = await mcp.expect(lambda m: m.get("method") == "notifications/cancelled")
        assert cancelled["params"]["requestId"] == form["id"]
        pending = (await mcp.get_answers())["pending"]
        assert len(pending) == 1  # continued, not aborted
        mcp.accept(form, {"q1": "SQLite"})  # the form the user filled in anyway: late (L7)
        answers = await mcp.first_answers()
        assert answers["answers"][0]["callId"] == pending[0]
        assert answers["answers"][0]["answers"] == [{"id": "db", "selected": ["SQLite"]}]
        mcp.stdin.close()
        with anyio.fail_after(10):
            assert await mcp.process.wait() == 0


@pytest.mark.parametrize(
    "arguments",
    [
        {"name": "ask_user_question", "arguments": {"questions": [QUESTION], "timeout": -1}},
        {"name": "approval_prompt", "arguments": {"tool_name": "Bash", "input": {"command": "ls"}}},
    ],
)
async def test_X3_a_cancelled_blocking_ask_or_approval_is_ASK_ABORTED(
    tmp_path: Path, arguments: dict[str, Any]
) -> None:
    async with raw_mcp(tmp_path) as mcp:
        await mcp.initialize({"elicitation": {}})
        call = mcp.call("tools/call", arguments)
        await mcp.expect(lambda m: m.get("method") == "elicitation/create")
        mcp.cancel(call)
        await mcp.expect(lambda m: m.get("method") == "notifications/cancelled")
        state = await mcp.reply(mcp.call("tools/call", {"name": "get_answers", "arguments": {}}))
        assert json.loads(state["result"]["content"][0]["text"]) == {"answers": [], "pending": []}


async def test_X3_a_call_the_client_cancelled_is_never_answered(tmp_path: Path) -> None:
    """MCP: the client stopped waiting, so no response comes for its cancelled call (the one
    engine's MCP dialect), and the connection goes on."""
    async with raw_mcp(tmp_path) as mcp:
        await mcp.initialize({"elicitation": {}})
        call, _ = await mcp.ask_as_form(timeout=-1)
        mcp.cancel(call)
        await mcp.expect(lambda m: m.get("method") == "notifications/cancelled")
        state = await mcp.reply(mcp.call("tools/call", {"name": "get_answers", "arguments": {}}))
        assert "result" in state
        assert (await mcp.reply(mcp.call("ping")))["result"] == {}
        assert [m for m in mcp.backlog if m.get("id") == call] == []


@pytest.mark.parametrize(
    ("error", "code", "message"),
    [
        ({"code": 1, "message": "the form broke"}, "PROVIDER_ERROR", "the form broke"),
        (
            {
                "code": -32000,
                "message": "no",
                "data": {"name": "UserQuestionError", "code": "ASK_DECLINED"},
            },
            "ASK_DECLINED",
            "the user declined to answer ask_user_question",
        ),
    ],
)
async def test_E1_E2_a_form_answered_with_an_error_fails_as_every_door_maps_it(
    tmp_path: Path, error: dict[str, Any], code: str, message: str
) -> None:
    """The one mapping of a client's RPC failure (jsonrpc.client_failure): the model sees
    the client's own message as PROVIDER_ERROR (E1), or the error our data names (E2)."""
    async with raw_mcp(tmp_path) as mcp:
        await mcp.initialize({"elicitation": {}})
        arguments = {"questions": [QUESTION], "timeout": -1}
        call = mcp.call("tools/call", {"name": "ask_user_question", "arguments": arguments})
        form = await mcp.expect(lambda m: m.get("method") == "elicitation/create")
        mcp.send({"jsonrpc": "2.0", "id": form["id"], "error": error})
        result = (await mcp.reply(call))["result"]
        assert result["isError"] is True
        assert result["structuredContent"]["code"] == code
        assert result["structuredContent"]["message"] == message


async def test_X3_a_client_without_elicitation_after_all_is_not_asked_again(
    tmp_path: Path,
) -> None:
    """-32601 to `elicitation/create`: the client does not have it; the ask declines
    (NO_PROVIDER, blocking) and no later ask sends a form."""
    async with raw_mcp(tmp_path) as mcp:
        await mcp.initialize({"elicitation": {}})
        arguments = {"questions": [QUESTION], "timeout": -1}
        call = mcp.call("tools/call", {"name": "ask_user_question", "arguments": arguments})
        form = await mcp.expect(lambda m: m.get("method") == "elicitation/create")
        missing = {"code": -32601, "message": "Method not found"}
        mcp.send({"jsonrpc": "2.0", "id": form["id"], "error": missing})
        assert (await mcp.reply(call))["result"]["structuredContent"]["code"] == "NO_PROVIDER"
        again = mcp.call("tools/call", {"name": "ask_user_question", "arguments": arguments})
        assert (await mcp.reply(again))["result"]["structuredContent"]["code"] == "NO_PROVIDER"
        assert not [m for m in mcp.backlog if m.get("method") == "elicitation/create"]
