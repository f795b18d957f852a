"""Running the web door: the child `askbridge serve`, the bridge, the HTTP site.

Ctrl-C or SIGTERM ends it cleanly (the child gets `shutdown` + `exit`, status 0);
the host going away (the child exits) ends it with one line on stderr and status 1
(H8), which reuses the child's own reason when it gave one: a host that cannot
start at all (an unwritable data directory, a damaged store, another host holding
it) is the same one line `askbridge serve` prints. What the door can check itself
comes first, before any host is started: its flags (status 2), the TLS
certificate, and the listen address (bound then, served once the host is ready).

Two environment variables exist for tests only: `ASKBRIDGE_WEB_SERVE`, a JSON list,
is the child's whole command line instead of `askbridge serve …` (a stand-in host:
tests/web/web_transcript_player.py plays the golden transcripts to the door), and
`ASKBRIDGE_WEB_POLL_S` replaces the 1 s listing interval (tests/web/test_web_idle.py).
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import json
import os
import re
import signal
import ssl
import sys
from collections import deque
from pathlib import Path

import anyio
from anyio.abc import TaskGroup

from askbridge.jsonrpc import ConnectionClosed, lsp_connection
from askbridge.process.paths import data_dir_of

from .app import WebApp, allowed_hosts
from .bridge import POLL_S, Bridge
from .http import HttpServer
from .push_api import PushApi
from .push_keys import VapidKeyFile
from .push_subscriptions import MemorySubscriptions
from .session import Sessions
from .token import TOKEN_FILE, TokenFile, parse_ttl
from .urls import announce, is_loopback, url

PROG = "askbridge web"
SERVE_ENV = "ASKBRIDGE_WEB_SERVE"
POLL_ENV = "ASKBRIDGE_WEB_POLL_S"
REASON = re.compile(r"askbridge(?: [a-z]+)?: (.+)")  # `askbridge serve: …`, `askbridge: …`


class StartError(Exception):
    """The door cannot start: its one line (without the program name) and status."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def parse_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--listen {value!r} is not HOST:PORT")
    return host.strip("[]") or "0.0.0.0", int(port)


def _checked_flags(args: argparse.Namespace) -> tuple[str, int, float]:
    """The listen address and the token's lifetime; StartError(status 2) for a bad flag."""
    try:
        host, port = parse_listen(args.listen)
        ttl = parse_ttl(args.token_ttl)
    except ValueError as exc:
        raise StartError(f"error: {exc}; see {PROG} --help", 2) from exc
    if bool(args.tls_cert) != bool(args.tls_key):
        raise StartError(f"error: --tls-cert and --tls-key go together; see {PROG} --help", 2)
    if not is_loopback(host) and not args.tls_cert and not args.insecure_http:
        raise StartError(
            f"error: --listen {args.listen} is reachable from the network, where the token "
            "would travel unencrypted: give --tls-cert and --tls-key, or --insecure-http to "
            f"accept that; see {PROG} --help",
            2,
        )
    return host, port, ttl


def _tls(args: argparse.Namespace) -> ssl.SSLContext | None:
    if not args.tls_cert:
        return None
    for flag, path in (("--tls-cert", args.tls_cert), ("--tls-key", args.tls_key)):
        try:
            with open(path, "rb"):
                pass
        except OSError as exc:
            raise StartError(f"cannot read {flag} {path}: {exc.strerror or exc}") from exc
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        tls.load_cert_chain(args.tls_cert, args.tls_key)
    except (ssl.SSLError, OSError) as exc:
        raise StartError(
            f"--tls-cert {args.tls_cert} and --tls-key {args.tls_key} are not a PEM "
            f"certificate and its private key{_why(exc)}"
        ) from exc
    return tls


def _why(exc: OSError) -> str:
    reason = getattr(exc, "reason", None)  # OpenSSL's, e.g. KEY_VALUES_MISMATCH
    return f" ({reason})" if reason else ""


def run(args: argparse.Namespace) -> int:
    try:
        host, port, ttl = _checked_flags(args)
        tls = _tls(args)
        return asyncio.run(_main(args, host, port, ttl, tls))
    except StartError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr, flush=True)
        return exc.status
    except KeyboardInterrupt:
        return 130


async def _bind(
    server: HttpServer, args: argparse.Namespace, host: str, port: int, tls: ssl.SSLContext | None
) -> int:
    try:
        return await server.bind(host, port, tls)
    except OSError as exc:
        where = f"cannot listen on {args.listen}"
        if exc.errno != errno.EADDRINUSE:
            raise StartError(f"{where}: {exc.strerror or exc}") from exc
        message = f"{where}: the address is in use; pick another with --listen HOST:PORT"
        data_dir = Path(data_dir_of(args.data_dir))
        if args.new_token and (data_dir / TOKEN_FILE).exists():
            # Revoking beside a running door: its sessions end now (token.py).
            token = TokenFile(data_dir, parse_ttl(args.token_ttl)).load(new=True)
            scheme = "https" if tls else "http"
            message += (
                f". The token was replaced all the same: a door of {data_dir} running there "
                f"now takes only {url(scheme, host, port, token.value)}"
            )
        raise StartError(message) from exc


async def _main(
    args: argparse.Namespace, host: str, port: int, ttl: float, tls: ssl.SSLContext | None
) -> int:
    data_dir = Path(data_dir_of(args.data_dir))
    token_file = TokenFile(data_dir, ttl)
    expired_told = False

    def on_expired() -> None:
        nonlocal expired_told
        if not expired_told:  # once: a page retrying must not flood the terminal
            expired_told = True
            print(
                f"{PROG}: a page gave the expired token of {token_file.path}; run "
                f"`{PROG} --new-token` for a new URL",
                file=sys.stderr,
                flush=True,
            )

    hosts, wildcard = allowed_hosts(host, port, args.allow_host)
    server = HttpServer()
    bound = await _bind(server, args, host, port, tls)
    hosts.update(allowed_hosts(host, bound, args.allow_host)[0])  # --listen HOST:0
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
    try:
        child = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        server.close()
        raise StartError(f"cannot start {command[0]}: {exc.strerror or exc}") from exc
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    tail: deque[str] = deque(maxlen=5)
    conn = lsp_connection(child.stdout, child.stdin)
    bridge = Bridge(conn, float(os.environ.get(POLL_ENV) or POLL_S))
    stopping = False

    async def serve_http(tg: TaskGroup) -> None:
        sessions = Sessions(token_file)
        push = PushApi(VapidKeyFile(data_dir).keys, MemorySubscriptions())
        app = WebApp(bridge, sessions, hosts, wildcard, tls is not None, bound, on_expired, push)
        token = token_file.load(new=args.new_token)
        await tg.start(server.serve, app.handle, app.admit)  # its connections end with tg
        announce(host, bound, tls is not None, token_file, token)  # once it is served

    def stop() -> None:
        nonlocal stopping
        stopping = True
        tg.cancel_scope.cancel()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
    failure: str | None = None
    stderr = child.stderr
    async with anyio.create_task_group() as readers:
        stderr_read = anyio.Event()

        async def read_stderr() -> None:
            # Read to its end, outside the group the rest is cancelled with: the child's
            # last line, written as it exits, is the reason this door gives (a host that
            # could not start).
            async for raw in stderr:
                line = raw.decode(errors="replace").rstrip()
                if line:
                    tail.append(line)
            stderr_read.set()

        readers.start_soon(read_stderr)
        try:
            async with anyio.create_task_group() as tg:
                ready = anyio.Event()

                async def on_ready() -> None:
                    await ready.wait()
                    try:
                        await serve_http(tg)
                    except OSError as exc:
                        nonlocal failure
                        failure = f"cannot use {token_file.path}: {exc.strerror or exc}"
                        tg.cancel_scope.cancel()

                tg.start_soon(on_ready)
                try:
                    await bridge.run(ready.set)
                except* (ConnectionClosed, OSError):
                    pass  # the child went away: its stderr says why
                tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                server.close()  # bound, perhaps never served
                if not child.stdin.is_closing():
                    child.stdin.close()  # end of input: the child ends cleanly, status 0
                with anyio.move_on_after(5):
                    await child.wait()
                if child.returncode is None:
                    child.kill()
                    await child.wait()
                with anyio.move_on_after(2):
                    await stderr_read.wait()
                readers.cancel_scope.cancel()
    if stopping and failure is None:
        return 0
    if failure is None:
        said = (REASON.match(line) for line in reversed(tail))
        reason = next((m for m in said if m is not None), None)
        if reason is not None:  # the child's own line, as `askbridge serve` prints it
            failure = reason[1]
        else:
            failure = (
                f"lost the host of {data_dir} (status {child.returncode}); see {data_dir}/host.log"
            )
    print(f"{PROG}: {failure}", file=sys.stderr, flush=True)
    return 1
