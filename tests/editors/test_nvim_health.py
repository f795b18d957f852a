"""`:checkhealth askbridge` reports the data directory's host (H6, H7).

A host of another version refuses a front door (H7); this is what a user
meets after upgrading askbridge while the old host still runs. Here the
"other" askbridge is a second installation: this checkout's package copied
with another `__version__`, run by an `askbridge` launcher — the plugin's
server command. The host is the current version, started first with
`askbridge host`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

from test_nvim import (
    ASKBRIDGE,
    REPO,
    VIM_LOG_ERROR,
    no_host_outlives_the_test,  # noqa: F401 (an autouse fixture)
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
        f" 0 front door(s) attached, data dir {data_dir}"
    ) in health, health
    assert (
        f"ERROR the askbridge host (pid {host.pid}) is version {__version__},"
        f" but {other} is version {OTHER_VERSION}: the host refuses its server"
    ) in health, health
    assert f"stop the running host: askbridge host --stop --data-dir {data_dir}" in health
