"""`askbridge serve | acp | mcp`: reach the data directory's host, or be it (H2, H3).

`--host auto` (the default; `ASKBRIDGE_HOST` changes the default) attaches to
the host of `--data-dir`, starting one when none runs, and hands it this
process's stdio (`askbridge.process.attach`); `--host inline` makes this process the
host (`inline.serve_inline`). Nothing heavy is imported on the attach path: it
is what an editor waits for on every start.

The front door's flags travel with it: `--model`, `--ask-mode`, `--ask-timeout`,
`--max-turn-requests` and `--delegation-limits` are its client's session defaults
(below `initializationOptions` / `_meta.askbridge`); `--idle-exit` goes to a
host it starts, and so do `--log-file` and `--log-level` (a host that already
runs keeps its own). Without `--log-file` a host logs to `<data-dir>/host.log`
(INFO by default).
"""

from __future__ import annotations

import argparse
import os
from typing import Any


def door_defaults(args: argparse.Namespace) -> dict[str, Any]:
    """The front door's flags as its client's session defaults (only the ones given)."""
    out: dict[str, Any] = {}
    if getattr(args, "model", None) is not None:
        out["model"] = args.model
    ask: dict[str, Any] = {}
    if getattr(args, "ask_mode", None) is not None:
        ask["mode"] = args.ask_mode
    if getattr(args, "ask_timeout", None) is not None:
        ask["timeout"] = args.ask_timeout
    if ask:
        out["ask_user_question"] = ask
    if getattr(args, "max_turn_requests", None) is not None:
        out["max_turn_requests"] = args.max_turn_requests
    if getattr(args, "delegation_limits", None) is not None:
        out["delegation"] = args.delegation_limits
    return out


def run_front_door(door: str, args: argparse.Namespace) -> int:
    from askbridge import __version__
    from askbridge.process.attach import attach
    from askbridge.process.paths import data_dir_of

    data_dir = data_dir_of(args.data_dir)
    if args.host == "inline":
        from .inline import serve_inline

        return serve_inline(door, data_dir, door_defaults(args))
    log = []
    if getattr(args, "log_file", None):
        log += ["--log-file", os.path.abspath(args.log_file)]
    if getattr(args, "log_level", None) and args.log_level != "WARNING":
        log += ["--log-level", args.log_level]
    return attach(door, data_dir, door_defaults(args), __version__, args.idle_exit, log)
