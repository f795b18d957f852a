"""`askbridge serve --host inline` on a ManualClock, with one test-only method.

Run like it: `python lsp_driver.py serve --data-dir DIR [--model JSON] [flags]`. It is
the data directory's host, as an inline `askbridge serve` is (the same `serve_host`,
`host.sock` listener and `serve_lsp` door, so other front doors attach to it in either
host mode), with two differences: the timed waits read a ManualClock, and its own
client may call

- `_askbridgeTest/advance {ms}` → `{now}`: moves the clock, firing every deadline
  due (core/clock.py), so a test passes a deadline without sleeping through it.
- `_askbridgeTest/claims {agentId, callId, count}` → `{}` once that call's timed wait
  has exactly `count` claims: for a claim the test's client does not see acknowledged
  (the web door's, taken for a browser), so the test advances only once it holds.

No early `initialize` answer (lsp/early.py): that is start-up, not what these tests
show. tests/clock_host.py starts it and gives the tests their clients.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup

from askbridge.cli.parser import build_parser
from askbridge.core import ManualClock
from askbridge.daemon.bootstrap import serve_host
from askbridge.daemon.front import door_defaults
from askbridge.daemon.listener import HostSocket
from askbridge.host.host import Host
from askbridge.host.options import HostSettings
from askbridge.host.store.datadir import open_store
from askbridge.jsonrpc.stdio import open_stdio
from askbridge.lsp.door import serve_lsp
from askbridge.lsp.server import LspServer
from askbridge.process.hostsock import bind_host_socket


def install(server: LspServer, clock: ManualClock) -> None:
    async def advance(params: dict[str, Any]) -> dict[str, Any]:
        clock.advance(params["ms"])
        return {"now": clock.now()}

    async def claims(params: dict[str, Any]) -> dict[str, Any]:
        def held() -> bool:
            wait = server.host.service.find_wait(params["agentId"], params["callId"])
            return wait is not None and wait.claim_count == params["count"]

        with anyio.fail_after(10):
            # The core announces no claim; polling is fine in a test driver.
            while not held():  # noqa: ASYNC110
                await anyio.sleep(0.01)
        return {}

    server.conn.on_request("_askbridgeTest/advance", advance)
    server.conn.on_request("_askbridgeTest/claims", claims)


async def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    defaults = door_defaults(args)
    data_dir = Path(args.data_dir)
    clock = ManualClock()
    store = open_store(data_dir)
    try:
        sock = bind_host_socket(data_dir)
        reader, writer = await open_stdio()

        async def own_client(host: Host, listener: HostSocket, tg: TaskGroup) -> int:
            status = await serve_lsp(
                host,
                reader,
                writer,
                env=dict(os.environ),
                defaults=defaults,
                setup=lambda server: install(server, clock),
            )
            listener.stopping("its own client is done", "exited with its own client (driver)")
            listener.stop_doors()
            tg.cancel_scope.cancel()
            return status

        settings = HostSettings.over_defaults(defaults)
        return await serve_host(
            store, data_dir, settings, sock, own_client, inline=True, clock=clock
        )
    finally:
        store.close()


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
