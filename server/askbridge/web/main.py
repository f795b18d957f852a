"""Running the web door: the child `askbridge serve`, the bridge, the HTTP site.

Ctrl-C or SIGTERM ends it cleanly (the child gets `shutdown` + `exit`, status 0);
the host going away (the child exits) ends it with one line on stderr and status 1
(H8), which reuses the child's own reason when it gave one.

Two environment variables exist for tests only: `ASKBRIDGE_WEB_SERVE`, a JSON list,
is the child's whole command line instead of `askbridge serve …` (a stand-in host:
tests/web/web_transcript_player.py plays the golden transcripts to the door), and
`ASKBRIDGE_WEB_POLL_S` replaces the 1 s listing interval (tests/web/test_web_idle.py).
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import os
import signal
import ssl
import sys
from collections import deque
from pathlib import Path

import anyio

from askbridge.jsonrpc import ConnectionClosed, lsp_connection
from askbridge.paths import data_dir_of

from .app import MAX_BODY, allowed_hosts, build_app
from .bridge import POLL_S, Bridge
from .http import HttpServer
from .token import load_token

PROG = "askbridge web"
SERVE_ENV = "ASKBRIDGE_WEB_SERVE"
POLL_ENV = "ASKBRIDGE_WEB_POLL_S"
# How the child's own one-line refusals start: `askbridge serve: …`, or `askbridge: …` from an
# inline host that refused its data directory.
CHILD_SAYS = ("askbridge ", "askbridge: ")


def parse_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--listen {value!r} is not HOST:PORT")
    return host.strip("[]") or "0.0.0.0", int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run(args: argparse.Namespace) -> int:
    try:
        host, port = parse_listen(args.listen)
    except ValueError as exc:
        print(f"{PROG}: error: {exc}; see {PROG} --help", file=sys.stderr)
        return 2
    if bool(args.tls_cert) != bool(args.tls_key):
        print(
            f"{PROG}: error: --tls-cert and --tls-key go together; see {PROG} --help",
            file=sys.stderr,
        )
        return 2
    try:
        return asyncio.run(_main(args, host, port))
    except KeyboardInterrupt:
        return 130


async def _main(args: argparse.Namespace, host: str, port: int) -> int:
    data_dir = Path(data_dir_of(args.data_dir))
    command = [
        sys.executable,
        "-m",
        "askbridge.cli",
        "serve",
        "--data-dir",
        str(data_dir),
        "--host",
        args.host,
        "--idle-exit",
        str(args.idle_exit),
        "--for-web",
    ]
    if args.log_file:
        command += ["--log-file", args.log_file, "--log-level", args.log_level]
    if os.environ.get(SERVE_ENV):
        command = [str(part) for part in json.loads(os.environ[SERVE_ENV])]
    child = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    tail: deque[str] = deque(maxlen=5)
    conn = lsp_connection(child.stdout, child.stdin)
    bridge = Bridge(conn, float(os.environ.get(POLL_ENV) or POLL_S))
    stopping = False
    server: HttpServer | None = None

    async def serve_http() -> None:
        nonlocal server
        token = load_token(data_dir, new=args.new_token)
        tls = None
        if args.tls_cert:
            tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            tls.load_cert_chain(args.tls_cert, args.tls_key)
        hosts, wildcard = allowed_hosts(host, port, args.allow_host)
        server = HttpServer(
            build_app(bridge, token, hosts, wildcard, tls is not None), max_body=MAX_BODY
        )
        bound = await server.start(host, port, tls)
        hosts.update(allowed_hosts(host, bound, args.allow_host)[0])  # --listen HOST:0
        shown = f"[{host}]" if ":" in host else host
        if host in ("0.0.0.0", "::"):
            shown = "127.0.0.1"
        scheme = "https" if tls else "http"
        if not is_loopback(host):
            print(
                f"{PROG}: warning: listening on {host}:{bound}; the page is reachable from "
                "the network (the token still guards it)",
                file=sys.stderr,
                flush=True,
            )
        print(
            f"{PROG}: open {scheme}://{shown}:{bound}/#token={token}", file=sys.stderr, flush=True
        )

    async def read_stderr() -> None:
        async for raw in child.stderr:  # type: ignore[union-attr]
            line = raw.decode(errors="replace").rstrip()
            if line:
                tail.append(line)

    def stop() -> None:
        nonlocal stopping
        stopping = True
        tg.cancel_scope.cancel()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
    failure: str | None = None
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_stderr)
            ready = anyio.Event()

            async def on_ready() -> None:
                await ready.wait()
                try:
                    await serve_http()
                except OSError as exc:
                    nonlocal failure
                    failure = f"cannot listen on {host}:{port}: {exc.strerror or exc}"
                    tg.cancel_scope.cancel()

            tg.start_soon(on_ready)
            try:
                await bridge.run(ready.set)
            except* ConnectionClosed:  # the child ended (its task group wraps it): said below
                pass
            tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            if server is not None:
                await server.close()
            if child.stdin is not None and not child.stdin.is_closing():
                child.stdin.close()  # end of input: the child ends cleanly, status 0
            with anyio.move_on_after(5):
                await child.wait()
            if child.returncode is None:
                child.kill()
                await child.wait()
    if stopping and failure is None:
        return 0
    if failure is None:
        reason = next((ln for ln in reversed(tail) if ln.startswith(CHILD_SAYS)), None)
        if reason is not None:
            failure = reason.split(": ", 1)[-1]
        else:
            failure = (
                f"lost the host of {data_dir} (status {child.returncode}); see {data_dir}/host.log"
            )
    print(f"{PROG}: {failure}", file=sys.stderr, flush=True)
    return 1
