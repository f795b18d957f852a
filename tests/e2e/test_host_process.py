"""The host process of a data directory and the front doors that reach it (behavior.md H1–H8).

Real processes throughout: `askbridge serve` front doors (the harness and raw
subprocesses), `askbridge host`, its socket. These tests are about the auto
mode itself, so each chooses its modes explicitly.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from e2e_scripts import SQLITE, ask_step, script, stored_events, text_step

from askbridge import __version__
from askbridge.testing import AskbridgeClient
from askbridge.testing.hosts import (
    host_pid,
    host_status,
    kill_host,
    stop_host,
    wait_gone,
    wait_status,
)
from askbridge.testing.wire import RawServer, serve_command
from lsp_steps import new_session, start_prompt

pytestmark = pytest.mark.own_host_modes  # each test says which modes it starts

ASKBRIDGE = [sys.executable, "-m", "askbridge.cli"]


def _start_serve(data: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        serve_command(data, *args, host="auto"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _initialize_and_leave(process: subprocess.Popen[bytes]) -> tuple[int, bytes]:
    """initialize, shutdown, exit through the front door; its status and stdout."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    shutdown = {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}
    exit_ = {"jsonrpc": "2.0", "method": "exit"}
    out, _ = process.communicate(_frame(init) + _frame(shutdown) + _frame(exit_), timeout=30)
    return process.returncode, out


def test_H1_the_socket_is_private_and_refuses_other_users() -> None:
    # Somewhere another user can reach once we open it up (pytest's own dirs are 0700).
    base = Path(tempfile.mkdtemp(prefix="askbridge-h1-", dir="/tmp"))
    os.chmod(base, 0o711)
    data = base / "data"
    front = _start_serve(data)
    try:
        wait_status(data)
        sock_path = data / "host.sock"
        assert stat.S_IMODE(os.stat(sock_path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(data).st_mode) == 0o700
        # Open the way for another user, as a careless chmod would: SO_PEERCRED still refuses.
        os.chmod(data, 0o711)
        os.chmod(sock_path, 0o666)
        probe = (
            "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
            "try:\n s.sendall(b'{\"status\": true}\\n'); print(repr(s.recv(100)))\n"
            "except (ConnectionResetError, BrokenPipeError): print(repr(b''))"
        )
        done = subprocess.run(  # the system's python: ours lives under /root (0700)
            ["/usr/bin/python3", "-c", probe, str(sock_path)],
            user=65534,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.stdout.strip() == "b''", done  # closed without an answer
        os.chmod(data, 0o700)
        os.chmod(sock_path, 0o600)
        assert host_status(data) is not None  # the owner is still served
    finally:
        _initialize_and_leave(front)
        stop_host(data)
        shutil.rmtree(base, ignore_errors=True)


def _hosts_of(data: Path) -> list[int]:
    found = subprocess.run(
        ["pgrep", "-f", f"askbridge.cli host --data-dir {data} "], capture_output=True, text=True
    )
    return [int(pid) for pid in found.stdout.split()]


def test_H2_front_doors_starting_at_once_share_one_host(tmp_path: Path) -> None:
    data = tmp_path / "data"
    doors = [_start_serve(data) for _ in range(5)]
    try:
        assert all(_initialize_and_leave(door)[0] == 0 for door in doors)
        deadline = time.monotonic() + 10
        while len(_hosts_of(data)) > 1 and time.monotonic() < deadline:
            time.sleep(0.05)  # the hosts that lost the race for the lock are on their way out
        assert _hosts_of(data) == [host_pid(data)]
        assert "in use" not in (data / "host.log").read_text()  # the losers left quietly
    finally:
        stop_host(data)


def test_H2_a_socket_file_without_a_listener_is_replaced(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(str(data / "host.sock"))
    dead.close()  # the file stays: a host that died
    try:
        status, out = _initialize_and_leave(_start_serve(data))
        assert status == 0 and b'"serverInfo"' in out
    finally:
        stop_host(data)


async def test_H3_front_doors_attach_to_an_inline_host_while_it_lives(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with AskbridgeClient.connect(
        data_dir=data, host="inline", model=script(text_step("hi"))
    ) as a:
        assert host_status(data)["mode"] == "inline"  # type: ignore[index]
        async with AskbridgeClient.connect(data_dir=data, host="auto") as b:
            sid = await b.new_session()
            assert await b.prompt(sid, "hello") == "end_turn"
            assert host_pid(data) == a.process.pid  # b was served by a's process
        status = host_status(data)
        assert status is not None and status["doors"] == []


async def test_H4_the_front_door_exits_with_the_status_of_its_client(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with RawServer.start(data, host="auto") as server:
        await server.initialize()
        await server.notify("exit")  # without shutdown: 1
        assert await server.wait() == 1
    async with RawServer.start(data, host="auto") as server:
        await server.initialize()
        assert await server.shutdown_and_exit() == 0
    async with RawServer.start(data, host="auto") as server:
        await server.initialize()
        server.close_input()
        assert await server.wait() == 0
    stop_host(data)


class _Completions(BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        _Completions.seen.append(self.headers["Authorization"])
        body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "ok"}}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: Any) -> None:
        pass


async def test_H5_a_sessions_api_key_comes_from_the_client_that_opened_it(tmp_path: Path) -> None:
    """A real OpenAI-compatible endpoint on loopback records the bearer each request carries."""
    server = HTTPServer(("127.0.0.1", 0), _Completions)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    model = {
        "kind": "openai",
        "model": "m",
        "baseUrl": f"http://127.0.0.1:{server.server_port}/v1",
        "apiKeyEnv": "ASKBRIDGE_TEST_KEY",
    }
    data = tmp_path / "data"
    _Completions.seen = []
    try:
        async with (
            AskbridgeClient.connect(
                data_dir=data, host="auto", model=model, env={"ASKBRIDGE_TEST_KEY": "key-a"}
            ) as a,
            AskbridgeClient.connect(
                data_dir=data, host="auto", model=model, env={"ASKBRIDGE_TEST_KEY": "key-b"}
            ) as b,
        ):
            sa, sb = await a.new_session(), await b.new_session()
            assert await a.prompt(sa, "hi") == "end_turn"
            assert await b.prompt(sb, "hi") == "end_turn"
            assert await b.prompt(sa, "again") == "end_turn"  # a's session keeps a's key
        assert _Completions.seen == ["Bearer key-a", "Bearer key-b", "Bearer key-a"]
        assert "key-a" not in (data / "host.log").read_text() + (
            data / "askbridge.db"
        ).read_bytes().decode(errors="replace")
    finally:
        server.shutdown()
        stop_host(data)


def test_H6_the_host_exits_when_idle_and_on_stop_and_reports_its_status(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert _initialize_and_leave(_start_serve(data, "--idle-exit", "1"))[0] == 0
    pid = host_pid(data)
    assert pid is not None and wait_gone(pid, timeout=10)  # H6: idle for 1 s
    assert not (data / "host.sock").exists()

    front = _start_serve(data)
    try:
        wait_status(data)
        shown = subprocess.run(
            [*ASKBRIDGE, "host", "--status", "--data-dir", str(data)],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert shown.returncode == 0 and f"version {__version__}" in shown.stdout
        assert "front doors attached: 1" in shown.stdout and "lsp (pid" in shown.stdout
        stopped = subprocess.run(
            [*ASKBRIDGE, "host", "--stop", "--data-dir", str(data)],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert stopped.returncode == 0 and "stopped the askbridge host" in stopped.stdout
        assert front.wait(timeout=10) == 1  # its host was stopped under it
        none = subprocess.run(
            [*ASKBRIDGE, "host", "--status", "--data-dir", str(data)],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert none.returncode == 1 and "no askbridge host is running" in none.stdout
    finally:
        if front.poll() is None:
            front.kill()
        front.wait()


def test_H7_a_front_door_of_another_version_is_refused_in_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    front = _start_serve(data)
    try:
        wait_status(data)
        other = (
            "import sys; from askbridge.process.attach import attach;"
            "sys.exit(attach('lsp', sys.argv[1], {}, '0.0.0-other', 5))"
        )
        done = subprocess.run(
            [sys.executable, "-c", other, str(data)], input=b"", capture_output=True, timeout=30
        )
        assert done.returncode == 1 and done.stdout == b""
        [line] = done.stderr.decode().splitlines()
        assert f"is version {__version__}, this front door is 0.0.0-other" in line
        assert f"askbridge host --stop --data-dir {data}" in line
    finally:
        _initialize_and_leave(front)
        stop_host(data)


async def test_H8_when_the_host_dies_every_front_door_exits_1_and_nothing_acknowledged_is_lost(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    model = script(ask_step(timeout=600), text_step("after"))
    async with RawServer.start(
        data, "--model", json.dumps(model), "--ask-mode", "timed", host="auto"
    ) as a:
        async with RawServer.start(data, host="auto") as b:
            await a.initialize()
            await b.initialize()
            sid = await new_session(a)
            await start_prompt(a, sid)
            await a.server_request("userQuestions/ask")
            assert (await b.call("session/list", {}))["result"]["sessions"][0]["sessionId"] == sid
            kill_host(data)
            assert await a.wait() == 1 and await b.wait() == 1
            await a.read_to_end()  # strict: nothing half-written reached the client
    events = await stored_events(data, sid)
    assert [e["type"] for e in events][-1] == "tool/call"  # committed before it was asked (D1)
    async with AskbridgeClient.connect(data_dir=data, host="auto") as c:  # a new host repairs (P7)
        view = await c.view(sid)
        assert [(x["callId"], x["state"]) for x in view["active"]] == [("call-1", "continued")]
        assert await c.answer_late(sid, "call-1", SQLITE) is True
    stop_host(data)


def test_H4_relay_mode_serves_the_client_when_descriptors_cannot_be_passed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    process = subprocess.Popen(
        serve_command(data, host="auto"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "ASKBRIDGE_RELAY": "1"},
    )
    try:
        status, out = _initialize_and_leave(process)
        assert status == 0 and b'"serverInfo"' in out and out.count(b"Content-Length") == 2
    finally:
        stop_host(data)
