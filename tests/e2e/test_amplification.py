"""Size and memory bounds over the real process (S2, S7).

- S2: asking, pending and settling n questions sends O(n) bytes of view
  notifications, not O(n²): each didChange carries only what changed.
- S7: a client that sends requests but stops reading does not grow the server:
  while 4 MiB of output wait for it, the server stops reading its input.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

from e2e_scripts import ask_step, script, text_step

from askbridge.testing.hosts import host_pid, stop_host
from askbridge.testing.strict_frames import frame
from askbridge.testing.wire import RawServer, serve_command
from lsp_steps import open_session, prompt_params


def _question(n: int) -> dict[str, object]:
    options = [{"label": f"option {i}", "description": "d" * 900} for i in range(10)]
    return {"id": f"q{n}", "question": f"Question {n}?", "options": options}


async def test_S2_view_notifications_grow_with_what_changed_not_with_the_view(
    tmp_path: Path,
) -> None:
    count = 12
    steps = [ask_step(f"call-{n}", [_question(n)], timeout=1) for n in range(count)]
    model_file = tmp_path / "model.json"  # too long for a command-line argument
    model_file.write_text(json.dumps(script(*steps, text_step("done"))))
    args = ("--model", f"script:{model_file}", "--ask-mode", "timed")
    async with RawServer.start(tmp_path / "d", *args) as server:
        # A generic client: nothing renders them; each goes pending.
        sid = await open_session(server, {})
        reply = await server.call("session/prompt", prompt_params(sid), timeout=120)
        assert reply["result"] == {"stopReason": "end_turn"}
        view = (await server.call("userQuestions/list", {"sessionId": sid}))["result"]
        assert len(view["active"]) == count and {a["state"] for a in view["active"]} == {
            "continued"
        }
        changes = [m for m in server.received if m.get("method") == "userQuestions/didChange"]
        sent = sum(len(json.dumps(m)) for m in changes)
        one_question = len(json.dumps(_question(0)))
        # Each question travels once (open) plus a few bytes (continued): linear in count.
        assert sent < 1.5 * count * one_question, (sent, count * one_question)
        assert await server.shutdown_and_exit() == 0


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_S7_a_client_that_stops_reading_does_not_grow_the_server(tmp_path: Path) -> None:
    data = tmp_path / "d"
    server = subprocess.Popen(serve_command(data), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    try:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
        server.stdin.write(frame(json.dumps(init)))
        server.stdin.flush()
        server.stdout.read1(65536)  # its answer: the server is up
        pid = host_pid(data)
        assert pid is not None
        before = _rss_kib(pid)
        total = 60_000
        # Each request answers ~150 bytes of error: 60,000 of them would queue ~9 MB for a
        # client that does not read, if the server kept reading.
        requests = b"".join(
            frame(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 10 + i,
                        "method": "userQuestions/list",
                        "params": {"sessionId": "s-nope"},
                    }
                )
            )
            for i in range(total)
        )
        sender = threading.Thread(target=server.stdin.write, args=(requests,), daemon=True)
        sender.start()
        time.sleep(3)  # the server reads until its output backs up, then stops
        assert sender.is_alive()  # our writes block: the server stopped reading us
        grown_mib = (_rss_kib(pid) - before) / 1024
        assert grown_mib < 40, grown_mib
        # Now read: every request gets its answer.
        received = b""
        while received.count(b'"id":') < total:
            chunk = server.stdout.read1(1 << 20)
            assert chunk, "the server's output ended"
            received += chunk
        sender.join(30)
    finally:
        server.stdin.close()
        server.wait(timeout=30)
        stop_host(data)
