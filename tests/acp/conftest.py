"""Fixtures for the ACP tests: a real PostgreSQL for the team store (G7)."""

from postgres import pg_database, pg_server  # noqa: F401  (fixtures)
