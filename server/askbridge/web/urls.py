"""The URLs `askbridge web` prints: where a browser on this machine, or on the network,
opens the page (the token in the fragment, B2), and a QR code of the first network
one so a phone need not type 64 hex digits.

The machine's addresses come from `ip -j addr` (iproute2); where that is missing,
from the address the machine would use to reach the network (a UDP socket's
`connect` sends nothing). segno draws the QR code; it is imported only when one is
printed, so start-up and every other command are unaffected.
"""

from __future__ import annotations

import ipaddress
import json
import shutil
import socket
import subprocess
import sys
import time
from typing import TextIO

from .token import Token, TokenFile

PROG = "askbridge web"
WILDCARDS = ("0.0.0.0", "::", "")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url(scheme: str, host: str, port: int, token: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}/#token={token}"


def network_addresses(listen_host: str) -> list[str]:
    """The addresses a phone can reach the door at: the listen address itself, or, on a
    wildcard address, every non-loopback address of this machine's interfaces of its
    family (asyncio listens on `::` for IPv6 only), never a link-local one."""
    if listen_host not in WILDCARDS:
        return [] if is_loopback(listen_host) else [listen_host]
    found = _from_ip_command() or _from_route()
    ips = [ipaddress.ip_address(a) for a in dict.fromkeys(found)]
    usable = [
        ip
        for ip in ips
        if not (ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast)
        and ip.version == (6 if listen_host == "::" else 4)
    ]
    return [str(ip) for ip in usable]


def _from_ip_command() -> list[str]:
    ip = shutil.which("ip")
    if ip is None:
        return []
    try:
        out = subprocess.run(
            [ip, "-j", "addr", "show", "up"], capture_output=True, timeout=5, check=True
        ).stdout
        return [
            str(info["local"])
            for link in json.loads(out)
            for info in link.get("addr_info", [])
            if "local" in info
        ]
    except (OSError, subprocess.SubprocessError, ValueError, TypeError, KeyError):
        return []


def _from_route() -> list[str]:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: never sent, only routed
            return [str(s.getsockname()[0])]
    except OSError:
        return []


def print_qr(text: str, out: TextIO) -> None:
    """`text` as a QR code of half-height blocks, readable by a phone's camera from the
    terminal."""
    import segno

    segno.make(text, error="l").terminal(out=out, compact=True, border=2)


def announce(host: str, port: int, tls: bool, token_file: TokenFile, token: Token) -> None:
    """Print where to open the page; when the token has expired, only that and how to
    get a new one."""
    scheme = "https" if tls else "http"
    if token_file.expired(token):
        when = date(token.expires)
        print(
            f"{PROG}: the token in {token_file.path} expired on {when}; run "
            f"`{PROG} --new-token` for a new URL",
            file=sys.stderr,
            flush=True,
        )
        return
    lan = network_addresses(host)
    if not is_loopback(host):
        what = "over TLS" if tls else "without TLS: the token travels unencrypted"
        print(
            f"{PROG}: warning: listening on {host}:{port}, reachable from the network, {what}",
            file=sys.stderr,
            flush=True,
        )
    local = {"::": "::1", "0.0.0.0": "127.0.0.1", "": "127.0.0.1"}.get(host, host)
    shown = [] if local in lan else [local]
    for name in [*shown, *lan]:
        print(f"{PROG}: open {url(scheme, name, port, token.value)}", file=sys.stderr, flush=True)
    if lan:
        print_qr(url(scheme, lan[0], port, token.value), sys.stderr)
        sys.stderr.flush()
    elif not is_loopback(host):
        print(f"{PROG}: found no network address of this machine", file=sys.stderr, flush=True)


def date(when: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M %Z", time.localtime(when))
