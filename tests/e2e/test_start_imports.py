"""What an inline start imports before it answers `initialize` (issue 19, target (d)).

`askbridge serve --host inline` holds and checks its data directory (H3's lock and
`host.sock`, S5, S6) before any reply (lsp/early.py), on os-level modules only
(host/store/datadir.py `open_checked`); the store's Python modules — `pathlib`,
`typing`, `dataclasses`, `json`, `enum`, `socket` — load after the answer. A module that sneaks back in before it costs every editor
start (benchmarks/bench_bridge_startup.py), so this test names it.

The child runs the console script's `main` with the early answer wrapped: right after
the answer it writes the names in `sys.modules` to stderr and exits, so what the host
does next is not counted. A bare interpreter's own modules are not counted either.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from askbridge.host.store.datadir import open_store

CHILD = r"""
import os, sys
bare = set(sys.modules)
import askbridge.lsp.early as early

answer = early.answer_initialize_early

def answered(*args):
    started = answer(*args)
    loaded = sorted(set(sys.modules) - bare)
    os.write(2, (" ".join(loaded) + "\n").encode())
    os._exit(0 if started.initialize is not None else 3)

early.answer_initialize_early = answered
from askbridge.cli.entry import main
sys.exit(main(["serve", "--data-dir", sys.argv[1], "--host", "inline"]))
"""

# Each cost more than a millisecond of CPU before the answer (benchmarks/README.md).
AFTER_THE_ANSWER = {
    "asyncio",
    "dataclasses",
    "enum",
    "inspect",
    "json",
    "logging",
    "pathlib",
    "re",
    "socket",
    "typing",
    "askbridge.core.errors",
    "askbridge.host.store.sqlite_schema",
    "askbridge.host.store.store_sqlite",
}


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.inline_only  # what `--host inline` imports; the attach path is attach.py's
def test_an_inline_start_answers_initialize_before_the_store_modules_load(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    asyncio.run(
        open_store(data).close()
    )  # an existing, current store: what every start but the first finds
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(data)],
        input=_frame(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
        ),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert b'"result"' in done.stdout
    loaded = set(done.stderr.decode().split())
    assert "askbridge.host.store.datadir" in loaded  # the directory was opened first
    assert sorted(loaded & AFTER_THE_ANSWER) == []
