"""The MCP front door (`askbridge mcp`, behavior.md X1–X6, protocol.md "MCP front door").

Only this package imports the `mcp` SDK; nothing imports this package but the
host process (daemon/doors.py), which serves `askbridge mcp` — inline or
attached — with `door.serve_mcp`.
"""
