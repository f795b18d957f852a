"""A first frame that the early `initialize` answer (lsp/early.py, inline only) leaves to the
regular reader is answered as an attached host answers it, in both host modes (S3).

The early path once decoded with `json.loads` and encoded with `json.dumps` outside any
guard: a first frame nested too deep for the decoder, or an `initialize` whose id holds
a lone surrogate, took `askbridge serve --host inline` down with a traceback.
"""

from __future__ import annotations

from pathlib import Path

from askbridge.testing.wire import RawServer, frame


async def _answers_then_serves(data: Path, first: bytes) -> dict[str, object]:
    async with RawServer.start(data) as server:
        server.send_bytes(frame(first))
        reply = await server.receive()
        assert "result" in await server.initialize()  # the same process still serves
        assert await server.shutdown_and_exit() == 0
    return reply


async def test_S3_a_first_frame_nested_too_deep_is_a_parse_error(tmp_path: Path) -> None:
    deep = b"[" * 10_000 + b"]" * 10_000
    first = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":%b}}' % deep
    reply = await _answers_then_serves(tmp_path / "d", first)
    assert reply["id"] is None and reply["error"]["code"] == -32700, reply  # type: ignore[index]


async def test_S3_an_initialize_id_with_a_lone_surrogate_does_not_end_the_server(
    tmp_path: Path,
) -> None:
    first = b'{"jsonrpc":"2.0","id":"a\\ud800","method":"initialize","params":{"capabilities":{}}}'
    reply = await _answers_then_serves(tmp_path / "d", first)
    assert "result" in reply or "error" in reply, reply
