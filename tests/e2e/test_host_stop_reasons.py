"""H6/H8: a host that stops or dies tells every attached front door why, and host.log says it.

Each cut-off front door exits 1 with one line on stderr (`askbridge serve: the host of D was
stopped (askbridge host --stop, pid N)` / `… exited unexpectedly (…); see D/host.log`), and
host.log records every start and stop with its reason. Real processes: `askbridge serve` in
both host modes, `askbridge host --stop`, signals.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from askbridge.testing.hosts import host_pid, stop_host, wait_gone, wait_status
from askbridge.testing.wire import serve_command

pytestmark = pytest.mark.own_host_modes  # each test says which modes it starts

ASKBRIDGE = [sys.executable, "-m", "askbridge.cli"]


INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}'


def _serve(data: Path, host: str) -> subprocess.Popen[bytes]:
    """A front door whose client has initialized (an inline LSP host runs its event loop,
    and so its listener, only after the first `initialize`, lsp/early.py) and stays."""
    front = subprocess.Popen(
        serve_command(data, host=host),
        stdin=subprocess.PIPE,  # kept open: the client stays until the host goes
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert front.stdin is not None
    front.stdin.write(b"Content-Length: %d\r\n\r\n" % len(INITIALIZE) + INITIALIZE)
    front.stdin.flush()
    return front


def _last_line(front: subprocess.Popen[bytes]) -> str:
    assert front.wait(timeout=20) == 1
    assert front.stderr is not None
    lines = front.stderr.read().decode().splitlines()
    front.stderr.close()
    return lines[-1] if lines else ""


def _close(*fronts: subprocess.Popen[bytes]) -> None:
    for front in fronts:
        if front.poll() is None:
            front.kill()
        front.wait()
        for pipe in (front.stdin, front.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()


@pytest.mark.parametrize("mode", ["auto", "inline"])
def test_H8_host_stop_tells_every_front_door_who_stopped_it(tmp_path: Path, mode: str) -> None:
    data = tmp_path / "data"
    first = _serve(data, mode)  # inline: this one is the host; auto: it starts one
    try:
        wait_status(data, 0 if mode == "inline" else 1)
        second = _serve(data, "auto")
        try:
            wait_status(data, 1 if mode == "inline" else 2)
            stopper = subprocess.Popen(
                [*ASKBRIDGE, "host", "--stop", "--data-dir", str(data)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            _out, err = stopper.communicate(timeout=30)
            assert stopper.returncode == 0, err
            told = f"the host of {data} was stopped (askbridge host --stop, pid {stopper.pid})"
            assert _last_line(second) == f"askbridge serve: {told}"
            if mode == "auto":  # inline: the first front door was the host itself
                assert _last_line(first) == f"askbridge serve: {told}"
        finally:
            _close(second)
    finally:
        _close(first)
    if mode == "auto":
        log = (data / "host.log").read_text()
        assert "askbridge host " in log and f"for {data}" in log  # the start (H6)
        assert f"stopping: --stop from pid {stopper.pid}" in log
        assert "stopped (status 0)" in log


def test_H8_a_killed_host_is_reported_with_its_status_and_log(tmp_path: Path) -> None:
    data = tmp_path / "data"
    starter = _serve(data, "auto")  # starts the host: its parent, so it learns the status
    try:
        wait_status(data, 1)
        other = _serve(data, "auto")
        try:
            wait_status(data, 2)
            pid = host_pid(data)
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            log = data / "host.log"
            assert _last_line(starter) == (
                f"askbridge serve: the host of {data} exited unexpectedly "
                f"(killed by signal 9); see {log}"
            )
            assert _last_line(other) == (
                f"askbridge serve: the host of {data} exited unexpectedly (pid {pid}); see {log}"
            )
        finally:
            _close(other)
    finally:
        _close(starter)


def test_H6_a_signal_stops_the_host_and_host_log_says_so(tmp_path: Path) -> None:
    data = tmp_path / "data"
    front = _serve(data, "auto")
    try:
        wait_status(data, 1)
        pid = host_pid(data)
        assert pid is not None
        os.kill(pid, signal.SIGTERM)
        assert _last_line(front) == (
            f"askbridge serve: the host of {data} was stopped by signal SIGTERM"
        )
        assert wait_gone(pid)
    finally:
        _close(front)
        stop_host(data)
    log = (data / "host.log").read_text()
    assert "stopping: signal SIGTERM" in log and "stopped (status 0)" in log


def test_H8_an_inline_hosts_own_client_ending_cuts_the_others_off_with_a_reason(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    inline = _serve(data, "inline")
    try:
        wait_status(data, 0)
        attached = _serve(data, "auto")
        try:
            wait_status(data, 1)
            assert inline.stdin is not None
            inline.stdin.close()  # its own client is done: end of input
            assert inline.wait(timeout=20) == 0
            assert _last_line(attached) == (
                f"askbridge serve: the host of {data} exited with its own client "
                f"(askbridge serve --host inline, pid {inline.pid})"
            )
        finally:
            _close(attached)
    finally:
        _close(inline)


def test_H6_a_host_started_by_hand_logs_to_host_log_and_a_second_one_says_it_is_served(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    host = subprocess.Popen(
        [*ASKBRIDGE, "host", "--data-dir", str(data)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        status = wait_status(data, 0)
        second = subprocess.run(
            [*ASKBRIDGE, "host", "--data-dir", str(data)],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert second.returncode == 1
        assert second.stderr.strip() == (
            f"askbridge host: {data} is already served by the host pid {status['pid']}; "
            f"`askbridge host --stop --data-dir {data}` stops it"
        )
        stop_host(data)
        assert host.wait(timeout=20) == 0
        assert host.stderr is not None
        told = host.stderr.read().decode()
        assert told == f"askbridge host: serving {data}; the log is {data / 'host.log'}\n"
        log = data / "host.log"
        assert (os.stat(log).st_mode & 0o777) == 0o600
        text = log.read_text()
        assert f"for {data}, pid {host.pid}" in text and "stopping: --stop from pid" in text
    finally:
        _close(host)
