"""`askbridge web`: the web door (behavior.md B1–B9; protocol/README.md "Web door").

The door runs `askbridge serve --data-dir D --host MODE` as its child and is one
`experimental.userQuestions` LSP client of the data directory's host through it
(bridge.py), so the host needs nothing new and every M, C and L rule holds for
browsers as for editor windows. It imports none of the other doors.

Why h11 (http.py): it is the well-kept HTTP/1.1 protocol library under httpcore
(httpx, already a dependency) and uvicorn; it parses and frames every message, so
no HTTP is hand-written here, and it costs 0.4 MiB where aiohttp cost ~17 MiB: the
door must idle under 40 MiB (benchmarks/bench_web_idle.py measures it).
TLS is asyncio's own (`ssl.SSLContext`); the event stream is server-sent events
(no websockets); the standard library has no asyncio HTTP server, and Starlette
would need uvicorn (and ~9 MiB) as well.

The door prints its URL (token in the fragment, B2) on stderr, and nothing else
unless asked; losing its host ends it with one line (H8) and status 1. Browsers
hold a session, never the token (S14: session.py).
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_web_parser", "run_web"]


def run_web(args: argparse.Namespace) -> int:
    # Imported here: the HTTP server would cost every other command's start-up otherwise.
    from .main import run

    return run(args)


def add_web_parser(sub: Any) -> argparse.ArgumentParser:
    """The door's own flags; cli/parser.py adds the data-dir, log and front-door flags every
    door shares (a door never imports the command line: tests/unit/test_layers.py)."""
    web: argparse.ArgumentParser = sub.add_parser(
        "web",
        help="answer the agents' questions in a browser, on this machine or a phone",
        description="Serve a page (and a JSON API) that shows every question of the data "
        "directory's host and takes the answers. Prints its URL on stderr.",
    )
    web.add_argument(
        "--listen",
        default="127.0.0.1:8765",
        metavar="HOST:PORT",
        help="where to serve; a non-loopback address is reachable from the network and "
        "needs --tls-cert/--tls-key or --insecure-http (default: 127.0.0.1:8765)",
    )
    web.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another name the page may be reached by (the Host header), repeatable",
    )
    web.add_argument("--tls-cert", metavar="FILE", help="serve HTTPS with this certificate")
    web.add_argument("--tls-key", metavar="FILE", help="the private key of --tls-cert")
    web.add_argument(
        "--insecure-http",
        action="store_true",
        help="serve a non-loopback --listen address without TLS: the token then travels "
        "unencrypted over the network",
    )
    web.add_argument(
        "--new-token",
        action="store_true",
        help="replace the token (every browser logs in again, also at a door already running)",
    )
    web.add_argument(
        "--token-ttl",
        default="30d",
        metavar="DURATION",
        help="how long a token is good for, from when it was made: seconds, or a number with "
        "s, m, h, d or w (default: 30d)",
    )
    return web
