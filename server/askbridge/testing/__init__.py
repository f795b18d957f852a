"""Public helpers for headless harness tests: `AskbridgeClient` and the `askbridge_client` fixture."""

from .client import AskbridgeClient, Claim

__all__ = ["AskbridgeClient", "Claim"]
