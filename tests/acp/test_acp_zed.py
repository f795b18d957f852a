"""The ACP door as Zed drives it: Zed's own `initialize`, then a question as a form (F1–F4).

Zed (since mid-2026) declares `fs`, `terminal` and `elicitation {form, url}` and
renders form elicitations. Every message askbridge sends must parse with the
newest Python ACP SDK's typed models (`acp.schema`), the models Zed's schema is
generated from; `_askbridge/*` extension messages are ones Zed ignores, which
ACP allows for `_`-prefixed methods. askbridge does not serve `session/list`
over ACP, so it must not advertise `sessionCapabilities.list` (Zed would show
a history it cannot fill).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import text_block
from acp.exceptions import RequestError
from acp.schema import (
    CancelRequestNotification,
    ClientCapabilities,
    CreateElicitationRequest,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationUrlCapabilities,
    FileSystemCapabilities,
    Implementation,
    InitializeResponse,
    SessionNotification,
)
from acp_harness import (
    RecordingClient,
    ask_step,
    held_form,
    open_session,
    question,
    script,
    start_agent,
    text_of,
)
from pydantic import TypeAdapter

# What Zed sends in `initialize` (crates/agent_servers, ACP client).
ZED_CAPABILITIES = ClientCapabilities(
    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
    terminal=True,
    elicitation=ElicitationCapabilities(
        form=ElicitationFormCapabilities(), url=ElicitationUrlCapabilities()
    ),
)
ZED_INFO = Implementation(name="zed", title="Zed", version="0.230.0")

TYPED: dict[str, Any] = {
    "session/update": SessionNotification,
    "elicitation/create": CreateElicitationRequest,
    "$/cancel_request": CancelRequestNotification,
}


def check_typed(wire: list[dict[str, Any]]) -> None:
    """Every request or notification askbridge sent parses with the SDK's own models."""
    for message in wire:
        method = message.get("method")
        if method is None:
            continue  # a response to the client's request: the SDK returned it typed
        if method.startswith("_"):
            continue  # an extension message: Zed ignores what it does not know
        assert method in TYPED, f"askbridge sent {method}, which this test does not know"
        TypeAdapter(TYPED[method]).validate_python(message["params"])


@pytest.mark.filterwarnings("ignore:The method elicitation/create is part of the unstable")
async def test_zed_initialize_and_a_timed_form_answered_in_time(tmp_path: Path) -> None:
    """F1–F3 with Zed's capabilities: the form is plain text with keys in ask order, and
    the accept is the answer the model reads."""
    db = question("db", "SQLite", "Postgres", header="Setup")
    model = script(ask_step("call-1", db, question("notes"), timeout=600), {"text": "done"})
    client = RecordingClient()

    async def on_elicitation(request: dict[str, Any]) -> Any:
        return {"action": "accept", "content": {"q1": "Postgres", "q2": "fast please"}}

    client.on_elicitation = on_elicitation
    flags = ("--ask-mode", "timed")
    async with start_agent(client, tmp_path / "d", *flags, model=model, unstable=True) as (
        conn,
        _proc,
    ):
        init = await conn.initialize(
            protocol_version=1, client_capabilities=ZED_CAPABILITIES, client_info=ZED_INFO
        )
        assert isinstance(init, InitializeResponse)
        assert init.agent_capabilities is not None and init.agent_capabilities.load_session
        sessions = init.agent_capabilities.session_capabilities
        assert sessions is None or sessions.list is None  # not served over ACP
        with pytest.raises(RequestError):
            await conn.list_sessions(cwd=str(tmp_path))
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        stop = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert stop.stop_reason == "end_turn"
    [form] = client.messages("elicitation/create")
    assert form["params"]["message"] == "2 questions\n1. Which db?\n2. Which notes?"
    assert list(form["params"]["requestedSchema"]["properties"]) == ["q1", "q1_other", "q2"]
    assert text_of(client.tool_result("call-1")) == {
        "answers": [
            {"id": "db", "selected": ["Postgres"]},
            {"id": "notes", "selected": [], "custom": "fast please"},
        ]
    }
    check_typed(client.wire)


@pytest.mark.filterwarnings("ignore:The method elicitation/create is part of the unstable")
async def test_F4_zed_a_timed_form_answered_after_its_deadline_wakes_the_agent(
    tmp_path: Path,
) -> None:
    """F4 as a Zed user sees it: the model gets pending at the deadline, the form stays
    in the panel, and the user's later answer is the late reply that starts a turn."""
    model = script(
        ask_step("call-1", question("db", "a", "b"), timeout=5),
        {"text": "carrying on"},
        {"text": "got the answer"},
    )
    client = RecordingClient()
    shown, submit = held_form(client, {"q1": "b"})
    flags = ("--ask-mode", "timed")
    async with start_agent(
        client, tmp_path / "d", *flags, model=model, driver=True, unstable=True
    ) as (conn, _proc):
        sid = await open_session(conn, tmp_path, ZED_CAPABILITIES, client_info=ZED_INFO)
        async with anyio.create_task_group() as tg:
            tg.start_soon(partial(conn.prompt, session_id=sid, prompt=[text_block("go")]))
            with anyio.fail_after(15):
                await shown.wait()
            await conn.ext_method("askbridgeTest/advance", {"ms": 5_000})
        assert text_of(client.tool_result("call-1"))["pending"] is True
        assert not client.messages("$/cancel_request")  # the form is still open
        submit.set()
        await client.wait_for(lambda: len(client.turns("ended")) == 2)
        view = await conn.ext_method("askbridge/list", {"sessionId": sid})
        assert view["settled"] == [
            {"callId": "call-1", "answers": [{"id": "db", "selected": ["b"]}]}
        ]
    check_typed(client.wire)
