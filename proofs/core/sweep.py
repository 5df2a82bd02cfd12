"""``attncert sweep``: prove many seeds x sizes of one or more claims in parallel.

A sweep is planned in the parent (:func:`plan`): one :class:`Task` per claim and
combination of seeds and ``--size`` values, each with a certificate path that
depends only on the claim and those values, so that a second run finds the
certificates of the first. Every task then runs :func:`run_task` somewhere (in
this process, in a local process pool, or on a Dask cluster): it re-checks an
existing certificate and stops there if it still verifies (that is what makes a
sweep resumable), otherwise it proves the claim, writes the certificate
atomically and verifies the file independently. The three ways of running differ
only in how tasks reach :func:`run_task` (the runners of :mod:`proofs.core.execute`,
which the exhaustive language claims use too); progress and results are handled
once, by :func:`run_tasks`, and :func:`summary` turns the results into the
closing table.

The resume check runs in the workers rather than in the parent because
verifying a certificate costs about as much as a small proof: the parent only
plans and collects, so ``--jobs`` and a cluster speed up a resumed sweep too.
Workers must therefore see ``--out-dir`` at the same path: always true locally,
a shared filesystem on a cluster.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from attncert.exact.canonical import json_equal
from attncert.exact.certificate import read_certificate, write_certificate
from attncert.exact.errors import AttncertError, LimitExceeded
from attncert.exact.limits import Limits, limits
from attncert.proofs.core import progress as _progress
from attncert.proofs.core.execute import Runner
from attncert.proofs.core.params import size_values
from attncert.proofs.core.registry import INDEX, Claim, load_claim, unknown_claim
from attncert.proofs.core.verify import BAD, DOES_NOT_HOLD, EXIT, NOT_PROVEN, OK, REJECTED, SEVERITY, WIDTH, verify_file

#: Status of a task whose certificate already existed and still verifies.
SKIPPED = "SKIPPED"

#: Status -> its column in the summary (and in the progress bar): verify's outcomes (fails: genuine, and
#: its claim does not hold) and the certificates already proven.
_COLUMNS = {OK: "holds", DOES_NOT_HOLD: "fails", NOT_PROVEN: "unproven", REJECTED: "rejected", BAD: "bad", SKIPPED: "skipped"}

#: Digits of the largest seed (Python reads at most 4300 digits into an int; no generator needs more than these).
MAX_SEED_DIGITS = 40

#: Longest file stem before it is shortened with a hash (file systems allow 255 bytes).
_MAX_STEM = 180


@dataclass(frozen=True)
class Task:
    """One claim at one combination of values.

    ``params`` holds the seed (an int, for claims that take one) and the ``--size``
    values as typed on the command line; they are converted with the claim's own
    parameter types in the worker, so an invalid value becomes that task's BAD
    result instead of ending the sweep. Parameters not listed take the claim's
    defaults.
    """

    claim: str
    params: tuple[tuple[str, Any], ...]
    path: str
    limits: Limits = field(default_factory=Limits)  # what the worker proves, writes and verifies within

    def label(self) -> str:
        return " ".join([self.claim, *(f"{k}={v}" for k, v in self.params)])


@dataclass(frozen=True)
class Result:
    """What a worker sends back: small and picklable, never the certificate itself."""

    task: Task
    status: str  # OK, DOES_NOT_HOLD, NOT_PROVEN, REJECTED, BAD (as from attncert verify) or SKIPPED
    seconds: float
    reason: str


@dataclass(frozen=True)
class Plan:
    tasks: list[Task]
    notes: list[str]  # parameters some claims do not take (they run at their defaults)


# --- planning -----------------------------------------------------------------------


def parse_seeds(spec: str) -> list[range]:
    """``"0-9"``, ``"0,3,7"`` or a mix such as ``"0-3,8"`` -> the ranges it names, in order (never expanded:
    ``0-1000000000`` is one range until the sweep's size is known to be within its limit)."""
    seeds: list[range] = []
    for part in spec.split(","):
        part = part.strip()
        if max(map(len, re.findall(r"\d+", part)), default=0) > MAX_SEED_DIGITS:
            raise AttncertError(f"--seeds: a seed has at most {MAX_SEED_DIGITS} digits, got {part[:24]!r}...")
        if m := re.fullmatch(r"(\d+)-(\d+)", part):
            lo, hi = int(m[1]), int(m[2])
            if lo > hi:
                raise AttncertError(f"--seeds: empty range {part!r:.40} (write low-high)")
            seeds.append(range(lo, hi + 1))
        elif re.fullmatch(r"-?\d+", part):
            seeds.append(range(int(part), int(part) + 1))
        else:
            raise AttncertError(f"--seeds: expected a range like 0-9 or a list like 0,3,7, got {spec!r:.60}")
    return seeds


def seed_list(ranges: Sequence[range]) -> list[int]:
    """The seeds of ``parse_seeds``, each once, in the order first named (expands every range: bound them first)."""
    return list(dict.fromkeys(itertools.chain.from_iterable(ranges)))


def parse_sizes(specs: Sequence[str]) -> dict[str, list[str]]:
    """``["n=2,3", "d=1,k=2", "n=4"]`` -> ``{"n": ["2", "3", "4"], "d": ["1"], "k": ["2"]}``: each value a task's
    (:func:`proofs.core.params.size_values`; repeats merge)."""
    sizes: dict[str, list[str]] = {}
    for spec in specs:
        for name, values in size_values(spec, "--sizes").items():
            if name == "seed":
                raise AttncertError("--sizes: give seeds with --seeds, not seed=...")
            sizes[name] = list(dict.fromkeys(sizes.get(name, []) + values))
    return sizes


def plan(claim_names: Sequence[str], seeds: str | None, size_specs: Sequence[str], out_dir: str | Path, lim: Limits | None = None) -> Plan:
    """The tasks of a sweep, each to run within ``lim`` (default: the default limits), or an AttncertError for an
    unknown claim or parameter, or for more than ``lim.max_tasks`` tasks (counted before any is formed, each seed
    as often as ``--seeds`` names it).

    A ``--size`` parameter must be declared by at least one of the claims (a typo is
    an error); a claim that does not declare it runs at its own default for it, so
    that e.g. ``transpose matmul --size k=2,3`` sweeps k for matmul only. Claims
    without a ``seed`` parameter ignore ``--seeds``.
    """
    lim = lim or Limits()
    max_tasks = lim.max_tasks
    unknown = [n for n in claim_names if n not in INDEX]
    if unknown:
        raise AttncertError(unknown_claim(unknown[0]))
    claims = [load_claim(n) for n in dict.fromkeys(claim_names)]
    sizes = parse_sizes(size_specs)
    seed_ranges = parse_seeds(seeds) if seeds is not None else None
    declared = {p.name for c in claims for p in c.params}
    for name in sizes:
        if name not in declared:
            names = ", ".join(c.name for c in claims)
            raise AttncertError(f"--size {name}: no parameter {name!r} in {names} (attncert prove CLAIM --help lists them)")
    count = sum(
        math.prod(len(sizes[p.name]) for p in c.params if p.name in sizes)
        * (sum(r.stop - r.start for r in seed_ranges) if seed_ranges is not None and "seed" in {p.name for p in c.params} else 1)
        for c in claims
    )
    if count > max_tasks:
        raise LimitExceeded(
            f"the sweep names {count:,} tasks (claims x seeds x --size values), over the limit of {max_tasks:,} "
            "(raise it with --max-tasks if you mean it)"
        )
    seed_values = seed_list(seed_ranges) if seed_ranges is not None else None
    out = Path(out_dir).resolve()
    tasks, notes = [], []
    for claim in claims:
        own = {p.name for p in claim.params}
        axes = {name: values for name, values in sizes.items() if name in own}
        notes += [f"{claim.name} has no parameter {name}; it runs without it" for name in sizes if name not in own]
        if "seed" in own:
            axes["seed"] = seed_values if seed_values is not None else [claim.defaults()["seed"]]
        tasks += [_task(claim, params, out, lim) for params in _combinations(axes)]
    return Plan(tasks, notes)


def _combinations(axes: dict[str, list[Any]]) -> Iterator[tuple[tuple[str, Any], ...]]:
    names = sorted(axes)
    for values in itertools.product(*(axes[n] for n in names)):
        yield tuple(zip(names, values))


def _task(claim: Claim, params: tuple[tuple[str, Any], ...], out: Path, lim: Limits) -> Task:
    return Task(claim.name, params, str(out / file_name(claim.name, params)), lim)


def file_name(claim: str, params: tuple[tuple[str, Any], ...]) -> str:
    """``transpose__c=5__r=3__seed=4.json``: the same claim and values give the same name.

    Characters other than letters, digits and ``._+-`` become ``_``; when that
    changed a value (``eps=1/10``) or the name is too long, a hash of the exact
    values is appended so that two different tasks never share a file.
    """
    raw = [f"{k}={v}" for k, v in params]
    safe = [re.sub(r"[^A-Za-z0-9._+=-]", "_", s) for s in raw]
    stem = "__".join([claim, *safe])
    if safe != raw or len(stem) > _MAX_STEM:
        digest = hashlib.sha256("\0".join([claim, *raw]).encode()).hexdigest()[:10]
        stem = f"{stem[:_MAX_STEM]}__{digest}"
    return stem + ".json"


# --- one task (runs in a worker) -----------------------------------------------------


def run_task(task: Task) -> Result:
    """Skip, or prove + write + verify, one task, within its limits. Never raises for a bad parameter value."""
    t0 = time.perf_counter()
    try:
        with limits(task.limits):
            status, reason = _attempt(task)
    except AttncertError as e:  # limits out of their range: the task's BAD result
        status, reason = BAD, _first_line(str(e))
    return Result(task, status, time.perf_counter() - t0, reason)


def _attempt(task: Task) -> tuple[str, str]:
    path = Path(task.path)
    try:
        claim = load_claim(task.claim)
        params = _typed(claim, task.params)
        if _already_verified(path, claim.name, params, task.limits):
            return SKIPPED, ""
        write_certificate(path, claim.prove(**{**claim.defaults(), **params}))
    except AttncertError as e:
        return BAD, _first_line(str(e))
    except Exception as e:  # a claim that breaks at one size must not end a long sweep; the reason is reported
        return BAD, _first_line(f"{type(e).__name__}: {e}")
    outcome = verify_file(path, task.limits)
    return outcome.status, outcome.reason


def _typed(claim: Claim, params: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """Convert the command-line text of each value with the claim's parameter type."""
    types = {p.name: p.type for p in claim.params}
    return {k: v if k == "seed" else types[k](v) for k, v in params}


def _already_verified(path: Path, claim: str, params: dict[str, Any], lim: Limits) -> bool:
    """The certificate at path is of this claim at these values, and verifies."""
    if not path.is_file():
        return False
    try:
        doc = read_certificate(path)
    except AttncertError:
        return False  # tampered or truncated: prove again
    recorded = doc.get("params")
    if doc.get("claim") != claim or not isinstance(recorded, dict):
        return False
    if not all(json_equal(recorded.get(k), v) for k, v in params.items()):
        return False
    return verify_file(path, lim).status == OK


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "(no message)"


# --- running: one loop, three executors ------------------------------------------------


def run_tasks(tasks: Sequence[Task], execute: Runner, progress: bool | None) -> list[Result]:
    """Run every task with ``execute`` (a runner of :mod:`proofs.core.execute`), with a progress bar on stderr
    (``None``: where proofs.core.progress shows bars; False: never); results in task order.

    The claims run in this process (``--jobs 1``) show no bars of their own (proofs.core.progress).
    A run stopped by Ctrl-C or SIGTERM keeps the certificates of finished tasks, and the next
    run of the same sweep skips them.
    """
    results: list[Result] = []
    counts = dict.fromkeys(_COLUMNS, 0)
    with _progress.bar(len(tasks), "task", desc="sweep", show=progress, leave=True, delay=0) as bar, _progress.disabled():
        for result in execute(run_task, tasks):
            results.append(result)
            counts[result.status] += 1
            bar.set_postfix_str(" ".join(f"{_COLUMNS[k]} {v}" for k, v in counts.items()), refresh=False)
            bar.update()
    order = {t: i for i, t in enumerate(tasks)}
    return sorted(results, key=lambda r: order[r.task])


# --- summary --------------------------------------------------------------------------

SUMMARY_HEADER = ["claim", "tasks", *_COLUMNS.values(), "time"]


def summary(results: Iterable[Result], claim_order: Sequence[str]) -> list[list[str]]:
    """One row per claim (in ``claim_order``), then a total row when there are several.

    ``holds`` counts certificates proven and verified in this run, ``skipped`` those
    that already existed and verified again; time is the workers' time, summed.
    """
    by_claim: dict[str, list[Result]] = {c: [] for c in claim_order}
    for r in results:
        by_claim[r.task.claim].append(r)
    rows = [_row(c, rs) for c, rs in by_claim.items()]
    if len(rows) > 1:
        rows.append(_row("total", [r for rs in by_claim.values() for r in rs]))
    return rows


def _row(name: str, results: list[Result]) -> list[str]:
    counts = Counter(r.status for r in results)
    seconds = sum(r.seconds for r in results)
    return [name, str(len(results)), *(str(counts[s]) for s in _COLUMNS), f"{seconds:.2f}s"]


def closing_line(results: Sequence[Result]) -> str:
    """One line on the whole sweep: the certificates written now, those already proven (skipped), the
    combinations refused (bad), and how many of all hold (a skipped certificate verified again: it holds)."""
    n = Counter(r.status for r in results)
    now = n[OK] + n[DOES_NOT_HOLD] + n[NOT_PROVEN] + n[REJECTED]
    parts = [f"{now} proven now", f"{n[SKIPPED]} already proven (skipped)", f"{n[BAD]} refused (bad)"]
    shown = [part for part, count in zip(parts, (now, n[SKIPPED], n[BAD])) if count]
    return ", ".join(shown + [f"{n[OK] + n[SKIPPED]} of {len(results)} hold"])


def problems(results: Iterable[Result]) -> list[str]:
    """One line per task that did not hold; a certificate written (DOES-NOT-HOLD, NOT-PROVEN, REJECTED) is named, to inspect."""
    return [
        f"{r.status:{WIDTH}} {r.task.label()}{f'  ({Path(r.task.path).name})' if r.status != BAD else ''}: {r.reason}"
        for r in results
        if r.status in (DOES_NOT_HOLD, NOT_PROVEN, REJECTED, BAD)
    ]


def exit_code(results: Iterable[Result]) -> int:
    """As attncert verify: 0 when every task holds (or was already verified), else the worst outcome's code
    (by verify's SEVERITY: 3 REJECTED, 2 BAD, 4 NOT-PROVEN, 1 DOES-NOT-HOLD)."""
    return EXIT[max((r.status for r in results if r.status in EXIT), key=SEVERITY.index, default=OK)]
