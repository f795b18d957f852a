"""A Host on a SQLite data dir, driven over stdin, for the crash tests (test_host_crash.py).

Run: `python host_driver.py DATA_DIR`. It reads one JSON command per line on
stdin and prints one JSON marker per line on stdout (flushed), so a parent
process knows exactly what has happened — and therefore what is committed
(behavior.md D1) — when it kills this process with SIGKILL.

Commands, each answered by a marker:
    {"cmd": "new", "model": ModelSpec, "ask": {mode, timeout}}
        -> {"event": "session", "sessionId"}
    {"cmd": "prompt", "sessionId", "text"}  (runs in the background)
        -> later {"event": "prompt_done", "stop"}
    {"cmd": "advance", "ms"}  (moves the ManualClock)
        -> {"event": "advanced", "ms"}
    {"cmd": "answer", "sessionId", "callId", "answer": Answer}
        -> {"event": "answered", "callId", "result"} or {"event": "answer_error", "code"}
Markers the host causes:
    {"event": "asked", "callId"}       a request reached the waterfall; it is never answered
    {"event": "update", "update"}      a session/update a front door would forward
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio

from askbridge.core import HarnessError, ManualClock, UserQuestionRequest
from askbridge.core.waterfall import Next, Settle, Withdraw
from askbridge.host.host import Host
from askbridge.host.store.datadir import open_store
from askbridge.protocol import Answer


def say(marker: dict[str, Any]) -> None:
    print(json.dumps(marker), flush=True)


def never_answers(request: UserQuestionRequest, next_: Next, settle: Settle) -> Withdraw:
    say({"event": "asked", "callId": request.wait.call_id if request.wait else None})
    return lambda: None  # never settles


class Printer:
    def on_update(self, session_id: str, update: dict[str, Any]) -> None:
        say({"event": "update", "sessionId": session_id, "update": update})

    def on_view_changes(self, session_id: str, changes: list[dict[str, Any]]) -> None:
        pass


async def main(data_dir: str) -> None:
    clock = ManualClock()
    store = open_store(data_dir)
    try:
        async with Host(store, clock=clock) as host, anyio.create_task_group() as tg:
            host.service.register(never_answers)
            host.publisher.add_listener(Printer())

            async def prompt(session_id: str, text: str) -> None:
                stop = await host.prompt(session_id, [{"type": "text", "text": text}])
                say({"event": "prompt_done", "stop": stop})

            while line := await anyio.to_thread.run_sync(sys.stdin.readline):
                cmd = json.loads(line)
                if cmd["cmd"] == "new":
                    session = await host.new_session(
                        model=cmd["model"], ask_user_question=cmd["ask"]
                    )
                    say({"event": "session", "sessionId": session.id})
                elif cmd["cmd"] == "prompt":
                    tg.start_soon(prompt, cmd["sessionId"], cmd["text"])
                elif cmd["cmd"] == "advance":
                    clock.advance(cmd["ms"])
                    say({"event": "advanced", "ms": cmd["ms"]})
                elif cmd["cmd"] == "answer":
                    reply = Answer.model_validate(cmd["answer"])
                    try:
                        result = await host.late_answers.answer_reply(
                            cmd["sessionId"], cmd["callId"], reply
                        )
                    except HarnessError as exc:
                        say({"event": "answer_error", "code": exc.code})
                    else:
                        say({"event": "answered", "callId": cmd["callId"], "result": result})
                else:
                    raise ValueError(f"unknown command {cmd!r}")
            tg.cancel_scope.cancel()  # end of input: shut down cleanly
    finally:
        await store.close()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
