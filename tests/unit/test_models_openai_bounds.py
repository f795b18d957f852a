"""S18 for the `openai` model, against real endpoints on 127.0.0.1.

A reply is bounded while it is read: a `Content-Length` over 8 MiB is refused
before the body is read, an unsized body is not read past 8 MiB, and a slow
drip cannot stretch the request past its deadline. The endpoint's query
string (it may hold a key) stays on the wire and out of messages and logs;
user information in `baseUrl` and an `apiKeyEnv` not named as a key are
refused before anything is sent.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import anyio
import pytest

from askbridge.host.agent.models.base import ModelError
from askbridge.host.agent.models.factory import make_model
from askbridge.host.agent.models.openai import OpenAIChatModel
from model_endpoint import OK, ModelHandler, serving

KEY_ENV = "ASKBRIDGE_TEST_MODEL_KEY"
MIB = 1024 * 1024


class _Endpoint(ModelHandler):
    """Answers by the request's model name; records the paths it was asked for."""

    protocol_version = "HTTP/1.1"  # chunked replies
    paths: ClassVar[list[str]] = []
    sent: ClassVar[list[int]] = []  # bytes of body written per request

    def do_POST(self) -> None:
        self.paths.append(self.path)
        model = json.loads(self.read_body())["model"]
        written = 0
        try:
            if model == "claims-100MiB":  # says so, sends a little, then waits
                self.send_response(200)
                self.send_header("Content-Length", str(100 * MIB))
                self.end_headers()
                self.wfile.write(b'{"choices": ')
                self.wfile.flush()
                time.sleep(3)
            elif model == "chunked-forever":
                self.send_response(200)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunk = b"x" * MIB
                while written < 64 * MIB:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    written += len(chunk)
            elif model == "drip":  # a valid reply, one byte every 0.3 s
                self.drip()
            elif model == "error-forever":
                self.send_response(500)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunk = b"upstream exploded " * 1000
                while written < 64 * MIB:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    written += len(chunk)
            else:
                self.reply(OK)
        except OSError:
            pass  # the client stopped reading: what this endpoint is for
        finally:
            self.sent.append(written)
        self.close_connection = True


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(KEY_ENV, "sk-test")
    _Endpoint.paths, _Endpoint.sent = [], []
    with serving(_Endpoint) as url:
        yield f"{url}/v1"


def _model(url: str, name: str, **kwargs: Any) -> OpenAIChatModel:
    return OpenAIChatModel(name, base_url=url, api_key_env=KEY_ENV, **kwargs)


async def test_S18_a_content_length_over_8_MiB_is_refused_before_the_body_is_read(
    endpoint: str,
) -> None:
    started = time.monotonic()
    with pytest.raises(ModelError) as caught:
        await _model(endpoint, "claims-100MiB").complete([], [], 0)
    assert str(caught.value) == f"the model's reply has {100 * MIB} bytes; at most 8 MiB"
    assert time.monotonic() - started < 2  # it did not wait for the body


async def test_S18_an_unsized_reply_is_not_read_past_8_MiB(endpoint: str) -> None:
    with pytest.raises(ModelError) as caught:
        await _model(endpoint, "chunked-forever").complete([], [], 0)
    assert str(caught.value) == f"the model's reply has more than {8 * MIB} bytes; at most 8 MiB"
    for _ in range(100):  # the endpoint notices the closed connection a moment later
        if _Endpoint.sent:
            break
        await anyio.sleep(0.05)
    assert _Endpoint.sent[0] < 32 * MIB, _Endpoint.sent  # it could not send it all


async def test_S18_an_error_status_body_is_read_only_for_its_excerpt(endpoint: str) -> None:
    with pytest.raises(ModelError, match="answered HTTP 500: upstream exploded") as caught:
        await _model(endpoint, "error-forever").complete([], [], 0)
    assert len(str(caught.value)) < 600


async def test_S18_a_slow_drip_cannot_stretch_the_request_past_its_deadline(
    endpoint: str,
) -> None:
    """httpx's timeout is per read: a byte every 0.3 s never trips a 1 s one."""
    started = time.monotonic()
    with pytest.raises(ModelError, match=r"did not answer within 1 s"):
        await _model(endpoint, "drip", timeout=1).complete([], [], 0)
    assert time.monotonic() - started < 3


def test_S18_timeoutS_reaches_the_model() -> None:
    spec = {"kind": "openai", "model": "m", "apiKeyEnv": KEY_ENV, "timeoutS": 2.5}
    model = make_model(spec)
    assert isinstance(model, OpenAIChatModel) and model._timeout == 2.5
    default = make_model({"kind": "openai", "model": "m"})
    assert isinstance(default, OpenAIChatModel) and default._timeout == 120
    with pytest.raises(ValueError, match="timeoutS must be a positive number"):
        make_model({**spec, "timeoutS": 0})


async def test_S18_a_query_string_stays_after_the_path_and_out_of_messages_and_logs(
    endpoint: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    base = f"{endpoint}/?api-key=s3cret"
    model = _model(base, "small")
    assert model.endpoint == f"{endpoint}/chat/completions?api-key=s3cret"
    assert (await model.complete([], [], 0)).text == "ok"
    assert _Endpoint.paths == ["/v1/chat/completions?api-key=s3cret"]
    with pytest.raises(ModelError) as caught:
        await _model(base, "drip", timeout=0.2).complete([], [], 0)
    assert (
        str(caught.value)
        == f"model endpoint {endpoint}/chat/completions?… did not answer within 0.2 s"
    )
    assert "s3cret" not in caplog.text


@pytest.mark.parametrize(
    ("base", "variable", "message"),
    [
        (
            "http://me:pw@127.0.0.1:9/v1",
            KEY_ENV,
            "baseUrl must not hold user information (user:password@); "
            "put the key in the environment variable apiKeyEnv names",
        ),
        (
            "http://127.0.0.1:9/v1",
            "HOME",
            "apiKeyEnv must name an environment variable ending in _KEY or _TOKEN, not 'HOME'",
        ),
    ],
)
async def test_S18_credentials_in_the_url_or_a_variable_not_named_as_a_key_send_nothing(
    monkeypatch: pytest.MonkeyPatch, base: str, variable: str, message: str
) -> None:
    """The wire refuses both (protocol/model_spec.py); a spec stored before the rule, or
    built in-process, is refused by the model itself before any request."""
    monkeypatch.setenv(variable, "secret")
    model = OpenAIChatModel("m", base_url=base, api_key_env=variable)
    with pytest.raises(ModelError) as at_check:
        model.check()
    assert str(at_check.value) == message
    with pytest.raises(ModelError):
        await model.complete([], [], 0)


def test_S11_a_base_url_urllib_cannot_split_is_one_line_naming_it() -> None:
    """An unclosed IPv6 bracket is urlsplit's ValueError: one line saying the URL is not one."""
    from askbridge.protocol.model_spec import parse_model_spec

    with pytest.raises(ValueError, match=r"baseUrl is not a valid URL \(Invalid IPv6 URL\)"):
        parse_model_spec({"kind": "openai", "model": "m", "baseUrl": "https://[.example/v1"})
