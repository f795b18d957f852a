"""How `askbridge web` starts, or says in one line why it cannot (B1, B8, S14).

- A network address needs TLS or `--insecure-http`; with it, the door prints a URL
  for each address of the machine and a QR code of the first. That runs in a
  network namespace of its own (`unshare -n`) with made-up addresses on a veth
  pair, so nothing leaves this machine's loopback.
- A host that cannot start (a read-only data directory, a damaged store, another
  host holding the directory) is the one line `askbridge serve` prints, in both
  host modes, never a traceback.
- A bad certificate or a port in use is named as such, before any host starts.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from webstack import ASKBRIDGE

NETNS_SETUP = (
    "ip link set lo up && ip link add v0 type veth peer name v1 && "
    "ip addr add 10.9.8.7/24 dev v0 && ip addr add 192.168.77.5/24 dev v0 && "
    "ip -6 addr add fd00::7/64 dev v0 nodad && "
    'ip link set v0 up && ip link set v1 up && exec "$@"'
)


def can_unshare(flag: str) -> bool:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    probe = subprocess.run(["unshare", flag, "true"], capture_output=True, check=False)
    return probe.returncode == 0


needs_netns = pytest.mark.skipif(not can_unshare("-n"), reason="needs `unshare -n` (root)")
needs_mountns = pytest.mark.skipif(not can_unshare("-m"), reason="needs `unshare -m` (root)")


async def run(*cmd: str, stdin: bytes = b"") -> tuple[int, list[str]]:
    """A command to its end: its status and its stderr lines."""
    process = await asyncio.create_subprocess_exec(
        *cmd,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    with anyio.fail_after(60):
        _, err = await process.communicate(stdin)
    assert process.returncode is not None
    return process.returncode, err.decode().splitlines()


def web(data_dir: Path, *args: str) -> list[str]:
    return [ASKBRIDGE, "web", "--data-dir", str(data_dir), "--idle-exit", "5", *args]


def one_line(lines: list[str]) -> str:
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0] and "ExceptionGroup" not in lines[0]
    assert lines[0].startswith("askbridge web: "), lines
    return lines[0].removeprefix("askbridge web: ")


async def test_S14_a_network_address_without_tls_refuses_to_start(tmp_path: Path) -> None:
    """One line naming the way out, status 2, and no host started (nothing created)."""
    data_dir = tmp_path / "data"
    for listen in ("0.0.0.0:0", ":0", "[::]:0", "192.0.2.10:0"):
        status, lines = await run(*web(data_dir, "--listen", listen))
        assert status == 2
        line = one_line(lines)
        assert "unencrypted" in line and "--insecure-http" in line and "--tls-cert" in line
    assert not data_dir.exists()


@needs_netns
@pytest.mark.parametrize(
    ("listen", "addresses"),
    [
        ("0.0.0.0:0", ["127.0.0.1", "10.9.8.7", "192.168.77.5"]),
        ("[::]:0", ["[::1]", "[fd00::7]"]),  # asyncio listens on `::` for IPv6 only
    ],
)
async def test_S14_insecure_http_starts_with_a_url_for_each_address_and_a_qr_code(
    tmp_path: Path, listen: str, addresses: list[str]
) -> None:
    """`--listen 0.0.0.0:0 --insecure-http` (and `[::]:0`): the warning says the token travels
    unencrypted; a URL for this machine and for each of its network addresses; the QR
    code of the first network one; and that URL logs in from the network side."""
    import segno

    data_dir = tmp_path / "data"
    door = await asyncio.create_subprocess_exec(
        "unshare",
        "-n",
        "sh",
        "-c",
        NETNS_SETUP,
        "sh",
        *web(data_dir, "--listen", listen, "--insecure-http", "--host", "inline"),
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert door.stderr is not None
    try:
        lines: list[str] = []
        with anyio.fail_after(30):
            while len(lines) < 1 + len(addresses):
                raw = await door.stderr.readline()
                assert raw, lines
                lines.append(raw.decode().rstrip("\n"))
        assert "without TLS" in lines[0] and "unencrypted" in lines[0]
        urls = [re.fullmatch(r"askbridge web: open (\S+)", line) for line in lines[1:]]
        assert all(urls), lines
        found = [m[1] for m in urls if m]
        port = re.search(r":(\d+)/", found[0])[1]  # type: ignore[index]
        token = found[0].rsplit("=", 1)[1]
        assert found == [f"http://{ip}:{port}/#token={token}" for ip in addresses]
        qr = segno.make(found[1], error="l")
        expected = _terminal(qr)
        with anyio.fail_after(10):
            shown = [(await door.stderr.readline()).decode().rstrip("\n") for _ in expected]
        assert shown == expected

        probe = (
            "import httpx, sys\n"
            "c = httpx.Client(base_url=sys.argv[1].split('/#')[0], timeout=10)\n"
            "r = c.post('/api/login', json={'token': sys.argv[1].rsplit('=', 1)[1]})\n"
            "h = {'X-Askbridge-Session': r.json()['key']}\n"
            "print(r.status_code, c.get('/api/ping', headers=h).status_code)\n"
        )
        seen = subprocess.run(  # noqa: ASYNC221 - a short probe from inside the namespace
            ["nsenter", f"--net=/proc/{door.pid}/ns/net", sys.executable, "-c", probe, found[1]],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert seen.stdout.split() == ["200", "200"], seen.stderr
    finally:
        door.terminate()
        with anyio.fail_after(15):
            assert await door.wait() == 0


def _terminal(qr: object) -> list[str]:
    import io

    out = io.StringIO()
    qr.terminal(out=out, compact=True, border=2)  # type: ignore[attr-defined]
    return out.getvalue().rstrip("\n").split("\n")


@needs_mountns
async def test_B8_a_read_only_data_dir_is_the_one_line_serve_prints(
    tmp_path: Path, host_mode: str
) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    data_dir = ro / "data"
    mounted = ["unshare", "-m", "sh", "-c", f'mount -t tmpfs -o ro tmpfs {ro} && exec "$@"', "sh"]
    status, lines = await run(
        *mounted, *web(data_dir, "--listen", "127.0.0.1:0", "--host", host_mode)
    )
    assert status == 1
    said = one_line(lines)
    serve_cmd = [ASKBRIDGE, "serve", "--data-dir", str(data_dir), "--host", host_mode]
    _, serve = await run(*mounted, *serve_cmd)
    assert said == serve[-1].split(": ", 1)[1]
    assert "Read-only file system" in said


async def test_B8_a_missing_database_beside_its_store_marker_is_the_one_line_serve_prints(
    tmp_path: Path, host_mode: str
) -> None:
    data_dir = tmp_path / "data"
    status, _ = await run(ASKBRIDGE, "serve", "--data-dir", str(data_dir), "--host", "inline")
    assert status == 0 and (data_dir / "askbridge.store").exists()
    (data_dir / "askbridge.db").unlink()
    status, lines = await run(*web(data_dir, "--listen", "127.0.0.1:0", "--host", host_mode))
    assert status == 1
    said = one_line(lines)
    assert "askbridge.db is missing" in said and "askbridge.store" in said
    _, serve = await run(ASKBRIDGE, "serve", "--data-dir", str(data_dir), "--host", host_mode)
    assert said == serve[-1].split(": ", 1)[1]


@pytest.mark.inline_only
async def test_B8_inline_beside_a_running_host_is_the_one_line_serve_prints(
    tmp_path: Path, host_mode: str
) -> None:
    """Inline only: in auto mode the door attaches to that host, which is no error."""
    data_dir = tmp_path / "data"
    host = await asyncio.create_subprocess_exec(
        ASKBRIDGE,
        "host",
        "--data-dir",
        str(data_dir),
        "--idle-exit",
        "30",
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert host.stderr is not None
        with anyio.fail_after(30):
            await host.stderr.readline()  # "serving D": it holds the directory
        status, lines = await run(*web(data_dir, "--listen", "127.0.0.1:0", "--host", "inline"))
        assert status == 1
        said = one_line(lines)
        assert f"is in use by process {host.pid}" in said
        _, serve = await run(ASKBRIDGE, "serve", "--data-dir", str(data_dir), "--host", "inline")
        assert said == serve[-1].split(": ", 1)[1]
    finally:
        host.terminate()
        with anyio.fail_after(15):
            await host.wait()


async def test_B1_a_bad_certificate_or_a_busy_port_is_named_before_a_host_starts(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    status, lines = await run(
        *web(data_dir, "--tls-cert", str(tmp_path / "nope.pem"), "--tls-key", str(tmp_path / "k"))
    )
    assert status == 1 and "cannot read --tls-cert" in one_line(lines)
    assert "No such file" in lines[0] and "cannot listen" not in lines[0]
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    status, lines = await run(*web(data_dir, "--tls-cert", str(garbage), "--tls-key", str(garbage)))
    assert status == 1 and "not a PEM certificate and its private key" in one_line(lines)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        listen = f"127.0.0.1:{busy.getsockname()[1]}"
        status, lines = await run(*web(data_dir, "--listen", listen))
        assert status == 1
        said = one_line(lines)
        assert "in use" in said and "--listen HOST:PORT" in said
        assert not data_dir.exists()  # no host was started for a door that cannot listen

        # --new-token beside a running door on that port: replaced all the same, and the
        # line gives the new URL.
        data_dir.mkdir(mode=0o700)
        (data_dir / "web.token").write_text("ab" * 32 + "\n")
        os.chmod(data_dir / "web.token", 0o600)
        status, lines = await run(*web(data_dir, "--listen", listen, "--new-token"))
        token = (data_dir / "web.token").read_text().split("\n")[0]
        assert status == 1 and token != "ab" * 32
        assert one_line(lines).endswith(f"takes only http://{listen}/#token={token}")
    status, lines = await run(*web(data_dir, "--token-ttl", "soon"))
    assert status == 2 and "--token-ttl 'soon'" in one_line(lines)
