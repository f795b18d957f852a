"""The PostgreSQL driver is loaded only when a team store is used (G1): a solo start, the
console script's import and a `--store` flag's check never pay for it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "ASKBRIDGE_STORE"}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
        check=False,
    )


def test_G1_the_console_script_and_the_store_flag_do_not_load_the_driver() -> None:
    done = _run(
        "import sys\n"
        "import askbridge.cli.entry\n"
        "from askbridge.cli.parser import parse_args\n"
        "args = parse_args(['serve', '--store', 'postgresql://u:p@h/d'])\n"
        "assert args.store == 'postgresql://u:p@h/d'\n"
        "print(sorted(m for m in sys.modules if m.startswith('psycopg')))\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_G1_a_solo_host_start_does_not_load_the_driver(tmp_path: Path) -> None:
    """`askbridge host` on a data directory's SQLite, started and idle-exited for real."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "askbridge.cli", "host",
         "--data-dir", str(tmp_path / "data"), "--idle-exit", "0.2"],
        capture_output=True, text=True, timeout=60, check=False,
        env={k: v for k, v in os.environ.items() if k != "ASKBRIDGE_STORE"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert "askbridge.host.store.store_sqlite" in imported  # the host did open its store
    assert "askbridge.host.host" in imported
    assert sorted(name for name in imported if name.startswith("psycopg")) == []


def test_G1_a_team_store_loads_the_driver() -> None:
    """The other side of the two tests above: opening the team store's module does load it,
    so their check would see it."""
    done = _run(
        "import sys\nimport askbridge.host.store.store_postgres\nprint('psycopg' in sys.modules)\n"
    )
    assert done.stdout.strip() == "True"
