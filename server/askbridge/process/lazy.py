"""Package names imported on first use (PEP 562 module `__getattr__`).

`askbridge.core` and `askbridge.protocol` re-export many names; importing them
eagerly would import pydantic and every wire model as soon as one light
submodule (say `protocol.errors`, needed by the early `initialize` answer in
lsp/early.py) is imported. `lazy_exports` builds the module `__getattr__` that
imports a name's submodule when the name is first read and keeps it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: `exports` maps a name to the relative
    submodule that defines it (`"."` for a submodule of that name itself)."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if module == ".":
            value: Any = importlib.import_module(f"{package}.{name}")
        else:
            value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    return __getattr__
