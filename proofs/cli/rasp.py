"""``attncert rasp``: a program in the RASP language run exactly; with neither FILE nor ``--eval``, the REPL
(``-i FILE``: the REPL after running FILE, as ``python -i FILE``)."""

from __future__ import annotations

import argparse
import sys

from attncert.exact.errors import AttncertError, ParseError
from attncert.exact.limits import limits
from attncert.proofs.cli.options import EXIT_HOLDS, limits_of


def cmd_rasp(args: argparse.Namespace) -> int:
    from attncert.constructions.rasp.language import session
    from attncert.constructions.rasp.language.interpreter import read_e_literal
    from attncert.constructions.rasp.language.sources import read_source

    e_literals = frozenset(read_e_literal(t) for t in args.e_literal)
    if args.decimals is not None and args.decimals > args.max_digits:  # mpmath would work at that many digits
        raise ParseError(f"--decimals {args.decimals:,}: more than the digit limit of {args.max_digits:,} (raise it with --max-digits)")
    if args.interactive is not None and (args.file is not None or args.eval is not None or args.input is not None):
        raise ParseError("-i FILE opens the REPL with FILE run: give it neither another FILE nor --eval nor --input")
    if args.file is None and args.eval is None:
        from attncert.constructions.rasp.language import terminal
        from attncert.proofs.rasp_language.plot import patterns_png

        with limits(limits_of(args)):
            # fractions with a decimal view beside them, unless --decimals chose the digits
            failed = terminal.run(
                sys.stdout, sys.stderr, args.decimals or session.REPL_DECIMALS, e_literals, session.labels([], tuple(args.e_literal)), patterns_png, args.interactive
            )
        if failed and not terminal.interactive():  # piped statements that failed fail the run
            raise AttncertError(f"{failed} statement{'s' if failed != 1 else ''} of the input failed (above)")
        return EXIT_HOLDS
    with limits(limits_of(args)):
        source = read_source(args.file) if args.file else ""
        example = session.read_input(args.input) if args.input is not None else None
        outcome = session.run_program(source, args.file or "<eval>", args.eval, example, e_literals)
    for line in outcome.labels(tuple(args.e_literal)):
        print(line)
    print(session.show(outcome.value, args.decimals))
    return EXIT_HOLDS
