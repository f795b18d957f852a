"""The LSP door's opening moves on a RawServer, written once.

Most end-to-end tests start the same way: `initialize`, `session/new`, a
`session/prompt` that is not awaited (the model asks at once), and the
`userQuestions/ask` it raises. `until_ask(server)` is that preamble; the
pieces are here for the tests that stop earlier or go on differently.
Importable from every test folder (tests/ is on the import path), unlike
tests/e2e/e2e_scripts.py.
"""

from __future__ import annotations

from typing import Any

from askbridge.testing.wire import Message, RawServer


def prompt_params(sid: str, text: str = "go") -> dict[str, Any]:
    """`session/prompt`'s params: one text block."""
    return {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}


async def new_session(server: RawServer, params: dict[str, Any] | None = None) -> str:
    """`session/new` (with `params`, the session's settings): the new session's id."""
    reply = await server.call("session/new", params or {})
    assert "result" in reply, reply
    return str(reply["result"]["sessionId"])


async def open_session(server: RawServer, capabilities: dict[str, Any] | None = None) -> str:
    """`initialize` (a question-rendering client unless `capabilities` says otherwise; `{}`
    is a generic client) and `session/new`: the session's id."""
    await server.initialize(capabilities)
    return await new_session(server)


async def start_prompt(server: RawServer, sid: str, text: str = "go") -> int:
    """`session/prompt` sent and not awaited (its turn may ask first): its request id."""
    return int(await server.request("session/prompt", prompt_params(sid, text)))


async def until_ask(
    server: RawServer, capabilities: dict[str, Any] | None = None
) -> tuple[str, int, Message]:
    """initialize → session/new → session/prompt "go" → the `userQuestions/ask` the turn
    sends: (session id, the prompt's request id, the ask request)."""
    sid = await open_session(server, capabilities)
    prompt = await start_prompt(server, sid)
    return sid, prompt, await server.server_request("userQuestions/ask")
