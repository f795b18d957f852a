"""Team-store tests run against a real PostgreSQL server (tests/postgres.py)."""

from store_factories import new_store  # noqa: F401  (a fixture)

from postgres import own_pg_server, pg_database, pg_dsn, pg_server  # noqa: F401  (fixtures)
