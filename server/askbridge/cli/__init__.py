"""The command line: `askbridge serve | acp | mcp | host | web | demo | schema | sessions`.

- entry.py: the console script. An editor's plain `serve|acp|mcp` command line goes
  straight to attach (or the inline host) without loading the parser; anything else
  goes to commands.py.
- commands.py: runs a parsed command (`python -m askbridge.cli` starts here too).
- parser.py and flags.py: every command's flags, their defaults and `--help`.
- sessions.py: `askbridge sessions` (list, show) over a store, even while a host runs.
- exits.py: how a command's exit reads (Ctrl-C is 130).

Nothing is imported here: entry.py's fast path pays only for what it uses.
"""
