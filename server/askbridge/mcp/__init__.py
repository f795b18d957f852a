"""The MCP front door (`askbridge mcp`, behavior.md X1–X6, protocol.md "MCP front door").

Only this package imports the `mcp` SDK; nothing imports this package but the
command line (mcp/main.py) and the host process that serves an attached
`askbridge mcp` (`door.serve_mcp`).
"""
