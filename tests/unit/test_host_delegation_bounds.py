"""S16: delegation is bounded per root prompt (host/agent/delegation.py).

Each bound is shown with the script model and a limit lowered from its default:
depth (levels of children), children (delegate calls run per step), sessions and
requests (across the tree of one prompt, the root's own requests included). Past a
bound the call fails with a tool error the model reads, naming the bound; the next
prompt starts with a fresh budget.
"""

from __future__ import annotations

from typing import Any

from host_helpers import call_step, host_env, of_type, result_of, script, settle, text_step

from askbridge.host.log import events as ev

ERROR = {"name": "ToolError", "code": "TOOL_FAILED"}


def delegate(call_id: str, *child_steps: dict[str, Any]) -> dict[str, Any]:
    return call_step(call_id, "delegate", {"prompt": f"task {call_id}", "steps": list(child_steps)})


def many(*calls: dict[str, Any]) -> dict[str, Any]:
    """One step making every call of `calls` (each a one-call step)."""
    return {"toolCalls": [c["toolCalls"][0] for c in calls]}


async def children_of(env: Any, parent: str) -> list[str]:
    return [i.session_id for i in await env.store.list_sessions() if i.parent_session_id == parent]


async def test_S16_a_child_at_the_deepest_level_cannot_delegate() -> None:
    async with host_env() as env:
        grandchild = delegate("d-2", text_step("never runs"))
        child = delegate("d-1", grandchild, text_step("child done"))
        s = await env.host.new_session(
            model=script(child, text_step("root done")), delegation={"depth": 1}
        )
        run = env.prompt(s.id, "go")
        await settle()
        assert run.stop == "end_turn"
        (child_id,) = await children_of(env, s.id)
        refused = result_of(await env.log(child_id), "d-2")
        assert refused["content"] == (
            "Error: delegate refused: this agent is at delegation level 1, the deepest "
            "(delegation limit depth=1)"
        )
        assert refused["error"] == ERROR
        assert await children_of(env, child_id) == []
        assert result_of(await env.log(s.id), "d-1")["content"] == "child done"


async def test_S16_depth_0_forbids_delegation_altogether() -> None:
    async with host_env() as env:
        s = await env.host.new_session(
            model=script(delegate("d-1", text_step("x")), text_step("done")),
            delegation={"depth": 0},
        )
        env.prompt(s.id, "go")
        await settle()
        assert "delegation limit depth=0" in result_of(await env.log(s.id), "d-1")["content"]
        assert await children_of(env, s.id) == []


async def test_S16_at_most_children_delegate_calls_run_per_step() -> None:
    async with host_env() as env:
        calls = [delegate(f"d-{i}", text_step(f"child {i}")) for i in range(1, 4)]
        s = await env.host.new_session(
            model=script(many(*calls), text_step("done")), delegation={"children": 2}
        )
        run = env.prompt(s.id, "go")
        await settle()
        assert run.stop == "end_turn"
        log = await env.log(s.id)
        assert [result_of(log, f"d-{i}")["content"] for i in (1, 2)] == ["child 1", "child 2"]
        third = result_of(log, "d-3")
        assert third["content"] == (
            "Error: delegate refused: at most 2 delegate calls run per step; this is call 3 "
            "(delegation limit children=2)"
        )
        assert third["error"] == ERROR
        assert len(await children_of(env, s.id)) == 2
        # The refused call is logged as the model made it: its call, then its failure.
        assert [e["callId"] for e in of_type(log, ev.TOOL_CALL)] == ["d-1", "d-2", "d-3"]


async def test_S16_a_prompt_starts_at_most_sessions_children_and_the_next_prompt_again() -> None:
    async with host_env() as env:
        first = [delegate(f"a-{i}", text_step("ok")) for i in range(3)]
        second = [delegate(f"b-{i}", text_step("ok")) for i in range(3)]
        s = await env.host.new_session(
            model=script(many(*first), text_step("one"), many(*second), text_step("two")),
            delegation={"sessions": 2},
        )
        for prompt, prefix in (("go", "a"), ("again", "b")):
            run = env.prompt(s.id, prompt)
            await settle()
            assert run.stop == "end_turn"
            log = await env.log(s.id)
            contents = [result_of(log, f"{prefix}-{i}")["content"] for i in range(3)]
            assert contents == [
                "ok",
                "ok",
                "Error: delegate refused: this prompt has started its 2 delegated sessions "
                "(delegation limit sessions=2)",
            ]
        assert len(await children_of(env, s.id)) == 4  # two per prompt


async def test_S16_a_prompt_makes_at_most_requests_model_requests_across_its_tree() -> None:
    """The root's request, then the child's two; the child's third is refused, so its turn
    ends and the delegate call fails naming the bound; the root's next request is refused
    too, so the root turn ends with max_turn_requests. The next prompt may request again."""
    async with host_env() as env:
        looping = [call_step(f"c-{i}", "no_such_tool", {}) for i in range(5)]
        s = await env.host.new_session(
            model=script(delegate("d-1", *looping), text_step("unreached"), text_step("fresh")),
            delegation={"requests": 3},
        )
        run = env.prompt(s.id, "go")
        await settle()
        assert run.stop == "max_turn_requests"
        log = await env.log(s.id)
        failed = result_of(log, "d-1")
        assert failed["content"] == (
            "Error: delegate refused: this prompt has made its 3 model requests "
            "(delegation limit requests=3)"
        )
        assert failed["error"] == ERROR
        assert of_type(log, ev.TURN_END)[-1]["stopReason"] == "max_turn_requests"
        (child,) = await children_of(env, s.id)
        assert len(of_type(await env.log(child), ev.REQUEST_HEADER)) == 2
        assert len(of_type(log, ev.REQUEST_HEADER)) == 1
        again = env.prompt(s.id, "again")
        await settle()
        assert again.stop == "end_turn"


async def test_S16_a_delegate_call_after_the_requests_are_spent_starts_no_child() -> None:
    async with host_env() as env:
        s = await env.host.new_session(
            model=script(delegate("d-1", text_step("x")), text_step("done")),
            delegation={"requests": 1},
        )
        run = env.prompt(s.id, "go")
        await settle()
        assert run.stop == "max_turn_requests"
        assert "delegation limit requests=1" in result_of(await env.log(s.id), "d-1")["content"]
        assert await children_of(env, s.id) == []


async def test_S16_the_defaults_allow_three_levels() -> None:
    async with host_env() as env:
        level3 = delegate("d-3", text_step("level 3"))
        level2 = delegate("d-2", level3, text_step("level 2"))
        level1 = delegate("d-1", level2, text_step("level 1"))
        s = await env.host.new_session(model=script(level1, text_step("root")))
        run = env.prompt(s.id, "go")
        await settle()
        assert run.stop == "end_turn"
        (child,) = await children_of(env, s.id)
        (grandchild,) = await children_of(env, child)
        assert len(await children_of(env, grandchild)) == 1
        assert result_of(await env.log(grandchild), "d-3")["content"] == "level 3"
        four = delegate("d-4", text_step("level 4"))
        deeper = script(delegate("d-1", delegate("d-2", delegate("d-3", four))))
        s2 = await env.host.new_session(model=deeper)
        env.prompt(s2.id, "go")
        await settle()
        (c1,) = await children_of(env, s2.id)
        (c2,) = await children_of(env, c1)
        (c3,) = await children_of(env, c2)
        assert "delegation limit depth=3" in result_of(await env.log(c3), "d-4")["content"]


async def test_S16_a_child_stopped_by_its_own_turn_limit_fails_its_call_saying_so() -> None:
    async with host_env(max_turn_requests=3) as env:
        looping = [call_step(f"c-{i}", "no_such_tool", {}) for i in range(5)]
        s = await env.host.new_session(model=script(delegate("d-1", *looping), text_step("done")))
        run = env.prompt(s.id, "go")
        await settle()
        assert run.stop == "end_turn"
        assert result_of(await env.log(s.id), "d-1")["content"] == (
            "Error: delegate failed: the child made 3 model requests without finishing "
            "(--max-turn-requests)"
        )
