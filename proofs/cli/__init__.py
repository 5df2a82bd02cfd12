"""The ``attncert`` command line (docs/design.md, "Command line").

Exit codes: 0 the claim holds, 1 it does not, 2 bad input. A user error prints
one line on stderr and never a traceback.

One module per verb, each with its ``cmd_VERB``: ``prove`` (also --estimate, --for-all, --every),
``prove_all``, ``verify``, ``listing`` (list), ``graph``, ``compile``, ``rasp``, ``plot``, ``sweep``;
``parser`` builds the parser, ``options`` holds the argparse machinery they share (one-line errors,
limit options, a claim's options and sizes), ``output`` what they print and write; here, ``main``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import Sequence

from attncert.exact.errors import AttncertError
from attncert.proofs.cli.options import EXIT_BAD_INPUT
from attncert.proofs.cli.parser import build_parser, program_claim
from attncert.proofs.core.workers import Terminated, orderly_signals

# The command line imports only what a verb needs, inside the verb (FLINT, numpy, networkx, sympy and
# the claims' modules each take a tenth of a second or more to load): `attncert --version`, `list` and
# `--help` start at once, and `prove CLAIM` loads CLAIM's module only.


def main(argv: Sequence[str] | None = None) -> int:
    # Ctrl-C and SIGTERM end a run in order: worker processes stopped, one line, 130 or 143. Run as
    # the program (argv None), a second signal during the shutdown ends it at once, as quietly.
    with orderly_signals("attncert", keep_after_signal=argv is None) as stopped:
        try:
            words = program_claim(list(sys.argv[1:] if argv is None else argv))
            args = build_parser(words).parse_args(words)
            code = args.func(args)
            sys.stdout.flush()  # a reader that went away shows here, not in the interpreter's last flush
            return code
        except AttncertError as e:
            print(f"attncert: error: {e}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except MemoryError:  # Python's own allocation failed: the run asked more than this machine gives
            print("attncert: error: out of memory (smaller sizes or a machine with more memory; docs/limits.md)", file=sys.stderr)
            return EXIT_BAD_INPUT
        except KeyboardInterrupt:
            return stopped.report(signal.SIGINT)
        except Terminated:
            return stopped.report(signal.SIGTERM)
        except BrokenPipeError:
            # `attncert verify ... | head -1`: stop quietly, with what a process killed by SIGPIPE
            # gives (141); later flushes go to devnull, as the Python docs recommend (signal, SIGPIPE).
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141
