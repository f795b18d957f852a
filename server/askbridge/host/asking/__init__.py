"""Where questions go: the clients attached to the host, the fan-out (first answer wins),
late replies and who follows external (MCP) sessions. Never imports agent/: what it needs
of a session or of the host (is it a loaded root session, whose prompt started its turn,
who takes a late answer, whom to subscribe) comes as protocols and callables from host.py.
"""
