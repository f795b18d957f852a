"""Setup that several test processes of one run share: installs and builds into the checkout.

`make test` runs the suite in pytest-xdist worker processes. Each test has its own
data directory, but some setup writes into one place for the whole checkout — npm
installs into editors/vscode and tests/mcp/inspector, the extension's out/ and
dist/ (scripts/package.sh starts with `rm -rf out dist`), code-server's ripgrep
cache under $TMPDIR. Two workers doing that at once break each other (an npm ci
deleting node_modules under a running build, a rebuild removing the .vsix another
test is installing), so `once_per_run` runs such a step under an exclusive file
lock and only once per test run: the first worker to get there does the work,
the others wait for it and then reuse what it made.

A run is identified by pytest-xdist's testrunuid (the same in every worker of one
run); a plain `pytest` run is one process and gets its own id. The lock and stamp
files live in the system temp directory, named after the checkout's path, so
nothing is added to the repository and two checkouts do not wait for each other.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Set by pytest-xdist in each worker before the tests are imported.
RUN_ID = os.environ.get("PYTEST_XDIST_TESTRUNUID") or uuid.uuid4().hex
_STATE = Path(tempfile.gettempdir()) / (
    "askbridge-test-work-" + hashlib.sha256(str(REPO).encode()).hexdigest()[:12]
)


@contextmanager
def exclusive(name: str) -> Iterator[None]:
    """Hold the checkout-wide lock `name` (blocking) for the body."""
    _STATE.mkdir(exist_ok=True)
    with (_STATE / f"{name}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def once_per_run(name: str, work: Callable[[], None]) -> None:
    """Run `work` unless a process of this run already completed it; under the lock `name`.

    A `work` that raises records nothing, so the next caller tries again (and fails
    with its own error rather than trusting a half-made result).
    """
    stamp = _STATE / f"{name}.done"
    with exclusive(name):
        if stamp.is_file() and stamp.read_text() == RUN_ID:
            return
        work()
        stamp.write_text(RUN_ID)
