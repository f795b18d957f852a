"""Shared set-up of the real-agent tests: the agents installed once per session (npm, cached
in tests/agents/npm/node_modules like code-server for the VS Code tests), the helpers'
directory importable. The editor (agents.editor_on) is a context manager used inside the
test, not an async fixture: its task group must be entered and left in the same task."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from askbridge.testing.hosts import stop_host

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agents import install_agents
from shared_work import once_per_run


@pytest.fixture(scope="session", autouse=True)
def _agents_installed() -> None:
    # Once per run under a lock: xdist workers each reach this fixture, and two `npm ci`
    # in one directory delete each other's node_modules (CI failed so on a clean clone).
    once_per_run("agents-npm", install_agents)


@pytest.fixture(autouse=True)
def _no_host_outlives_the_test(tmp_path: Path) -> Iterator[None]:
    """The agent's `askbridge mcp --host auto` started a detached host that would idle on for
    a minute after the agent exited (H2): stop it with the test."""
    yield
    stop_host(tmp_path / "data")
