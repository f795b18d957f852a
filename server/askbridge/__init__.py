"""askbridge: let an AI agent stop and ask the human a structured question."""

__version__ = "0.1.0"
