"""The parser: the verbs, their options, and one subparser per claim under prove, graph and plot, whose
options are added for the claim named on the command line only (its module alone is loaded)."""

from __future__ import annotations

import argparse
import os
from typing import Any, Callable, Sequence

from attncert.proofs.core import workers
from attncert.proofs.cli import output
from attncert.proofs.cli.compile import cmd_compile
from attncert.proofs.cli.graph import GRAPH_FORMATS, build_params, cmd_graph
from attncert.proofs.cli.listing import cmd_list
from attncert.proofs.cli.options import (
    COST_LIMITS,
    DOCUMENT_LIMITS,
    RASP_LIMITS,
    SIZE,
    SWEEP_LIMITS,
    Once,
    Parser,
    add_limits,
    claim_options,
    claim_size_options,
    construction_size_options,
    flags,
    option,
    sizes_option,
)
from attncert.proofs.cli.plot import PLOTS, cmd_plot
from attncert.proofs.cli.prove import cmd_prove
from attncert.proofs.cli.prove_all import PROVE_ALL_FOLDER, cmd_prove_all
from attncert.proofs.cli.rasp import cmd_rasp
from attncert.proofs.cli.sweep import SWEEP_FOLDER, cmd_sweep
from attncert.proofs.cli.verify import cmd_verify
from attncert.proofs.core.params import positive_int
from attncert.proofs.core.registry import INDEX, Claim, load_claim


def _selected(argv: Sequence[str]) -> tuple[str | None, str | None]:
    """The verb and the claim named on the command line (the first two words that are not options:
    no option of attncert or of prove, graph or plot comes before the claim, or takes a value)."""
    words = [a for a in argv if not a.startswith("-")][:2]
    return (words + [None, None])[0], (words + [None, None])[1]


def _claim_parsers(sub: Any, names: Sequence[str], chosen: str | None, add: Callable[[argparse.ArgumentParser, Claim], None]) -> None:
    """One subparser per claim, with its summary; only the chosen claim's module is loaded, for its options."""
    for name in sorted(names):
        cp = sub.add_parser(name, help=INDEX[name].summary, description=INDEX[name].summary)
        if name == chosen:
            add(cp, load_claim(name))


#: Parameters a sweep sets itself: not offered as --NAME V1,V2 (a sweep's --jobs is its own, not match2's).
_SWEEP_OWN = {"seed", "jobs", "scheduler"}


def _sweep_size_options(sp: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """--NAME V1,V2,... for every parameter of the claims named on the command line, a task per value."""
    named = [load_claim(w) for w in dict.fromkeys(argv) if w in INDEX]
    for prm in {p.name: p for c in named for p in c.params if p.name not in _SWEEP_OWN}.values():
        sp.add_argument(*flags(prm.name), dest=SIZE + prm.name, action=Once, metavar="V1,V2,...", help=f"values of {prm.name}, a task each (also --sizes {prm.name}=V1,V2)")


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser; the options of a claim are added for the claim named in ``argv`` only."""
    verb, chosen = _selected(argv)
    p = Parser(prog="attncert", description="Exact-arithmetic proof checker for what transformers can express.")
    p.words = (verb, chosen)  # type: ignore[attr-defined]  # for an error's suggestions (options._suggestion)
    p.add_argument("-V", "--version", action="version", version=f"attncert {output.version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    sp = sub.add_parser("list", help="list the claims that can be proven")
    sp.set_defaults(func=cmd_list)

    def prove_options(cp: argparse.ArgumentParser, claim: Claim) -> None:
        claim_options(cp, claim.params)
        claim_size_options(cp, claim.params, argv)
        cp.add_argument("--out", action=Once, help="certificate path, or - for standard output (default: certificates/CLAIM.json)")
        cp.add_argument("--estimate", action="store_true", help="print what the run would compute (sizes, rough time and memory) and stop")
        if f"{claim.name}_identity" in INDEX:
            cp.add_argument(
                "--for-all", action="store_true",
                help=f"prove it for all inputs of these sizes, exactly, as {claim.name}_identity (docs/identity.md)",
            )  # fmt: skip
        if f"{claim.name}_every_size" in INDEX:
            cp.add_argument(
                "--every", metavar="SIZES", action=Once,
                help=f"with --for-all: for every value of these sizes (e.g. n,d,dv; the others as given), as {claim.name}_every_size (docs/every-size.md)",
            )  # fmt: skip
        add_limits(cp, COST_LIMITS, DOCUMENT_LIMITS, RASP_LIMITS if claim.interprets else ())
        if claim.name == "compiled":  # its options for a program of your own, which prove compiled_program
            own = cp.add_argument_group("a program of your own (--file or --program: proves compiled_program, attncert's exact compile of it)")
            claim_options(own, [p for p in load_claim("compiled_program").params if p.name not in {q.name for q in claim.params}])

    sp = sub.add_parser("prove", help="prove one claim and write its certificate")
    claims_sub = sp.add_subparsers(dest="claim", metavar="CLAIM", parser_class=Parser)
    claims_sub.required = True
    _claim_parsers(claims_sub, list(INDEX), chosen if verb == "prove" else None, prove_options)
    sp.set_defaults(func=cmd_prove)

    def graph_options(cp: argparse.ArgumentParser, claim: Claim) -> None:
        claim_options(cp, build_params(claim))
        sizes_option(cp)
        cp.add_argument("--format", choices=sorted(GRAPH_FORMATS), default="dot", action=Once, help="output format (default: dot)")
        cp.add_argument("--out", action=Once, help="write to FILE instead of standard output")
        cp.add_argument("--png", metavar="FILE", action=Once, help="also render a PNG with Graphviz's dot")
        add_limits(cp, COST_LIMITS)

    sp = sub.add_parser("graph", help="export a claim's RASP construction graph (dot, json, graphml, png)")
    graph_sub = sp.add_subparsers(dest="claim", metavar="CLAIM", parser_class=Parser)
    graph_sub.required = True
    _claim_parsers(graph_sub, [n for n, e in INDEX.items() if e.graph], chosen if verb == "graph" else None, graph_options)
    sp.set_defaults(func=cmd_graph)

    sp = sub.add_parser("compile", help="compile a matrix construction, or a RASP program of your own, to exact transformer weights (JSON, or float64 npz)")
    sp.add_argument("of", metavar="CLAIM", nargs="?", help="the construction: transpose, matmul, softmax, relu, maxmin, inverse3, universal, multihead, encoder_layer, or a language readout: match2, parity")
    sp.add_argument("--file", metavar="F.rasp", action=Once, help="instead of a construction: a program in the RASP language (docs/rasp-language.md)")
    sp.add_argument("--expr", metavar="NAME", action=Once, help="the SOp of --file to compile (default: its last statement)")
    sp.add_argument("--program", metavar="MODULE:FUNCTION", action=Once, help="instead of a construction: FUNCTION() of a Python module or .py file returns an attncert or tracr RASP program (runs your code)")
    sp.add_argument("--vocab", metavar="a,b,c", action=Once, help="the tokens of --file/--program, categorical (an item spelled as an integer is the integer)")
    sp.add_argument("--max-seq-len", type=option(positive_int), metavar="N", action=Once, help="the sequence length of --file/--program")
    sp.add_argument("--lengths", choices=["fixed", "every"], default=None, action=Once, help="--file/--program: a model for exactly N tokens (fixed, the default) or one for every length 1..N (every)")
    sp.add_argument("--causal", action="store_true", help="--file/--program: causal attention, tracr's causal semantics")
    sp.add_argument("--sizes", default="", action=Once, help="its sizes, e.g. n=4,d=3,dv=2, the same as --n 4 --d 3 --dv 2 (the construction's defaults for the rest)")
    if verb == "compile" and chosen:
        construction_size_options(sp, chosen)
    sp.add_argument("--format", choices=["json", "npz"], default="json", action=Once, help="exact JSON weights (default) or float64 arrays")
    sp.add_argument("--out", action=Once, help="output file, or - for standard output (default: models/CLAIM.json or .npz)")
    add_limits(sp, COST_LIMITS)
    sp.set_defaults(func=cmd_compile)

    sp = sub.add_parser("rasp", help="run a program in the RASP language exactly (no FILE and no --eval: a REPL; -i FILE: the REPL after FILE)")
    sp.add_argument("file", nargs="?", metavar="FILE.rasp")
    sp.add_argument("-i", dest="interactive", metavar="FILE.rasp", action=Once, help="open the REPL with FILE run in it (its names the session's), as python -i FILE")
    sp.add_argument("--eval", metavar="EXPR", action=Once, help="the expression to show (default: the file's last statement)")
    sp.add_argument("--input", metavar="INPUT", action=Once, help="the input: a JSON list (numbers read exactly) or a string of tokens")
    sp.add_argument("--decimals", type=option(positive_int), action=Once, help="also show each number with this many significant digits (≈)")
    sp.add_argument(
        "--e-literal", action="append", default=[], metavar="DECIMAL", help="read this decimal literal as the constant e, exactly (repeatable; recorded in the output; off by default)"
    )
    add_limits(sp, RASP_LIMITS)
    sp.set_defaults(func=cmd_rasp)

    def plot_options(cp: argparse.ArgumentParser, claim: Claim) -> None:
        claim_options(cp, claim.params)
        claim_size_options(cp, claim.params, argv)
        cp.add_argument("--certificate", metavar="FILE", action=Once, help="plot this certificate (verified first) instead of proving")
        cp.add_argument("--out", action=Once, help="PNG path, or - for standard output (default: plots/CLAIM.png)")
        add_limits(cp, COST_LIMITS)

    sp = sub.add_parser("plot", help="draw a certificate as a PNG: error against width, bound against eps or beta, a coupling, selection patterns")
    plot_sub = sp.add_subparsers(dest="claim", metavar="CLAIM", parser_class=Parser)
    plot_sub.required = True
    _claim_parsers(plot_sub, list(PLOTS), chosen if verb == "plot" else None, plot_options)
    sp.set_defaults(func=cmd_plot)

    sp = sub.add_parser(
        "verify", help="re-check certificates independently (exit 0 all OK, 1 one DOES-NOT-HOLD, 4 one NOT-PROVEN, 2 one BAD, 3 one REJECTED)",
        description="Re-check certificates independently, one line each: OK (genuine, its claim holds; exit 0), DOES-NOT-HOLD "
        "(genuine, its claim does not hold, e.g. counterexamples; exit 1), BAD (malformed or over a limit; exit 2), REJECTED "
        "(not to be trusted: tampered with or forged; exit 3), NOT-PROVEN (genuine, its method did not decide: the claim may hold; "
        "exit 4). Several files exit with the worst (REJECTED, BAD, NOT-PROVEN, DOES-NOT-HOLD, OK). Below a folder, a JSON file "
        "that is not a certificate (a compiled model) is SKIPPED and named; a tally closes the output.",
    )  # fmt: skip
    sp.add_argument("files", nargs="+", metavar="FILE", help="a certificate, a folder (every .json file below it), or - (standard input)")
    add_limits(sp, DOCUMENT_LIMITS, COST_LIMITS, RASP_LIMITS)
    sp.set_defaults(func=cmd_verify)

    sp = sub.add_parser("prove-all", help="prove every claim at default sizes, print a summary, verify the certificates")
    sp.add_argument("--out-dir", default=PROVE_ALL_FOLDER, action=Once, help=f"an existing folder for the certificates (default: {PROVE_ALL_FOLDER}, made if missing)")
    sp.add_argument(
        "--jobs", type=option(positive_int), default=workers.MAX_PROCESSES, action=Once,
        help=f"processes proving and verifying claims side by side (default: one per core, here {workers.MAX_PROCESSES})",
    )  # fmt: skip
    sp.add_argument("--all", action="store_true", help="also the claims left out of the main job for their time (the heavier every-size theorems)")
    sp.set_defaults(func=cmd_prove_all)

    sp = sub.add_parser("sweep", help="prove claims over many seeds and sizes in parallel (resumable), then summarize")
    sp.add_argument("claims", nargs="+", metavar="CLAIM")
    sp.add_argument("--seeds", action=Once, help="seeds: a range 0-9, a list 0,3,7, or both (default: each claim's default seed)")
    sp.add_argument(
        "--sizes", "--size", dest="size", action="append", default=[], metavar="NAME=V1,V2,...",
        help="values of parameters, a task each (repeatable), e.g. --sizes n=2,3,4,d=2; the same as --n 2,3,4 --d 2",
    )  # fmt: skip
    if verb == "sweep":
        _sweep_size_options(sp, argv)
    sp.add_argument("--out-dir", default=SWEEP_FOLDER, action=Once, help=f"an existing folder for the certificates (default: {SWEEP_FOLDER}, made if missing)")
    sp.add_argument("--jobs", type=option(positive_int), action=Once, default=os.cpu_count() or 1, help="local processes; 1 runs in this process (default: number of CPUs)")
    sp.add_argument("--scheduler", metavar="ADDRESS", action=Once, help="run on the Dask distributed cluster at ADDRESS instead (needs dask[distributed])")
    sp.add_argument("--no-progress", action="store_true", help="no progress bar (it is shown only when stderr is a terminal)")
    add_limits(sp, COST_LIMITS, DOCUMENT_LIMITS, SWEEP_LIMITS)
    sp.set_defaults(func=cmd_sweep)
    return p


#: The options of compiled_program that the construction's compiled claim does not take: any of them sends
#: ``prove compiled`` to compiled_program.
_OWN_PROGRAM = ("--file", "--program", "--expr", "--vocab", "--max-seq-len", "--max_seq_len", "--lengths", "--causal", "--method", "--max-inputs", "--max_inputs", "--listed")


def program_claim(words: list[str]) -> list[str]:
    """``prove compiled --file F`` / ``--program M:F`` proves compiled_program: the compiled claim of a
    program of your own (a construction's compiled claim takes none of its options, which its help lists)."""
    verb, chosen = _selected(words)
    own = any(w.split("=", 1)[0] in _OWN_PROGRAM for w in words)
    if verb in ("prove", "sweep") and chosen == "compiled" and own:
        words = list(words)
        words[words.index("compiled")] = "compiled_program"
    return words
