"""The ACP front door: `askbridge acp` serves the host's sessions to ACP clients (Zed, …).

ACP is newline-delimited JSON-RPC on stdio. `main.run_acp` opens the store and
the host and serves one client; `server.AcpServer` maps ACP's session methods
and the `_askbridge/*` extension methods onto the host; `relay.QuestionRelay`
carries questions to the client by the richest means it declared (extension,
form elicitation, permission request, or none); `updates` turns host events
into ACP `session/update` notifications, live and when a session is replayed.
The contract is protocol.md, section "ACP front door".
"""
