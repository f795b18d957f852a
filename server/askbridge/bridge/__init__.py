"""The LSP-framed front door of `askbridge serve`.

`framing` reads and writes LSP base-protocol frames over asyncio streams (with
an 8 MiB body cap and header resync); `rpc.RpcConnection` is the JSON-RPC 2.0
dispatcher on top: request/notification handlers receiving raw params, one
task and cancel scope per incoming request, `$/cancelRequest` both ways, and
the single mapping from exceptions to JSON-RPC errors. The LSP/session
methods are built on this connection.
"""
