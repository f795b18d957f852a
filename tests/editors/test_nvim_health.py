"""`:checkhealth askbridge` reports the data directory's host (H6, H7), and a server
that is still starting as starting, not as an error.

A host of another version refuses a front door (H7); this is what a user
meets after upgrading askbridge while the old host still runs. Here the
"other" askbridge is a second installation: this checkout's package copied
with another `__version__`, run by an `askbridge` launcher — the plugin's
server command. The host is the current version, started first with
`askbridge host`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_nvim import (
    ASKBRIDGE,
    PLUGIN_DIR,
    REPO,
    VIM_LOG_ERROR,
    no_host_outlives_the_test,  # noqa: F401 (an autouse fixture)
    nvim_binary,
)
from test_nvim_windows import Marks, Nvim, neovims  # noqa: F401 (neovims: a fixture)

from askbridge import __version__
from askbridge.testing.hosts import host_status, stop_host

OTHER_VERSION = "0.0.0-other"
HOST_START_S = 15


def other_askbridge(tmp_path: Path) -> Path:
    """An `askbridge` of version OTHER_VERSION (a copy of this checkout's package)."""
    lib = tmp_path / "other" / "lib"
    shutil.copytree(
        REPO / "server" / "askbridge",
        lib / "askbridge",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    init = lib / "askbridge" / "__init__.py"
    text = init.read_text()
    assert f'__version__ = "{__version__}"' in text
    init.write_text(text.replace(__version__, OTHER_VERSION, 1))
    launcher = tmp_path / "other" / "askbridge"
    launcher.write_text(
        f'#!/bin/sh\nPYTHONPATH={lib} exec {sys.executable} -m askbridge.cli "$@"\n'
    )
    launcher.chmod(0o755)
    return launcher


def test_H7_a_host_of_another_version_refuses_the_server_and_checkhealth_says_how_to_stop_it(
    tmp_path: Path,
    neovims: list[Nvim],  # noqa: F811 (the fixture imported above)
) -> None:
    """Before any host runs, :checkhealth says none runs and that the first command
    starts one. With a host of another version running, the plugin's server is
    refused: the user sees the host's one line (its pid, its version, how to stop
    it); :checkhealth shows the host (pid, version, front doors) and, as an error,
    the version mismatch with `askbridge host --stop --data-dir D` as the fix."""
    data_dir, marks = tmp_path / "data", Marks(tmp_path / "marks")
    other = other_askbridge(tmp_path)
    nvim = Nvim(
        tmp_path,
        "nvim",
        "scenario_health_host.lua",
        [str(other), "serve"],
        marks,
        {"autostart": False},
    )
    neovims.append(nvim)
    marks.wait("checked", nvim)
    with (tmp_path / "host.log").open("wb") as log:
        host = subprocess.Popen(
            [str(ASKBRIDGE), "host", "--data-dir", str(data_dir)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + HOST_START_S
        while host_status(data_dir) is None:
            assert time.monotonic() < deadline and host.poll() is None, "the host did not start"
            time.sleep(0.05)
        marks.put("host")
        result = nvim.finish(clean=False)
    finally:
        stop_host(data_dir)
        host.wait(timeout=10)

    before = "\n".join(result["health_before"])
    assert f"no askbridge host is running for {data_dir}: the first :Askbridge command" in before

    assert result["server_exit_code"] == 1
    (note,) = [n for n in result["notes"] if n["level"] == VIM_LOG_ERROR]
    header, refusal = note["msg"].split("\n")
    assert header == "askbridge: server exited with status 1:"
    assert f"(pid {host.pid}) is version {__version__}, this front door is {OTHER_VERSION}" in (
        refusal
    )
    assert f"askbridge host --stop --data-dir {data_dir}" in refusal

    health = "\n".join(result["health"])
    assert "WARNING the server is not running (last exit status 1)" in health, health
    assert (
        f"OK askbridge host running: pid {host.pid}, version {__version__},"
        f" 0 front doors attached, data dir {data_dir}"
    ) in health, health
    assert (
        f"ERROR the askbridge host (pid {host.pid}) is version {__version__},"
        f" but {other} is version {OTHER_VERSION}: the host refuses its server"
    ) in health, health
    assert f"stop the running host: askbridge host --stop --data-dir {data_dir}" in health


HEALTH_AT_START = """
vim.opt.runtimepath:prepend({plugin!r})
require('askbridge.health').INITIALIZE_WAIT_MS = {wait_ms}
require('askbridge').setup({{ cmd = vim.json.decode({cmd!r}), data_dir = {data!r} }})
"""


@pytest.mark.parametrize("server", ["askbridge", "silent"])
def test_checkhealth_right_at_start_up_says_starting_not_error(tmp_path: Path, server: str) -> None:
    """`nvim -u init.lua +'checkhealth askbridge'` while the server is still starting:
    the check waits for `initialize` (the real server: then all OK), or, for a server
    that has not answered by then (one that never answers), says it is starting —
    never the false ERROR "the server does not declare capabilities…"."""
    data_dir = tmp_path / "data"
    if server == "askbridge":
        cmd, wait_ms = [str(ASKBRIDGE), "serve"], 15000
    else:
        cmd, wait_ms = ["sh", "-c", "exec cat >/dev/null"], 300  # reads, never answers
    init = tmp_path / "init.lua"
    init.write_text(
        HEALTH_AT_START.format(
            plugin=str(PLUGIN_DIR), wait_ms=wait_ms, cmd=json.dumps(cmd), data=str(data_dir)
        )
    )
    out = tmp_path / "health.txt"
    proc = subprocess.run(
        [
            *(str(nvim_binary()), "--headless", "-u", str(init), "+checkhealth askbridge"),
            *("-c", f"write! {out}", "-c", "qa!"),
        ],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc
    health = out.read_text()
    assert "ERROR" not in health, health
    assert "server running: ? ?" not in health, health
    if server == "askbridge":
        assert f"OK server running: askbridge {__version__}" in health, health
        assert "OK the server speaks userQuestions version 1" in health, health
        assert "- 0 continued questions" in health, health
    else:
        assert (
            "the server is starting: it has not answered initialize within 300 ms;"
            " run :checkhealth askbridge again in a moment"
        ) in health, health
