"""`AskbridgeClient`: drive a real `askbridge serve` subprocess over its stdio, as an editor would.

    async with AskbridgeClient.connect(data_dir=tmp_path, model=spec) as client:
        client.answer_with(lambda ask: {"answers": [{"id": "db", "selected": ["SQLite"]}]})
        sid = await client.new_session()
        assert await client.prompt(sid, "pick a database") == "end_turn"

The client declares `experimental.userQuestions` (unless `renders_questions=False`:
then it is a generic LSP client, asked by `window/showMessageRequest`); how it
answers is answering.py's `QuestionAnswerer`, what it records record.py's
`ServerRecord`. Here: it claims timed waits (`claim`) and answers late
(`answer_late`); `start_prompt` sends a prompt in the background (`await
run.result()` later), and `kill()` crashes the server (SIGKILL) for durability
tests. It talks to the server over the wire only.

Nothing waits forever: `prompt()` gives up after `timeout` seconds (60 by
default; None waits as long as the turn runs) with a TimeoutError naming the
session. A server that exits, or does not answer `initialize` within
`start_timeout`, raises `ServerStartError` naming its exit status and the
last lines of its stderr. The server's stderr is copied to ours line by line
(`echo_stderr=False` keeps it quiet) and its tail kept in `stderr_tail`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from collections import deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from askbridge.jsonrpc import Connection, ConnectionClosed, lsp_connection

from .answering import QuestionAnswerer
from .handles import Claim, PromptRun
from .hosts import harness_host_mode, kill_host, stop_idle_host
from .startup import DEFAULT_PROMPT_TIMEOUT_S, STDERR_TAIL_LINES, ServerStartError, follow_stderr
from .wire import serve_command


class AskbridgeClient(QuestionAnswerer):
    """The requests an editor sends; what it receives and answers is in its bases."""

    def __init__(self, process: asyncio.subprocess.Process, conn: Connection) -> None:
        super().__init__(conn)
        self.process = process
        self.conn = conn
        self._tokens = itertools.count(1)
        self._tg: TaskGroup | None = None
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)  # see startup.py
        self.data_dir: Path | None = None
        self.host_mode = "inline"

    # -- process --------------------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def connect(
        cls,
        *,
        data_dir: str | Path,
        model: dict[str, Any] | None = None,
        ask_mode: str | None = None,
        ask_timeout: int | None = None,
        args: Sequence[str] = (),
        renders_questions: bool = True,
        work_done_progress: bool = False,
        initialization_options: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        start_new_session: bool = False,
        start_timeout: float = 30,
        echo_stderr: bool = True,
        host: str | None = None,
    ) -> AsyncIterator[AskbridgeClient]:
        """Start `askbridge serve`, initialize it, and shut it down on exit.

        `start_new_session=True` runs the server in its own session (POSIX), so a Ctrl-C
        typed at the caller's terminal interrupts only the caller, which can then shut the
        server down cleanly (`askbridge demo` does). ServerStartError when the server
        exits or stays silent for `start_timeout` seconds before answering `initialize`.
        `host`: `inline` (the default, unless ASKBRIDGE_HOST=auto) or `auto`: attach to the
        data directory's host, started on demand and stopped when this client is done.
        """
        mode = host or harness_host_mode()
        command = serve_command(data_dir, host=mode)
        if model is not None:
            command += ["--model", json.dumps(model)]
        if ask_mode is not None:
            command += ["--ask-mode", ask_mode]
        if ask_timeout is not None:
            command += ["--ask-timeout", str(ask_timeout)]
        command += list(args)
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, **(env or {})},
            start_new_session=start_new_session,
        )
        assert process.stdout is not None and process.stdin is not None
        client = cls(process, lsp_connection(process.stdout, process.stdin))
        client.data_dir, client.host_mode = Path(data_dir), mode
        failure: ServerStartError | None = None
        try:
            async with anyio.create_task_group() as tg:
                client._tg = tg
                stderr_done = anyio.Event()
                tg.start_soon(follow_stderr, process, client.stderr_tail, echo_stderr, stderr_done)
                tg.start_soon(client.conn.serve)
                try:
                    with anyio.fail_after(start_timeout):
                        await client.initialize(
                            renders_questions, work_done_progress, initialization_options
                        )
                except ConnectionClosed:
                    with anyio.move_on_after(5):
                        await process.wait()
                        await stderr_done.wait()
                    failure = ServerStartError(process.returncode, client.stderr_tail)
                except TimeoutError:
                    failure = ServerStartError(
                        process.returncode,
                        client.stderr_tail,
                        f"askbridge serve did not answer initialize within {start_timeout} s",
                    )
                if failure is None:
                    yield client
                    await client.shutdown()
                tg.cancel_scope.cancel()
            if failure is not None:
                raise failure
        except BaseExceptionGroup as group:
            # One failure (a test's AssertionError, say) is raised as itself, not wrapped.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        finally:
            with anyio.CancelScope(shield=True):
                if process.returncode is None:
                    process.kill()
                    await process.wait()
                if mode == "auto":
                    await anyio.to_thread.run_sync(stop_idle_host, data_dir)

    async def initialize(
        self,
        renders_questions: bool = True,
        work_done_progress: bool = False,
        initialization_options: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        capabilities: dict[str, Any] = {"window": {"workDoneProgress": work_done_progress}}
        if renders_questions:
            capabilities["experimental"] = {"userQuestions": {"version": 1}}
        params: dict[str, Any] = {"processId": os.getpid(), "capabilities": capabilities}
        if initialization_options is not None:
            params["initializationOptions"] = initialization_options
        result: dict[str, Any] = await self.request("initialize", params)
        self.conn.notify("initialized", {})
        return result

    async def shutdown(self, timeout: float = 10) -> int:
        """`shutdown` + `exit`; returns the server's exit status."""
        if self.process.returncode is None:
            await self.request("shutdown", None)
            self.conn.notify("exit", None)
            with anyio.fail_after(timeout):
                await self.process.wait()
        assert self.process.returncode is not None
        return self.process.returncode

    async def kill(self) -> int:
        """SIGKILL the server (a crash: nothing is flushed or shut down) and reap it; -9.

        With `--host auto` the server is the host: it is killed first, with this client
        still attached (its front door then exits 1, H8)."""
        if self.host_mode == "auto" and self.data_dir is not None:
            await anyio.to_thread.run_sync(kill_host, self.data_dir)
            with anyio.fail_after(10):
                assert await self.process.wait() == 1  # H8
            return -9
        if self.process.returncode is None:
            self.process.kill()
        return await self.process.wait()

    async def request(self, method: str, params: Any) -> Any:
        return await self.conn.request(method, params)

    # -- sessions -------------------------------------------------------------------------

    async def new_session(self, **settings: Any) -> str:
        result = await self.request("session/new", settings)
        return str(result["sessionId"])

    async def load_session(self, session_id: str) -> None:
        await self.request("session/load", {"sessionId": session_id})

    async def list_sessions(self) -> list[dict[str, Any]]:
        result = await self.request("session/list", {})
        return list(result["sessions"])

    async def prompt(
        self, session_id: str, text: str, timeout: float | None = DEFAULT_PROMPT_TIMEOUT_S
    ) -> str:
        """Send `session/prompt` and return its stopReason once the turn ended.

        TimeoutError after `timeout` seconds (None: no limit); the turn keeps running.
        """
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        try:
            result = await self.conn.request("session/prompt", params, timeout=timeout)
        except TimeoutError:
            raise TimeoutError(
                f"the turn of session {session_id} did not end within {timeout} s "
                "(prompt(..., timeout=None) waits as long as it runs)"
            ) from None
        return str(result["stopReason"])

    def start_prompt(self, session_id: str, text: str) -> PromptRun:
        """Send `session/prompt` in the background; await `run.result()` for its stopReason."""
        assert self._tg is not None
        run = PromptRun()

        async def send() -> None:
            try:
                run.stop_reason = await self.prompt(session_id, text, timeout=None)
            except Exception as exc:  # handed to whoever awaits result()
                run.error = exc
            finally:
                run.done.set()

        self._tg.start_soon(send)
        return run

    def cancel(self, session_id: str) -> None:
        self.conn.notify("session/cancel", {"sessionId": session_id})

    # -- questions ------------------------------------------------------------------------

    async def claim(self, session_id: str, call_id: str) -> Claim:
        """Claim a timed wait; returns once the server sent its frame or answered `null`."""
        assert self._tg is not None
        token = f"claim-{next(self._tokens)}"
        scope = anyio.CancelScope()
        claim = Claim(None, scope)
        ready = anyio.Event()

        async def hold() -> None:
            params = {"sessionId": session_id, "callId": call_id, "partialResultToken": token}
            try:
                with scope:
                    await self.request("userQuestions/attachWait", params)
            finally:
                claim.ended.set()
                ready.set()

        self._tg.start_soon(hold)
        while not ready.is_set() and token not in self._progress:
            await self.wait_changed()
        frame = self._progress.get(token)
        claim.remaining_ms = frame["remainingMs"] if frame is not None else None
        return claim

    async def answer_late(self, session_id: str, call_id: str, answer: dict[str, Any]) -> bool:
        params = {"sessionId": session_id, "callId": call_id, "answer": answer}
        return bool(await self.request("userQuestions/answer", params))

    async def withdraw_reply(self, session_id: str, call_id: str) -> bool:
        params = {"sessionId": session_id, "callId": call_id}
        return bool(await self.request("userQuestions/withdrawReply", params))

    async def view(self, session_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self.request("userQuestions/list", {"sessionId": session_id})
        return result
