"""askbridge serve with a stock LSP client library: pytest-lsp's pygls client.

Proves the server works with an ordinary LSP client: the standard lifecycle,
our custom methods through `send_request_async`, a `userQuestions/ask` handled
by a client feature, and — for a client without the capability — the
`window/showMessageRequest` fallback that every LSP client implements.
"""

from __future__ import annotations

import json
import sys
import tempfile
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

ASK = {
    "toolCalls": [
        {
            "id": "call-1",
            "name": "ask_user_question",
            "arguments": {
                "questions": [
                    {
                        "id": "db",
                        "header": "Setup",
                        "question": "Which database?",
                        "options": [{"label": "SQLite"}, {"label": "Postgres"}],
                    }
                ]
            },
        }
    ]
}
SCRIPT = {"kind": "script", "steps": [ASK, {"text": "done"}]}
# The server command is fixed when the module is imported: give this module its own data dir.
DATA = tempfile.mkdtemp(prefix="askbridge-pygls-e2e-")


def _command(tmp: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "askbridge.cli",
        "serve",
        "--stdio",
        "--data-dir",
        tmp,
        "--model",
        json.dumps(SCRIPT),
    ]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=_command(DATA)))
async def client(lsp_client: LanguageClient) -> Any:
    yield  # each test initializes with its own capabilities
    await lsp_client.shutdown_session()


def _as_dict(value: Any) -> Any:
    """pygls hands custom results over as namedtuples; turn them back into JSON."""
    if hasattr(value, "_asdict"):
        return {k: _as_dict(v) for k, v in value._asdict().items()}
    if isinstance(value, list):
        return [_as_dict(v) for v in value]
    return value


@pytest.mark.parametrize("renders", [True, False], ids=["capable", "generic"])
async def test_a_stock_lsp_client_answers_a_question(client: LanguageClient, renders: bool) -> None:
    lsp_client = client
    asked: list[Any] = []

    @lsp_client.feature("userQuestions/ask")
    def on_ask(params: Any) -> dict[str, Any]:
        asked.append(params)
        return {"answers": [{"id": "db", "selected": ["Postgres"]}]}

    @lsp_client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def on_show(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
        asked.append(params)
        return types.MessageActionItem(title="Postgres")

    experimental = {"userQuestions": {"version": 1}} if renders else None
    result = await lsp_client.initialize_session(
        types.InitializeParams(capabilities=types.ClientCapabilities(experimental=experimental))
    )
    assert result.server_info is not None and result.server_info.name == "askbridge"
    new = _as_dict(await lsp_client.protocol.send_request_async("session/new", {}))
    session_id = new["sessionId"]
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    done = _as_dict(await lsp_client.protocol.send_request_async("session/prompt", prompt))
    assert done == {"stopReason": "end_turn"}
    [question] = asked
    if renders:
        assert _as_dict(question)["questions"][0]["id"] == "db"
    else:
        assert question.message == "[Setup] Which database?"
        assert [a.title for a in question.actions] == ["SQLite", "Postgres"]
    view = _as_dict(
        await lsp_client.protocol.send_request_async(
            "userQuestions/list", {"sessionId": session_id}
        )
    )
    assert view == {"active": [], "settled": []}  # legacy mode: questions are not tracked (P1)
