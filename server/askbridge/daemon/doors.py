"""The doors a host serves, by the name a hello gives (`lsp`, `acp`, `mcp`; `web` is the
LSP door the web door's `askbridge serve --for-web` attaches, listed under its own name).

Each is the door's own `serve_*(host, reader, writer, env=…, defaults=…)`,
the same coroutine an inline front door runs on its own stdio (H3, H4).
`defaults` are the front door's flags as session settings; `env` its
environment, where a session's model finds its API key (H5).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from askbridge.host.host import Host
from askbridge.jsonrpc import Input
from askbridge.protocol.defaults import ASK_TIMEOUT_DEFAULT_SECONDS

from .socket_lines import send_line

if TYPE_CHECKING:
    import socket

    from anyio.abc import TaskGroup

# After the data directory is lost, how long requests in flight have to answer STORE_LOST.
FATAL_GRACE_S = 0.5


async def serve_door(
    host: Host,
    door: str,
    reader: Input,
    writer: asyncio.StreamWriter,
    hello: dict[str, Any],
    early: Any = None,
    data_dir: Path | None = None,
    say: Callable[[str], None] | None = None,
) -> int:
    """Serve `door` until its client is done; its exit status (H4). `early`: the LSP door's
    `initialize` answered before the event loop (inline only). `say`: a line for the
    client's stderr, the attached front door's (this process's own when inline)."""
    raw_env, raw_options = hello.get("env"), hello.get("options")
    env: dict[str, str] = raw_env if isinstance(raw_env, dict) else {}
    options: dict[str, Any] = raw_options if isinstance(raw_options, dict) else {}
    if door in ("lsp", "web"):  # web: the web door's own `askbridge serve`, an LSP client
        from askbridge.lsp.door import serve_lsp

        say = say or _on_stderr("serve")
        return await serve_lsp(
            host, reader, writer, env=env, defaults=options, early=early, say=say
        )
    if door == "acp":
        from askbridge.acp.door import serve_acp

        return await serve_acp(host, reader, writer, env=env, defaults=options)
    if door == "mcp":
        from askbridge.mcp.door import serve_mcp

        ask = options.get("ask_user_question") or {}
        mcp_options = {
            "ask_timeout": ask.get("timeout", ASK_TIMEOUT_DEFAULT_SECONDS),
            "cwd": hello.get("cwd"),
            "data_dir": str(data_dir) if data_dir is not None else "?",  # S12: its log line
        }
        try:
            return await serve_mcp(host, reader, writer, env=env, options=mcp_options)
        finally:
            writer.close()  # serve_mcp leaves its writer to the caller
    writer.close()
    return 1


def front_door_says(conn: socket.socket, tg: TaskGroup) -> Callable[[str], None]:
    """`say` for an attached front door: a `{"say": text}` line it prints on its stderr."""

    def say(text: str) -> None:
        tg.start_soon(send_line, conn, {"say": text})

    return say


def _on_stderr(command: str) -> Callable[[str], None]:
    def say(text: str) -> None:
        print(f"askbridge {command}: {text}", file=sys.stderr, flush=True)

    return say


def log_start(door: str, data_dir: Path, mode: str, defaults: dict[str, Any]) -> None:
    """INFO at start: what is served, where, by which process, with which model."""
    model = defaults.get("model") or {}
    if door == "mcp":  # S12: an MCP client brings its own agent; askbridge runs no model for it
        model = {"kind": "of the MCP client's own agent"}
    endpoint = model.get("baseUrl") or ("default endpoint" if model.get("kind") == "openai" else "")
    if model.get("baseUrl"):
        from askbridge.protocol.model_spec import shown_url

        endpoint = shown_url(endpoint)  # S18: its query string may hold a key
    logging.getLogger("askbridge.daemon").info(
        "serving %s (%s) for %s, host pid %d, model %s%s",
        door or "the host",
        mode,
        data_dir,
        os.getpid(),
        model.get("kind", "none"),
        f" at {endpoint}" if endpoint else "",
    )


async def stop_on_signals(scope: Any, listener: Any = None) -> None:
    """SIGTERM (and SIGINT for a host) stops the process cleanly: turns end as at end of
    input, the store is flushed, host.sock removed. `listener`: told why (H6, H8)."""
    import signal

    import anyio

    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            name = signal.Signals(signum).name
            if listener is not None:
                listener.stopping(f"signal {name}", f"was stopped by signal {name}")
            else:
                logging.getLogger("askbridge.daemon").info("signal %s: stopping", name)
            scope.cancel()
            return
