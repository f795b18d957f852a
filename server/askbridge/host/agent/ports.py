"""What the agent room needs of the host that wires it (host.py's Host), as protocols.

The agent never imports host.py or the asking room (tests/unit/test_layers.py): a
session logs through the store room's group commit (`commits`, host/store/commits.py,
whose API Session alone calls), hands derived updates to `publisher.publish`,
and withdraws its open questions through `fanout.abort`; host.py supplies all of it.
The protocols are written once in session_ports.py, generic in the session (so that the
turns that a Session runs need not import session.py); here they are named for Session.
"""

from __future__ import annotations

from typing import TypeAlias

from .session import Session
from .session_ports import HostOf, Publishes, Requester, Withdraws

SessionHost: TypeAlias = HostOf[Session]

__all__ = ["Publishes", "Requester", "SessionHost", "Withdraws"]
