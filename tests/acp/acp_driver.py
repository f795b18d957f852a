"""The ACP door in-process on stdio, on a ManualClock, with two test-only extension methods.

Run like `askbridge acp`: `python acp_driver.py acp --data-dir DIR [--model JSON] [flags]`.
It serves the real door (`askbridge.acp.main.serve_acp`) and adds:

- `_askbridgeTest/advance {ms, sessionId?, callId?}` → `{now}`: moves the
  ManualClock (timed waits never sleep through real deadlines). With a
  `callId`, it first waits until that call's timed wait exists, so a test
  can advance right after it saw the `tool_call` update.
- `_askbridgeTest/ask {sessionId, questions}` → `{answer}` or `{error: {name, code}}`:
  a programmatic caller's `service.ask` for the session's root agent. Approval
  intents come only from such callers (T2), so this is how the
  `session/request_permission` tier is reached.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio

from askbridge.acp.door import serve_acp
from askbridge.acp.server import AcpServer
from askbridge.cli.parser import build_parser
from askbridge.core import HarnessError, ManualClock, UserQuestionRequest
from askbridge.daemon.front import door_defaults
from askbridge.host.host import Host
from askbridge.host.options import HostSettings
from askbridge.host.store.datadir import open_store
from askbridge.jsonrpc.stdio import open_stdio
from askbridge.protocol import QuestionItem


def install(server: AcpServer, clock: ManualClock) -> None:
    async def advance(params: dict[str, Any]) -> dict[str, Any]:
        call_id = params.get("callId")
        if call_id is not None:
            agent_id = (await server.host.get_session(params["sessionId"])).agent.id
            with anyio.fail_after(10):
                # The core announces no wait creation; polling is fine in a test driver.
                while server.host.service.find_wait(agent_id, call_id) is None:  # noqa: ASYNC110
                    await anyio.sleep(0.01)
        clock.advance(params["ms"])
        return {"now": clock.now()}

    async def ask(params: dict[str, Any]) -> dict[str, Any]:
        session = await server.host.get_session(params["sessionId"])
        questions = [QuestionItem.model_validate(q) for q in params["questions"]]
        request = UserQuestionRequest(questions, agent=session.agent, session_id=session.id)
        try:
            answer = await server.host.service.ask(request)
        except HarnessError as exc:
            return {"error": exc.to_data()}
        return {"answer": answer.dump()}

    server.add_extension("_askbridgeTest/advance", advance)
    server.add_extension("_askbridgeTest/ask", ask)


async def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    clock = ManualClock()
    store = open_store(args.data_dir)
    try:
        reader, writer = await open_stdio()
        settings = HostSettings.over_defaults(door_defaults(args))
        async with Host(store, clock=clock, **vars(settings)) as host:
            return await serve_acp(host, reader, writer, setup=lambda s: install(s, clock))
    finally:
        await store.close()


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
