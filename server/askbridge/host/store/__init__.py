"""Where the log lives: the store API, SQLite with group commit, file and memory stores,
the data directory (lock, guard, private files). Imports log only (test_layers.py).
"""
