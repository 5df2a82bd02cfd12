"""The ``attncert`` command line (DESIGN.md, "Command line").

Exit codes: 0 the claim holds, 1 it does not, 2 bad input. A user error prints
one line on stderr and never a traceback.
"""

from __future__ import annotations

import argparse
import inspect
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

from exact.certificate import atomic_write_bytes, write_certificate
from exact.errors import AttncertError
from proofs.certify import package_version
from exact.limits import Limits
from proofs.registry import Claim, load_claims
from proofs.verify import OK, exit_code, verify_file

EXIT_HOLDS, EXIT_FAILS, EXIT_BAD_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse prints usage too)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _cmd_list(args: argparse.Namespace) -> int:
    claims = load_claims()
    if not claims:
        print("no claims are registered yet")
        return EXIT_HOLDS
    width = max(map(len, claims))
    for name, claim in sorted(claims.items()):
        print(f"{name:<{width}}  {claim.statement}")
    return EXIT_HOLDS


def _run_claim(claim: Claim, params: dict, out: Path) -> tuple[dict, float]:
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


def _print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    for r in [header, ["-" * w for w in widths]] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


_HEADER = ["claim", "sizes", "layers", "max heads", "relation", "holds", "time"]


def _cmd_prove(args: argparse.Namespace) -> int:
    claim: Claim = args.claim_obj
    params = {p.name: getattr(args, p.name) for p in claim.params}
    out = Path(args.out) if args.out else Path("certificates") / f"{claim.name}.json"
    doc, elapsed = _run_claim(claim, params, out)
    _print_table(_HEADER, [_summary_row(doc, elapsed)])
    print(f"certificate: {out}")
    return EXIT_HOLDS if doc["result"]["holds"] else EXIT_FAILS


def _cmd_prove_all(args: argparse.Namespace) -> int:
    claims = load_claims()
    out_dir = Path(args.out_dir)
    rows, paths = [], []
    for name, claim in claims.items():
        path = out_dir / f"{name}.json"
        doc, elapsed = _run_claim(claim, claim.defaults(), path)
        rows.append(_summary_row(doc, elapsed))
        paths.append(path)
    _print_table(_HEADER, rows)
    print(f"{len(rows)} claims proven at default sizes, certificates in {out_dir}/; verifying them independently:")
    outcomes = [verify_file(p) for p in paths]
    for o in outcomes:
        print(o.line())
    bad = [o for o in outcomes if o.status != OK]
    print(f"{len(outcomes) - len(bad)} of {len(outcomes)} certificates verified")
    return exit_code(outcomes)


def _cmd_verify(args: argparse.Namespace) -> int:
    lim = Limits(
        max_bytes=args.max_bytes, max_digits=args.max_digits, max_exponent=args.max_exponent, max_entries=args.max_entries
    )
    outcomes = []
    for path in args.files:
        o = verify_file(path, lim)
        print(o.line(), flush=True)
        outcomes.append(o)
    return exit_code(outcomes)


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
    from constructions import rasp
    from exact.canonical import canonical_json

    claim: Claim = args.claim_obj
    if claim.build is None:
        raise AttncertError(f"claim {claim.name} has no RASP construction to export")
    sizes = {p.name: getattr(args, p.name) for p in _build_params(claim)}
    g = claim.build(**sizes).graph()
    if args.format == "json":
        text = canonical_json(rasp.graph_to_json(g)).decode() + "\n"
    else:
        text = getattr(rasp, GRAPH_FORMATS[args.format])(g)
    if args.png:
        dot = shutil.which("dot")
        if dot is None:
            raise AttncertError("--png needs Graphviz's dot program, which is not installed (apt-get install graphviz)")
        done = subprocess.run([dot, "-Tpng", "-o", args.png], input=rasp.graph_to_dot(g), text=True, capture_output=True)
        if done.returncode != 0:
            raise AttncertError(f"dot failed: {done.stderr.strip().splitlines()[0] if done.stderr.strip() else done.returncode}")
    if args.out:
        atomic_write_bytes(args.out, text.encode())
    elif not args.png:
        sys.stdout.write(text)
    return EXIT_HOLDS


def _note(message: str) -> None:
    print(f"attncert: note: {message}", file=sys.stderr)


def _cmd_sweep(args: argparse.Namespace) -> int:
    from proofs import sweep

    plan = sweep.plan(args.claims, args.seeds, args.size, args.out_dir)
    for note in plan.notes:
        _note(note)
    execute = sweep.executor_for(args.jobs, args.scheduler, _note)
    where = f"on the Dask cluster at {args.scheduler}" if args.scheduler else f"with {min(args.jobs, len(plan.tasks))} process(es)"
    print(f"sweep: {len(plan.tasks)} task(s) {where}; certificates in {args.out_dir}", flush=True)
    t0 = time.perf_counter()
    results = sweep.run_tasks(plan.tasks, execute, progress=not args.no_progress and sys.stderr.isatty())
    _print_table(sweep.SUMMARY_HEADER, sweep.summary(results, [t.claim for t in plan.tasks]))
    for line in sweep.problems(results):
        print(line)
    held = sum(r.status in (sweep.OK, sweep.SKIPPED) for r in results)
    print(f"{held} of {len(results)} certificates hold; wall time {time.perf_counter() - t0:.2f}s")
    return sweep.exit_code(results)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="attncert", description="Exact-arithmetic proof checker for what transformers can express.")
    p.add_argument("--version", action="version", version=f"attncert {package_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    sp = sub.add_parser("list", help="list the claims that can be proven")
    sp.set_defaults(func=_cmd_list)

    sp = sub.add_parser("prove", help="prove one claim and write its certificate")
    claims_sub = sp.add_subparsers(dest="claim", metavar="CLAIM", parser_class=_Parser)
    claims_sub.required = True
    for name, claim in sorted(load_claims().items()):
        cp = claims_sub.add_parser(name, help=claim.statement)
        for prm in claim.params:
            cp.add_argument(*_flags(prm.name), dest=prm.name, type=prm.type, default=prm.default, help=f"{prm.help} (default: {prm.default})")
        cp.add_argument("--out", help="certificate path (default: certificates/CLAIM.json)")
        cp.set_defaults(func=_cmd_prove, claim_obj=claim)

    sp = sub.add_parser("graph", help="export a claim's RASP construction graph (dot, json, graphml, png)")
    graph_sub = sp.add_subparsers(dest="claim", metavar="CLAIM", parser_class=_Parser)
    graph_sub.required = True
    for name, claim in sorted(load_claims().items()):
        if claim.build is None:
            continue
        cp = graph_sub.add_parser(name, help=claim.statement)
        for prm in _build_params(claim):
            cp.add_argument(*_flags(prm.name), dest=prm.name, type=prm.type, default=prm.default, help=f"{prm.help} (default: {prm.default})")
        cp.add_argument("--format", choices=sorted(GRAPH_FORMATS), default="dot", help="output format (default: dot)")
        cp.add_argument("--out", help="write to FILE instead of standard output")
        cp.add_argument("--png", metavar="FILE", help="also render a PNG with Graphviz's dot")
        cp.set_defaults(func=_cmd_graph, claim_obj=claim)

    sp = sub.add_parser("verify", help="re-check certificates independently (exit 0 all hold, 1 one fails, 2 malformed)")
    sp.add_argument("files", nargs="+", metavar="FILE")
    d = Limits()
    sp.add_argument("--max-bytes", type=int, default=d.max_bytes, help=f"largest document (default {d.max_bytes})")
    sp.add_argument("--max-digits", type=int, default=d.max_digits, help=f"digits per numerator/denominator (default {d.max_digits})")
    sp.add_argument("--max-exponent", type=int, default=d.max_exponent, help=f"largest |q| in e^q (default {d.max_exponent})")
    sp.add_argument("--max-entries", type=int, default=d.max_entries, help=f"entries per matrix (default {d.max_entries})")
    sp.set_defaults(func=_cmd_verify)

    sp = sub.add_parser("prove-all", help="prove every claim at default sizes, print a summary, verify the certificates")
    sp.add_argument("--out-dir", default="certificates", help="folder for the certificates (default: certificates)")
    sp.set_defaults(func=_cmd_prove_all)

    sp = sub.add_parser("sweep", help="prove claims over many seeds and sizes in parallel (resumable), then summarize")
    sp.add_argument("claims", nargs="+", metavar="CLAIM")
    sp.add_argument("--seeds", help="seeds: a range 0-9, a list 0,3,7, or both (default: each claim's default seed)")
    sp.add_argument("--size", action="append", default=[], metavar="NAME=V1,V2,...", help="values of one parameter (repeatable), e.g. --size n=2,3,4")
    sp.add_argument("--out-dir", default="sweeps", help="folder for the certificates (default: sweeps)")
    sp.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="local processes; 1 runs in this process (default: number of CPUs)")
    sp.add_argument("--scheduler", metavar="ADDRESS", help="run on the Dask distributed cluster at ADDRESS instead (needs dask[distributed])")
    sp.add_argument("--no-progress", action="store_true", help="no progress bar (it is shown only when stderr is a terminal)")
    sp.set_defaults(func=_cmd_sweep)
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
