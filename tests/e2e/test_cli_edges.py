"""The command line's edges, over real processes: a bad `schema --out` is one line, and a
command whose reader left (`| head -1`) ends quietly.

These commands serve no client, so the host mode does not apply: `inline_only` runs
them once (`host --status` talks to a host started here, stopped at the end).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_scripts import running_host

pytestmark = [pytest.mark.timeout(60), pytest.mark.inline_only]
ASKBRIDGE = [sys.executable, "-m", "askbridge.cli"]


@pytest.mark.parametrize(
    ("out", "said"),
    [
        ("/proc/nope", "cannot write --out /proc/nope: No such file or directory"),
        ("/etc/hostname", "cannot write --out /etc/hostname: it exists and is not a directory"),
    ],
)
def test_schema_out_that_cannot_be_written_is_one_line(out: str, said: str) -> None:
    done = subprocess.run(
        [*ASKBRIDGE, "schema", "--out", out], capture_output=True, text=True, timeout=30
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"askbridge schema: {said}\n"


@pytest.fixture
def served_data_dir(tmp_path: Path) -> Iterator[Path]:
    data = tmp_path / "data"
    with running_host(data):
        yield data


@pytest.mark.parametrize(
    "command",
    [
        ["host", "--status"],
        ["sessions"],
        ["schema", "--out", "{tmp}/schema"],
        ["--help"],
        ["host", "--help"],
    ],
    ids=["host-status", "sessions", "schema", "help", "host-help"],
)
def test_a_reader_that_left_ends_the_command_without_a_traceback(
    served_data_dir: Path, tmp_path: Path, command: list[str]
) -> None:
    """`askbridge … | head -1` after head has exited: every write meets a closed pipe."""
    argv = [part.replace("{tmp}", str(tmp_path)) for part in command]
    if argv[0] in ("host", "sessions") and "--help" not in argv:
        argv += ["--data-dir", str(served_data_dir)]
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [*ASKBRIDGE, *argv], stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=30
        )
    finally:
        os.close(write_end)
    assert done.stderr == "", done.stderr
    assert done.returncode in (0, 141), done.returncode


def test_host_status_piped_into_head_prints_its_first_line(served_data_dir: Path) -> None:
    status = [*ASKBRIDGE, "host", "--status", "--data-dir", str(served_data_dir)]
    done = subprocess.run(
        ["bash", "-c", '"$@" | head -1', "-", *status],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.stdout.startswith("askbridge host pid ") and done.stdout.count("\n") == 1
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr
