"""Hypothesis strategies producing wire-form (camelCase JSON) payloads of protocol.md.

`PAYLOAD_STRATEGIES` has one strategy per schema stem of
`askbridge.protocol.payloads.payload_stems()`; the round-trip tests check the two
stay in step, so a new payload cannot go untested. Optional fields are drawn
present or absent, never `null`, as a well-behaved sender would write them.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

ident = st.text(min_size=1, max_size=10)
text = st.text(max_size=20)
json_scalar = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)


def obj(required: dict[str, Any], **optional: Any) -> st.SearchStrategy[dict[str, Any]]:
    """A dict strategy: every `required` key, each `optional` key present or absent."""
    return st.fixed_dictionaries(required, optional=optional)


# -- vocabulary (behavior.md V1–V7) -------------------------------------------------------
option = obj({"label": ident}, description=text)
subject = obj({"name": text}, icon=text)
plan_review = obj({"kind": st.just("plan-review"), "approve": text}, callId=ident)
approval = obj(
    {"kind": st.just("approval"), "approve": text, "reject": text},
    always=text,
    subject=subject,
    display=st.dictionaries(ident, st.dictionaries(ident, text, max_size=2), max_size=2),
)
unknown_intent = st.builds(
    lambda k: {"kind": k}, text.filter(lambda k: k not in ("plan-review", "approval"))
)
question = obj(
    {"id": ident, "question": text},
    detail=text,
    header=text,
    options=st.lists(option, max_size=3),
    multiSelect=st.booleans(),
    intent=plan_review | approval | unknown_intent,
)
questions = st.lists(question, min_size=1, max_size=3)
answer_item = obj({"id": ident, "selected": st.lists(text, max_size=3)}, custom=text)
answer = obj({"answers": st.lists(answer_item, max_size=3)})
wait = obj({"callId": ident}, timed=st.booleans())
view = obj(
    {
        "active": st.lists(
            obj(
                {
                    "callId": ident,
                    "questions": questions,
                    "state": st.sampled_from(["open", "continued"]),
                }
            ),
            max_size=2,
        ),
        "settled": st.lists(
            obj({"callId": ident, "answers": st.lists(answer_item, max_size=2)}), max_size=2
        ),
    }
)

# -- shared shapes -----------------------------------------------------------------------
text_block = obj({"type": st.just("text"), "text": text})
error_data = obj({"name": ident, "code": ident})
source = obj({"kind": ident, "callId": ident, "outcome": ident})
stop_reason = st.sampled_from(["end_turn", "cancelled", "max_turn_requests"])
capability = obj({"version": st.integers(min_value=1, max_value=5)})
session_id = ident

# -- ModelSpec and settings (T1) ---------------------------------------------------------
tool_call_spec = obj({"id": ident, "name": ident}, arguments=json_value)
step = obj({}, text=text, toolCalls=st.lists(tool_call_spec, max_size=2))
script_spec = obj({"kind": st.just("script"), "steps": st.lists(step, max_size=3)})
openai_spec = obj(
    {"kind": st.just("openai"), "model": ident},
    baseUrl=st.sampled_from(["http://127.0.0.1:8080/v1", "https://api.example.com/v1"])
    | st.builds("https://{}.example/v1".format, st.from_regex(r"[a-z0-9-]{1,20}", fullmatch=True)),
    apiKeyEnv=st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}_(KEY|TOKEN)", fullmatch=True),
    timeoutS=st.integers(min_value=1, max_value=3600),
)
model_spec = script_spec | openai_spec
timeout = st.just(-1) | st.integers(min_value=1, max_value=2147483)
ask_config = obj({}, mode=st.sampled_from(["legacy", "timed"]), timeout=timeout)
settings = obj({}, model=model_spec, askUserQuestion=ask_config)
# The model-facing tool arguments (T2): snake_case, as the model writes them.
tool_question = obj(
    {"id": ident, "question": text},
    header=text,
    options=st.lists(option, max_size=3),
    multi_select=st.booleans(),
)
ask_arguments = obj({"questions": st.lists(tool_question, min_size=1, max_size=3)}, timeout=timeout)

# -- session/update ----------------------------------------------------------------------
update = st.one_of(
    obj(
        {
            "sessionUpdate": st.just("turn_started"),
            "turnId": ident,
            "cause": st.sampled_from(["prompt", "inbox"]),
        }
    ),
    obj({"sessionUpdate": st.just("agent_message_chunk"), "content": text_block}),
    obj(
        {"sessionUpdate": st.just("user_message"), "content": st.lists(text_block, max_size=2)},
        source=source,
    ),
    obj(
        {
            "sessionUpdate": st.just("tool_call"),
            "toolCallId": ident,
            "title": text,
            "status": st.just("in_progress"),
            "rawInput": json_value,
        }
    ),
    obj(
        {
            "sessionUpdate": st.just("tool_call_update"),
            "toolCallId": ident,
            "status": st.sampled_from(["completed", "failed"]),
            "content": st.lists(
                obj({"type": st.just("content"), "content": text_block}), max_size=2
            ),
        },
        error=error_data,
    ),
    obj({"sessionUpdate": st.just("turn_ended"), "turnId": ident, "stopReason": stop_reason}),
)

# -- method payloads ---------------------------------------------------------------------
session_scoped = obj({"sessionId": session_id})
call_scoped = obj({"sessionId": session_id, "callId": ident})
token = st.integers() | text
ask_params = obj({"sessionId": session_id, "agentId": ident, "questions": questions}, wait=wait)
answer_params = obj({"sessionId": session_id, "callId": ident, "answer": answer})
view_change = st.one_of(
    obj({"callId": ident, "state": st.sampled_from(["open", "continued"]), "questions": questions}),
    obj({"callId": ident, "state": st.sampled_from(["continued", "removed"])}),
    obj(
        {"callId": ident, "state": st.just("settled"), "answers": st.lists(answer_item, max_size=3)}
    ),
)
did_change = obj({"sessionId": session_id, "changes": st.lists(view_change, max_size=3)})
turn = obj(
    {
        "sessionId": session_id,
        "turnId": ident,
        "event": st.just("started"),
        "cause": st.sampled_from(["prompt", "inbox"]),
    }
) | obj(
    {"sessionId": session_id, "turnId": ident, "event": st.just("ended"), "stopReason": stop_reason}
)

PAYLOAD_STRATEGIES: dict[str, st.SearchStrategy[Any]] = {
    # LSP door
    "session.new.params": obj({}, cwd=text, model=model_spec, askUserQuestion=ask_config),
    "session.new.result": session_scoped,
    "session.load.params": session_scoped,
    "session.load.result": st.just({}),
    "session.list.params": st.just({}),
    "session.list.result": obj(
        {
            "sessions": st.lists(
                obj({"sessionId": session_id, "createdAt": text}, title=text), max_size=3
            )
        }
    ),
    "session.prompt.params": obj(
        {"sessionId": session_id, "prompt": st.lists(text_block, max_size=3)}
    ),
    "session.prompt.result": obj({"stopReason": stop_reason}),
    "session.cancel.params": session_scoped,
    "session.update.params": obj({"sessionId": session_id, "update": update}),
    "userQuestions.ask.params": ask_params,
    "userQuestions.ask.result": answer,
    "userQuestions.didChange.params": did_change,
    "userQuestions.attachWait.params": obj(
        {"sessionId": session_id, "callId": ident, "partialResultToken": token}
    ),
    "userQuestions.attachWait.result": st.none(),
    "userQuestions.answer.params": answer_params,
    "userQuestions.answer.result": st.booleans(),
    "userQuestions.withdrawReply.params": call_scoped,
    "userQuestions.withdrawReply.result": st.booleans(),
    "userQuestions.list.params": session_scoped,
    "userQuestions.list.result": view,
    # ACP door extensions
    "_askbridge.ask.params": ask_params,
    "_askbridge.ask.result": answer,
    "_askbridge.cancelAsk.params": obj({"sessionId": session_id}, callId=ident),
    "_askbridge.attachWait.params": call_scoped,
    "_askbridge.attachWait.result": obj(
        {"remainingMs": st.none() | st.integers(min_value=0, max_value=2**31)}
    ),
    "_askbridge.releaseWait.params": call_scoped,
    "_askbridge.releaseWait.result": obj({"released": st.booleans()}),
    "_askbridge.answer.params": answer_params,
    "_askbridge.answer.result": obj({"accepted": st.booleans()}),
    "_askbridge.withdrawReply.params": call_scoped,
    "_askbridge.withdrawReply.result": obj({"withdrawn": st.booleans()}),
    "_askbridge.list.params": session_scoped,
    "_askbridge.list.result": view,
    "_askbridge.didChange.params": did_change,
    "_askbridge.turn.params": turn,
    # Other payloads
    "ModelSpec": model_spec,
    "tool.ask_user_question.arguments": ask_arguments,
    "initialize.initializationOptions": settings,
    "initialize.capabilities.experimental": obj({}, userQuestions=capability),
    "initialize.serverInfo": obj({"name": st.just("askbridge"), "version": ident}),
    "userQuestions.attachWait.progress": obj(
        {"token": token, "value": obj({"remainingMs": st.integers(min_value=0)})}
    ),
    "error.data": error_data,
    "error.invalidParams.data": obj(
        {"errors": st.lists(obj({"field": text, "message": text}), max_size=3)}
    ),
    "acp.capabilities._meta": obj({"askbridge": capability}),
    "acp.session.new._meta": obj({}, askbridge=settings),
    "acp.session.update._meta": obj({"askbridge": obj({}, source=source, error=error_data)}),
}
