"""``attncert verify FILE...``: certificates re-checked independently (proofs/core/verify.py), a line each."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from attncert.exact.errors import ParseError
from attncert.proofs.cli.options import limits_of


def cmd_verify(args: argparse.Namespace) -> int:
    from attncert.proofs.core.verify import exit_code, verify_bytes, verify_file

    lim = limits_of(args)
    outcomes = []
    for item in _verify_targets(args.files):
        if item == "-":  # standard input: read at most one byte past the limit, which the reader then refuses
            o = verify_bytes(sys.stdin.buffer.read(lim.max_bytes + 1), "-", lim)
        else:
            o = verify_file(item, lim)
        print(o.line(), flush=True)
        outcomes.append(o)
    return exit_code(outcomes)


def _verify_targets(items: Sequence[str]) -> list[str]:
    """The files to verify: a folder stands for every ``*.json`` file below it, in sorted order (none is
    skipped for not looking like a certificate: verify says BAD), ``-`` for standard input once."""
    out: list[str] = []
    for item in items:
        if item != "-" and Path(item).is_dir():
            found = sorted(str(f) for f in Path(item).rglob("*.json") if f.is_file())
            if not found:
                raise ParseError(f"{item}: no .json file below this folder")
            out += found
        else:
            out.append(item)
    if out.count("-") > 1:
        raise ParseError("standard input (-) can be verified once")
    return out
