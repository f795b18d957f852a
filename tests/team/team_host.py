"""A team-store host in a process of its own, for tests that kill it (-9) or pause it
(SIGSTOP): `python team_host.py URL NAME`, then one JSON command a line on stdin,
one JSON reply a line on stdout (`{"ok": …}` or `{"error": "<type>: <message>"}`).

    {"do": "create", "session": "s1"}               a session, owned (epoch 1)
    {"do": "own", "session": "s1"}                  its lease: {"ok": [epoch, why]}
    {"do": "append", "session": "s1", "n": 3}       3 events {"type": "x", "by": NAME}
    {"do": "claim", "session": "s1", "call": "c1", "client": "w"}
    {"do": "consume", "session": "s1"}              from now on, answer each new answer
                                                    to the session: a tool/result event
                                                    consuming it; {"consumed": call} once
                                                    each is committed, {"failed": …} if not
It serves the store (listening, renewing) from the start, and says {"ready": HOST_ID}.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from askbridge.core.errors import StoreError
from askbridge.host.log import events as ev
from askbridge.host.store.store_api import encode_event
from askbridge.host.store.store_postgres import PostgresEventStore


def say(message: dict[str, Any]) -> None:
    print(json.dumps(message), flush=True)


def header(session_id: str) -> ev.Event:
    return ev.session_header(
        session_id=session_id,
        agent_id="agent",
        origin="root",
        cwd="/w",
        model={"kind": "script"},
        ask_user_question={"mode": "timed", "timeout": 60},
        created_at="2025-01-01T00:00:00Z",
    )


async def consume(
    store: PostgresEventStore, session_id: str, hints: MemoryObjectReceiveStream[tuple[str, str]]
) -> None:
    """Log a tool/result for each answer to `session_id`, consuming it in that commit."""
    async for hinted, call_id in hints:
        if hinted != session_id or session_id not in store.team.leases.epochs:
            continue
        answer = await store.team.answers.live(session_id, call_id)
        if answer is None or answer.consumed_seq is not None:
            continue
        result = {"type": "tool/result", "callId": call_id, "answer": answer.answer}
        try:
            await store.append_encoded(
                [(session_id, [encode_event(result)])], uses=[(session_id, call_id, 0)]
            )
        except StoreError as exc:
            say({"failed": f"{type(exc).__name__}: {exc.message}"})
            continue
        say({"consumed": call_id})


async def command(store: PostgresEventStore, tasks: anyio.abc.TaskGroup, line: str) -> Any:
    order = json.loads(line)
    session_id = order.get("session", "")
    match order["do"]:
        case "create":
            await store.create_session(header(session_id))
        case "own":
            owned = await store.own(session_id)
            return [owned.epoch, owned.why]
        case "append":
            body = {"type": "x", "by": store.team.presence.host_id}
            await store.append(session_id, [body] * int(order["n"]))
        case "claim":
            await store.team.claims.claim(session_id, order["call"], order["client"])
        case "consume":
            send, receive = anyio.create_memory_object_stream[tuple[str, str]](10_000)
            store.team.answers.hints.subscribe(send.send_nowait)
            tasks.start_soon(consume, store, session_id, receive)
            # Answers given before this are hinted by a catch-up, as after a reconnect.
            await store.team.answers.catch_up()
    return True


async def main(url: str, name: str) -> None:
    store = await PostgresEventStore.open(url, host_name=name)
    async with anyio.create_task_group() as tasks:
        await tasks.start(store.serve)
        say({"ready": store.team.host_id})
        while line := await anyio.to_thread.run_sync(sys.stdin.readline):
            try:
                say({"ok": await command(store, tasks, line)})
            except (StoreError, KeyError, ValueError) as exc:
                say({"error": f"{type(exc).__name__}: {exc}"})
        tasks.cancel_scope.cancel()
    await store.close()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
