"""The host: durable sessions, agents, tools, projection, late replies and crash recovery."""
