"""S5: a `--data-dir` that exists and is not a directory is refused by every command
with one line naming the path (exit 1, no traceback), through the console script
(cli/entry.py's attach path for the doors) and `python -m askbridge.cli` alike."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.timeout(60), pytest.mark.own_host_modes]

COMMANDS = [
    ["serve"],
    ["serve", "--host", "auto"],
    ["serve", "--host", "inline"],
    ["acp"],
    ["mcp"],
    ["host"],
    ["host", "--status"],
    ["host", "--stop"],
    ["demo", "--auto"],
    ["sessions"],
]
CONSOLE_SCRIPT = Path(sys.executable).with_name("askbridge")


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, input="", capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("via", ["console-script", "module"])
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_S5_a_data_dir_that_is_a_file_is_named_in_one_line(
    tmp_path: Path, command: list[str], via: str
) -> None:
    data_dir = tmp_path / "not-a-dir"
    data_dir.write_text("x")
    program = (
        [str(CONSOLE_SCRIPT)]
        if via == "console-script"
        else [
            sys.executable,
            "-m",
            "askbridge.cli",
        ]
    )
    done = run([*program, *command, "--data-dir", str(data_dir)])
    assert done.returncode == 1, done
    assert done.stderr == (
        f"askbridge {command[0]}: data directory {data_dir} exists and is not a directory\n"
    )
    assert done.stdout == ""
    assert data_dir.read_text() == "x"  # untouched


def test_S5_a_data_dir_under_a_file_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    data_dir = tmp_path / "file" / "data"
    done = run([str(CONSOLE_SCRIPT), "host", "--status", "--data-dir", str(data_dir)])
    assert done.returncode == 1, done
    assert done.stderr == (
        f"askbridge host: data directory {data_dir} cannot be created: "
        f"{tmp_path / 'file'} is not a directory\n"
    )


def test_the_console_script_is_this_venvs() -> None:
    assert os.access(CONSOLE_SCRIPT, os.X_OK)
