"""``attncert sweep CLAIM...``: claims over many seeds and sizes, in local processes or on a Dask cluster,
resumable (the machinery is proofs/core/sweep.py and proofs/core/execute.py), then a summary."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from attncert.exact.errors import AttncertError
from attncert.proofs.core import workers
from attncert.proofs.cli import output
from attncert.proofs.cli.options import SIZE, limits_of
from attncert.proofs.core.registry import load_claim

#: The default output folder, made in the working directory if missing (the one folder sweep makes).
SWEEP_FOLDER = "sweeps"


def _note(message: str) -> None:
    print(f"attncert: note: {message}", file=sys.stderr)


def cmd_sweep(args: argparse.Namespace) -> int:
    from attncert.exact.certificate import check_folder
    from attncert.proofs.core import execute, sweep
    from attncert.proofs.core.cost import check as check_cost
    from attncert.proofs.core.cost import estimate, parsed

    default = args.out_dir == SWEEP_FOLDER
    check_folder(args.out_dir, create=default)  # an existing file there is refused as "not a folder"
    lim = limits_of(args)
    given = [f"{k[len(SIZE) :]}={v}" for k, v in vars(args).items() if k.startswith(SIZE) and v is not None]
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
    output.print_table(sweep.SUMMARY_HEADER, sweep.summary(results, [t.claim for t in plan.tasks]))
    for line in sweep.problems(results):
        print(line)
    print(f"{sweep.closing_line(results)}; wall time {time.perf_counter() - t0:.2f}s")
    return sweep.exit_code(results)
