"""The MCP front door (`askbridge mcp`, behavior.md X1–X6, protocol.md "MCP front door").

Only this package imports the `mcp` SDK, for its schema models (`mcp_types`):
the connection runs on the project's own engine (door.py says why). Nothing
imports this package but the host process (daemon/doors.py), which serves
`askbridge mcp` — inline or attached — with `door.serve_mcp`.
"""
