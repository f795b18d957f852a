"""The session's events and their pure folds: projection, inbox, client updates.

Imports protocol only; no I/O, no asyncio (tests/unit/test_layers.py).
"""
