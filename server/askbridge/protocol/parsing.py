"""Parse incoming params into models; turn validation failures into JSON-RPC -32602.

`parse_params(SessionNewParams, params)` returns the model or raises
`InvalidParams`, whose `errors` are `[{"field": "questions.0.id", "message": ...}]`
and whose `rpc_error()` is the whole JSON-RPC error object
`{code: -32602, message, data: {errors}}` (protocol.md "Errors").

Field paths use wire names and drop pydantic's union labels (the `script` in
`model.script.steps`, the `int` in `partialResultToken.int`), which are not
fields of the payload. That needs the input that failed, so pass `data=` to
`validation_errors` when calling it directly.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from .base import WireModel
from .errors import RpcErrorCode

M = TypeVar("M", bound=BaseModel)

_NO_DATA: Any = object()
_NOT_AN_OBJECT = frozenset({"model_type", "model_attributes_type", "dict_type"})


class FieldError(WireModel):
    field: str
    message: str


class InvalidParamsData(WireModel):
    """`data` of a -32602 error: one entry per problem."""

    errors: list[FieldError]


class InvalidParams(Exception):
    """Params that fail their schema; a front door answers it with JSON-RPC -32602."""

    code = RpcErrorCode.INVALID_PARAMS

    def __init__(self, errors: list[dict[str, str]]) -> None:
        self.errors = errors
        super().__init__(self.message)

    @property
    def message(self) -> str:
        parts = [
            f"{e['field']}: {e['message']}" if e["field"] else e["message"] for e in self.errors
        ]
        return "invalid params: " + "; ".join(parts)

    def data(self) -> dict[str, Any]:
        return {"errors": [dict(e) for e in self.errors]}

    def rpc_error(self) -> dict[str, Any]:
        return {"code": int(self.code), "message": self.message, "data": self.data()}


def parse_params(model_cls: type[M], params: Any, *, field_prefix: str = "") -> M:
    """`model_cls` validated from `params` (None counts as `{}`), or InvalidParams."""
    if params is None:
        params = {}
    try:
        return model_cls.model_validate(params)
    except ValidationError as exc:
        raise InvalidParams(validation_errors(exc, data=params, field_prefix=field_prefix)) from exc


_ADAPTERS: dict[int, tuple[Any, TypeAdapter[Any]]] = {}


def adapter_for(tp: Any) -> TypeAdapter[Any]:
    """A cached TypeAdapter for `tp` (a union, an Annotated alias, a plain type)."""
    cached = _ADAPTERS.get(id(tp))
    if cached is not None and cached[0] is tp:
        return cached[1]
    adapter: TypeAdapter[Any] = TypeAdapter(tp)
    _ADAPTERS[id(tp)] = (tp, adapter)  # holding `tp` keeps its id from being reused
    return adapter


def parse_value(tp: Any, value: Any, *, field_prefix: str = "") -> Any:
    """Like parse_params for any type (e.g. the ModelSpec union), or InvalidParams."""
    try:
        return adapter_for(tp).validate_python(value)
    except ValidationError as exc:
        raise InvalidParams(validation_errors(exc, data=value, field_prefix=field_prefix)) from exc


def validation_errors(
    exc: ValidationError, *, data: Any = _NO_DATA, field_prefix: str = ""
) -> list[dict[str, str]]:
    """`[{"field": "questions.0.id", "message": "Field required"}, ...]` for -32602 `data.errors`.

    `data` is the input that failed validation; without it union labels stay in the paths.
    """
    out: list[dict[str, str]] = []
    for err in exc.errors(include_url=False, include_context=True, include_input=False):
        path = list(err["loc"]) if data is _NO_DATA else _field_path(err, data)
        message = _message(err, at_root=not path and not field_prefix)
        disc = _discriminator(err)
        if disc is not None:
            path.append(disc)
        parts = ([field_prefix] if field_prefix else []) + [str(p) for p in path]
        entry = {"field": ".".join(parts), "message": message}
        if entry not in out:
            out.append(entry)
    return out


def _field_path(err: ErrorDetails, data: Any) -> list[str | int]:
    """The error's loc with union labels removed, found by walking the input alongside it.

    A loc part that is not a key or index of the input at that point is a label
    pydantic added for a union member (a tag such as `script`, or `int`/`str`),
    except for the last part of a `missing` error, which names the absent field.
    """
    loc = err["loc"]
    path: list[str | int] = []
    current = data
    for i, part in enumerate(loc):
        if isinstance(current, dict):
            if isinstance(part, str) and _is_tag(current, part):
                continue
            if part in current:
                path.append(part)
                current = current[part]
            elif i == len(loc) - 1 and err["type"] in ("missing", "extra_forbidden"):
                path.append(part)
        elif isinstance(current, list):
            if isinstance(part, int) and 0 <= part < len(current):
                path.append(part)
                current = current[part]
        elif current is None or isinstance(current, (str, int, float, bool)):
            continue  # past the failing value: only union labels remain
        else:
            path.extend(loc[i:])  # a model instance or other object: keep the rest as given
            break
    return path


# The keys our tagged unions discriminate on; a loc part equal to the input's value
# of one of them is the union's tag, never a field.
_TAG_KEYS = ("kind", "sessionUpdate", "event")


def _is_tag(obj: dict[str, Any], part: str) -> bool:
    return any(obj.get(key) == part for key in _TAG_KEYS)


def _discriminator(err: ErrorDetails) -> str | None:
    """For a bad or missing union tag, the tag's field name (`kind`), so the path names it."""
    if err["type"] not in ("union_tag_invalid", "union_tag_not_found"):
        return None
    # ctx gives "'kind'", or "'session_update' | 'sessionUpdate'" for an aliased field:
    # the last quoted name is the wire name. A callable discriminator has no field.
    name = str(err.get("ctx", {}).get("discriminator", "")).split(" | ")[-1]
    if len(name) >= 2 and name[0] == name[-1] == "'":
        return name[1:-1]
    return None


def _message(err: ErrorDetails, *, at_root: bool) -> str:
    ctx = err.get("ctx", {})
    if err["type"] == "union_tag_invalid":
        return f"unknown value {ctx.get('tag')!r}; expected one of {ctx.get('expected_tags')}"
    if err["type"] == "union_tag_not_found":
        return "Field required"
    if err["type"] == "value_error" and "error" in ctx:
        return str(ctx["error"])
    if err["type"] in _NOT_AN_OBJECT:
        # pydantic's text names a Python class; the wire only knows objects.
        return "params must be a JSON object" if at_root else "Input should be a JSON object"
    return err["msg"]
