"""``attncert list``: every claim with its one-line summary (from the claim index alone: it starts at once)."""

from __future__ import annotations

import argparse

from attncert.proofs.cli.options import EXIT_HOLDS
from attncert.proofs.core.registry import INDEX


def cmd_list(args: argparse.Namespace) -> int:
    width = max(map(len, INDEX))
    for name in sorted(INDEX):
        print(f"{name:<{width}}  {INDEX[name].summary}")
    return EXIT_HOLDS
