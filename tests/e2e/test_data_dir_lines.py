"""A data directory a front door cannot use is one line that names it and says why, in both host
modes; one another host holds names the holder and what to do (newcomer finding 11).

The read-only file system is real: a tmpfs mounted read-only in a user and mount
namespace of the test's own (`unshare --map-root-user --mount`), gone with it.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_scripts import running_host

pytestmark = pytest.mark.timeout(60)
ASKBRIDGE = [sys.executable, "-m", "askbridge.cli"]


def on_read_only_tmpfs(
    mount: Path, setup: str, command: list[str]
) -> subprocess.CompletedProcess[str]:
    """`command` run where `mount` is a tmpfs: `setup` runs on it writable, then it is read-only."""
    mount.mkdir()
    script = (
        f"mount -t tmpfs none {shlex.quote(str(mount))} && {setup} "
        f"mount -o remount,ro {shlex.quote(str(mount))} && exec {shlex.join(command)}"
    )
    return subprocess.run(
        ["unshare", "--map-root-user", "--mount", "sh", "-c", script],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.fixture(scope="module")
def namespaces() -> None:
    probe = (
        subprocess.run(
            ["unshare", "--map-root-user", "--mount", "true"], capture_output=True, timeout=10
        )
        if shutil.which("unshare")
        else None
    )
    if probe is None or probe.returncode != 0:
        pytest.skip("no user and mount namespaces here (unshare --map-root-user --mount)")


@pytest.mark.parametrize("exists", [False, True], ids=["new", "existing"])
def test_a_data_dir_on_a_read_only_file_system_is_one_line_naming_it(
    namespaces: None, tmp_path: Path, host_mode: str, exists: bool
) -> None:
    mount = tmp_path / "ro"
    data = mount / "data"
    setup = f"mkdir {shlex.quote(str(data))} &&" if exists else ""
    done = on_read_only_tmpfs(
        mount, setup, [*ASKBRIDGE, "serve", "--data-dir", str(data), "--host", host_mode]
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert str(data) in done.stderr and "ead-only file system" in done.stderr, done.stderr
    assert "[Errno" not in done.stderr and "Traceback" not in done.stderr
    if host_mode == "auto":
        said = (
            f"cannot use data directory {data}: it is on a read-only file system, and no "
            "askbridge host serves it"
            if exists
            else f"cannot create data directory {data}: Read-only file system"
        )
        assert done.stderr == f"askbridge serve: {said}\n"
    elif not exists:  # the inline host's own line, which the attached door now matches
        assert (
            done.stderr
            == f"askbridge: cannot create data directory {data}: Read-only file system\n"
        )


@pytest.fixture
def held_by_a_host(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    data = tmp_path / "data"
    with running_host(data) as host:
        yield data, host.pid


@pytest.mark.inline_only  # the refusal of --host inline itself; auto attaches to the host
def test_serve_inline_on_a_data_dir_a_host_holds_names_the_holder_and_the_remedy(
    held_by_a_host: tuple[Path, int],
) -> None:
    data, pid = held_by_a_host
    done = subprocess.run(
        [*ASKBRIDGE, "serve", "--data-dir", str(data), "--host", "inline"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith(f"askbridge: data directory {data} is in use by process {pid} (")
    assert done.stderr.endswith(
        "; attach to it instead (`--host auto`, the default), or stop it "
        f"(`askbridge host --stop --data-dir {data}`)\n"
    )
