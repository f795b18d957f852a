"""Model adapters: `script` (deterministic) and `openai` (chat completions)."""
