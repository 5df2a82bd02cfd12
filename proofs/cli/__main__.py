"""``python -m attncert.proofs.cli``: the command line, as ``attncert`` and ``python -m attncert``."""

import sys

from attncert.proofs.cli import main

sys.exit(main())
