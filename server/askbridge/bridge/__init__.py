"""The LSP-framed front door of `askbridge serve`.

`framing` reads and writes LSP base-protocol frames over asyncio streams (with
an 8 MiB body cap and header resync); `rpc.RpcConnection` is the JSON-RPC 2.0
dispatcher on top: request/notification handlers receiving raw params, one
task and cancel scope per incoming request, `$/cancelRequest` both ways, and
the single mapping from exceptions to JSON-RPC errors. `server` holds the
lifecycle, session and question methods; `relay` the question answerers.

Why not pygls's server (a deliberate deviation from "serve on pygls 2.1"):
every layer pygls would have given us needed replacing. Its stdin reader runs
in a thread pool (2–3× slower), answers invalid JSON with `window/showMessage`
instead of -32700, has no frame cap and drops a lowercase `content-length`;
its dispatcher turns custom params into namedtuples, shares one id table for
both directions, sends no `$/cancelRequest` for cancelled outgoing requests,
reports late replies as "Error in server", and swallows `exit`'s status. What
remains — a handler registry and lsprotocol conversions for text-document
features — is nothing this server serves. pygls stays a test dependency: a
stock pygls client (pytest-lsp) drives `askbridge serve` in tests/e2e.
"""
