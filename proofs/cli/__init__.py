"""The ``attncert`` command line (docs/design.md, "Command line").

Exit codes: 0 the claim holds, 1 it does not, 2 bad input. A user error prints
one line on stderr and never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from attncert.exact.errors import AttncertError, ParseError
from attncert.exact.limits import Limits, limit_problem, limits
from attncert.proofs import workers
from attncert.proofs.params import positive_int, size_values
from attncert.proofs.registry import INDEX, Claim, available, claim_names, flag, load_claim, load_claims
from attncert.proofs.workers import Terminated, orderly_signals

# The command line imports only what a verb needs, inside the verb (FLINT, numpy, networkx, sympy and
# the claims' modules each take a tenth of a second or more to load): `attncert --version`, `list` and
# `--help` start at once, and `prove CLAIM` loads CLAIM's module only.

EXIT_HOLDS, EXIT_FAILS, EXIT_BAD_INPUT = 0, 1, 2
#: The default output folders of prove-all and sweep, made in the working directory if missing (no other folder is made).
PROVE_ALL_FOLDER, SWEEP_FOLDER = "certificates", "sweeps"


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # No abbreviations: `--see 3` is a typo to report, not `--seed 3`.
        super().__init__(*args, **{**kwargs, "allow_abbrev": False})

    def error(self, message: str) -> None:  # one line, exit 2 (argparse prints usage too)
        if len(message) > 200:  # the choices of "invalid choice" are every claim: the suggestion says more
            message = re.sub(r" \(choose from .*\)$", "", message)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}{_suggestion(self, message)}\n")

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        return super().parse_known_args(_glue_negative_values(sys.argv[1:] if args is None else list(args)), namespace)


_NEGATIVE = re.compile(r"^-[0-9.]")
_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)'")
_UNRECOGNIZED = re.compile(r"unrecognized arguments: (--?[^\s=]+)")


def _options_on_path(parser: argparse.ArgumentParser, words: Sequence[str | None]) -> set[str]:
    """The option strings of the parser and of the subparsers that ``words`` (verb, claim) choose:
    what a mistyped option on this command line could have meant."""
    found: set[str] = set()
    for action in parser._actions:
        found.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction) and words and words[0] in action.choices:
            found |= _options_on_path(action.choices[words[0]], words[1:])
    return found


def _suggestion(parser: argparse.ArgumentParser, message: str) -> str:
    """"; did you mean X?" for a misspelt verb, claim or option, else nothing."""
    import difflib

    if m := _INVALID_CHOICE.search(message):
        choices = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None) or ()
        near = difflib.get_close_matches(m.group(1), list(choices), n=3)
    elif m := _UNRECOGNIZED.search(message):
        near = difflib.get_close_matches(m.group(1), sorted(_options_on_path(parser, getattr(parser, "words", ()))), n=3)
    else:
        near = []
    return f"; did you mean {' or '.join(near)}?" if near else ""


def _glue_negative_values(argv: list[str]) -> list[str]:
    """``--eps -1/10`` -> ``--eps=-1/10``: a value that starts with a minus is a value, not an option,
    so that the claim can answer "eps must be > 0" instead of argparse "expected one argument"."""
    out: list[str] = []
    for tok in argv:
        if out and _NEGATIVE.match(tok) and out[-1].startswith("--") and "=" not in out[-1]:
            out[-1] = f"{out[-1]}={tok}"
        else:
            out.append(tok)
    return out


class _Once(argparse.Action):
    """Store an option's value, refusing a second occurrence (``--n 2 --n 3`` is a mistake, not a choice)."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        seen = namespace.__dict__.setdefault("_given", set())
        if self.dest in seen:
            parser.error(f"{option_string} given twice; give each option once")
        seen.add(self.dest)
        setattr(namespace, self.dest, values)


#: Limit options (docs/limits.md), as (flag, Limits field, what it bounds): what a claim's cost model is
#: checked against; what a document may hold; what one run of a RASP-language program may do.
COST_LIMITS = (
    ("--max-positions", "max_positions", "longest RASP sequence"),
    ("--max-pairs", "max_pairs", "selection pairs in one attention layer"),
    ("--max-evaluations", "max_evaluations", "sequences (words, cases) or Sinkhorn runs in one claim"),
    ("--max-precision", "max_precision", "arb precision of a Sinkhorn run or of a RASP-language run's balls, in bits"),
    ("--max-memory", "max_memory", "bytes a run is predicted to need (docs/limits.md)"),
    ("--max-symbolic-terms", "max_symbolic_terms", "polynomial terms a for-all-inputs proof is estimated to hold (docs/identity.md)"),
)
DOCUMENT_LIMITS = (
    ("--max-bytes", "max_bytes", "largest document"),
    ("--max-digits", "max_digits", "digits per numerator/denominator (also Python's integer-string limit)"),
    ("--max-exponent", "max_exponent", "largest |q| in e^q"),
    ("--max-entries", "max_entries", "entries per matrix, elements of one RASP value"),
    ("--max-nodes", "max_nodes", "nodes in one recorded RASP graph"),
    ("--max-terms", "max_terms", "terms per EE numerator or denominator"),
)
SWEEP_LIMITS = (("--max-tasks", "max_tasks", "tasks (certificates) in one sweep, counted before any is run"),)
RASP_LIMITS = (
    ("--max-steps", "max_steps", "steps of a RASP program: statements, expressions, loop iterations, elements built, positions evaluated"),
    ("--max-recursion", "max_recursion", "nested evaluations in a RASP program: function calls, levels of nested expressions"),
    ("--max-source", "max_source", "characters of RASP source in one run: the program, the files it loads, the expression"),
    *DOCUMENT_LIMITS[1:4],
    *COST_LIMITS[:2],
    COST_LIMITS[3],
)


def _option(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """``parse`` as an option's type, its ParseError shown as it is (argparse would say only "invalid value")."""

    def read(text: str) -> Any:
        try:
            return parse(text)
        except ParseError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    read.__name__ = getattr(parse, "__name__", "value")
    return read


def _limit(field: str) -> Callable[[str], int]:
    """The type of a limit option: a positive integer within the limit's ceiling (exact/limits.py)."""

    def read(text: str) -> int:
        value = positive_int(text)
        problem = limit_problem(field, value)
        if problem is not None:
            raise ParseError(problem)
        return value

    return _option(read)


#: Defaults that depend on the machine, said in words so that --help reads the same on every call.
_DEFAULT_SHOWN = {"max_memory": "this machine's available memory"}


def _add_limits(sp: argparse.ArgumentParser, *groups: tuple[tuple[str, str, str], ...]) -> None:
    """The limit options of these groups (each once), defaults from Limits."""
    d = Limits()
    for option, field, what in dict.fromkeys(o for g in groups for o in g):
        shown = _DEFAULT_SHOWN.get(field, getattr(d, field))
        sp.add_argument(option, dest=field, type=_limit(field), action=_Once, default=getattr(d, field), help=f"{what} (default {shown})")


def _limits(args: argparse.Namespace) -> Limits:
    return replace(Limits(), **{f.name: getattr(args, f.name) for f in fields(Limits) if hasattr(args, f.name)})


def _cmd_list(args: argparse.Namespace) -> int:
    width = max(map(len, INDEX))
    for name in sorted(INDEX):
        print(f"{name:<{width}}  {INDEX[name].summary}")
    return EXIT_HOLDS


def _run_claim(claim: Claim, params: dict, out: Path) -> tuple[dict, float]:
    from attncert.exact.certificate import write_certificate

    t0 = time.perf_counter()
    doc = claim.prove(**params)
    elapsed = time.perf_counter() - t0
    write_certificate(out, doc)
    return doc, elapsed


def _summary_row(doc: dict, elapsed: float) -> list[str]:
    size = doc["construction"].get("size", {})
    heads = size.get("heads")
    sizes = ",".join(f"{k}={v}" for k, v in sorted(doc["params"].items()) if k != "seed")
    return [
        doc["claim"],
        sizes,
        str(size.get("layers", "-")),
        str(max(heads) if heads else "-"),
        doc["result"]["relation"],
        "yes" if doc["result"]["holds"] else "NO",
        f"{elapsed:.2f}s",
    ]


def _target(out: str | None, default: Path) -> Path | None:
    """Where an output goes: None for ``-`` (standard output), else a path checked before any work.

    A path given must be in an existing folder; only the default's folder (``certificates/``,
    ``models/``, ``plots/`` in the working directory) is made, when the output is written."""
    from attncert.exact.certificate import check_target

    if out == "-":
        return None
    path = Path(out) if out else default
    check_target(path, create_folder=not out)
    return path


def _emit(target: Path | None, data: bytes, create_folder: bool) -> str:
    """Write data to the target (atomically; ``create_folder``: a default output folder) or to standard output;
    say where it went."""
    from attncert.exact.certificate import atomic_write_bytes

    if target is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return "standard output"
    atomic_write_bytes(target, data, create_folder)
    return str(target)


def _print_row(row: list[str], widths: list[int]) -> None:
    cells = [c if len(c) <= w else c[: w - 1] + "~" for c, w in zip(row, widths)]
    print("  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip(), flush=True)


def _print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    for r in [header, ["-" * w for w in widths]] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


_HEADER = ["claim", "sizes", "layers", "max heads", "relation", "holds", "time"]


def _cmd_prove(args: argparse.Namespace) -> int:
    from attncert.exact.certificate import certificate_bytes, check_folder
    from attncert.proofs.cost import refuse_over_limits

    claim = load_claim(args.claim)
    _resolve_sizes(args, claim.params)
    if getattr(args, "every", None) and not getattr(args, "for_all", False):
        raise ParseError("--every goes with --for-all: it quantifies the sizes of a for-all-inputs proof")
    if getattr(args, "for_all", False):
        claim = _for_all(claim, args)
    params = {p.name: getattr(args, p.name) for p in claim.params}
    if params.get("inputs") and claim.build is not None:  # the sizes not given are the input file's
        from attncert.proofs.layout_claims import sizes_from_inputs

        given = getattr(args, "_given", set())
        params.update(sizes_from_inputs(claim, params["inputs"], {k: v for k, v in params.items() if k in given}))
    lim = _limits(args)
    if args.estimate:
        return _print_estimate(claim, params, lim)
    target = _target(args.out, Path("certificates") / f"{claim.name}.json")  # before the work
    refuse_over_limits(claim, params, lim)
    # An exhaustive claim keeps one resumable file per chunk beside its certificate while it runs
    # (CERTIFICATE.chunks/, unless --chunks names a folder): a run cut short resumes from them, and
    # they are removed once the certificate is written.
    beside = "chunks" in params and params["chunks"] is None and target is not None
    if beside:
        params["chunks"] = f"{target}.chunks"
    elif params.get("chunks"):
        check_folder(params["chunks"], create=True)  # the chunks' own folder is made, never the ones above it
    with limits(lim):
        t0 = time.perf_counter()
        doc = claim.prove(**params)
        elapsed = time.perf_counter() - t0
        data = certificate_bytes(doc)  # refused here, with verify's line, if verify at these limits would refuse it
    where = _emit(target, data, not args.out)
    if beside:
        shutil.rmtree(params["chunks"], ignore_errors=True)
    with contextlib.redirect_stdout(sys.stdout if target else sys.stderr):
        _print_table(_HEADER, [_summary_row(doc, elapsed)])
        if claim.summary and (line := claim.summary(doc)):
            print(line)
        print(f"certificate: {where}")
    return EXIT_HOLDS if doc["result"]["holds"] else EXIT_FAILS


def _print_estimate(claim: Claim, params: dict[str, Any], lim: Limits) -> int:
    """``prove --estimate``: the cost model's figures, then whether a run at these limits would go ahead or be
    refused, and by which limits (every one it is over, each with the option that raises it)."""
    from attncert.exact.errors import LimitExceeded
    from attncert.proofs.cost import estimate, refusals

    print(f"{claim.name}: estimate at " + (", ".join(f"{k}={v}" for k, v in params.items() if v is not None) or "its parameters"))
    try:
        cost = estimate(claim, params, lim)
    except LimitExceeded as e:  # a cost model that refuses while it estimates (a target's magnitude, a family's size)
        over = [str(e)]
    else:
        for line in cost.lines():
            print(f"  {line}")
        over = refusals(claim.name, params, cost, lim)
    for line in over:
        print(f"  would be refused: {line}")
    if not over:
        print("  within the limits: the run would go ahead")
    return EXIT_HOLDS


def _for_all(claim: Claim, args: argparse.Namespace) -> Claim:
    """``prove CLAIM --for-all``: the claim CLAIM_identity (docs/identity.md), or with ``--every SIZES``
    CLAIM_every_size (docs/every-size.md); an option of CLAIM that it does not take (a seed, an input file:
    it has no inputs) is refused in one line."""
    identity = load_claim(f"{claim.name}_every_size" if getattr(args, "every", None) else f"{claim.name}_identity")
    kept = {p.name for p in identity.params}
    for p in claim.params:
        if p.name not in kept and getattr(args, p.name) != p.default:
            raise ParseError(f"{_flags(p.name)[0]} does not apply with --for-all: {identity.name} proves the claim for every input of its sizes")
    return identity


def _prove_default(item: tuple[str, str]) -> tuple[str, list[str]]:
    """Prove one claim at its default parameters into ``path``: (name, its summary row). A task of prove-all."""
    name, path = item
    claim = load_claim(name)
    doc, elapsed = _run_claim(claim, claim.defaults(), Path(path))
    return name, _summary_row(doc, elapsed)


def _cmd_prove_all(args: argparse.Namespace) -> int:
    from attncert.exact.certificate import check_target
    from attncert.proofs import execute
    from attncert.proofs.verify import OK, exit_code, verify_file

    claims = [n for n in claim_names() if available(n)]
    for name in claim_names():
        if not available(name):  # an optional extra is not installed: say so, prove the others
            print(f"{name}: skipped, it needs {INDEX[name].needs} (pip install 'attncert[{INDEX[name].needs}]')", flush=True)
    out_dir = Path(args.out_dir)
    default = args.out_dir == PROVE_ALL_FOLDER
    for name in claims:
        check_target(out_dir / f"{name}.json", create_folder=default)  # each checks (and probes) the folder too
    paths = {name: out_dir / f"{name}.json" for name in claims}
    if default:
        out_dir.mkdir(exist_ok=True)
    # The worker processes fork from this one: loaded here, the claims are imported once, not once per worker.
    # The heaviest (by their cost models) go first, so that no long proof starts last and runs alone.
    loaded = load_claims()
    heavy_first = sorted(claims, key=lambda n: -loaded[n].estimate({}).seconds)
    run = execute.local_pool(args.jobs)
    # Rows print in the claims' order, each as soon as it and every claim before it are done;
    # widths are fixed in advance (the sizes column is cut, not the table).
    widths = [max(22, *map(len, claims)), 44, 6, 9, 11, 5, 7]
    _print_row(_HEADER, widths)
    _print_row(["-" * w for w in widths], widths)
    rows: dict[str, list[str]] = {}
    order = iter(claims)
    waiting = next(order, None)
    for name, row in run(_prove_default, [(n, str(paths[n])) for n in heavy_first]):
        rows[name] = row
        while waiting in rows:
            _print_row(rows[waiting], widths)
            waiting = next(order, None)
    print(f"{len(paths)} claims proven at default sizes, certificates in {out_dir}/; verifying them independently:", flush=True)
    done = {o.path: o for o in run(verify_file, [str(paths[n]) for n in heavy_first])}
    outcomes = [done[str(p)] for p in paths.values()]
    for o in outcomes:
        print(o.line())
    bad = [o for o in outcomes if o.status != OK]
    print(f"{len(outcomes) - len(bad)} of {len(outcomes)} certificates verified")
    return exit_code(outcomes)


def _cmd_verify(args: argparse.Namespace) -> int:
    from attncert.proofs.verify import exit_code, verify_bytes, verify_file

    lim = _limits(args)
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


def _flags(name: str) -> list[str]:
    """--max_length is also accepted as --max-length."""
    return [f"--{name}"] + ([f"--{name.replace('_', '-')}"] if "_" in name else [])


GRAPH_FORMATS = {"dot": "graph_to_dot", "json": "graph_to_json", "graphml": "graph_to_graphml"}


def _build_params(claim: Claim) -> list:
    """The claim's parameters that its construction builder takes (sizes, not seeds or files)."""
    if claim.build is None:
        return []
    names = set(inspect.signature(claim.build).parameters)
    return [p for p in claim.params if p.name in names]


def _cmd_graph(args: argparse.Namespace) -> int:
    from attncert.constructions import rasp
    from attncert.constructions.sinkhorn import graph as sinkhorn_graph
    from attncert.exact.canonical import canonical_json
    from attncert.exact.certificate import atomic_write_bytes, check_target
    from attncert.proofs.cost import refuse_over_limits

    claim = load_claim(args.claim)
    if claim.build is None:
        raise AttncertError(f"claim {claim.name} has no RASP construction to export")
    for target in (args.out, args.png):
        if target:
            check_target(target)
    _resolve_sizes(args, _build_params(claim))
    sizes = {p.name: getattr(args, p.name) for p in _build_params(claim)}
    refuse_over_limits(claim, sizes, _limits(args), writes=False)  # the construction is built only at sizes a run may have
    g = claim.build(**sizes).graph()
    # A Sinkhorn Transformer's graph has its own ops (encoder layers, cost, Sinkhorn) and its own exporters.
    exporter = sinkhorn_graph if g.graph.get("format") == sinkhorn_graph.GRAPH_FORMAT else rasp
    if args.format == "json":
        text = canonical_json(exporter.graph_to_json(g)).decode() + "\n"
    else:
        text = getattr(exporter, GRAPH_FORMATS[args.format])(g)
    if args.png:
        dot = shutil.which("dot")
        if dot is None:
            raise AttncertError("--png needs Graphviz's dot program, which is not installed (apt-get install graphviz)")
        done = subprocess.run([dot, "-Tpng", "-o", args.png], input=exporter.graph_to_dot(g), text=True, capture_output=True)
        if done.returncode != 0:
            raise AttncertError(f"dot failed: {done.stderr.strip().splitlines()[0] if done.stderr.strip() else done.returncode}")
    if args.out:
        atomic_write_bytes(args.out, text.encode())
    elif not args.png:
        sys.stdout.write(text)
    return EXIT_HOLDS


def _cmd_compile(args: argparse.Namespace) -> int:
    from attncert.constructions.compiler.export import to_npz
    from attncert.constructions.compiler.model import model_to_json
    from attncert.exact.canonical import canonical_json

    user = args.file is not None or args.program is not None
    if user:
        name, model = _compile_user_program(args)
    else:
        name, model = _compile_construction(args)
    where = _emit(args.target, to_npz(model) if args.format == "npz" else canonical_json(model_to_json(model)) + b"\n", not args.out)
    s = model.summary()
    print(
        f"{name}: {s['layers']} layers, heads {s['heads']}, "
        f"width {s['width']}, {s['parameters']:,} nonzero parameters, sequence length {model.length}; "
        f"checked: {model.checked.describe()}; written to {where}",
        file=sys.stdout if args.target else sys.stderr,
    )
    return EXIT_HOLDS


def _compile_construction(args: argparse.Namespace) -> tuple[str, Any]:
    from attncert.proofs import compiled
    from attncert.proofs.cost import check as check_cost

    if args.of is None:
        raise ParseError("compile needs a construction (e.g. universal), --file F.rasp or --program MODULE:FUNCTION")
    for flag_, given in (("--vocab", args.vocab), ("--max-seq-len", args.max_seq_len), ("--expr", args.expr), ("--lengths", args.lengths), ("--causal", args.causal or None)):
        if given is not None:
            raise ParseError(f"{flag_} is for a program of your own (--file or --program), not the construction {args.of}")
    args.target = _target(args.out, Path("models") / f"{args.of}.{args.format}")
    # Compiling builds the construction and its positional table, then checks the model: forward passes of every (query, key) pair.
    sizes = compiled.parse_sizes(args.of, _construction_sizes(args))  # refuses an unknown construction or size first
    lim = _limits(args)
    check_cost(f"compile {args.of}", sizes, compiled.compile_cost(args.of, sizes), lim)
    with limits(lim):
        _, model = compiled.compile_construction(args.of, sizes)
    return f"{args.of} ({compiled.canonical_sizes(sizes)})", model


def _compile_user_program(args: argparse.Namespace) -> tuple[str, Any]:
    from attncert.proofs import user_programs

    if args.of is not None:
        raise ParseError(f"give a construction ({args.of}) or a program of your own (--file/--program), not both")
    user_programs.check_sources(args.file, args.expr, args.program)
    if args.sizes or any(k.startswith(_SIZE) and v is not None for k, v in vars(args).items()):
        raise ParseError("--sizes is for a construction; a program of your own takes --vocab and --max-seq-len")
    if args.vocab is None or args.max_seq_len is None:
        raise ParseError("a program of your own needs --vocab a,b,c and --max-seq-len N")
    vocab = user_programs.parse_vocab(args.vocab)
    name = args.expr or (Path(args.file).stem if args.file is not None else user_programs.program_spec(args.program)[1])
    args.target = _target(args.out, Path("models") / f"{name}.{args.format}")
    lim = _limits(args)
    with limits(lim):
        sop = user_programs.file_program(args.file, args.expr) if args.file is not None else user_programs.attncert_program(user_programs.call_program(args.program), args.program)
        model = user_programs.compile_program(sop, vocab, args.max_seq_len, args.lengths or "fixed", args.causal)
    return f"{name} (vocab {','.join(map(str, vocab))}, max_seq_len {args.max_seq_len})", model


def _cmd_rasp(args: argparse.Namespace) -> int:
    from attncert.constructions.rasp.language import session
    from attncert.constructions.rasp.language.interpreter import read_e_literal
    from attncert.constructions.rasp.language.sources import read_source

    e_literals = frozenset(read_e_literal(t) for t in args.e_literal)
    if args.decimals is not None and args.decimals > args.max_digits:  # mpmath would work at that many digits
        raise ParseError(f"--decimals {args.decimals:,}: more than the digit limit of {args.max_digits:,} (raise it with --max-digits)")
    if args.file is None and args.eval is None:
        from attncert.constructions.rasp.language import terminal
        from attncert.proofs.plots.selection import patterns_png

        with limits(_limits(args)):
            # fractions with a decimal view beside them, unless --decimals chose the digits
            failed = terminal.run(sys.stdout, sys.stderr, args.decimals or session.REPL_DECIMALS, e_literals, session.labels([], tuple(args.e_literal)), patterns_png)
        if failed and not terminal.interactive():  # piped statements that failed fail the run
            raise AttncertError(f"{failed} statement{'s' if failed != 1 else ''} of the input failed (above)")
        return EXIT_HOLDS
    with limits(_limits(args)):
        source = read_source(args.file) if args.file else ""
        example = session.read_input(args.input) if args.input is not None else None
        outcome = session.run_program(source, args.file or "<eval>", args.eval, example, e_literals)
    for line in outcome.labels(tuple(args.e_literal)):
        print(line)
    print(session.show(outcome.value, args.decimals))
    return EXIT_HOLDS


#: Claims with a plot: name -> the module function giving PNG bytes from a certificate.
PLOTS = {
    "lipschitz_rates": ("attncert.proofs.approximation.plot", "rates_png"),
    "sinkhorn_universality": ("attncert.proofs.sinkhorn.plot", "universality_png"),
    "sinkhorn_transformer": ("attncert.proofs.sinkhorn.plot", "coupling_png"),
    "sinkhorn_convergence": ("attncert.proofs.sinkhorn.plot", "convergence_png"),
    "compiled_softmax": ("attncert.proofs.plots.compiled_softmax", "softmax_bound_png"),
    "rasp_program": ("attncert.proofs.rasp_program", "selections_png"),
}


def _cmd_plot(args: argparse.Namespace) -> int:
    import importlib

    from attncert.exact.certificate import read_certificate
    from attncert.proofs.cost import refuse_over_limits
    from attncert.proofs.verify import OK, verify_file

    claim = load_claim(args.claim)
    _resolve_sizes(args, claim.params)
    target = _target(args.out, Path("plots") / f"{claim.name}.png")  # before the work
    lim = _limits(args)
    if args.certificate:
        outcome = verify_file(args.certificate, lim)
        if outcome.status != OK:
            raise AttncertError(f"{args.certificate} does not verify ({outcome.status}: {outcome.reason}); not plotting it")
        doc = read_certificate(args.certificate)
        if doc["claim"] != claim.name:
            raise AttncertError(f"{args.certificate} is a {doc['claim']} certificate, not {claim.name}")
    else:
        params = {p.name: getattr(args, p.name) for p in claim.params}
        refuse_over_limits(claim, params, lim, writes=False)  # the plot is written, not the certificate
        with limits(lim):
            doc = claim.prove(**params)
    module, function = PLOTS[claim.name]
    where = _emit(target, getattr(importlib.import_module(module), function)(doc), not args.out)
    print(f"{claim.name}: plot written to {where}", file=sys.stdout if target else sys.stderr)
    return EXIT_HOLDS if doc["result"]["holds"] else EXIT_FAILS


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("attncert")
    except PackageNotFoundError:
        return "0+unknown"


def _note(message: str) -> None:
    print(f"attncert: note: {message}", file=sys.stderr)


def _cmd_sweep(args: argparse.Namespace) -> int:
    from attncert.exact.certificate import check_folder
    from attncert.proofs import execute, sweep
    from attncert.proofs.cost import check as check_cost
    from attncert.proofs.cost import estimate, parsed

    default = args.out_dir == SWEEP_FOLDER
    check_folder(args.out_dir, create=default)  # an existing file there is refused as "not a folder"
    lim = _limits(args)
    given = [f"{k[len(_SIZE) :]}={v}" for k, v in vars(args).items() if k.startswith(_SIZE) and v is not None]
    plan = sweep.plan(args.claims, args.seeds, args.size + given, args.out_dir, lim)
    for task in plan.tasks:  # every task within the limits before any is run
        claim = load_claim(task.claim)
        try:
            params = parsed(claim, dict(task.params))
        except AttncertError:
            continue  # an invalid value is that task's BAD result, reported by the sweep
        check_cost(claim.name, params, estimate(claim, params, lim), lim)
    for note in plan.notes:
        _note(note)
    if default:
        Path(args.out_dir).mkdir(exist_ok=True)
    runner = execute.runner_for(args.jobs, args.scheduler, _note)
    where = f"on the Dask cluster at {args.scheduler}" if args.scheduler else f"with {workers.cap(args.jobs, len(plan.tasks))} process(es)"
    print(f"sweep: {len(plan.tasks)} task(s) {where}; certificates in {args.out_dir}", flush=True)
    t0 = time.perf_counter()
    results = sweep.run_tasks(plan.tasks, runner, progress=None if not args.no_progress else False)
    _print_table(sweep.SUMMARY_HEADER, sweep.summary(results, [t.claim for t in plan.tasks]))
    for line in sweep.problems(results):
        print(line)
    print(f"{sweep.closing_line(results)}; wall time {time.perf_counter() - t0:.2f}s")
    return sweep.exit_code(results)


def _claim_options(cp: argparse.ArgumentParser, params: Sequence[Any]) -> None:
    for prm in params:
        if prm.type is flag:  # a switch: present or not
            cp.add_argument(*_flags(prm.name), dest=prm.name, action="store_true", help=prm.help)
            continue
        cp.add_argument(*_flags(prm.name), dest=prm.name, type=_option(prm.type), default=prm.default, action=_Once, help=f"{prm.help} (default: {prm.default})")


# Sizes have one spelling on every verb, in two forms: --n 4 --d 3 (a claim's parameters, or a compiled
# construction's sizes) and --sizes n=4,d=3 (proofs.params.size_values). For sweep a size takes several
# values, a task each (--n 2,3 or --sizes n=2,3); elsewhere the values after NAME= are its one value's text.
_SIZE = "size__"  # the dest prefix of a construction's (compile, the compiled claims) or a sweep's size options


def _sizes_option(cp: argparse.ArgumentParser, example: str = "n=4,d=3") -> None:
    cp.add_argument("--sizes", dest="size_spec", metavar="NAME=V,...", action=_Once, help=f"the same as --NAME V for each, e.g. {example}")


def _compiles(params: Sequence[Any]) -> bool:
    """Whether a claim's parameters name a construction and its sizes (the compiled claims): its own --sizes
    is the construction's, and the construction's sizes are options too."""
    return {"of", "sizes"} <= {p.name for p in params}


def _construction_size_options(cp: argparse.ArgumentParser, of: str | None) -> None:
    """--NAME for each size of the construction ``of`` (an unknown one is refused when the verb runs)."""
    from attncert.proofs import compiled

    try:
        declared = compiled.size_params(of or "")
    except ParseError:
        return
    for prm in declared.values():
        cp.add_argument(*_flags(prm.name), dest=_SIZE + prm.name, metavar="V", type=_option(prm.type), action=_Once, help=f"{prm.help} (default: {prm.default}; also --sizes {prm.name}=V)")


def _construction_sizes(args: argparse.Namespace) -> str:
    """The construction's sizes as one text for proofs.compiled.parse_sizes: --sizes and the --NAME options."""
    given = {k[len(_SIZE) :]: v for k, v in vars(args).items() if k.startswith(_SIZE) and v is not None}
    spelt = size_values(args.sizes) if str(args.sizes).strip() else {}
    for name in given.keys() & spelt.keys():
        raise ParseError(f"--sizes {name}=... and --{name} both give {name}; give it once")
    return ",".join([t for t in [str(args.sizes).strip()] if t] + [f"{k}={v}" for k, v in given.items()])


def _resolve_sizes(args: argparse.Namespace, params: Sequence[Any]) -> None:
    """Apply --sizes NAME=V,... to the parameters as --NAME V would (each once); a compiled claim's
    construction sizes (--NAME) join its own --sizes."""
    if _compiles(params):
        args.sizes = _construction_sizes(args)
        return
    spec = getattr(args, "size_spec", None)
    if spec is None:
        return
    declared = {p.name: p for p in params}
    given = args.__dict__.setdefault("_given", set())
    for name, values in size_values(spec).items():
        if name not in declared:
            raise ParseError(f"--sizes: {args.claim} has no parameter {name!r} (it takes {', '.join(declared) or 'none'})")
        if name in given:
            raise ParseError(f"--sizes {name}=... and --{name} both give {name}; give it once")
        setattr(args, name, declared[name].type(",".join(values)))
        given.add(name)


def _claim_size_options(cp: argparse.ArgumentParser, params: Sequence[Any], argv: Sequence[str]) -> None:
    """The second form of a claim's sizes: --sizes, or for a compiled claim the construction's --NAME."""
    if _compiles(params):
        default = next(p.default for p in params if p.name == "of")
        _construction_size_options(cp, _value_of(argv, "--of") or default)
    else:
        _sizes_option(cp)


def _value_of(argv: Sequence[str], option: str) -> str | None:
    """The value given to ``option`` in ``argv`` (``--of X`` or ``--of=X``), if any."""
    for i, tok in enumerate(argv):
        if tok == option and i + 1 < len(argv):
            return argv[i + 1]
        if tok.startswith(option + "="):
            return tok[len(option) + 1 :]
    return None


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
        sp.add_argument(*_flags(prm.name), dest=_SIZE + prm.name, action=_Once, metavar="V1,V2,...", help=f"values of {prm.name}, a task each (also --sizes {prm.name}=V1,V2)")


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser; the options of a claim are added for the claim named in ``argv`` only."""
    verb, chosen = _selected(argv)
    p = _Parser(prog="attncert", description="Exact-arithmetic proof checker for what transformers can express.")
    p.words = (verb, chosen)  # type: ignore[attr-defined]  # for an error's suggestions (_suggestion)
    p.add_argument("-V", "--version", action="version", version=f"attncert {_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    sp = sub.add_parser("list", help="list the claims that can be proven")
    sp.set_defaults(func=_cmd_list)

    def prove_options(cp: argparse.ArgumentParser, claim: Claim) -> None:
        _claim_options(cp, claim.params)
        _claim_size_options(cp, claim.params, argv)
        cp.add_argument("--out", action=_Once, help="certificate path, or - for standard output (default: certificates/CLAIM.json)")
        cp.add_argument("--estimate", action="store_true", help="print what the run would compute (sizes, rough time and memory) and stop")
        if f"{claim.name}_identity" in INDEX:
            cp.add_argument(
                "--for-all", action="store_true",
                help=f"prove it for all inputs of these sizes, exactly, as {claim.name}_identity (docs/identity.md)",
            )  # fmt: skip
        if f"{claim.name}_every_size" in INDEX:
            cp.add_argument(
                "--every", metavar="SIZES", action=_Once,
                help=f"with --for-all: for every value of these sizes (e.g. n,d,dv; the others as given), as {claim.name}_every_size (docs/every-size.md)",
            )  # fmt: skip
        _add_limits(cp, COST_LIMITS, DOCUMENT_LIMITS, RASP_LIMITS if claim.interprets else ())

    sp = sub.add_parser("prove", help="prove one claim and write its certificate")
    claims_sub = sp.add_subparsers(dest="claim", metavar="CLAIM", parser_class=_Parser)
    claims_sub.required = True
    _claim_parsers(claims_sub, list(INDEX), chosen if verb == "prove" else None, prove_options)
    sp.set_defaults(func=_cmd_prove)

    def graph_options(cp: argparse.ArgumentParser, claim: Claim) -> None:
        _claim_options(cp, _build_params(claim))
        _sizes_option(cp)
        cp.add_argument("--format", choices=sorted(GRAPH_FORMATS), default="dot", action=_Once, help="output format (default: dot)")
        cp.add_argument("--out", action=_Once, help="write to FILE instead of standard output")
        cp.add_argument("--png", metavar="FILE", action=_Once, help="also render a PNG with Graphviz's dot")
        _add_limits(cp, COST_LIMITS)

    sp = sub.add_parser("graph", help="export a claim's RASP construction graph (dot, json, graphml, png)")
    graph_sub = sp.add_subparsers(dest="claim", metavar="CLAIM", parser_class=_Parser)
    graph_sub.required = True
    _claim_parsers(graph_sub, [n for n, e in INDEX.items() if e.graph], chosen if verb == "graph" else None, graph_options)
    sp.set_defaults(func=_cmd_graph)

    sp = sub.add_parser("compile", help="compile a matrix construction, or a RASP program of your own, to exact transformer weights (JSON, or float64 npz)")
    sp.add_argument("of", metavar="CLAIM", nargs="?", help="the construction: transpose, matmul, softmax, relu, maxmin, inverse3, universal, multihead, encoder_layer, or a language readout: match2, parity")
    sp.add_argument("--file", metavar="F.rasp", action=_Once, help="instead of a construction: a program in the RASP language (docs/rasp-language.md)")
    sp.add_argument("--expr", metavar="NAME", action=_Once, help="the SOp of --file to compile (default: its last statement)")
    sp.add_argument("--program", metavar="MODULE:FUNCTION", action=_Once, help="instead of a construction: FUNCTION() of a Python module or .py file returns an attncert or tracr RASP program (runs your code)")
    sp.add_argument("--vocab", metavar="a,b,c", action=_Once, help="the tokens of --file/--program, categorical (an item spelled as an integer is the integer)")
    sp.add_argument("--max-seq-len", type=_option(positive_int), metavar="N", action=_Once, help="the sequence length of --file/--program")
    sp.add_argument("--lengths", choices=["fixed", "every"], default=None, action=_Once, help="--file/--program: a model for exactly N tokens (fixed, the default) or one for every length 1..N (every)")
    sp.add_argument("--causal", action="store_true", help="--file/--program: causal attention, tracr's causal semantics")
    sp.add_argument("--sizes", default="", action=_Once, help="its sizes, e.g. n=4,d=3,dv=2, the same as --n 4 --d 3 --dv 2 (the construction's defaults for the rest)")
    if verb == "compile" and chosen:
        _construction_size_options(sp, chosen)
    sp.add_argument("--format", choices=["json", "npz"], default="json", action=_Once, help="exact JSON weights (default) or float64 arrays")
    sp.add_argument("--out", action=_Once, help="output file, or - for standard output (default: models/CLAIM.json or .npz)")
    _add_limits(sp, COST_LIMITS)
    sp.set_defaults(func=_cmd_compile)

    sp = sub.add_parser("rasp", help="run a program in the RASP language exactly (no FILE and no --eval: a REPL)")
    sp.add_argument("file", nargs="?", metavar="FILE.rasp")
    sp.add_argument("--eval", metavar="EXPR", action=_Once, help="the expression to show (default: the file's last statement)")
    sp.add_argument("--input", metavar="INPUT", action=_Once, help="the input: a JSON list (numbers read exactly) or a string of tokens")
    sp.add_argument("--decimals", type=_option(positive_int), action=_Once, help="also show each number with this many significant digits (≈)")
    sp.add_argument(
        "--e-literal", action="append", default=[], metavar="DECIMAL", help="read this decimal literal as the constant e, exactly (repeatable; recorded in the output; off by default)"
    )
    _add_limits(sp, RASP_LIMITS)
    sp.set_defaults(func=_cmd_rasp)

    def plot_options(cp: argparse.ArgumentParser, claim: Claim) -> None:
        _claim_options(cp, claim.params)
        _claim_size_options(cp, claim.params, argv)
        cp.add_argument("--certificate", metavar="FILE", action=_Once, help="plot this certificate (verified first) instead of proving")
        cp.add_argument("--out", action=_Once, help="PNG path, or - for standard output (default: plots/CLAIM.png)")
        _add_limits(cp, COST_LIMITS)

    sp = sub.add_parser("plot", help="draw a certificate as a PNG: error against width, bound against eps or beta, a coupling, selection patterns")
    plot_sub = sp.add_subparsers(dest="claim", metavar="CLAIM", parser_class=_Parser)
    plot_sub.required = True
    _claim_parsers(plot_sub, list(PLOTS), chosen if verb == "plot" else None, plot_options)
    sp.set_defaults(func=_cmd_plot)

    sp = sub.add_parser("verify", help="re-check certificates independently (exit 0 all hold, 1 one fails, 2 malformed)")
    sp.add_argument("files", nargs="+", metavar="FILE", help="a certificate, a folder (every .json file below it), or - (standard input)")
    _add_limits(sp, DOCUMENT_LIMITS, COST_LIMITS, RASP_LIMITS)
    sp.set_defaults(func=_cmd_verify)

    sp = sub.add_parser("prove-all", help="prove every claim at default sizes, print a summary, verify the certificates")
    sp.add_argument("--out-dir", default=PROVE_ALL_FOLDER, action=_Once, help=f"an existing folder for the certificates (default: {PROVE_ALL_FOLDER}, made if missing)")
    sp.add_argument(
        "--jobs", type=_option(positive_int), default=workers.MAX_PROCESSES, action=_Once,
        help=f"processes proving and verifying claims side by side (default: one per core, here {workers.MAX_PROCESSES})",
    )  # fmt: skip
    sp.set_defaults(func=_cmd_prove_all)

    sp = sub.add_parser("sweep", help="prove claims over many seeds and sizes in parallel (resumable), then summarize")
    sp.add_argument("claims", nargs="+", metavar="CLAIM")
    sp.add_argument("--seeds", action=_Once, help="seeds: a range 0-9, a list 0,3,7, or both (default: each claim's default seed)")
    sp.add_argument(
        "--sizes", "--size", dest="size", action="append", default=[], metavar="NAME=V1,V2,...",
        help="values of parameters, a task each (repeatable), e.g. --sizes n=2,3,4,d=2; the same as --n 2,3,4 --d 2",
    )  # fmt: skip
    if verb == "sweep":
        _sweep_size_options(sp, argv)
    sp.add_argument("--out-dir", default=SWEEP_FOLDER, action=_Once, help=f"an existing folder for the certificates (default: {SWEEP_FOLDER}, made if missing)")
    sp.add_argument("--jobs", type=_option(positive_int), action=_Once, default=os.cpu_count() or 1, help="local processes; 1 runs in this process (default: number of CPUs)")
    sp.add_argument("--scheduler", metavar="ADDRESS", action=_Once, help="run on the Dask distributed cluster at ADDRESS instead (needs dask[distributed])")
    sp.add_argument("--no-progress", action="store_true", help="no progress bar (it is shown only when stderr is a terminal)")
    _add_limits(sp, COST_LIMITS, DOCUMENT_LIMITS, SWEEP_LIMITS)
    sp.set_defaults(func=_cmd_sweep)
    return p


def _program_claim(words: list[str]) -> list[str]:
    """``prove compiled --file F`` / ``--program M:F`` proves compiled_program: the compiled claim of a
    program of your own (a construction's compiled claim takes neither option)."""
    verb, chosen = _selected(words)
    own = any(w.split("=", 1)[0] in ("--file", "--program") for w in words)
    if verb in ("prove", "sweep") and chosen == "compiled" and own:
        words = list(words)
        words[words.index("compiled")] = "compiled_program"
    return words


def main(argv: Sequence[str] | None = None) -> int:
    # Ctrl-C and SIGTERM end a run in order: worker processes stopped, one line, 130 or 143. Run as
    # the program (argv None), a second signal during the shutdown ends it at once, as quietly.
    with orderly_signals("attncert", keep_after_signal=argv is None) as stopped:
        try:
            words = _program_claim(list(sys.argv[1:] if argv is None else argv))
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


if __name__ == "__main__":
    sys.exit(main())
