"""The order `make test` runs the suite in, for pytest-xdist workers (`--dist loadgroup`).

`make test` runs `pytest -n N --dist loadgroup --no-loadscope-reorder`: xdist hands
out tests one at a time in collection order, except that the tests of one
`xdist_group` go together to one worker. This module (hooks re-exported by
tests/conftest.py) decides that order and those groups:

- **Slow tests first.** A test marked `@pytest.mark.slow`, or under one of
  SLOW_PATHS (the real editors, the real agents, the browser, the wheel
  install: a minute or more each), runs before everything else, longest
  first, so the workers are not left waiting at the end for one of them while
  the others are idle. A new slow test only needs the marker (or a path here).
- **A module whose own module-scoped fixture its tests use runs on one
  worker**: such a fixture (a built wheel, a server shared by the module's
  tests) is made once per process, so spreading the module over the workers
  would make it once per worker — at best slower, at worst two processes
  building into one place. Fixtures from conftest.py (e.g. the autouse
  host clean-up) do not count.

Without xdist (`pytest tests/unit`), the order applies too and the groups are
ignored; nothing here changes which tests run.
"""

from __future__ import annotations

import pytest

# Path prefixes (from the repository root) of tests that take a minute or more, slowest first.
SLOW_PATHS = (
    "tests/editors/test_vscode_windows.py",
    "tests/editors/test_vscode_editor.py",
    "tests/editors/test_vscode_mcp.py",
    "tests/editors/test_vscode_workspace_settings.py",
    "tests/editors/test_nvim_old.py",
    "tests/agents/",
    "tests/web/",
    "tests/install/",
    "tests/editors/test_vscode_logic.py",
    "tests/editors/test_vscode_transcripts.py",
)


def configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: a test of a minute or more, run first (tests/scheduling.py)"
    )


def _rank(item: pytest.Item) -> int:
    """0.. for the slow tests (in SLOW_PATHS order; marked ones first), len(SLOW_PATHS)+1 else."""
    if item.get_closest_marker("slow") is not None:
        return 0
    path = item.nodeid.split("::", 1)[0]
    for rank, prefix in enumerate(SLOW_PATHS, start=1):
        if path.startswith(prefix):
            return rank
    return len(SLOW_PATHS) + 1


def _module_fixture_group(item: pytest.Item) -> str | None:
    """The module's node id when `item` uses a module-scoped fixture defined in its module."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    module_id = item.nodeid.split("::", 1)[0]
    for defs in info.name2fixturedefs.values():
        for fixturedef in defs:
            if fixturedef.scope == "module" and fixturedef.baseid == module_id:
                return module_id
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        group = _module_fixture_group(item)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
    # A stable sort: within a rank, the tests keep their files' order.
    items.sort(key=_rank)
