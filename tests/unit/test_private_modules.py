"""The standard library's private C modules (`_socket`, `_json`, `_sqlite3`, `_sha2`, ...)
are imported in one place only: hostsock.py, whose docstring gives the start-up time they
buy, measured. Everywhere else askbridge uses the public modules (`socket`, `json`,
`sqlite3`, `hashlib`), read from the source with `ast` as test_layers.py reads it.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "server" / "askbridge"

ALLOWED = {"hostsock.py": {"_json", "_socket"}}


def private_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return {
        name
        for name in names
        if name.startswith("_") and name != "__future__" and name in sys.stdlib_module_names
    }


def test_private_stdlib_modules_only_where_their_start_up_figure_is() -> None:
    found = {
        str(path.relative_to(PKG)): names
        for path in sorted(PKG.rglob("*.py"))
        if (names := private_imports(path))
    }
    assert found == ALLOWED
