"""``attncert prove-all``: every claim at its default sizes, proven in parallel, then every certificate verified;
the few whose index entry leaves them out of the main job for their time (``Entry.in_prove_all``) with ``--all``."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from attncert.proofs.cli import output
from attncert.proofs.core.registry import INDEX, Claim, available, claim_names, load_claim, load_claims

#: The default output folder, made in the working directory if missing (the one folder prove-all makes).
PROVE_ALL_FOLDER = "certificates"


def _run_claim(claim: Claim, params: dict, out: Path) -> tuple[dict, float]:
    from attncert.exact.certificate import write_certificate

    t0 = time.perf_counter()
    doc = claim.prove(**params)
    elapsed = time.perf_counter() - t0
    write_certificate(out, doc)
    return doc, elapsed


def _prove_default(item: tuple[str, str]) -> tuple[str, list[str]]:
    """Prove one claim at its default parameters into ``path``: (name, its summary row). A task of prove-all."""
    name, path = item
    claim = load_claim(name)
    doc, elapsed = _run_claim(claim, claim.defaults(), Path(path))
    return name, output.summary_row(doc, elapsed)


def cmd_prove_all(args: argparse.Namespace) -> int:
    from attncert.exact.certificate import check_target
    from attncert.proofs.core import execute
    from attncert.proofs.core.verify import OK, exit_code, verify_file

    claims = [n for n in claim_names() if available(n) and (args.all or INDEX[n].in_prove_all)]
    left = [n for n in claim_names() if not args.all and not INDEX[n].in_prove_all]
    if left:  # slower theorems (each 8-16 s of CPU to prove and verify): said, not proven
        print(f"{', '.join(left)}: left out, prove-all --all proves them too", flush=True)
    for name in claim_names():
        if not available(name):  # an optional extra is not installed: say so, prove the others
            # attncert is not on a package index: the extra is installed from the clone
            print(f"{name}: skipped, it needs {INDEX[name].needs} (pip install '.[{INDEX[name].needs}]' in attncert's folder)", flush=True)
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
    output.print_row(output.HEADER, widths)
    output.print_row(["-" * w for w in widths], widths)
    rows: dict[str, list[str]] = {}
    order = iter(claims)
    waiting = next(order, None)
    for name, row in run(_prove_default, [(n, str(paths[n])) for n in heavy_first]):
        rows[name] = row
        while waiting in rows:
            output.print_row(rows[waiting], widths)
            waiting = next(order, None)
    print(f"{len(paths)} claims proven at default sizes, certificates in {out_dir}/; verifying them independently:", flush=True)
    done = {o.path: o for o in run(verify_file, [str(paths[n]) for n in heavy_first])}
    outcomes = [done[str(p)] for p in paths.values()]
    for o in outcomes:
        print(o.line())
    bad = [o for o in outcomes if o.status != OK]
    print(f"{len(outcomes) - len(bad)} of {len(outcomes)} certificates verified")
    return exit_code(outcomes)
