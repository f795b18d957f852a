"""A real ACP client (the SDK's client side) talking to a real `askbridge acp` process.

`start_agent(client, data_dir, ...)` spawns `.venv/bin/askbridge acp` (or, with
`driver=True`, tests/acp/acp_driver.py: the same door on a ManualClock with
test-only extension methods) over real pipes and yields the SDK's
`ClientSideConnection` and the process.

`RecordingClient` answers the agent's requests with per-test behaviours
(`on_ask`, `on_elicitation`, `on_permission`) and records every incoming wire
message, in arrival order, through a stream observer, so tests can check both
contents and order (`wire`, `wait_for`, `updates`, `ext`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from acp import text_block
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    ClientCapabilities,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    RequestPermissionResponse,
)
from acp.stdio import spawn_agent_process

from scripts import ask_call, question, script  # noqa: F401  (re-exported for the ACP tests)

ASKBRIDGE = str(Path(sys.executable).with_name("askbridge"))
DRIVER = str(Path(__file__).with_name("acp_driver.py"))
WAIT_S = 15.0

Behaviour = Callable[[dict[str, Any]], Awaitable[Any]]


def ask_step(call_id: str, *questions: dict[str, Any], **arguments: Any) -> dict[str, Any]:
    """A script step whose model calls ask_user_question."""
    return ask_call(call_id, list(questions), **arguments)


def capabilities(*, askbridge: bool = False, form: bool = False) -> ClientCapabilities:
    return ClientCapabilities(
        field_meta={"askbridge": {"version": 1}} if askbridge else None,
        elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities()) if form else None,
    )


# -- what the tests read off a tool result --------------------------------------------------


def text_of(update: dict[str, Any] | None) -> Any:
    """The JSON the model read in a tool result (`tool_result(call_id)`)."""
    assert update is not None
    return json.loads(update["content"][0]["content"]["text"])


def error_of(update: dict[str, Any] | None) -> str:
    """The error code a failed tool result carries in `_meta.askbridge`."""
    assert update is not None
    return str(update["_meta"]["askbridge"]["error"]["code"])


# -- the opening moves (once, not in every test) ----------------------------


async def open_session(
    conn: ClientSideConnection,
    cwd: Path,
    client_capabilities: ClientCapabilities | None = None,
    **initialize: Any,
) -> str:
    """`initialize` (with `client_capabilities`, by default none of ours) and
    `session/new` in `cwd`: the session's id."""
    await conn.initialize(
        protocol_version=1,
        client_capabilities=client_capabilities or capabilities(),
        **initialize,
    )
    return (await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id


async def prompt_into(
    conn: ClientSideConnection, sid: str, stops: list[str], text: str = "go"
) -> None:
    """`session/prompt` with `text`; its stop reason appended to `stops` (for a prompt run
    in a task group while the test answers or cancels its question)."""
    stops.append((await conn.prompt(session_id=sid, prompt=[text_block(text)])).stop_reason)


async def prompt_until_lost(conn: ClientSideConnection, sid: str, text: str = "go") -> None:
    """`session/prompt` for a test that kills the agent or closes its input meanwhile: the
    connection lost ends it quietly."""
    try:
        await conn.prompt(session_id=sid, prompt=[text_block(text)])
    except ConnectionError:
        pass


def held_ask(
    client: RecordingClient, answer: dict[str, Any] | None = None
) -> tuple[anyio.Event, anyio.Event]:
    """Make `client` hold each `_askbridge/ask`: `asked` is set when one arrives, and it is
    answered with `answer` once the test sets `reply_now` (never, if it does not). Returns
    (asked, reply_now)."""
    asked, reply_now = anyio.Event(), anyio.Event()

    async def on_ask(params: dict[str, Any]) -> Any:
        asked.set()
        await reply_now.wait()
        return answer

    client.on_ask = on_ask
    return asked, reply_now


def held_form(client: RecordingClient, content: dict[str, Any]) -> tuple[anyio.Event, anyio.Event]:
    """Make `client` show each form and hold it: `shown` is set when one arrives, and it is
    accepted with `content` once the test sets `submit`. Returns (shown, submit)."""
    shown, submit = anyio.Event(), anyio.Event()

    async def on_elicitation(request: dict[str, Any]) -> Any:
        shown.set()
        await submit.wait()
        return {"action": "accept", "content": content}

    client.on_elicitation = on_elicitation
    return shown, submit


class RecordingClient:
    def __init__(self) -> None:
        self.wire: list[dict[str, Any]] = []
        self._changed = anyio.Event()
        self.on_ask: Behaviour | None = None
        self.on_elicitation: Behaviour | None = None
        self.on_permission: Behaviour | None = None

    # -- recording ------------------------------------------------------------------------

    def observe(self, event: StreamEvent) -> None:
        if event.direction is StreamDirection.INCOMING:
            self.wire.append(event.message)
            self._changed.set()
            self._changed = anyio.Event()

    async def wait_for(self, predicate: Callable[[], Any], what: str = "condition") -> Any:
        """Wait until `predicate()` is truthy; return its value."""
        with anyio.fail_after(WAIT_S):
            while not (value := predicate()):
                await self._changed.wait()
        return value

    def messages(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.wire if m.get("method") == method]

    def ext(self, name: str) -> list[dict[str, Any]]:
        """Params of every `_askbridge/<name>` message received."""
        return [m["params"] for m in self.messages(f"_askbridge/{name}")]

    def updates(self, kind: str | None = None) -> list[dict[str, Any]]:
        out = [m["params"]["update"] for m in self.messages("session/update")]
        return [u for u in out if kind is None or u["sessionUpdate"] == kind]

    def turns(self, event: str) -> list[dict[str, Any]]:
        return [t for t in self.ext("turn") if t["event"] == event]

    def tool_result(self, call_id: str) -> dict[str, Any] | None:
        done = [
            u
            for u in self.updates("tool_call_update")
            if u["toolCallId"] == call_id and u.get("status") in ("completed", "failed")
        ]
        return done[-1] if done else None

    async def result_of(self, call_id: str) -> dict[str, Any]:
        update: dict[str, Any] = await self.wait_for(lambda: self.tool_result(call_id))
        return update

    # -- the SDK's Client interface -------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None  # recorded from the wire by `observe`

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None  # recorded from the wire by `observe`

    async def ext_method(self, method: str, params: dict[str, Any]) -> Any:
        if method == "askbridge/ask" and self.on_ask is not None:
            return await self.on_ask(params)
        from acp.exceptions import RequestError

        raise RequestError.method_not_found("_" + method)

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        assert self.on_elicitation is not None, "unexpected elicitation/create"
        return await self.on_elicitation({"message": message, "mode": mode})

    async def request_permission(
        self, session_id: str, tool_call: Any, options: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        assert self.on_permission is not None, "unexpected session/request_permission"
        reply = await self.on_permission(
            {"sessionId": session_id, "toolCall": tool_call, "options": options}
        )
        return RequestPermissionResponse.model_validate(reply)

    def on_connect(self, conn: Any) -> None:
        return None


def last_request(client: RecordingClient, method: str) -> dict[str, Any]:
    """The params of the most recent incoming request `method` (as on the wire)."""
    found = [m for m in client.messages(method) if "id" in m]
    assert found, f"no {method} request arrived"
    return found[-1]["params"]  # type: ignore[no-any-return]


@asynccontextmanager
async def start_agent(
    client: RecordingClient,
    data_dir: Path,
    *flags: str,
    model: dict[str, Any] | None = None,
    driver: bool = False,
    unstable: bool = False,
    env: dict[str, str] | None = None,
) -> AsyncIterator[tuple[ClientSideConnection, Any]]:
    """`askbridge acp --data-dir DIR [--model JSON] FLAGS…` (or the driver) with `client`;
    `env`: more variables for the agent (a team store's URL)."""
    args = ["acp", "--data-dir", str(data_dir), *flags]
    if model is not None:
        args += ["--model", json.dumps(model)]
    command, argv = (sys.executable, [DRIVER, *args]) if driver else (ASKBRIDGE, args)
    async with spawn_agent_process(
        client,  # type: ignore[arg-type]
        command,
        *argv,
        # The SDK passes on only a few variables (HOME, PATH, …); keep the import path and
        # the test's host mode (tests/conftest.py).
        env={
            **{k: os.environ[k] for k in ("PYTHONPATH", "ASKBRIDGE_HOST") if k in os.environ},
            **(env or {}),
        },
        transport_kwargs={"stderr": None},  # the agent's logs go to the test's stderr
        use_unstable_protocol=unstable,
        observers=[client.observe],
    ) as (conn, proc):
        yield conn, proc
