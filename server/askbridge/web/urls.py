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
from typing import TextIO

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
    wildcard address, every non-loopback address of this machine's interfaces (IPv4
    first; IPv6 ones only when listening on `::`, never link-local)."""
    if listen_host not in WILDCARDS:
        return [] if is_loopback(listen_host) else [listen_host]
    found = _from_ip_command() or _from_route()
    ips = [ipaddress.ip_address(a) for a in dict.fromkeys(found)]
    usable = [
        ip
        for ip in ips
        if not (ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast)
        and (ip.version == 4 or listen_host == "::")
    ]
    return [str(ip) for ip in sorted(usable, key=lambda ip: ip.version)]


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
