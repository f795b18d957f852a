"""JSON Schema of every payload, one file each (`make schema` / `askbridge schema --out DIR`).

`write_schemas(out_dir)` writes `<stem>.json` for every entry of
`payloads.payload_stems()` (e.g. `session.new.params.json`) plus `index.json`,
which maps each method to its params/result files. Output is deterministic
(sorted keys, two-space indent, trailing newline) so the committed
`protocol/schema/` can be compared byte for byte; files a previous run listed
in `index.json` that are no longer generated are removed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from .payloads import ACP_EXT_METHODS, LSP_METHODS, MethodPayloads, payload_stems

DIALECT = "https://json-schema.org/draft/2020-12/schema"
INDEX_FILE = "index.json"
GENERATED_NOTE = "Generated from askbridge.protocol by `make schema`; do not edit."


class _WireSchemaGenerator(GenerateJsonSchema):
    """Pydantic's generator with two wire-friendly changes."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        # Auto titles ("Callid", "Multiselect") add noise and no meaning to the wire contract.
        return False

    def tagged_union_schema(self, schema: core_schema.TaggedUnionSchema) -> JsonSchemaValue:
        generated = super().tagged_union_schema(schema)
        # A callable discriminator (Intent) has no mapping; its catch-all member
        # (UnknownIntent) overlaps the others, so `oneOf` would reject valid input.
        if "discriminator" not in generated and "oneOf" in generated:
            generated["anyOf"] = generated.pop("oneOf")
        return generated


def schema_for(tp: Any, stem: str) -> dict[str, Any]:
    """The JSON Schema (validation mode, camelCase names) of payload type `tp`."""
    schema = TypeAdapter(tp).json_schema(by_alias=True, schema_generator=_WireSchemaGenerator)
    _require_discriminators(schema, schema.get("$defs", {}))
    schema = {"$schema": DIALECT, "$comment": GENERATED_NOTE, **schema}
    schema.setdefault("title", stem)
    return schema


def _require_discriminators(node: Any, defs: dict[str, Any]) -> None:
    """Mark each tagged union's tag (`kind`, `sessionUpdate`, `event`) required in its members.

    The tag fields have defaults so Python code need not repeat them, but on the
    wire a member without its tag is rejected; the schema must say so.
    """
    if isinstance(node, list):
        for item in node:
            _require_discriminators(item, defs)
        return
    if not isinstance(node, dict):
        return
    disc = node.get("discriminator")
    if isinstance(disc, dict):
        prop = disc["propertyName"]
        for ref in disc.get("mapping", {}).values():
            member = defs[ref.removeprefix("#/$defs/")]
            required = member.setdefault("required", [])
            if prop not in required:
                required.insert(0, prop)
    for value in node.values():
        _require_discriminators(value, defs)


def render(schema: Any) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _method_entry(method: str, payloads: MethodPayloads, door: str) -> dict[str, Any]:
    base = method.replace("/", ".")
    entry: dict[str, Any] = {
        "door": door,
        "direction": payloads.direction,
        "kind": "notification" if payloads.notification else "request",
        "params": f"{base}.params.json",
    }
    if not payloads.notification:
        entry["result"] = f"{base}.result.json"
    return entry


def build_schemas() -> dict[str, str]:
    """File name → file content for every schema file, `index.json` included."""
    files = {f"{stem}.json": render(schema_for(tp, stem)) for stem, tp in payload_stems().items()}
    methods = {m: _method_entry(m, p, "lsp") for m, p in LSP_METHODS.items()}
    methods.update({m: _method_entry(m, p, "acp") for m, p in ACP_EXT_METHODS.items()})
    index = {
        "$comment": GENERATED_NOTE,
        "protocolVersion": 1,
        "methods": methods,
        "files": sorted(files),
    }
    files[INDEX_FILE] = render(index)
    return files


def write_schemas(out_dir: str | Path) -> list[Path]:
    """Write every schema file into `out_dir` (created if needed); return the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = build_schemas()
    for stale in sorted(_previously_written(out) - set(files)):
        (out / stale).unlink(missing_ok=True)
    written = []
    for name in sorted(files):
        path = out / name
        path.write_bytes(files[name].encode("utf-8"))
        written.append(path)
    return written


def _previously_written(out: Path) -> set[str]:
    """Files the last run's index listed (only those are ever deleted)."""
    try:
        index = json.loads((out / INDEX_FILE).read_text(encoding="utf-8"))
        listed = index.get("files", [])
    except (OSError, ValueError, AttributeError):
        return set()
    return {
        name
        for name in listed
        if isinstance(name, str) and Path(name).name == name and name.endswith(".json")
    }


def main(argv: Sequence[str] | None = None) -> int:
    """`askbridge schema --out DIR`: write the JSON Schemas; exit status 0."""
    parser = argparse.ArgumentParser(
        prog="askbridge schema", description="Write the JSON Schema of every wire payload."
    )
    parser.add_argument("--out", default="protocol/schema", help="output directory")
    args = parser.parse_args(argv)
    written = write_schemas(args.out)
    print(f"wrote {len(written)} schema files to {args.out}", file=sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
