"""The base model of every wire payload: camelCase on the wire, snake_case in Python.

Unknown fields in client messages are ignored (protocol.md), so models ignore
extras; `dump()` writes the wire form without fields left at None.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
        frozen=False,
    )

    def dump(self) -> dict[str, Any]:
        """The JSON-ready wire form: camelCase keys, None fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
