"""The import rules of architecture.md ("Seams, not tangles"), and no import circles, read
from the source with `ast`.

Every `import` and `from … import` in server/askbridge counts — at module level,
inside functions (lazy imports) and under `TYPE_CHECKING` alike: an arrow is an
arrow whether or not it runs at start-up. An arrow the rules forbid fails the
test unless it is in KNOWN_EXCEPTIONS, and an exception that no longer occurs
fails it too, so that list can only shrink.
"""

from __future__ import annotations

import ast
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "server"
PKG = SRC / "askbridge"

# Standard-library-only modules any layer may import: the package itself (its version) and
# the process room (process/__init__.py says why). A leaf imports other leaves at most.
LEAVES = frozenset({"askbridge"})
LEAF_ROOM = "process"
DOORS = frozenset({"lsp", "acp", "mcp", "web"})
HOST_ROOMS = frozenset({"log", "store", "agent", "asking", "team"})

# What each layer may import (besides itself and LEAVES). A layer missing here
# (cli, demo) is top-level wiring and unconstrained.
ALLOWED: dict[str, frozenset[str]] = {
    "protocol": frozenset(),
    "core": frozenset({"protocol"}),
    "jsonrpc": frozenset({"protocol"}),
    "host.log": frozenset({"protocol"}),
    # StoreError and friends live in core.errors, the one error taxonomy.
    "host.store": frozenset({"host.log", "core", "protocol"}),
    "host.agent": frozenset({"host.log", "host.store", "core", "protocol"}),
    "host.asking": frozenset({"host.log", "host.store", "core", "protocol"}),
    # People and policies are pure (architecture.md "Team mode"): no store, no log, no door.
    "host.team": frozenset({"core", "protocol"}),
    "host": frozenset({f"host.{room}" for room in HOST_ROOMS} | {"core", "protocol"}),
    **{
        door: frozenset(
            {"host", *(f"host.{room}" for room in HOST_ROOMS), "core", "protocol", "jsonrpc"}
        )
        for door in DOORS
    },
    "daemon": frozenset(
        {
            "host",
            *(f"host.{r}" for r in HOST_ROOMS),
            "core",
            "protocol",
            "jsonrpc",
        }
        | DOORS
    ),
    # testing talks to the real process over the wire: the wire's models and framing.
    "testing": frozenset({"protocol", "jsonrpc"}),
}

# (importing module, imported module): arrows the rules forbid that are still there.
# Each names what removes it; delete the line when it is gone (the test insists).
KNOWN_EXCEPTIONS: frozenset[tuple[str, str]] = frozenset()


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def exists(module: str) -> bool:
    base = SRC.joinpath(*module.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imports_of(path: Path) -> Iterator[str]:
    """Every module of ours `path` imports, relative imports resolved."""
    here = module_name(path)
    package = here if is_package(path) else here.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "askbridge":
                    yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base.split(".")[0] != "askbridge":
                continue
            # `from pkg import module` imports the module; `from mod import name` the module.
            names = [f"{base}.{a.name}" for a in node.names if exists(f"{base}.{a.name}")]
            yield from names or [base]


def layer_of(module: str) -> str | None:
    parts = module.split(".")[1:]
    if module in LEAVES or parts[:1] == [LEAF_ROOM]:
        return "leaf"
    if not parts:
        return None
    if parts[0] == "host" and len(parts) > 1 and parts[1] in HOST_ROOMS:
        return f"host.{parts[1]}"
    return parts[0]


def forbidden_arrows() -> set[tuple[str, str]]:
    arrows: set[tuple[str, str]] = set()
    for path in sorted(PKG.rglob("*.py")):
        source = module_name(path)
        src_layer = layer_of(source)
        for target in imports_of(path):
            dst_layer = layer_of(target)
            if dst_layer == "leaf":
                continue
            if src_layer == "leaf":
                arrows.add((source, target))  # a leaf imports nothing of ours but leaves
                continue
            if src_layer not in ALLOWED or dst_layer in (None, src_layer):
                continue
            if dst_layer not in ALLOWED[src_layer]:
                arrows.add((source, target))
    return arrows


def test_layers_no_import_crosses_a_forbidden_seam() -> None:
    new = forbidden_arrows() - KNOWN_EXCEPTIONS
    assert not new, "imports architecture.md forbids:\n" + "\n".join(
        f"  {a} -> {b}" for a, b in sorted(new)
    )


def test_layers_known_exceptions_only_shrink() -> None:
    gone = KNOWN_EXCEPTIONS - forbidden_arrows()
    assert not gone, "fixed, delete from KNOWN_EXCEPTIONS:\n" + "\n".join(
        f"  {a} -> {b}" for a, b in sorted(gone)
    )


@pytest.mark.parametrize(
    ("source", "line", "target"),
    [
        ("host/log/inbox.py", "from ..store import store_api", "askbridge.host.store.store_api"),
        ("lsp/server.py", "from askbridge.acp.door import run", "askbridge.acp.door"),
        ("process/attach.py", "from askbridge.protocol import errors", "askbridge.protocol.errors"),
        ("process/paths.py", "from ..host.store import datadir", "askbridge.host.store.datadir"),
        ("jsonrpc/stdio.py", "from askbridge.host import host", "askbridge.host.host"),
        ("core/service.py", "from ..host.host import Host", "askbridge.host.host"),
        (
            "host/asking/fanout.py",
            "from ..agent.session import Session",
            "askbridge.host.agent.session",
        ),
        ("host/agent/session.py", "from ..asking import clients", "askbridge.host.asking.clients"),
        ("host/asking/clients.py", "from ..host import Host", "askbridge.host.host"),
        ("host/team/policy.py", "from ..store import store_api", "askbridge.host.store.store_api"),
        ("host/team/quorum.py", "from ..asking import clients", "askbridge.host.asking.clients"),
    ],
)
def test_layers_a_forbidden_import_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, line: str, target: str
) -> None:
    """The checker itself: a planted forbidden import (in a copy of the tree) is reported."""
    copy = tmp_path / "server"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    planted = copy / "askbridge" / source
    planted.write_text(planted.read_text() + f"\n{line}\n")
    monkeypatch.setattr(sys.modules[__name__], "SRC", copy)
    monkeypatch.setattr(sys.modules[__name__], "PKG", copy / "askbridge")
    assert (module_name(planted), target) in forbidden_arrows()


# Import circles still there, each as the modules it joins. A circle found must be one of
# these exactly, so the list can only shrink: a circle that shrank or went is reported too.
KNOWN_CYCLES: frozenset[frozenset[str]] = frozenset()


def import_graph() -> dict[str, set[str]]:
    """Each module of ours and the modules of ours it imports (every import, as above)."""
    graph: dict[str, set[str]] = {module_name(path): set() for path in PKG.rglob("*.py")}
    for path in PKG.rglob("*.py"):
        source = module_name(path)
        graph[source].update(t for t in imports_of(path) if t in graph and t != source)
    return graph


def import_cycles() -> set[frozenset[str]]:
    """The import circles: each the modules that reach each other through imports."""
    graph = import_graph()
    reach: dict[str, set[str]] = {}
    for start in graph:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for target in graph[todo.pop()] - seen:
                seen.add(target)
                todo.append(target)
        reach[start] = seen
    return {
        frozenset({m} | {other for other in reach[m] if m in reach[other]})
        for m in graph
        if m in reach[m]
    }


def test_layers_no_import_cycle_but_the_known() -> None:
    found = import_cycles()
    new, gone = found - KNOWN_CYCLES, KNOWN_CYCLES - found
    assert not new and not gone, "\n".join(
        [f"import circle: {sorted(c)}" for c in sorted(new, key=sorted)]
        + [
            f"no longer a circle, update KNOWN_CYCLES: {sorted(c)}"
            for c in sorted(gone, key=sorted)
        ]
    )


@pytest.mark.parametrize(
    ("source", "line", "circle"),
    [
        (  # a function-level import counts: the command line's two ends
            "cli/commands.py",
            "def _planted() -> None:\n    from askbridge.cli import entry",
            {"askbridge.cli.commands", "askbridge.cli.entry"},
        ),
        (  # so does one only the type checker runs
            "host/asking/open_question.py",
            "if TYPE_CHECKING:\n    from .question_log import log_ended",
            {"askbridge.host.asking.open_question", "askbridge.host.asking.question_log"},
        ),
        (  # a step that names the Session it acts on, not session_ports.TurnSession
            "host/agent/step.py",
            "if TYPE_CHECKING:\n    from .session import Session",
            {f"askbridge.host.agent.{m}" for m in ("session", "step", "turns")},
        ),
    ],
)
def test_layers_a_planted_import_cycle_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, line: str, circle: set[str]
) -> None:
    """The checker itself: an import that closes a circle (in a copy of the tree) is found."""
    copy = tmp_path / "server"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    planted = copy / "askbridge" / source
    planted.write_text(planted.read_text() + f"\n{line}\n")
    monkeypatch.setattr(sys.modules[__name__], "SRC", copy)
    monkeypatch.setattr(sys.modules[__name__], "PKG", copy / "askbridge")
    assert frozenset(circle) in import_cycles() - KNOWN_CYCLES
