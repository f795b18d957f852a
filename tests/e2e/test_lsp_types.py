"""Every standard LSP message the server sends validates against lsprotocol's types.

Over the real process (`RawServer`, raw frames): the `initialize` result,
`window/showMessageRequest` and the work-done progress of a generic client's timed
question (`window/workDoneProgress/create`, `$/progress` begin/report/end), the
claim frame (`$/progress` for an `attachWait` partial-result token) and
`$/cancelRequest`. Each message is structured into its lsprotocol class with
lsprotocol's own converter and unstructured again: a wrong type fails the first
step, a key LSP does not define (or a value lsprotocol would rewrite) fails the
comparison. This is where lsprotocol earns its place in the test extra.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from e2e_scripts import DB_QUESTION, ask_step, script, text_step
from lsprotocol import converters, types

from askbridge.testing.wire import Message, RawServer
from lsp_steps import start_prompt

pytestmark = pytest.mark.timeout(60)
CONVERTER = converters.get_converter()
PROGRESS_VALUES = {
    "begin": types.WorkDoneProgressBegin,
    "report": types.WorkDoneProgressReport,
    "end": types.WorkDoneProgressEnd,
}


def conforms(message: Any, lsp_type: type) -> Any:
    """`message` structured as `lsp_type`; it must unstructure back to exactly itself."""
    structured = CONVERTER.structure(message, lsp_type)
    assert CONVERTER.unstructure(structured) == message, lsp_type.__name__
    return structured


def is_request(method: str) -> Any:
    return lambda m: m.get("method") == method and "id" in m


def is_notification(method: str) -> Any:
    return lambda m: m.get("method") == method and "id" not in m


async def new_session(server: RawServer, *steps: dict[str, Any]) -> str:
    reply = await server.call("session/new", {"model": script(*steps)})
    return str(reply["result"]["sessionId"])


async def test_initialize_result_is_an_lsp_initialize_response(tmp_path: Path) -> None:
    async with RawServer.start(tmp_path / "data") as server:
        reply = await server.initialize()
        response = conforms(reply, types.InitializeResponse)
        assert response.result.server_info.name == "askbridge"
        assert await server.shutdown_and_exit() == 0


async def test_fallback_question_and_its_countdown_are_lsp_messages(tmp_path: Path) -> None:
    """showMessageRequest, workDoneProgress/create, $/progress begin/report/end, and the
    $/cancelRequest that withdraws the request when the timed wait ends unanswered."""
    async with RawServer.start(tmp_path / "data", "--ask-mode", "timed") as server:
        await server.initialize({"window": {"workDoneProgress": True}})
        sid = await new_session(
            server, ask_step(questions=[DB_QUESTION], timeout=2), text_step("ok")
        )
        prompt = await start_prompt(server, sid)
        create = await server.expect(is_request("window/workDoneProgress/create"))
        conforms(create, types.WorkDoneProgressCreateRequest)
        await server.respond(create["id"], None)
        shown = await server.expect(is_request("window/showMessageRequest"))
        conforms(shown, types.ShowMessageRequest)
        kinds: list[str] = []
        while "end" not in kinds:  # nobody answers: the 2 s deadline passes
            progress: Message = await server.expect(is_notification("$/progress"))
            conforms(progress, types.ProgressNotification)
            value = progress["params"]["value"]
            conforms(value, PROGRESS_VALUES[value["kind"]])
            kinds.append(value["kind"])
        assert kinds[0] == "begin" and "report" in kinds
        cancel = await server.expect(is_notification("$/cancelRequest"))
        assert conforms(cancel, types.CancelNotification).params.id == shown["id"]
        await server.respond_error(shown["id"], -32800, "cancelled")
        assert (await server.response(prompt))["result"]["stopReason"] == "end_turn"


async def test_claim_frame_and_cancel_request_are_lsp_messages(tmp_path: Path) -> None:
    """The one `$/progress` of a claim (C3) and `$/cancelRequest` for an ask the turn's
    cancellation withdrew (A9)."""
    async with RawServer.start(tmp_path / "data", "--ask-mode", "timed") as server:
        await server.initialize()
        sid = await new_session(server, ask_step(questions=[DB_QUESTION], timeout=30))
        await start_prompt(server, sid)
        ask = await server.expect(is_request("userQuestions/ask"))
        params = {"sessionId": sid, "callId": "call-1", "partialResultToken": "claim-1"}
        await server.request("userQuestions/attachWait", params)
        frame = await server.expect(is_notification("$/progress"))
        assert conforms(frame, types.ProgressNotification).params.token == "claim-1"
        assert 0 < frame["params"]["value"]["remainingMs"] <= 30_000
        await server.notify("session/cancel", {"sessionId": sid})
        cancel = await server.expect(is_notification("$/cancelRequest"))
        assert conforms(cancel, types.CancelNotification).params.id == ask["id"]
