"""``python -m attncert``: the command line."""

import sys

from attncert.proofs.cli import main

sys.exit(main())
