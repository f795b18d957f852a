"""An `askbridge host` that says it is another version, for the H7 tests of the extension.

    python other_version_host.py DATA_DIR

The real host of this checkout, with `askbridge.__version__` set to
OTHER_VERSION before anything reads it, so every front door of this checkout
(`askbridge serve`) is refused with the host's one line (H7): "the askbridge
host of D (pid N) is version 0.0.0-other, this front door is 0.1.0; stop it
with `askbridge host --stop --data-dir D` and start again". Stop it the way
that line says. Used by test/launch.test.ts and
tests/editors/test_vscode_windows.py.
"""

import sys

import askbridge

OTHER_VERSION = "0.0.0-other"

if __name__ == "__main__":
    askbridge.__version__ = OTHER_VERSION
    from askbridge.cli.commands import main

    sys.exit(main(["host", "--data-dir", sys.argv[1], "--idle-exit", "120"]))
