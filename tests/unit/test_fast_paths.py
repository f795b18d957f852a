"""Two fast paths give what the full path gives (target b): the tool's question
reader (T2/T4) and the JSON-RPC body decoder (S3's NaN and nesting refusals).

`tools.parse_questions` builds the core's records straight from the arguments when
P2's reader takes the batch whole; `messages.decode` scans a `{`-body at once. Each is
checked here against the path it shortcuts, on valid and invalid input alike.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from askbridge.core import Question, ToolInputError
from askbridge.host.agent.tools import parse_questions
from askbridge.host.log.projection_parse import read_questions
from askbridge.jsonrpc import messages as m

# Tool arguments as a model writes them (snake_case), some fields of the wrong type.
loose = st.none() | st.integers() | st.text(max_size=6)
label = st.text(max_size=6)
tool_option = st.fixed_dictionaries({"label": label | loose}, optional={"description": loose})
tool_item = st.fixed_dictionaries(
    {"id": label | loose, "question": label | loose},
    optional={
        "header": loose,
        "multi_select": st.booleans() | loose,
        "options": st.lists(tool_option, max_size=3) | loose,
        "detail": loose,
    },
)
arguments = st.fixed_dictionaries({"questions": st.lists(tool_item, max_size=3) | loose})


def _full_path(args: Any) -> list[Question] | str:
    """What `parse_questions` gave before its fast path: the view form, then records."""
    questions, problem = read_questions(args)
    if problem is not None:
        return problem
    return [Question.from_wire(q) for q in questions or ()]


def _outcome(args: Any) -> list[Question] | str:
    try:
        return parse_questions(args)
    except ToolInputError as exc:
        return exc.message


@given(arguments)
def test_T2_T4_the_tool_reads_a_batch_as_the_full_reader_does(args: dict[str, Any]) -> None:
    assert _outcome(args) == _full_path(args)


def test_T2_a_whole_batch_keeps_every_field_the_records_hold() -> None:
    args = {
        "questions": [
            {
                "id": "db",
                "question": "Which database?",
                "header": "Storage",
                "multi_select": True,
                "options": [{"label": "SQLite", "description": "a file"}, {"label": "Postgres"}],
            },
            {"id": "name", "question": "Its name?"},
        ]
    }
    assert parse_questions(args) == _full_path(args)


def _full_decode(body: bytes) -> Any:
    """`messages.decode` without its fast path: `json.loads` with NaN refused."""

    def reject(name: str) -> Any:
        raise ValueError(f"{name} is not valid JSON")

    try:
        text = body.decode(json.detect_encoding(body), "surrogatepass")
        return ("value", json.JSONDecoder(parse_constant=reject).decode(text))
    except RecursionError:
        return ("error", "Parse error: JSON nested too deep")
    except ValueError as exc:
        return ("error", f"Parse error: {exc}")


def _decode(body: bytes) -> Any:
    try:
        return ("value", m.decode(body))
    except m.ParseFailure as exc:
        return ("error", str(exc))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)
bodies = (
    st.dictionaries(st.text(max_size=4), json_values).map(lambda v: json.dumps(v).encode())
    | st.binary(max_size=24).map(lambda b: b"{" + b)
    | st.tuples(st.dictionaries(st.text(max_size=4), json_values), st.binary(max_size=4)).map(
        lambda p: json.dumps(p[0]).encode() + p[1]
    )
)


@given(bodies)
def test_S3_a_body_decodes_or_fails_as_json_loads_does(body: bytes) -> None:
    assert _decode(body) == _full_decode(body)


def test_S3_the_edges_decode_or_fail_as_json_loads_does() -> None:
    for body in [
        b'{"a": NaN}',
        b'{"a": -Infinity}',
        b'{"a": 1} x',
        b'{"a": 1}\n',
        b'{"a": "\\ud800"}',
        b'{"\xed\xa0\x80": 1}',  # a surrogate as UTF-8 bytes
        b"{\x00",
        b"{",
        '{"é": 1}'.encode("utf-16-le"),
        b"{" + b'"a":' + b"[" * 100_000,
    ]:
        assert _decode(body) == _full_decode(body), body[:20]
