"""The e2e tests that run a host on the team store get a real PostgreSQL (tests/postgres.py),
started only when such a test first asks for it."""

from postgres import pg_database, pg_server  # noqa: F401  (fixtures)
