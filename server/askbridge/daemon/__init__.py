"""The host process and the two ways a front door reaches it (architecture.md `daemon/`, H1–H8).

- `front.run_front_door(door, args)`: what `askbridge serve|acp|mcp` runs:
  `--host auto` attaches to the data directory's host (`askbridge.process.attach`,
  standard library only), `--host inline` is its own host (`inline`);
- `main.run_host(args)`: `askbridge host` — the host itself, `--stop`, `--status`;
- `bootstrap.serve_host(...)`: the one start of a Host and its listener, for both;
- `listener.HostSocket`: `<data-dir>/host.sock`, hellos with descriptors, relay (where the
  socket is, its binding and its one client: `askbridge.process.hostsock`, standard library only);
- `doors.serve_door`: the named door on the streams a front door handed over.
"""
