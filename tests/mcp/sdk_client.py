"""The official `mcp` SDK's own client (`stdio_client` + `ClientSession`) on a real `askbridge mcp`.

    async with mcp_session(tmp_path, elicitation=accept_with({"q1": "SQLite"})) as s:
        result = await s.call_tool("ask_user_question", {...})

The process runs `askbridge mcp --data-dir <tmp>/data --log-level INFO` with
stderr in `<tmp>/mcp-stderr.log`; the SDK's client ends it when the block ends.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ASKBRIDGE = str(Path(sys.executable).with_name("askbridge"))
Elicit = Callable[[Any, types.ElicitRequestParams], Awaitable[types.ElicitResult]]


def server_params(tmp_path: Path, *args: str) -> StdioServerParameters:
    data = str(tmp_path / "data")
    return StdioServerParameters(
        command=ASKBRIDGE,
        args=["mcp", "--data-dir", data, "--log-level", "INFO", *args],
        cwd=str(tmp_path),
        env=dict(os.environ),  # the SDK passes a safe subset by default: ASKBRIDGE_HOST too
    )


def door_log(tmp_path: Path) -> str:
    """What the door logged: the front door's stderr (inline) and the host's log (auto)."""
    host_log = tmp_path / "data" / "host.log"
    text = (tmp_path / "mcp-stderr.log").read_text()
    return text + (host_log.read_text() if host_log.exists() else "")


@asynccontextmanager
async def mcp_session(
    tmp_path: Path,
    *args: str,
    elicitation: Elicit | None = None,
    name: str = "sdk-test",
) -> AsyncIterator[ClientSession]:
    with (tmp_path / "mcp-stderr.log").open("a", encoding="utf-8") as errlog:
        async with stdio_client(server_params(tmp_path, *args), errlog=errlog) as (read, write):
            async with ClientSession(
                read,
                write,
                elicitation_callback=elicitation,
                client_info=types.Implementation(name=name, version="1.0"),
            ) as session:
                await session.initialize()
                yield session


def accept_with(content: dict[str, Any], seen: list[Any] | None = None) -> Elicit:
    async def elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        if seen is not None:
            seen.append(params)
        return types.ElicitResult(action="accept", content=content)

    return elicit


def respond(action: str) -> Elicit:
    async def elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action=action)  # type: ignore[arg-type]

    return elicit


def text(result: Any, index: int = 0) -> str:
    block = result.content[index]
    assert isinstance(block, types.TextContent), block
    return block.text


QUESTION = {
    "id": "db",
    "header": "Setup",
    "question": "Which database?",
    "options": [{"label": "SQLite"}, {"label": "Postgres"}],
}
