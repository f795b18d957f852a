"""The ACP door (`askbridge acp`): the host's sessions for ACP clients (Zed, …).

ACP is newline-delimited JSON-RPC on stdio, served on the one JSON-RPC core
(`askbridge.jsonrpc`) with the ACP SDK's schema models. `main.serve_acp` runs
one client against a Host; `server.AcpServer` maps ACP's session methods and
the `_askbridge/*` extension methods onto the host; `relay.AcpRelay` is the
client's link: its updates (`updates`: ACP's update kinds) and its cards by
the richest means it declared (extension, form elicitation, permission
request, or none). The contract is protocol.md, section "ACP front door".
"""
