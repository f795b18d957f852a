"""The LSP-framed door (`askbridge serve`): lifecycle, sessions, the question relay, claims
over progress tokens, and the fallback for generic LSP clients (protocol.md v1).

`main` starts the process (answering a plain first `initialize` before the
heavy imports, `early`); `server.LspServer` maps the methods onto the host;
`relay` carries questions to the client. The JSON-RPC connection underneath
is `askbridge.jsonrpc`, shared with every door.
"""
