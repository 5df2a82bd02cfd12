"""``attncert compile``: a matrix construction, or a RASP program of your own, compiled to exact transformer
weights (JSON) or float64 arrays (npz), the model checked before it is written."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from attncert.exact.errors import ParseError
from attncert.exact.limits import limits
from attncert.proofs.cli import output
from attncert.proofs.cli.options import EXIT_HOLDS, SIZE, construction_sizes, limits_of


def cmd_compile(args: argparse.Namespace) -> int:
    from attncert.constructions.compiler.export import to_npz
    from attncert.constructions.compiler.model import model_to_json
    from attncert.exact.canonical import canonical_json

    user = args.file is not None or args.program is not None
    if user:
        name, model = _compile_user_program(args)
    else:
        name, model = _compile_construction(args)
    where = output.emit(args.target, to_npz(model) if args.format == "npz" else canonical_json(model_to_json(model)) + b"\n", not args.out)
    s = model.summary()
    print(
        f"{name}: {s['layers']} layers, heads {s['heads']}, "
        f"width {s['width']}, {s['parameters']:,} nonzero parameters, sequence length {model.length}; "
        f"checked: {model.checked.describe()}; written to {where}",
        file=sys.stdout if args.target else sys.stderr,
    )
    return EXIT_HOLDS


def _compile_construction(args: argparse.Namespace) -> tuple[str, Any]:
    from attncert.proofs.compiled import construction as compiled
    from attncert.proofs.core.cost import check as check_cost

    if args.of is None:
        raise ParseError("compile needs a construction (e.g. universal), --file F.rasp or --program MODULE:FUNCTION")
    for flag_, given in (("--vocab", args.vocab), ("--max-seq-len", args.max_seq_len), ("--expr", args.expr), ("--lengths", args.lengths), ("--causal", args.causal or None)):
        if given is not None:
            raise ParseError(f"{flag_} is for a program of your own (--file or --program), not the construction {args.of}")
    args.target = output.target(args.out, Path("models") / f"{args.of}.{args.format}")
    # Compiling builds the construction and its positional table, then checks the model: forward passes of every (query, key) pair.
    sizes = compiled.parse_sizes(args.of, construction_sizes(args))  # refuses an unknown construction or size first
    lim = limits_of(args)
    check_cost(f"compile {args.of}", sizes, compiled.compile_cost(args.of, sizes), lim)
    with limits(lim):
        _, model = compiled.compile_construction(args.of, sizes)
    return f"{args.of} ({compiled.canonical_sizes(sizes)})", model


def _compile_user_program(args: argparse.Namespace) -> tuple[str, Any]:
    from attncert.proofs.core import user_programs

    if args.of is not None:
        raise ParseError(f"give a construction ({args.of}) or a program of your own (--file/--program), not both")
    user_programs.check_sources(args.file, args.expr, args.program)
    if args.sizes or any(k.startswith(SIZE) and v is not None for k, v in vars(args).items()):
        raise ParseError("--sizes is for a construction; a program of your own takes --vocab and --max-seq-len")
    if args.vocab is None or args.max_seq_len is None:
        raise ParseError("a program of your own needs --vocab a,b,c and --max-seq-len N")
    vocab = user_programs.parse_vocab(args.vocab)
    name = args.expr or (Path(args.file).stem if args.file is not None else user_programs.program_spec(args.program)[1])
    args.target = output.target(args.out, Path("models") / f"{name}.{args.format}")
    lim = limits_of(args)
    with limits(lim):
        sop = user_programs.file_program(args.file, args.expr) if args.file is not None else user_programs.attncert_program(user_programs.call_program(args.program), args.program)
        model = user_programs.compile_program(sop, vocab, args.max_seq_len, args.lengths or "fixed", args.causal)
    return f"{name} (vocab {','.join(map(str, vocab))}, max_seq_len {args.max_seq_len})", model
