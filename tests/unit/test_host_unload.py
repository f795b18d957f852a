"""S10: a loaded session nobody follows and no turn runs is unloaded after its idle time, and
loaded again (from its log) by the next method that names it. Time is a fake the test moves."""

from __future__ import annotations

import pytest
from asking_helpers import FakeLink

from askbridge.host.agent.unloading import Unloader
from askbridge.host.host import Host
from askbridge.host.store.store_memory import MemoryEventStore

pytestmark = pytest.mark.timeout(20)

AFTER_S = 60.0


class Now:
    def __init__(self) -> None:
        self.s = 0.0

    def __call__(self) -> float:
        return self.s


async def stored_session(store: MemoryEventStore) -> str:
    """A session in `store`, as a host that has stopped leaves it."""
    session = await Host(store).new_session(model={"kind": "script", "steps": []})
    return session.id


def fake_time(host: Host) -> Now:
    now = Now()
    host.unloader = Unloader(host.sessions, host.registry, host.subscribers.count, AFTER_S, now)
    return now


async def test_S10_a_session_nobody_follows_is_unloaded_after_its_idle_time() -> None:
    store = MemoryEventStore()
    session_id = await stored_session(store)
    async with Host(store) as host:
        now = fake_time(host)
        loaded = await host.load_session(session_id)  # loaded with nobody to follow it: idle
        now.s = AFTER_S - 1
        host.unloader.sweep()
        assert host.sessions.get(session_id) is loaded
        now.s = AFTER_S
        host.unloader.sweep()
        assert session_id not in host.sessions
        assert not host.registry.is_live(loaded.agent)  # its agent is gone with it
        again = await host.get_session(session_id)  # loaded again from its log
        assert again is not loaded and host.sessions[session_id] is again


async def test_S10_M1_a_followed_session_stays_until_its_last_follower_left() -> None:
    store = MemoryEventStore()
    session_id = await stored_session(store)
    async with Host(store) as host:
        now = fake_time(host)
        await host.load_session(session_id)
        client = host.attach(FakeLink(), {})
        await host.get_session(session_id, client)  # followed: in use again
        now.s = 10 * AFTER_S
        host.unloader.sweep()
        assert session_id in host.sessions
        host.detach(client)  # its last follower left: idle from now
        now.s += AFTER_S - 1
        host.unloader.sweep()
        assert session_id in host.sessions
        now.s += 1
        host.unloader.sweep()
        assert session_id not in host.sessions
