"""EncodedObject (protocol/encoded.py): a dict that carries its compact JSON text, and every
builder that splices one — each checked here to give exactly `compact_json` of its value."""

from __future__ import annotations

import copy
import json
import pickle
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from protocol_strategies import ident, json_value, question, wait

from askbridge.core import Question, UserQuestionRequest
from askbridge.host.agent.outcome import ToolOutcome
from askbridge.host.log import events as ev
from askbridge.host.log import updates
from askbridge.host.store.store_api import StoreError, encode_event
from askbridge.jsonrpc.encoding import Encoded, encode
from askbridge.lsp.relay import _ask_encoded, _ask_params, _update_params
from askbridge.protocol.encoded import EncodedObject, encoded, text_of
from askbridge.protocol.text import compact_json
from askbridge.protocol.vocabulary import Answer, AnswerItem, QuestionItem, Wait

# Strings JSON escapes (quotes, backslashes, controls, U+2028, non-ASCII, a lone surrogate).
nasty = st.text(alphabet=st.sampled_from('a"\\\n\t\x00\x1f\u2028é€😀\ud800/<'), max_size=12)
arguments = st.dictionaries(nasty | st.text(max_size=5), json_value, max_size=4)


def _same(value: Any) -> None:
    """An EncodedObject's text is what encoding its plain copy gives, and it reads as it."""
    assert type(value) is EncodedObject
    assert value.json == compact_json(dict(value))
    assert value.json == compact_json(value)  # the C encoder meeting one: the same bytes


@given(arguments)
def test_encoded_is_the_compact_text(value: dict[str, Any]) -> None:
    obj = encoded(value)
    _same(obj)
    assert obj == value and encoded(obj) is obj
    assert text_of(obj) == obj.json and text_of('a"b') == compact_json('a"b')


def test_it_is_read_only_and_copies_are_plain() -> None:
    obj = encoded({"a": [1]})
    for change in (
        lambda: obj.__setitem__("b", 1),
        lambda: obj.__delitem__("a"),
        lambda: obj.update(b=1),
        lambda: obj.pop("a"),
        lambda: obj.setdefault("b", 1),
        obj.popitem,
        obj.clear,
    ):
        with pytest.raises(TypeError):
            change()
    with pytest.raises(TypeError):
        obj |= {"b": 1}
    for made in (copy.copy(obj), copy.deepcopy(obj), pickle.loads(pickle.dumps(obj)), dict(obj)):
        assert type(made) is dict and made == {"a": [1]}


def test_a_value_that_is_not_json_is_refused() -> None:
    with pytest.raises(ValueError):
        encoded({"x": float("nan")})
    with pytest.raises(TypeError):
        encoded({"x": {1, 2}})


@given(nasty, nasty, arguments, nasty)
def test_the_builders_splice_exactly(call_id: str, name: str, value: Any, text: str) -> None:
    args = encoded(value)
    call = ev.tool_call(call_id, name, args)
    _same(call)
    assert call == {"type": "tool/call", "callId": call_id, "name": name, "arguments": value}
    calls = [ev.encoded_call(call_id, name, args), ev.encoded_call(name, call_id, args)]
    for item in calls:
        _same(item)
    _same(ev.assistant_message(text, calls))
    _same(ev.assistant_message(text, []))
    update = updates.tool_call(call_id, name, args)
    _same(update)
    assert update == updates.tool_call(call_id, name, dict(value))
    _same(_update_params(update, text))  # type: ignore[arg-type]


def test_the_builders_without_encoded_arguments_build_plain_dicts() -> None:
    assert type(ev.tool_call("c", "n", {"a": 1})) is dict
    assert type(ev.encoded_call("c", "n", "text")) is dict
    assert type(ev.assistant_message("t", [{"id": "c", "name": "n", "arguments": {}}])) is dict
    assert type(updates.tool_call("c", "n", None)) is dict
    assert type(_update_params({"a": 1}, "s")) is dict


def test_the_encoders_take_its_text() -> None:
    call = ev.tool_call("c-1", "ask", encoded({"q": "é"}))
    assert encode_event(call) == call.json
    assert encode(call) == call.json.encode()
    assert Encoded(call).json == call.json.encode()
    assert Encoded.of_text(call.json).json == call.json.encode()
    # A lone surrogate: refused by the store, escaped on the wire, as for a plain dict.
    bad = ev.tool_call("c-1", "ask", encoded({"q": "\ud800"}))
    with pytest.raises(StoreError, match="lone surrogate"):
        encode_event(bad)
    assert encode(bad) == encode(dict(bad)) == json.dumps(dict(bad), separators=(",", ":")).encode()
    assert Encoded.of_text(bad.json).json == encode(bad)


@given(st.lists(question, min_size=1, max_size=3), st.none() | ident, st.none() | wait)
def test_a_card_is_spliced_from_its_questions(
    items: list[dict[str, Any]], session_id: str | None, waited: dict[str, Any] | None
) -> None:
    records = [Question.of(QuestionItem.model_validate(item)) for item in items]
    for q in records:
        assert q.dump_json() == compact_json(q.dump())
    agent = SimpleNamespace(id="a-1")
    request = UserQuestionRequest(
        records,
        agent=agent,  # type: ignore[arg-type]
        session_id=session_id,
        wait=None if waited is None else Wait.model_validate(waited),
    )
    params = _ask_params(request, session_id)
    assert _ask_encoded(request, session_id).json == compact_json(params).encode()
    assert ("wait" in params) is (waited is not None)


error_data = st.none() | st.fixed_dictionaries({"name": nasty, "code": nasty})
answer_items = st.lists(
    st.fixed_dictionaries({"id": nasty, "selected": st.lists(nasty, max_size=2)}), max_size=3
)


@given(
    nasty,
    nasty,
    nasty,
    st.booleans(),
    error_data,
    st.sampled_from([None, "answered", "pending", "done"]),
    answer_items,
)
def test_a_result_and_its_update_are_built_with_their_text(
    call_id: str,
    name: str,
    content: str,
    is_error: bool,
    error: dict[str, str] | None,
    outcome: str | None,
    answers: list[dict[str, Any]],
) -> None:
    for answers_json in (None, compact_json(answers)):
        event = ev.tool_result(
            call_id,
            name,
            content,
            is_error=is_error,
            error=error,
            outcome=outcome,
            answers=answers,
            answers_json=answers_json,
        )
        _same(event)
    update = updates.tool_call_update(call_id, content, is_error=is_error, error=error)
    _same(update)
    _same(_update_params(update, call_id))


def test_a_result_that_is_not_json_stays_plain() -> None:
    event = ev.tool_result("c", "n", "x", error={"name": {1, 2}})  # type: ignore[dict-item]
    assert type(event) is dict
    with pytest.raises(StoreError):
        encode_event(event)
    assert type(updates.tool_call_update("c", "x", is_error=True, error={"a": {1}})) is dict  # type: ignore[dict-item]


def test_an_answered_outcome_keeps_its_answers_text() -> None:
    outcome = ToolOutcome.answered(Answer(answers=[AnswerItem(id="q", selected=["Yes"])]))
    assert outcome.content == compact_json({"answers": outcome.answers})
    assert outcome.answers_json == compact_json(outcome.answers)
    _same(outcome.event("c-1", "ask_user_question"))


@given(
    st.lists(
        st.builds(
            AnswerItem,
            id=nasty.filter(bool),
            selected=st.lists(nasty, max_size=3),
            custom=st.none() | nasty,
        ),
        max_size=3,
    )
)
def test_an_answers_text_is_its_compact_json(items: list[AnswerItem]) -> None:
    outcome = ToolOutcome.answered(Answer(answers=items))
    assert outcome.answers_json == compact_json(outcome.answers)
    assert outcome.content == compact_json({"answers": outcome.answers})
