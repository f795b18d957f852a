"""Each default and limit of `ask_user_question`, written once.

Plain constants, standard library only, so cli/parser.py and the early paths can
read them without importing pydantic.
"""

from __future__ import annotations

from typing import Final

ASK_MODE_DEFAULT: Final = "legacy"
ASK_TIMEOUT_DEFAULT_SECONDS: Final = 120
MAX_TURN_REQUESTS_DEFAULT: Final = 1000  # model requests per turn (`--max-turn-requests`)
ASK_TIMEOUT_MAX_SECONDS: Final = 2147483  # setTimeout's limit in ms, as whole seconds
# The T4 sentence, reused for configured timeouts so every door says the same thing.
ASK_TIMEOUT_MESSAGE: Final = (
    f"timeout must be -1 or a positive integer up to {ASK_TIMEOUT_MAX_SECONDS} seconds"
)
# S16: what one root prompt's delegation tree may grow to (`--delegation-limits`); higher
# values need `--raise-delegation-limits`.
DELEGATION_LIMITS_DEFAULT: Final = {"depth": 3, "children": 8, "sessions": 64, "requests": 500}
