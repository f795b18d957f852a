"""Vocabulary rules V1–V8: the wire models and the semantic checks of core.validation."""

from __future__ import annotations

import json

import pytest
from core_helpers import question
from pydantic import ValidationError

from askbridge.core import UserQuestionError, UserQuestionRequest, check_answer, validate_intents
from askbridge.protocol import (
    ActiveQuestion,
    Answer,
    AnswerItem,
    ApprovalIntent,
    Option,
    PendingResult,
    PlanReviewIntent,
    ProjectionView,
    QuestionItem,
    SettledQuestion,
    UnknownIntent,
    Wait,
)


def bad_intent(call: object) -> UserQuestionError:
    assert callable(call)
    with pytest.raises(UserQuestionError) as info:
        call()
    assert info.value.code == "BAD_INTENT"
    return info.value


def bad_answer(questions: list[QuestionItem], answer: Answer, call_id: str | None = None) -> str:
    with pytest.raises(UserQuestionError) as info:
        check_answer(questions, answer, call_id)
    assert info.value.code == "BAD_ANSWER"
    return info.value.message


# -- V1 Option -------------------------------------------------------------------------------


def test_V1_option_label_is_required_and_description_optional() -> None:
    assert Option(label="Yes").dump() == {"label": "Yes"}
    assert Option(label="Yes", description="go").dump() == {"label": "Yes", "description": "go"}
    with pytest.raises(ValidationError):
        Option.model_validate({"description": "no label"})
    with pytest.raises(ValidationError):
        Option(label="")


def test_V1_label_is_the_value_the_model_gets_back() -> None:
    q = question(options=["Ship it", "Wait"])
    answer = check_answer([q], Answer(answers=[AnswerItem(id="q1", selected=["Ship it"])]))
    assert answer.answers[0].selected == ["Ship it"]


# -- V2 Question item ------------------------------------------------------------------------


def test_V2_question_item_fields_and_camel_case_wire_form() -> None:
    wire = {
        "id": "db",
        "question": "Which database?",
        "detail": "## Context\nWe need *one*.",
        "header": "DB",
        "options": [{"label": "Postgres"}, {"label": "SQLite", "description": "file"}],
        "multiSelect": True,
        "unknownField": 1,
    }
    item = QuestionItem.model_validate(wire)
    assert item.multi_select is True and item.is_multi
    wire.pop("unknownField")
    assert item.dump() == wire


def test_V2_id_and_question_are_required() -> None:
    with pytest.raises(ValidationError):
        QuestionItem.model_validate({"question": "no id"})
    with pytest.raises(ValidationError):
        QuestionItem.model_validate({"id": "q"})


def test_V2_detail_is_never_an_option() -> None:
    q = question(options=["A", "B"], detail="the plan")
    assert q.option_labels() == ["A", "B"]
    # Answering with the detail text as a choice is not allowed.
    msg = bad_answer([q], Answer(answers=[AnswerItem(id="q1", selected=["the plan"])]))
    assert "q1" in msg


# -- V3 Intents ------------------------------------------------------------------------------


def test_V3_intent_is_tagged_on_kind() -> None:
    plan = question(intent={"kind": "plan-review", "approve": "Yes", "callId": "c1"})
    assert isinstance(plan.intent, PlanReviewIntent) and plan.intent.call_id == "c1"
    approval = question(
        intent={
            "kind": "approval",
            "approve": "Yes",
            "reject": "No",
            "subject": {"name": "shell", "icon": "https://example.invalid/i.png"},
            "display": {"en": {"question": "Run?"}, "de": {"question": "Ausführen?"}},
        }
    )
    assert isinstance(approval.intent, ApprovalIntent)
    assert approval.intent.subject is not None
    assert approval.intent.subject.icon == "https://example.invalid/i.png"  # opaque string
    assert approval.intent.display == {"en": {"question": "Run?"}, "de": {"question": "Ausführen?"}}
    other = question(intent={"kind": "mystery", "whatever": 1})
    assert isinstance(other.intent, UnknownIntent)


def test_V3_intent_changes_presentation_not_answer_encoding() -> None:
    plain = question(options=["Yes", "No"], detail="plan")
    reviewed = question(
        options=["Yes", "No"], detail="plan", intent={"kind": "plan-review", "approve": "Yes"}
    )
    validate_intents([reviewed])
    batch = Answer(answers=[AnswerItem(id="q1", selected=["No"], custom=None)])
    assert check_answer([plain], batch) == check_answer([reviewed], batch)


def test_V3_plan_review_approve_must_name_an_option() -> None:
    q = question(
        options=["Yes", "No"], detail="plan", intent={"kind": "plan-review", "approve": "Go"}
    )
    err = bad_intent(lambda: validate_intents([q]))
    assert err.message == (
        'question q1 declares intent plan-review whose approve label "Go" names none of its options'
    )


def test_V3_plan_review_requires_detail() -> None:
    q = question(options=["Yes", "No"], intent={"kind": "plan-review", "approve": "Yes"})
    err = bad_intent(lambda: validate_intents([q]))
    assert err.message == "question q1 declares intent plan-review without the detail it reviews"


def test_V3_approve_label_is_json_quoted() -> None:
    q = question(options=["A"], detail="d", intent={"kind": "plan-review", "approve": 'say "hi"'})
    err = bad_intent(lambda: validate_intents([q]))
    assert json.dumps('say "hi"') in err.message


def approval(**extra: object) -> dict[str, object]:
    return {"kind": "approval", "approve": "Allow", "reject": "Deny", **extra}


def test_V3_valid_approval_passes() -> None:
    validate_intents(
        [question(options=["Allow", "Deny"], detail="rm -rf build", intent=approval())]
    )
    validate_intents(
        [
            question(
                options=["Deny", "Always", "Allow"],
                detail="rm -rf build",
                intent=approval(always="Always"),
            )
        ]
    )


def test_V3_approval_only_on_a_batch_of_one() -> None:
    q = question(options=["Allow", "Deny"], detail="d", intent=approval())
    err = bad_intent(lambda: validate_intents([q, question("q2")]))
    assert err.message.startswith("question q1 declares intent approval")


def test_V3_approval_requires_detail() -> None:
    q = question(options=["Allow", "Deny"], intent=approval())
    err = bad_intent(lambda: validate_intents([q]))
    assert err.message == "question q1 declares intent approval without the detail it reviews"


def test_V3_approval_not_multi_select() -> None:
    q = question(options=["Allow", "Deny"], detail="d", multi=True, intent=approval())
    err = bad_intent(lambda: validate_intents([q]))
    assert err.message.startswith("question q1 declares intent approval")
    assert "multi-select" in err.message


def test_V3_approval_not_on_a_timed_wait() -> None:
    q = question(options=["Allow", "Deny"], detail="d", intent=approval())
    validate_intents([q])
    err = bad_intent(lambda: validate_intents([q], timed=True))
    assert "timed" in err.message


def test_V3_approval_labels_distinct() -> None:
    q = question(options=["Allow", "Deny"], detail="d", intent=approval(always="Allow"))
    err = bad_intent(lambda: validate_intents([q]))
    assert "distinct" in err.message


@pytest.mark.parametrize(
    ("options", "always"),
    [
        (["Allow", "Deny", "Later"], None),  # an extra option
        (["Allow", "Deny"], "Always"),  # `always` names no option
        (["Allow", "Maybe"], None),  # `reject` names no option
    ],
)
def test_V3_approval_labels_equal_the_options_exactly(
    options: list[str], always: str | None
) -> None:
    intent = approval(always=always) if always else approval()
    q = question(options=options, detail="d", intent=intent)
    err = bad_intent(lambda: validate_intents([q]))
    assert err.message.startswith("question q1 declares intent approval")


def test_V3_unknown_kind_is_bad_intent() -> None:
    q = question(intent={"kind": "mystery"})
    err = bad_intent(lambda: validate_intents([q]))
    assert "q1" in err.message and "mystery" in err.message


# -- V4 Answer -------------------------------------------------------------------------------


def test_V4_answer_wire_form() -> None:
    answer = Answer.model_validate(
        {"answers": [{"id": "a", "selected": ["X"]}, {"id": "b", "selected": [], "custom": "t"}]}
    )
    assert answer.dump() == {
        "answers": [{"id": "a", "selected": ["X"]}, {"id": "b", "selected": [], "custom": "t"}]
    }


def test_V4_single_select_custom_replaces_the_choice() -> None:
    q = question(options=["Yes", "No"])
    out = check_answer([q], Answer(answers=[AnswerItem(id="q1", selected=["Yes"], custom="x")]))
    assert out.answers[0].selected == [] and out.answers[0].custom == "x"


def test_V4_multi_select_custom_may_accompany_selected() -> None:
    q = question(options=["A", "B", "C"], multi=True)
    out = check_answer([q], Answer(answers=[AnswerItem(id="q1", selected=["A", "C"], custom="x")]))
    assert out.answers[0].selected == ["A", "C"] and out.answers[0].custom == "x"


def test_V4_empty_item_is_a_skipped_question() -> None:
    qs = [question("q1"), question("q2", options=None)]
    batch = Answer(answers=[AnswerItem(id="q1"), AnswerItem(id="q2")])
    out = check_answer(qs, batch)
    assert [a.dump() for a in out.answers] == [
        {"id": "q1", "selected": []},
        {"id": "q2", "selected": []},
    ]


# -- V5 Request ------------------------------------------------------------------------------


def test_V5_wait_shapes() -> None:
    request = UserQuestionRequest(questions=[question()])
    assert request.wait is None and request.agent is None and request.signal is None
    assert Wait(call_id="c1").dump() == {"callId": "c1"}
    assert Wait(call_id="c1", timed=True).dump() == {"callId": "c1", "timed": True}
    assert Wait.model_validate({"callId": "c2", "timed": True}).timed is True


# -- V6 Timed result -------------------------------------------------------------------------


def test_V6_pending_is_its_own_shape() -> None:
    pending = PendingResult(call_id="c1")
    assert pending.dump() == {"pending": True, "callId": "c1"}
    assert not isinstance(pending, Answer)
    with pytest.raises(ValidationError):
        PendingResult.model_validate({"pending": False, "callId": "c1"})


# -- V7 Projection view ----------------------------------------------------------------------


def test_V7_projection_view_shape_and_order() -> None:
    view = ProjectionView(
        active=[
            ActiveQuestion(call_id="b", questions=[question()], state="open"),
            ActiveQuestion(call_id="a", questions=[question()], state="continued"),
        ],
        settled=[SettledQuestion(call_id="z", answers=[AnswerItem(id="q1", selected=["No"])])],
    )
    wire = view.dump()
    assert [a["callId"] for a in wire["active"]] == ["b", "a"]
    assert [a["state"] for a in wire["active"]] == ["open", "continued"]
    assert wire["settled"] == [{"callId": "z", "answers": [{"id": "q1", "selected": ["No"]}]}]
    assert ProjectionView().dump() == {"active": [], "settled": []}
    with pytest.raises(ValidationError):
        ActiveQuestion.model_validate({"callId": "x", "questions": [], "state": "settled"})


# -- V8 Answer checks ------------------------------------------------------------------------


def test_V8_each_question_exactly_once_with_call_id() -> None:
    qs = [question("q1"), question("q2")]
    expected = "the answer batch for call-7 must name each of its 2 questions exactly once"
    missing = Answer(answers=[AnswerItem(id="q1")])
    extra = Answer(answers=[AnswerItem(id="q1"), AnswerItem(id="q2"), AnswerItem(id="q3")])
    duplicate = Answer(answers=[AnswerItem(id="q1"), AnswerItem(id="q1")])
    wrong = Answer(answers=[AnswerItem(id="q1"), AnswerItem(id="q9")])
    for batch in (missing, extra, duplicate, wrong):
        assert bad_answer(qs, batch, "call-7") == expected


def test_V8_each_question_exactly_once_without_call_id() -> None:
    msg = bad_answer([question("q1")], Answer(answers=[]))
    assert msg == "the answer batch must name each of its 1 questions exactly once"


def test_V8_selected_labels_must_be_options() -> None:
    msg = bad_answer(
        [question(options=["Yes", "No"])], Answer(answers=[AnswerItem(id="q1", selected=["Maybe"])])
    )
    assert "q1" in msg and '"Maybe"' in msg


def test_V8_single_select_has_at_most_one() -> None:
    q = question(options=["Yes", "No"])
    bad_answer([q], Answer(answers=[AnswerItem(id="q1", selected=["Yes", "No"])]))
    multi = question(options=["Yes", "No"], multi=True)
    out = check_answer([multi], Answer(answers=[AnswerItem(id="q1", selected=["Yes", "No"])]))
    assert out.answers[0].selected == ["Yes", "No"]


def test_V8_question_without_options_accepts_only_custom() -> None:
    q = question(options=None)
    bad_answer([q], Answer(answers=[AnswerItem(id="q1", selected=["anything"])]))
    out = check_answer([q], Answer(answers=[AnswerItem(id="q1", custom="free text")]))
    assert out.answers[0].custom == "free text" and out.answers[0].selected == []
    assert check_answer([q], Answer(answers=[AnswerItem(id="q1")])).answers[0].custom is None


def test_V8_a_single_select_custom_answer_has_its_selection_emptied() -> None:
    q = question(options=["Yes", "No"])
    out = check_answer([q], Answer(answers=[AnswerItem(id="q1", selected=["Yes"], custom="mine")]))
    assert out.answers[0].selected == [] and out.answers[0].custom == "mine"


def test_V8_an_answer_normal_already_comes_back_as_it_is() -> None:
    qs = [question("q1", options=["Yes", "No"]), question("q2", options=["Yes"], multi=True)]
    answer = Answer(
        answers=[AnswerItem(id="q1", selected=["No"]), AnswerItem(id="q2", selected=["Yes"])]
    )
    assert check_answer(qs, answer) is answer  # nothing to normalize: not rebuilt


def test_V8_answer_comes_back_in_question_order() -> None:
    qs = [question("q1"), question("q2")]
    out = check_answer(
        qs, Answer(answers=[AnswerItem(id="q2", selected=["No"]), AnswerItem(id="q1")])
    )
    assert [a.id for a in out.answers] == ["q1", "q2"]
