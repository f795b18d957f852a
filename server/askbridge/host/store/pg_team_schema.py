"""Version 2 of the team store's schema (pg_schema.py runs it): what many hosts on one
database need beside the event log (G4-G8).

- `hosts(id, name, pid, lock_key, started_at, last_seen)`: one row per running store
  (a host process). `lock_key` names the host's liveness lock, a session-level
  advisory lock (LIVENESS_LOCK_CLASS, lock_key) its listening connection holds
  (pg_listener.py). The server frees it the moment that connection's backend ends, so
  a host killed with -9 is seen dead within milliseconds, while a lease alone would
  keep its sessions for up to 10 s; the lease covers what the lock cannot see, a host
  that is paused or cut off with its connection still open (G4).
- `answers(id, session_id, call_id, answer, person, host, door, client, answered_at,
  withdrawn_at, consumed_seq, offer_id)` with the partial unique index `answers_live` on
  (session_id, call_id) where not withdrawn: at most one live answer per question is
  the database's rule, so first answer wins across hosts without any host deciding
  (G6). `consumed_seq` is set by the append that logs the event using the answer, in
  the same statement, so an acknowledged answer is consumed exactly once; `offer_id`
  lets an offer whose reply was lost know its own row (pg_answers.py).
- `claims(session_id, call_id, host, client, claimed_at, lease_until)`: a client's
  claim on a timed wait, from any host; its host renews it with its leases, so a claim
  of a host that died lapses on its own (G7, C1-C5).
- `acquire(session, host, lease)`: the lease rule of G4 in one transaction (the
  session's row locked): granted when nobody owns the session, this host does, its
  lease lapsed, or its owner's liveness lock is free (tried with a transaction-scoped
  lock, released at once); the epoch moves on whenever the owner changes.
- `not_owner` and `answer_spent` raise inside an append's statement (pg_commit.py)
  when the writer's epoch is stale (NOT_OWNER, naming the owner in the hint) or an
  answer it consumes is gone or already consumed (ANSWER_SPENT).
"""

from __future__ import annotations

# SQLSTATEs of the fences, beside pg_schema's FENCED (AB409) and NO_SESSION (AB404).
NOT_OWNER = "AB403"
ANSWER_SPENT = "AB410"
# The liveness locks' first key ("askb"); the second is the host's lock_key. The two-key
# form keeps them apart from other applications' one-key advisory locks.
LIVENESS_LOCK_CLASS = 0x61736B62

V2 = (
    """CREATE TABLE askbridge.hosts (
        id text PRIMARY KEY,
        name text NOT NULL,
        pid integer NOT NULL,
        lock_key integer GENERATED ALWAYS AS IDENTITY UNIQUE,
        started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        last_seen timestamptz NOT NULL DEFAULT clock_timestamp())""",
    """CREATE TABLE askbridge.answers (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id text NOT NULL,
        call_id text NOT NULL,
        answer json NOT NULL,
        person text,
        host text,
        door text,
        client text,
        answered_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        withdrawn_at timestamptz,
        consumed_seq bigint,
        offer_id text NOT NULL)""",
    """CREATE UNIQUE INDEX answers_live ON askbridge.answers (session_id, call_id)
        WHERE withdrawn_at IS NULL""",
    """CREATE INDEX answers_unconsumed ON askbridge.answers (session_id)
        WHERE withdrawn_at IS NULL AND consumed_seq IS NULL""",
    """CREATE TABLE askbridge.claims (
        session_id text NOT NULL,
        call_id text NOT NULL,
        host text NOT NULL,
        client text NOT NULL,
        claimed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        lease_until timestamptz NOT NULL,
        PRIMARY KEY (session_id, call_id, host, client))""",
    "CREATE INDEX claims_by_host ON askbridge.claims (host)",
    f"""CREATE FUNCTION askbridge.not_owner(session_id text, owner text)
    RETURNS boolean LANGUAGE plpgsql AS $$
    DECLARE
        owner_name text;
    BEGIN
        SELECT h.name INTO owner_name FROM askbridge.hosts h WHERE h.id = owner;
        RAISE EXCEPTION 'session % is owned by host %', session_id,
                coalesce(owner_name, owner, 'none')
            USING ERRCODE = '{NOT_OWNER}', DETAIL = session_id,
                HINT = coalesce(owner || ' ' || owner_name, owner, '');
    END $$""",
    f"""CREATE FUNCTION askbridge.answer_spent(session_id text, call_id text)
    RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'no unconsumed answer to call % of session %', call_id, session_id
            USING ERRCODE = '{ANSWER_SPENT}', DETAIL = session_id, HINT = call_id;
    END $$""",
    f"""CREATE FUNCTION askbridge.acquire(p_session text, p_host text, p_lease interval)
    RETURNS TABLE (o_epoch bigint, o_why text, o_owner text, o_owner_name text,
        o_lease_until timestamptz)
    LANGUAGE plpgsql AS $$
    DECLARE
        s askbridge.sessions%ROWTYPE;
        v_key integer;
        v_name text;
        verdict text;
    BEGIN
        SELECT * INTO s FROM askbridge.sessions WHERE id = p_session FOR UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'unknown session %', p_session
                USING ERRCODE = 'AB404', DETAIL = p_session;
        END IF;
        SELECT h.lock_key, h.name INTO v_key, v_name
            FROM askbridge.hosts h WHERE h.id = s.owner_host;
        IF s.owner_host IS NULL THEN
            verdict := 'free';
        ELSIF s.owner_host = p_host THEN
            verdict := 'mine';
        ELSIF s.lease_until IS NULL OR s.lease_until < clock_timestamp() THEN
            verdict := 'lapsed';
        ELSIF v_key IS NULL THEN
            verdict := 'gone';
        ELSIF pg_try_advisory_xact_lock({LIVENESS_LOCK_CLASS}, v_key) THEN
            verdict := 'dead';
        END IF;
        IF verdict IS NULL THEN  -- refused: the owner as it stands
            RETURN QUERY SELECT s.owner_epoch, NULL::text, s.owner_host, v_name, s.lease_until;
            RETURN;
        END IF;
        RETURN QUERY UPDATE askbridge.sessions t
            SET owner_host = p_host,
                owner_epoch = t.owner_epoch + (CASE WHEN verdict = 'mine' THEN 0 ELSE 1 END),
                lease_until = clock_timestamp() + p_lease
            WHERE t.id = p_session
            RETURNING t.owner_epoch, verdict, s.owner_host, v_name, t.lease_until;
    END $$""",
)
