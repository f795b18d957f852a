"""Property tests: every protocol.md payload round-trips through its JSON wire form.

For each payload (schema stem) hypothesis draws a wire-form value; the test
parses it, dumps it, sends the dump through `json`, parses it again and
requires the same model and the same dump. The dump must also satisfy the
generated JSON Schema, so the committed schema and the models cannot drift.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protocol_strategies import PAYLOAD_STRATEGIES
from pydantic import BaseModel, ValidationError

import askbridge.protocol as protocol_pkg
from askbridge.protocol import WireModel
from askbridge.protocol.parsing import adapter_for
from askbridge.protocol.payloads import payload_stems
from askbridge.protocol.schema import build_schemas, schema_for

STEMS = payload_stems()


def to_wire(tp: Any, value: Any) -> Any:
    if isinstance(value, WireModel):
        return value.dump()
    return adapter_for(tp).dump_python(value, mode="json", by_alias=True, exclude_none=True)


# -- a small JSON Schema checker for the keywords our generator emits ---------------------


def check_schema(schema: dict[str, Any], value: Any, root: dict[str, Any], at: str = "") -> None:
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        check_schema(root["$defs"][name], value, root, at)
        return
    if "anyOf" in schema:
        fits = [_fits(s, value, root) for s in schema["anyOf"]]
        assert any(fits), f"{at or '<root>'}: {value!r} matches no anyOf branch"
    if "oneOf" in schema:
        fits = [_fits(s, value, root) for s in schema["oneOf"]]
        assert fits.count(True) == 1, f"{at or '<root>'}: {value!r} matches {fits} oneOf branches"
    if "const" in schema:
        assert value == schema["const"], f"{at}: {value!r} != const {schema['const']!r}"
    if "enum" in schema:
        assert value in schema["enum"], f"{at}: {value!r} not in {schema['enum']}"
    kind = schema.get("type")
    if kind is not None:
        assert _is_type(value, kind), f"{at or '<root>'}: {value!r} is not {kind}"
    if isinstance(value, str) and "minLength" in schema:
        assert len(value) >= schema["minLength"], f"{at}: too short"
    if isinstance(value, int) and not isinstance(value, bool):
        assert value >= schema.get("minimum", value), f"{at}: below minimum"
        assert value <= schema.get("maximum", value), f"{at}: above maximum"
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            assert key in value, f"{at}: required {key!r} missing"
        for key, item in value.items():
            if key in props:
                check_schema(props[key], item, root, f"{at}.{key}")
            elif isinstance(schema.get("additionalProperties"), dict):
                check_schema(schema["additionalProperties"], item, root, f"{at}.{key}")
            elif "properties" in schema:
                raise AssertionError(f"{at}: {key!r} is not a property of the schema")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            check_schema(schema["items"], item, root, f"{at}.{i}")


def _fits(schema: dict[str, Any], value: Any, root: dict[str, Any]) -> bool:
    try:
        check_schema(schema, value, root)
    except AssertionError:
        return False
    return True


def _is_type(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    types = {"string": str, "boolean": bool, "null": type(None), "object": dict, "array": list}
    return isinstance(value, types[kind])


# -- tests -------------------------------------------------------------------------------


def test_every_payload_has_a_strategy() -> None:
    """A payload added to payloads.py must get a strategy here (and so a round-trip test)."""
    assert set(PAYLOAD_STRATEGIES) == set(STEMS)


@pytest.mark.parametrize("stem", sorted(STEMS))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_payload_round_trips_through_json(stem: str, data: st.DataObject) -> None:
    """protocol.md: camelCase JSON on the wire; parse → dump → json → parse is the identity."""
    tp = STEMS[stem]
    adapter = adapter_for(tp)
    wire = data.draw(PAYLOAD_STRATEGIES[stem], label="wire")

    model = adapter.validate_python(wire)
    dumped = to_wire(tp, model)
    text = json.dumps(dumped)
    again = adapter.validate_python(json.loads(text))

    assert again == model
    assert to_wire(tp, again) == dumped
    assert adapter.validate_json(text) == model
    check_schema(schema_for(tp, stem), dumped, schema_for(tp, stem))


@pytest.mark.parametrize(
    "stem", sorted(s for s, tp in STEMS.items() if tp not in (bool, type(None)))
)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_unknown_fields_are_ignored(stem: str, data: st.DataObject) -> None:
    """protocol.md: unknown fields in client messages are ignored, never an error — except
    in model specs (script and openai, S11) and the tool arguments they hold, where a
    typo is rejected."""
    tp = STEMS[stem]
    wire = data.draw(PAYLOAD_STRATEGIES[stem], label="wire")
    if not isinstance(wire, dict):
        return
    extra = data.draw(
        st.dictionaries(st.sampled_from(["zzUnknown", "x-y", "$extra"]), st.integers())
    )
    adapter = adapter_for(tp)
    strict = stem == "tool.ask_user_question.arguments" or wire.get("kind") in ("script", "openai")
    if strict and extra:
        with pytest.raises(ValidationError, match=r"zzUnknown|x-y|\$extra"):
            adapter.validate_python({**wire, **extra})
        return
    assert adapter.validate_python({**wire, **extra}) == adapter.validate_python(wire)


def test_schema_checker_rejects_what_the_schema_forbids() -> None:
    """The checker above is not vacuous: missing fields, wrong types and bad tags fail it."""
    stem = "session.update.params"
    schema = schema_for(STEMS[stem], stem)
    end: dict[str, Any] = {"sessionUpdate": "turn_ended", "turnId": "t", "stopReason": "end_turn"}
    good: dict[str, Any] = {"sessionId": "s", "update": end}
    check_schema(schema, good, schema)
    for bad in (
        {"update": end},
        {**good, "sessionId": 3},
        {**good, "update": {**end, "stopReason": "done"}},
        {**good, "update": {"turnId": "t", "stopReason": "end_turn"}},
    ):
        with pytest.raises(AssertionError):
            check_schema(schema, bad, schema)


def _protocol_models() -> set[type[BaseModel]]:
    found: set[type[BaseModel]] = set()
    todo: list[type[BaseModel]] = [WireModel]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub.__module__.startswith(protocol_pkg.__name__ + ".") and sub not in found:
                found.add(sub)
                todo.append(sub)
    return found


# Bases and non-wire shapes: no payload carries them as such.
NOT_PAYLOADS = {
    "NullKeepingModel",
    "EmptyParams",
    "EmptyResult",
    "SessionScoped",
    "CallScoped",
    "SessionSettings",
    "PendingResult",  # V6: tool-result content the model sees, not a wire payload
}


def test_every_protocol_model_appears_in_some_schema() -> None:
    """Every concrete model of askbridge.protocol is part of a payload, hence round-trip tested."""
    titles: set[str] = set()
    for content in build_schemas().values():
        schema = json.loads(content)
        titles.add(schema.get("title", ""))
        titles.update(schema.get("$defs", {}))
    missing = {c.__name__ for c in _protocol_models()} - titles - NOT_PAYLOADS
    assert not missing, f"models in no payload schema: {sorted(missing)}"
