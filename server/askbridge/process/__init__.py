"""A process's plumbing, on the standard library alone: what every askbridge process
(a front door, the host, `askbridge host --status`, the test harness) needs before,
or without, the heavy imports of its layer.

- attach.py: the front-door side of H2/H4: find or start the data directory's host,
  hand it our stdio, wait for its exit status;
- hostsock.py: `<data-dir>/host.sock` from both ends: where it is (H1), binding it,
  its one client (a listener of another uid refused, S13);
- paths.py: where a data directory is, and whether it is private enough (S5, S13);
- ctrl_c.py: Ctrl-C held off while a host's start imports;
- log_lines.py: how every command's log lines are made and written (S12);
- lazy.py: a package's names imported on first use (PEP 562).

These are leaves (tests/unit/test_layers.py): they import the standard library and
each other, nothing else of ours, so any layer may use them (the store and the front
door read the same data-directory rules without one depending on the other), and an
editor's start, which waits on attach.py, pays for nothing more than they import.
Nothing is imported here, for the same reason.
"""
