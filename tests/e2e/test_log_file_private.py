"""S15: `--log-file` is the user's alone: created 0600, never opened through a symbolic
link, and a file that is not the user's own plain file is refused in one line.

At DEBUG the log holds question text (S12), and a host a front door starts appends to
the same file. The attacks are another local user, `nobody`, planting something at
the path first in a folder everyone may write (as /tmp is): a symbolic link to one of
the victim's files, a file of its own left open to all, a FIFO. Each is refused
before anything is written, and what the link points to is left as it was. Real
processes: the console script, run as this test's uid, and `setpriv` to plant as
nobody.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

import other_user
from askbridge.testing.hosts import stop_host
from other_user import AS_NOBODY, ASKBRIDGE, MCP_INITIALIZE, NOBODY

shared_tmp = other_user.shared_tmp  # a fixture: a folder everyone may write in

pytestmark = [pytest.mark.timeout(90)]


def as_nobody(*command: str) -> None:
    subprocess.run([*AS_NOBODY, *command], check=True, cwd="/", env={"PATH": "/usr/bin:/bin"})


def mcp_with_log(data_dir: Path, log_file: Path) -> subprocess.CompletedProcess[str]:
    command = [ASKBRIDGE, "mcp", "--data-dir", str(data_dir)]
    command += ["--log-file", str(log_file), "--log-level", "DEBUG"]
    try:
        return subprocess.run(
            command,
            input=json.dumps(MCP_INITIALIZE) + "\n",
            capture_output=True,
            text=True,
            timeout=60,
            umask=0o022,  # the usual one, under which a plain open() makes the file 0644
        )
    finally:
        stop_host(data_dir)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user")
@pytest.mark.parametrize(
    ("planted", "why"),
    [
        ("symlink", "it is a symbolic link; askbridge never follows one"),
        ("nobody's file", f"it belongs to uid {NOBODY}; askbridge does not use it"),
        ("fifo", "it is not a regular file; askbridge does not use it"),
    ],
)
def test_S15_a_log_file_planted_by_another_user_is_refused(
    shared_tmp: Path, tmp_path: Path, planted: str, why: str, host_mode: str
) -> None:
    victims_file = tmp_path / "bashrc"  # tmp_path is 0700: nobody cannot reach it
    victims_file.write_text("export PATH=/usr/bin\n")
    before = victims_file.stat()
    log_file = shared_tmp / "askbridge.log"
    if planted == "symlink":
        as_nobody("ln", "-s", str(victims_file), str(log_file))
    elif planted == "fifo":
        as_nobody("mkfifo", "-m", "666", str(log_file))
    else:
        as_nobody("sh", "-c", f"umask 0; echo nobody > {log_file}")

    done = mcp_with_log(tmp_path / "data", log_file)

    assert done.returncode == 2, done
    assert done.stderr == (
        f"askbridge mcp: error: cannot open --log-file {log_file}: {why}; "
        "see askbridge mcp --help\n"
    )
    assert done.stdout == ""
    assert victims_file.read_text() == "export PATH=/usr/bin\n"
    assert victims_file.stat().st_mtime_ns == before.st_mtime_ns
    if planted == "nobody's file":
        assert log_file.read_text() == "nobody\n"
    assert not (tmp_path / "data").exists()  # refused before anything else


def test_S15_a_new_log_file_is_0600_under_umask_022(tmp_path: Path, host_mode: str) -> None:
    """The front door creates it, and (auto) the host it starts appends to the same file."""
    log_file = tmp_path / "logs" / "askbridge.log"
    log_file.parent.mkdir(mode=0o755)

    done = mcp_with_log(tmp_path / "data", log_file)

    assert done.returncode == 0, done.stderr
    assert "result" in json.loads(done.stdout.splitlines()[0]), done.stdout
    assert stat.S_IMODE(log_file.stat().st_mode) == 0o600
    assert log_file.stat().st_nlink == 1
    assert "serving an MCP client (door mcp" in log_file.read_text()


def test_S15_an_older_looser_log_file_of_ours_is_made_private(
    tmp_path: Path, host_mode: str
) -> None:
    """A log file of ours that an older askbridge left 0644 is used, and tightened to 0600."""
    log_file = tmp_path / "askbridge.log"
    log_file.write_text("an older line\n")
    os.chmod(log_file, 0o644)

    done = mcp_with_log(tmp_path / "data", log_file)

    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(log_file.stat().st_mode) == 0o600
    assert log_file.read_text().startswith("an older line\n")  # appended to, not truncated
