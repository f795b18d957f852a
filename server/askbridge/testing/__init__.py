"""Public helpers for headless harness tests.

`AskbridgeClient` drives a real `askbridge serve`; the pytest plugin adds `askbridge_client`.
"""

from .client import AskbridgeClient, Claim

__all__ = ["AskbridgeClient", "Claim"]
