"""A team store's address (G1): which values select PostgreSQL, and how one is named
without its password.

`--store URL` (else `ASKBRIDGE_STORE`) takes what libpq takes: a URI,
`postgresql://[user[:password]@][host][:port][,…][/dbname][?param=value&…]`
(`postgres://` too), or key=value words (`host=/run/postgresql dbname=team`;
a unix socket is a `host` that is a directory, in either form). libpq itself
parses the value when the store is opened and reads `.pgpass`, `PGPASSWORD`
and `PGSERVICE` as usual; this module only recognises the form, so the command
line can check the flag without loading the driver (it is imported only when a
team store is opened: a solo start never pays for it).

No password is ever printed or logged (G1, G9): `describe` names a store by its
user, hosts, port and database only, and `scrub` takes the value's passwords (and
`PGPASSWORD`'s) out of any text a driver or server error brings, before it is
shown or logged. Standard library only.
"""

from __future__ import annotations

import os
import re
from urllib.parse import parse_qsl, unquote

URI_SCHEMES = ("postgresql://", "postgres://")
STORE_ENV = "ASKBRIDGE_STORE"

# The parameters a description shows; everything else (password, sslpassword, options,
# sslkey paths, application_name, …) stays out of it.
_SHOWN = ("user", "host", "port", "dbname")
_SECRET_KEYS = ("password", "sslpassword")
_KEYWORD = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*")


def is_uri(value: str) -> bool:
    return value[:13].lower().startswith(URI_SCHEMES)


def store_problem(value: str) -> str | None:
    """Why `value` is not a team store's address, in one line; None when it is one."""
    if is_uri(value):
        return None
    if "=" not in value:
        return (
            "must be a postgresql:// URL or libpq key=value words such as "
            "'host=/run/postgresql dbname=askbridge'"
        )
    try:
        keyword_values(value)
    except ValueError as exc:
        return f"is not valid libpq key=value words: {exc}"
    return None


def keyword_values(value: str) -> dict[str, str]:
    """libpq's `key=value key='quoted \\' value'` words as a dict; ValueError when malformed.
    An empty dict for a value with no words at all."""
    out: dict[str, str] = {}
    position = 0
    while position < len(value):
        if value[position:].strip() == "":
            break
        match = _KEYWORD.match(value, position)
        if match is None:
            # Never quote the value here: it may hold a password.
            raise ValueError("expected key=value words")
        key = match.group(1)
        position = match.end()
        text, position = _word(value, position)
        out[key] = text
    return out


def _word(value: str, position: int) -> tuple[str, int]:
    """The value starting at `position` (quoted or bare, backslash escapes) and where it ends."""
    chars: list[str] = []
    quoted = position < len(value) and value[position] == "'"
    if quoted:
        position += 1
    while position < len(value):
        char = value[position]
        if char == "\\" and position + 1 < len(value):
            chars.append(value[position + 1])
            position += 2
            continue
        if (quoted and char == "'") or (not quoted and char.isspace()):
            return "".join(chars), position + 1
        chars.append(char)
        position += 1
    if quoted:
        raise ValueError("a quoted value is not closed")
    return "".join(chars), position


def parameters(value: str) -> dict[str, str]:
    """The connection parameters `value` states itself (not libpq's defaults or PG* variables);
    ValueError when it cannot be read."""
    if not is_uri(value):
        return keyword_values(value)
    rest = value.split("://", 1)[1]
    rest, _, query = rest.partition("?")
    netloc, _, path = rest.partition("/")
    out: dict[str, str] = {}
    userinfo, at, hosts = netloc.rpartition("@")
    if at:
        user, colon, password = userinfo.partition(":")
        if user:
            out["user"] = unquote(user)
        if colon:
            out["password"] = unquote(password)
    host_names, ports = [], []
    for item in hosts.split(",") if hosts else []:
        if item.startswith("["):  # [IPv6]:port
            name, _, port = item[1:].partition("]")
            port = port.removeprefix(":")
        else:
            name, _, port = item.rpartition(":") if ":" in item else (item, "", "")
        host_names.append(unquote(name))
        ports.append(port)
    if any(host_names):
        out["host"] = ",".join(host_names)
    if any(ports):
        out["port"] = ",".join(ports)
    if path:
        out["dbname"] = unquote(path)
    out.update(parse_qsl(query, keep_blank_values=True))
    return out


def describe(value: str) -> str:
    """The store as a person would name it, never with a password:
    `postgresql://alice@db.example:5432/team`, `postgresql:///team?host=/run/postgresql`."""
    try:
        params = parameters(value)
    except ValueError:
        return "(an address that is not a valid connection string, not shown)"
    shown = {key: params[key] for key in _SHOWN if params.get(key)}
    if "service" in params:
        shown.setdefault("service", params["service"])
    user = f"{shown['user']}@" if "user" in shown else ""
    host = shown.get("host", "")
    socket_dir = host.startswith("/")
    netloc = user + ("" if socket_dir else _hosts(host, shown.get("port", "")))
    if socket_dir and "port" in shown:
        netloc += f":{shown['port']}"
    query = [f"host={host}"] if socket_dir else []
    if "service" in shown:
        query.append(f"service={shown['service']}")
    text = f"postgresql://{netloc}/{shown.get('dbname', '')}"
    return scrub(text + (f"?{'&'.join(query)}" if query else ""), value)


def _hosts(hosts: str, ports: str) -> str:
    """`a:5432,b:5433` from libpq's lists (one port applies to every host)."""
    names, numbers = hosts.split(","), ports.split(",") if ports else []
    if len(numbers) == 1:
        numbers *= len(names)
    numbers = (numbers + [""] * len(names))[: len(names)]
    pairs = zip(names, numbers, strict=True)
    return ",".join(f"{name}:{port}" if port else name for name, port in pairs)


def secrets(value: str) -> list[str]:
    """The passwords `value` holds, and `PGPASSWORD`'s, longest first."""
    found = [os.environ.get("PGPASSWORD", "")]
    try:
        params = parameters(value)
    except ValueError:
        params = {}
    found += [params.get(key, "") for key in _SECRET_KEYS]
    return sorted({text for text in found if text}, key=len, reverse=True)


def scrub(text: str, value: str) -> str:
    """`text` with every password of `value` (and `PGPASSWORD`'s) replaced by `***`."""
    for secret in secrets(value):
        text = text.replace(secret, "***")
    return text
