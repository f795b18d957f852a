"""`python -m askbridge.cli`: the full command line (what the tests and a host it starts run)."""

import sys

from askbridge.cli.commands import main

sys.exit(main())
