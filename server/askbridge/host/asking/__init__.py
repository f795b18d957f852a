"""Where questions go: the clients attached to the host, the fan-out (first answer wins),
late replies and external (MCP) sessions. Never imports agent/'s internals past the
exceptions test_layers.py lists.
"""
