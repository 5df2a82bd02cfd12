"""The ``attncert`` command line (DESIGN.md, "Command line").

Exit codes: 0 the claim holds, 1 it does not, 2 bad input. A user error prints
one line on stderr and never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import PackageNotFoundError, version
from typing import Sequence

from exact.errors import AttncertError
from proofs.registry import load_claims

EXIT_HOLDS, EXIT_FAILS, EXIT_BAD_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse prints usage too)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def package_version() -> str:
    try:
        return version("attncert")
    except PackageNotFoundError:
        return "0+unknown"


def _cmd_list(args: argparse.Namespace) -> int:
    claims = load_claims()
    if not claims:
        print("no claims are registered yet")
        return EXIT_HOLDS
    width = max(map(len, claims))
    for name, claim in sorted(claims.items()):
        print(f"{name:<{width}}  {claim.statement}")
    return EXIT_HOLDS


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="attncert", description="Exact-arithmetic proof checker for what transformers can express.")
    p.add_argument("--version", action="version", version=f"attncert {package_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    sp = sub.add_parser("list", help="list the claims that can be proven")
    sp.set_defaults(func=_cmd_list)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except AttncertError as e:
        print(f"attncert: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("attncert: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
