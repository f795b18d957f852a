"""How a team store's address is read and named (G1): never with its password."""

from __future__ import annotations

import pytest

from askbridge.host.store.store_url import (
    describe,
    keyword_values,
    parameters,
    scrub,
    store_problem,
)


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("postgresql://alice:s3cret@db.example:6543/team", "postgresql://alice@db.example:6543/team"),
        ("postgres://db.example/team?sslmode=require&password=s3cret", "postgresql://db.example/team"),
        ("postgresql://alice:s3cret@a.example,b.example:5433/team?target_session_attrs=read-write",
         "postgresql://alice@a.example,b.example:5433/team"),
        ("host=a.example,b.example port=5432,5433 dbname=team", "postgresql://a.example:5432,b.example:5433/team"),
        ("postgresql://%2Frun%2Fpostgresql/team", "postgresql:///team?host=/run/postgresql"),
        ("postgresql:///team?host=/run/postgresql&user=bob", "postgresql://bob@/team?host=/run/postgresql"),
        ("host=/run/postgresql dbname=team password=s3cret", "postgresql:///team?host=/run/postgresql"),
        ("host = db.example  user=alice password='s3 cr\\'et' dbname=team",
         "postgresql://alice@db.example/team"),
        ("service=team password=s3cret", "postgresql:///?service=team"),
        ("postgresql://[::1]:5433/team", "postgresql://::1:5433/team"),
    ],
)  # fmt: skip
def test_G1_a_store_is_named_without_its_password(url: str, named: str) -> None:
    assert describe(url) == named
    assert "s3" not in describe(url)


def test_G1_key_value_words_follow_libpq() -> None:
    assert keyword_values("host=/tmp  dbname = 'my db' password='it\\'s'") == {
        "host": "/tmp",
        "dbname": "my db",
        "password": "it's",
    }
    assert parameters("postgresql://u:p%40ss@h/d")["password"] == "p@ss"
    with pytest.raises(ValueError):
        keyword_values("host='/tmp")


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("postgresql://h/d", None),
        ("POSTGRES://h/d", None),
        ("host=/tmp dbname=x", None),
        ("/var/lib/askbridge.db", "must be a postgresql:// URL or libpq key=value words"),
        ("mysql://h/d", "must be a postgresql:// URL"),
        ("host='/tmp", "is not valid libpq key=value words: a quoted value is not closed"),
        ("host=/tmp s3cret", "is not valid libpq key=value words: expected key=value words"),
    ],
)
def test_G1_only_a_postgresql_address_is_a_team_store(value: str, problem: str | None) -> None:
    found = store_problem(value)
    assert found == problem if problem is None else (found or "").startswith(problem)
    assert "s3cret" not in (found or "")


def test_G1_scrub_takes_out_every_password_it_may_meet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGPASSWORD", "from-env")
    url = "postgresql://u:in-url@h/d?sslpassword=key-pass"
    text = "failed: in-url, key-pass and from-env were all wrong"
    assert scrub(text, url) == "failed: ***, *** and *** were all wrong"
