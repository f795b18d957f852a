"""`--host inline`: this front door is its data directory's host (H3).

It takes the data directory's lock (or fails naming the holder), serves its
own client on its own stdio, and listens on `host.sock` so that other front
doors may attach while it lives. It lives as long as its own client: when that
one is done, attached front doors are cut off (they exit 1, H8) and the
process exits with its own client's status. The LSP door answers a plain first
`initialize` before the heavy imports (lsp/early.py).

Nothing here is imported at module level that the early answer does not need
(argparse, the host's settings): the console script's plain `--host inline`
command line (cli/entry.py) comes here without building a parser, and sets its
logging up only after the answer (`after_answer`), since nothing before it logs.
Before that answer the data directory is held and checked and `host.sock` bound on
few modules (`datadir.open_checked`, `hostsock.bind_raw_host_socket`: no `pathlib`,
`typing`, `socket` or error taxonomy); the store is built after it.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not `typing`'s: see the module docstring (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from anyio.abc import TaskGroup

    from askbridge.host.host import Host
    from askbridge.host.options import HostSettings
    from askbridge.host.store.datadir import CheckedStore

    from .listener import HostSocket


def serve_inline(
    door: str,
    data_dir: str,
    defaults: dict[str, Any],
    after_answer: Callable[[], None] | None = None,
) -> int:
    """Be `data_dir`'s host and serve `door` on this process's stdio, the host's session
    defaults `defaults` (the front door's flags); `after_answer` runs once the data
    directory is held and the early answer (if any) is sent, before the heavy imports."""
    team_store = os.environ.get("ASKBRIDGE_STORE") or None  # G1 (cli/commands.py sets it)
    if team_store is not None:
        import anyio

        return anyio.run(_serve_on_team_store, door, team_store, data_dir, defaults)
    checked = _open_checked(data_dir)
    if checked is None:
        return 1
    from askbridge.process.hostsock import AttachError, bind_raw_host_socket, listening_socket

    try:
        raw = bind_raw_host_socket(data_dir)  # bound before any answer (H3)
    except AttachError as exc:  # H1: the socket's folder refused
        checked.close()
        print(f"askbridge: {exc}", file=sys.stderr)
        return 1
    from askbridge.process.ctrl_c import CtrlCHeld, import_the_event_loop  # stdlib only

    ctrl_c = CtrlCHeld()
    try:
        early = None
        if door == "lsp":
            from askbridge.lsp.early import answer_initialize_early

            early = answer_initialize_early()
        with ctrl_c:
            if after_answer is not None:
                after_answer()
            store = checked.store()  # only now: the store's modules are most of a start's imports
    except BaseException:
        raw.close()
        checked.close()
        raise
    try:
        with ctrl_c:
            from pathlib import Path

            import anyio  # only now: the early answer does not wait for it

            import_the_event_loop()

            from askbridge.host.options import HostSettings

            settings = HostSettings.over_defaults(defaults)  # the host's: its own client's flags
        if ctrl_c.pressed:
            raise KeyboardInterrupt  # the callers' Ctrl-C: status 130 (cli/entry.py, commands.py)
    except BaseException:
        raw.close()
        close_unserved(store)
        raise
    return anyio.run(  # `_serve` closes the store
        _serve, door, store, settings, Path(data_dir), defaults, early, listening_socket(raw)
    )


def close_unserved(store: Any) -> None:
    """Close an event store that no event loop ran on: a start stopped before it served.
    Its `close` is a coroutine; the SQLite store's returns without awaiting anything."""
    import asyncio

    asyncio.run(store.close())


def _open_checked(data_dir: str) -> CheckedStore | None:
    """`data_dir` held and checked (datadir.py), or None after printing why it cannot be
    used (exit 1): the StoreError's one line — in use by another process (also one that
    still holds a deleted or replaced directory), not private (S5), a symbolic link where
    the lock or database should be, damaged or lost (S6), from a newer askbridge, or a
    filesystem that refuses writes."""
    from askbridge.host.store.datadir import open_checked

    try:
        return open_checked(data_dir)
    except Exception as exc:
        from askbridge.core.errors import StoreError  # its class loads only for a refusal

        if not isinstance(exc, StoreError):
            raise
        print(f"askbridge: {exc}{_remedy(data_dir)}", file=sys.stderr)
        return None


def _remedy(data_dir: str) -> str:
    """What to do when the holder is a host listening on `host.sock` (an `askbridge host`, or
    another front door's inline host): attach to it, or stop it. Nothing for a refusal that
    has no host behind it (a directory it cannot use, a holder of a deleted directory), or
    a listener of another uid (S13: no host of ours; the refusal's one line says enough)."""
    from askbridge.process.hostsock import AttachError, connect

    try:
        sock = connect(data_dir, 1.0)
    except (OSError, AttachError):
        return ""
    if sock is None:
        return ""
    sock.close()
    return (
        "; attach to it instead (`--host auto`, the default), or stop it "
        f"(`askbridge host --stop --data-dir {data_dir}`)"
    )


async def open_team_store(data_dir: str | Path, url: str | None, who: str) -> Any:
    """The team store of a host (G1), or None after printing its refusal in one line as
    `who`: it opens in the event loop, its driver being async, before host.sock is bound."""
    from askbridge.core.errors import StoreError
    from askbridge.host.store.store_open import open_store

    try:
        return await open_store(data_dir, url)
    except StoreError as exc:
        print(f"{who}: {exc}", file=sys.stderr)
        return None


async def _serve_on_team_store(door: str, url: str, data_dir: str, defaults: dict[str, Any]) -> int:
    """An inline host on a team store (G1): its driver is async, so the store opens in the
    event loop, then the socket is bound; no early LSP answer (the start is the database's
    round trips anyway)."""
    from pathlib import Path

    from askbridge.host.options import HostSettings
    from askbridge.process.hostsock import AttachError, bind_raw_host_socket, listening_socket

    store = await open_team_store(data_dir, url, "askbridge")
    if store is None:
        return 1
    try:
        raw = bind_raw_host_socket(data_dir)
    except AttachError as exc:  # H1: the socket's folder refused
        await store.close()
        print(f"askbridge: {exc}", file=sys.stderr)
        return 1
    settings = HostSettings.over_defaults(defaults)
    return await _serve(
        door, store, settings, Path(data_dir), defaults, None, listening_socket(raw)
    )


async def _serve(
    door: str,
    store: Any,
    settings: HostSettings,
    data_dir: Path,
    defaults: dict[str, Any],
    early: Any,
    sock: Any,
) -> int:
    from askbridge.jsonrpc.stdio import join_copiers, open_stdio

    from .bootstrap import serve_host
    from .doors import log_start, serve_door

    async def own_client(host: Host, listener: HostSocket, tg: TaskGroup) -> int:
        log_start(door, data_dir, "inline", defaults)
        own = {"env": dict(os.environ), "options": defaults}
        status = await serve_door(host, door, reader, writer, own, early, data_dir)
        command = {"lsp": "serve"}.get(door, door)
        listener.stopping(
            "its own client is done (inline)",
            f"exited with its own client (askbridge {command} --host inline, pid {os.getpid()})",
        )
        listener.stop_doors()
        tg.cancel_scope.cancel()
        return status

    try:
        reader, writer = await open_stdio()
        status = await serve_host(store, data_dir, settings, sock, own_client, inline=True)
    finally:
        await store.close()
    join_copiers()
    return status
