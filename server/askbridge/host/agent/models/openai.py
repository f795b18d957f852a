"""The `openai` model: any OpenAI-compatible chat-completions endpoint with tool calling.

ModelSpec (protocol.md): `{"kind": "openai", "model": "deepseek-chat",
"baseUrl"?: "https://api.deepseek.com", "apiKeyEnv"?: "DEEPSEEK_API_KEY", "timeoutS"?: 120}`.

Each request converts the session's event log into chat `messages`
(`history_to_messages`), sends the tool schemas the caller passes, and POSTs
to `<baseUrl>/chat/completions` — the base URL's path is used as given, so a
provider that wants `/v1` is configured with `…/v1`; a query string stays
after the path. The answer's first choice becomes a ModelResponse; tool-call
arguments arrive as JSON strings and are decoded to dicts (a string that is
not a JSON object is passed on as is, so the tool can tell the model its
input was bad).

The endpoint is a third party, so its reply is bounded while it is read (S18):
the body is streamed, a `Content-Length` over 8 MiB is refused before reading,
and reading stops past 8 MiB (S7's MODEL_ERROR); the whole request, reading
included, has one deadline (`timeoutS`) that a slow drip cannot stretch, since
httpx's own timeout applies per read. Messages and logs name the endpoint
without its query string (it may hold a key).

Every failure — no API key, unreachable endpoint, an error status, a body
that is not a chat completion — is a ModelError whose message names what to
fix. The key is read from the environment at each request (so fixing the
variable needs no restart); `check()` lets the host fail session creation
early instead of at the first prompt.
"""

from __future__ import annotations

import json
import logging
import os
import ssl
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import anyio
import httpx

from askbridge.protocol.model_spec import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_BASE_URL,
    DEFAULT_TIMEOUT_SECONDS,
    KEY_VARIABLE_RULE,
    USER_INFO_RULE,
    completions_url,
    has_user_info,
    is_key_variable,
    shown_url,
)

from ...log.events import ASSISTANT_MESSAGE, TOOL_RESULT, USER_MESSAGE, Event
from .base import (
    MAX_MODEL_REPLY_BYTES,
    History,
    ModelError,
    ModelResponse,
    ToolCallRequest,
    Tools,
    reply_too_big,
)
from .script import decode_tool_arguments

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_BASE_URL",
    "DEFAULT_TIMEOUT_SECONDS",
    "OpenAIChatModel",
    "history_to_messages",
    "parse_completion",
    "tools_to_wire",
]

# Enough of an error body to see the provider's reason, short enough for a log line.
ERROR_BODY_EXCERPT_CHARS = 300
ERROR_BODY_READ_BYTES = 64 * 1024  # of an error status's body, the rest is never read

# httpx logs every request's URL at INFO, query string and all: our own lines name the
# endpoint without it (`shown_url`).
logging.getLogger("httpx").setLevel(logging.WARNING)


@cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every request of the process: building one (loading the CA
    bundle) costs tens of milliseconds, which a client per request paid each time."""
    return httpx.create_ssl_context()


def _message_text(content: Any) -> str:
    """The text of a `user/message` content list ([{type: "text", text}])."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    text_blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(b["text"] for b in text_blocks if isinstance(b.get("text"), str))


def _wire_tool_call(call: dict[str, Any]) -> dict[str, Any]:
    arguments = call.get("arguments", {})
    # The API wants the arguments as a JSON string; a raw string the model
    # produced earlier (unparseable) goes back exactly as it came.
    encoded = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {
        "id": call["id"],
        "type": "function",
        "function": {"name": call["name"], "arguments": encoded},
    }


def history_to_messages(history: Sequence[Event]) -> list[dict[str, Any]]:
    """Chat messages for the events a model sees; every other event is bookkeeping."""
    messages: list[dict[str, Any]] = []
    for event in history:
        kind = event.get("type")
        if kind == USER_MESSAGE:
            messages.append({"role": "user", "content": _message_text(event.get("content"))})
        elif kind == ASSISTANT_MESSAGE:
            message: dict[str, Any] = {"role": "assistant", "content": event.get("text", "")}
            calls = event.get("toolCalls") or []
            # Providers reject an empty `tool_calls` array, so leave the key out.
            if calls:
                message["tool_calls"] = [_wire_tool_call(call) for call in calls]
            messages.append(message)
        elif kind == TOOL_RESULT:
            content = event.get("content", "")
            messages.append({"role": "tool", "tool_call_id": event["callId"], "content": content})
    return messages


def tools_to_wire(tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The caller's `{name, description, parameters}` schemas as chat-completions tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool.get("description", ""),
                "parameters": tool.get("parameters", {"type": "object", "properties": {}}),
            },
        }
        for tool in tools
    ]


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) > ERROR_BODY_EXCERPT_CHARS:
        return flat[:ERROR_BODY_EXCERPT_CHARS] + "…"
    return flat or "(empty body)"


def parse_completion(body: Any, endpoint: str) -> ModelResponse:
    """The first choice of a chat-completions body; ModelError if it is not one."""

    def malformed(why: str) -> ModelError:
        return ModelError(f"model endpoint {endpoint} returned a malformed response: {why}")

    if not isinstance(body, dict):
        raise malformed("the body is not a JSON object")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise malformed("no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise malformed("choices[0].message is missing")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise malformed("choices[0].message.content is not a string")
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise malformed("choices[0].message.tool_calls is not a list")
    calls: list[ToolCallRequest] = []
    for i, raw in enumerate(raw_calls):
        function = raw.get("function") if isinstance(raw, dict) else None
        call_id = raw.get("id") if isinstance(raw, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not name:
            raise malformed(f"tool_calls[{i}] lacks an id or a function name")
        assert isinstance(function, dict)  # narrowed by the name check above
        arguments = decode_tool_arguments(function.get("arguments", "{}"))
        calls.append(ToolCallRequest(id=call_id, name=name, arguments=arguments))
    return ModelResponse(text=content or "", tool_calls=calls)


class OpenAIChatModel:
    """A chat-completions endpoint as a Model (see the module docstring).

    `http_client`, when given, is used as is and not closed (its owner closes
    it); otherwise each request opens and closes its own client (sharing the
    process's TLS context), so an idle session holds no connection.
    """

    def __init__(
        self,
        model: str,
        base_url: str = DEFAULT_BASE_URL,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        http_client: httpx.AsyncClient | None = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.endpoint = completions_url(base_url)
        self.shown = shown_url(self.endpoint)  # what messages and logs name
        self._http_client = http_client
        self._timeout = timeout
        # H5: the key comes from the environment of the client that opened the session,
        # held in memory only; os.environ (read at each request) when none was given.
        self._env = env

    def check(self) -> None:
        """Raise ModelError now if a request would fail for lack of an API key."""
        self._api_key()

    def _api_key(self) -> str:
        # S18, here too: a spec stored before the rule, or built without the wire's checks.
        if not is_key_variable(self.api_key_env):
            raise ModelError(f"{KEY_VARIABLE_RULE}, not {self.api_key_env!r}")
        if has_user_info(self.base_url):
            raise ModelError(USER_INFO_RULE)
        env = os.environ if self._env is None else self._env
        key = env.get(self.api_key_env, "").strip()
        if not key:
            raise ModelError(
                f"environment variable {self.api_key_env} is not set; "
                "the openai model needs an API key"
            )
        return key

    async def complete(self, history: History, tools: Tools, request_index: int) -> ModelResponse:
        key = self._api_key()
        payload: dict[str, Any] = {"model": self.model, "messages": history_to_messages(history)}
        if tools:  # providers reject an empty tools array
            payload["tools"] = tools_to_wire(tools)
        headers = {"Authorization": f"Bearer {key}", "Accept": "application/json"}
        try:
            with anyio.fail_after(self._timeout):  # S18: the whole request, reading included
                status, body = await self._exchange(payload, headers)
        except TimeoutError as exc:
            raise self._late() from exc
        if status >= 400:
            text = body.decode("utf-8", "replace")
            raise ModelError(
                f"model endpoint {self.shown} answered HTTP {status}: {_excerpt(text)}"
            )
        try:
            parsed = json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise ModelError(
                f"model endpoint {self.shown} returned a malformed response: "
                f"not JSON: {_excerpt(body.decode('utf-8', 'replace'))}"
            ) from exc
        del body
        return parse_completion(parsed, self.shown)

    def _late(self) -> ModelError:
        return ModelError(f"model endpoint {self.shown} did not answer within {self._timeout:g} s")

    async def _exchange(
        self, payload: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, bytes]:
        if self._http_client is not None:
            return await self._post(self._http_client, payload, headers)
        async with httpx.AsyncClient(verify=_tls()) as client:
            return await self._post(client, payload, headers)

    async def _post(
        self, client: httpx.AsyncClient, payload: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, bytes]:
        """The reply's status and body, the body read up to its bound (S18)."""
        try:
            async with client.stream(
                "POST", self.endpoint, json=payload, headers=headers, timeout=self._timeout
            ) as response:
                return response.status_code, await _bounded_body(response)
        except httpx.TimeoutException as exc:
            raise self._late() from exc
        except httpx.ConnectError as exc:
            raise ModelError(
                f"cannot connect to model endpoint {self.shown}: {self._hidden(exc)}"
            ) from exc
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise ModelError(
                f"request to model endpoint {self.shown} failed: {self._hidden(exc)}"
            ) from exc

    def _hidden(self, exc: Exception) -> str:
        """httpx's message, without the endpoint's query string should it name the URL; its
        class when it has none (a reset connection says nothing)."""
        return str(exc).replace(self.endpoint, self.shown) or type(exc).__name__


async def _bounded_body(response: httpx.Response) -> bytes:
    """The body, never more than the bound held in memory: a successful reply over 8 MiB
    is refused (by its `Content-Length` before any of it is read, else once the bytes read
    pass it); of an error status's body only the start is kept, for the message."""
    ok = response.status_code < 400
    limit = MAX_MODEL_REPLY_BYTES if ok else ERROR_BODY_READ_BYTES
    length = response.headers.get("content-length", "")
    if ok and length.isdigit() and int(length) > limit:
        raise reply_too_big(int(length))
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) > limit:
            if ok:
                raise reply_too_big(limit, more=True)
            del data[limit:]
            break
    return bytes(data)
