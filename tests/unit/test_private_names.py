"""A module's `_name` is its own (architecture.md, "Seams, not tangles"): no module of
server/askbridge imports another's private name (`from .x import _name`) or reads it through
the module (`x._name`). A seam another module needs is public where it belongs.

Read from the source with `ast`, as test_layers.py reads the imports.
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "server" / "askbridge"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_reaches(source: str) -> list[str]:
    """`from x import _y` of any module, and `x._y` where `x` names an askbridge module
    imported here; a private module itself (`_socket`) is another library's business."""
    tree = ast.parse(source)
    ours: set[str] = set()
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            own = node.level > 0 or (node.module or "").startswith("askbridge")
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"line {node.lineno}: from {node.module} import {alias.name}")
                elif own:
                    ours.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            ours |= {a.asname or a.name for a in node.names if a.name.startswith("askbridge.")}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            if isinstance(node.value, ast.Name) and node.value.id in ours:
                found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_module_reaches_into_another_modules_private_names() -> None:
    reaches = {
        str(path.relative_to(PKG)): found
        for path in sorted(PKG.rglob("*.py"))
        if (found := private_reaches(path.read_text(encoding="utf-8")))
    }
    assert reaches == {}


def test_a_private_reach_is_caught() -> None:
    source = "from .turns import _admit as admit\nfrom . import events as ev\nev._splice()\n"
    assert private_reaches(source) == [
        "line 1: from turns import _admit",
        "line 3: ev._splice",
    ]
