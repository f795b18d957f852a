"""Public helpers for headless harness tests.

`AskbridgeClient` drives a real `askbridge serve`; the pytest plugin adds `askbridge_client`.
`askbridge.testing.wire.RawServer` speaks raw frames to one (error paths, stdout purity);
`askbridge.testing.transcript.replay` replays a golden transcript (protocol/transcripts).
"""

from .client import AskbridgeClient
from .handles import Claim, PromptRun
from .startup import ServerStartError

__all__ = ["AskbridgeClient", "Claim", "PromptRun", "ServerStartError"]
