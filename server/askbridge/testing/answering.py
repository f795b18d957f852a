"""`QuestionAnswerer`: how the test client replies to the server's questions, as an editor would.

`userQuestions/ask` (a client that renders cards) and `window/showMessageRequest`
(the generic-LSP fallback, handed to the callback as `{"showMessageRequest":
params}`) are answered by one callback, sync or async, set with `answer_with`
or `answer_script`. Without one the card stays open until the server withdraws
it; a withdrawn card is counted (`cancelled_asks`, asks only) and recorded in
`withdrawn`. Separate from the record it writes to (record.py) and from the
requests the client sends (client.py): this is the editor's half of a question.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import anyio

from askbridge.jsonrpc import Connection

from .record import ServerRecord

Answerer = Callable[[dict[str, Any]], Any]


class QuestionAnswerer(ServerRecord):
    def __init__(self, conn: Connection) -> None:
        super().__init__(conn)
        self.cancelled_asks = 0
        self._answerer: Answerer | None = None
        conn.on_request("userQuestions/ask", self._on_ask)
        conn.on_request("window/showMessageRequest", self._on_show_message)

    def answer_with(self, answerer: Answerer | None) -> None:
        """Answer every `userQuestions/ask` with `answerer(params)` (sync or async)."""
        self._answerer = answerer

    def answer_script(self, *answers: dict[str, Any] | BaseException) -> None:
        """Answer the next asks in order; an exception instance is raised instead."""
        queue = list(answers)

        def next_answer(params: dict[str, Any]) -> Any:
            item = queue.pop(0)
            if isinstance(item, BaseException):
                raise item
            return item

        self.answer_with(next_answer)

    async def _on_ask(self, params: Any) -> Any:
        self.asks.append(params)
        self._notify_change()
        return await self._reply("userQuestions/ask", params, params)

    async def _on_show_message(self, params: Any) -> Any:
        self.notifications.append(("window/showMessageRequest", params))
        self._notify_change()
        question = {"showMessageRequest": params}
        return await self._reply("window/showMessageRequest", params, question)

    async def _reply(self, method: str, params: Any, question: dict[str, Any]) -> Any:
        """The callback's reply to `question`; with no callback, wait to be withdrawn."""
        answerer = self._answerer
        try:
            if answerer is None:
                await anyio.sleep_forever()  # leave the card open until the server cancels it
            assert answerer is not None
            result = answerer(question)
            if inspect.isawaitable(result):
                result = await result
            return result
        except anyio.get_cancelled_exc_class():
            if method == "userQuestions/ask":
                self.cancelled_asks += 1
            self._withdrawn(method, params)
            raise
