"""``attncert verify FILE...``: certificates re-checked independently (proofs/core/verify.py), a line each,
then, for a folder or several files, a tally."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Sequence

from attncert.exact.errors import ParseError
from attncert.proofs.cli.options import limits_of


def cmd_verify(args: argparse.Namespace) -> int:
    from attncert.proofs.core.verify import SKIPPED, exit_code, verify_bytes, verify_file, verify_found

    lim = limits_of(args)
    outcomes = []
    targets = _verify_targets(args.files)
    for item, found in targets:
        if item == "-":  # standard input: read at most one byte past the limit, which the reader then refuses
            o = verify_bytes(sys.stdin.buffer.read(lim.max_bytes + 1), "-", lim)
        else:
            o = verify_found(item, lim) if found else verify_file(item, lim)
        print(o.line(), flush=True)
        outcomes.append(o)
    if len(targets) > 1 or any(found for _, found in targets):
        print(tally(Counter(o.status for o in outcomes)))
    if all(o.status == SKIPPED for o in outcomes):
        raise ParseError("no certificate to verify: every file found is skipped, as not a certificate")
    return exit_code(outcomes)


def tally(counts: Counter) -> str:
    """The closing line: how many certificates are genuine and hold, genuine and do not hold, genuine and not
    proven, rejected, malformed; how many files were skipped."""
    from attncert.proofs.core.verify import BAD, DOES_NOT_HOLD, NOT_PROVEN, OK, REJECTED, SKIPPED

    n = sum(counts[s] for s in (OK, DOES_NOT_HOLD, NOT_PROVEN, REJECTED, BAD))
    parts = [
        f"{counts[OK]} genuine and holding ({OK})",
        f"{counts[DOES_NOT_HOLD]} genuine and not holding ({DOES_NOT_HOLD})",
        f"{counts[NOT_PROVEN]} genuine and not proven ({NOT_PROVEN})",
        f"{counts[REJECTED]} rejected ({REJECTED})",
        f"{counts[BAD]} malformed ({BAD})",
    ]
    skipped = f"; {counts[SKIPPED]} file{'s' * (counts[SKIPPED] != 1)} skipped, not a certificate" if counts[SKIPPED] else ""
    return f"{n} certificate{'s' * (n != 1)}: {', '.join(parts)}{skipped}"


def _verify_targets(items: Sequence[str]) -> list[tuple[str, bool]]:
    """The files to verify, each with whether it was found below a folder: a folder stands for every ``*.json``
    file below it, in sorted order (one that is JSON but not a certificate is skipped, and named), ``-`` for
    standard input once. A file named on the command line is always verified."""
    out: list[tuple[str, bool]] = []
    for item in items:
        if item != "-" and Path(item).is_dir():
            found = sorted(str(f) for f in Path(item).rglob("*.json") if f.is_file())
            if not found:
                raise ParseError(f"{item}: no .json file below this folder")
            out += [(f, True) for f in found]
        else:
            out.append((item, False))
    if [f for f, _ in out].count("-") > 1:
        raise ParseError("standard input (-) can be verified once")
    return out
