"""The committed JSON Schemas (protocol/schema/) are fresh, deterministic and complete.

architecture.md: `protocol/schema/` is generated from askbridge.protocol and a
test checks it is fresh. Regenerate with `make schema`.
"""

from __future__ import annotations

import json
from pathlib import Path

from askbridge.protocol.payloads import ACP_EXT_METHODS, LSP_METHODS, payload_stems
from askbridge.protocol.schema import INDEX_FILE, build_schemas, main, write_schemas

COMMITTED = Path(__file__).resolve().parents[2] / "protocol" / "schema"
REGENERATE = (
    "protocol/schema/ is stale: run `make schema` (or `.venv/bin/python -c "
    "\"from askbridge.protocol.schema import write_schemas; write_schemas('protocol/schema')\"`)"
)


def test_committed_schemas_are_fresh(tmp_path: Path) -> None:
    """architecture.md: generating the schemas again gives the committed files byte for byte."""
    write_schemas(tmp_path)
    fresh = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    committed = {p.name: p.read_bytes() for p in COMMITTED.glob("*.json")}
    assert sorted(committed) == sorted(fresh), REGENERATE
    changed = sorted(name for name in fresh if fresh[name] != committed[name])
    assert not changed, f"{REGENERATE}; differing: {changed}"


def test_generation_is_deterministic_and_canonical() -> None:
    first, second = build_schemas(), build_schemas()
    assert first == second
    for name, content in first.items():
        assert content.endswith("}\n"), name
        data = json.loads(content)
        assert content == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_one_schema_file_per_payload_and_the_index_lists_them() -> None:
    files = build_schemas()
    assert set(files) == {f"{stem}.json" for stem in payload_stems()} | {INDEX_FILE}
    index = json.loads(files[INDEX_FILE])
    assert index["files"] == sorted(set(files) - {INDEX_FILE})
    assert set(index["methods"]) == set(LSP_METHODS) | set(ACP_EXT_METHODS)
    for method, entry in index["methods"].items():
        assert entry["params"] in files, method
        assert (entry["kind"] == "notification") == ("result" not in entry)
        if "result" in entry:
            assert entry["result"] in files, method
    assert index["methods"]["session/new"]["params"] == "session.new.params.json"
    assert index["methods"]["_askbridge/turn"]["door"] == "acp"


def test_tagged_union_tags_are_required_in_the_schema() -> None:
    """A ModelSpec without `kind` is rejected on the wire, so the schema requires `kind`."""
    schema = json.loads(build_schemas()["ModelSpec.json"])
    for member in ("ScriptModelSpec", "OpenAIModelSpec"):
        assert "kind" in schema["$defs"][member]["required"]
    update = json.loads(build_schemas()["session.update.params.json"])
    assert "sessionUpdate" in update["$defs"]["ToolCall"]["required"]


def test_catch_all_intent_union_uses_any_of() -> None:
    """V3: UnknownIntent overlaps the known intents, so `oneOf` would reject valid questions."""
    ask = build_schemas()["userQuestions.ask.params.json"]
    intent = json.loads(ask)["$defs"]["QuestionItem"]["properties"]["intent"]
    assert "oneOf" not in json.dumps(intent)
    refs = [branch.get("$ref") for branch in intent["anyOf"]]
    assert refs == [
        "#/$defs/PlanReviewIntent",
        "#/$defs/ApprovalIntent",
        "#/$defs/UnknownIntent",
        None,  # the `null` of an optional field
    ]


def test_rewriting_removes_only_files_the_last_run_listed(tmp_path: Path) -> None:
    write_schemas(tmp_path)
    index = json.loads((tmp_path / INDEX_FILE).read_text())
    index["files"].append("old.payload.json")
    (tmp_path / INDEX_FILE).write_text(json.dumps(index))
    (tmp_path / "old.payload.json").write_text("{}\n")
    (tmp_path / "notes.json").write_text("{}\n")
    written = write_schemas(tmp_path)
    assert not (tmp_path / "old.payload.json").exists()
    assert (tmp_path / "notes.json").exists()
    assert sorted(p.name for p in written) == sorted(build_schemas())


def test_main_writes_into_out(tmp_path: Path, capsys: object) -> None:
    """`askbridge schema --out DIR` (the CLI calls this main)."""
    out = tmp_path / "nested" / "schema"
    assert main(["--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(build_schemas())
