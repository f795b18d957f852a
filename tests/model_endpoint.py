"""A model's HTTP endpoint on 127.0.0.1 for the tests that talk to one over a real socket.

Three kinds of test stand one up: S7's huge replies (e2e/test_huge_model_reply.py),
the fuzzer's hostile completions (fuzz/test_fuzz_doors.py) and the real agents'
scripted model (agents/fake_model.py). Each writes only what its endpoint answers,
as a `ModelHandler` subclass; serving it on a free port in a daemon thread, with
no access log, and stopping it when the block ends (nothing a test starts
outlives it) is written once here.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OK = json.dumps({"choices": [{"message": {"role": "assistant", "content": "ok"}}]}).encode()


class ModelHandler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass  # a test asserts on what it recorded, not on an access log

    def read_body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def reply(
        self, payload: bytes, content_type: str = "application/json", status: int = 200
    ) -> None:
        """One whole response: `payload` with its length, so the client reads it to the end."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def drip(self, payload: bytes = OK, every_s: float = 0.3) -> None:
        """A valid reply, one byte every `every_s` (S18: a slow drip the whole request's
        deadline must cut, where a per-read timeout never fires)."""
        self.send_response(200)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        for byte in payload:
            self.wfile.write(bytes([byte]))
            self.wfile.flush()
            time.sleep(every_s)


class _Server(ThreadingHTTPServer):
    # A host delegating to many children connects many times at once: socketserver's
    # backlog of 5 would reset the connections past it.
    request_queue_size = 128


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve `handler` on 127.0.0.1 (a free port) until the block ends; yields its base URL."""
    server = _Server(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
