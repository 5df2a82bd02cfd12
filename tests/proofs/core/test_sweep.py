"""attncert sweep: seeds x sizes in parallel, resumable, summarized; locally and on Dask."""

from __future__ import annotations

import json
import os
import sys

import pytest

from attncert.exact.errors import AttncertError, LimitExceeded
from attncert.exact.limits import Limits
from attncert.proofs.core import execute, sweep
from attncert.proofs.cli import main
from attncert.proofs.core.registry import Claim, load_claims
from attncert.proofs.core.verify import OK, verify_file

# 2 seeds x 2 sizes of r for each claim; the other sizes stay at their defaults.
SMALL = ["transpose", "matmul", "--seeds", "0-1", "--size", "r=2,3"]
SMALL_FILES = {
    f"{claim}__r={r}__seed={s}.json" for claim in ("transpose", "matmul") for r in (2, 3) for s in (0, 1)
}


def run(capsys, out_dir, *args: str) -> tuple[int, str, str]:
    code = main(["sweep", *args, "--out-dir", str(out_dir), "--no-progress"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def table(out: str) -> dict[str, dict[str, str]]:
    """The summary table as {claim: {column: value}}."""
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:2] == ["claim", "tasks"])
    header = lines[at].split()
    rows = {}
    for line in lines[at + 2 :]:
        cells = line.split()
        if len(cells) != len(header):
            break
        rows[cells[0]] = dict(zip(header, cells))
    return rows


def counts(row: dict[str, str]) -> tuple[int, ...]:
    return tuple(int(row[k]) for k in ("tasks", "holds", "fails", "rejected", "bad", "skipped"))


def test_in_process_sweep_writes_certificates_that_verify(tmp_path, capsys):
    code, out, _ = run(capsys, tmp_path, *SMALL, "--jobs", "1")
    assert code == 0
    assert {p.name for p in tmp_path.iterdir()} == SMALL_FILES
    for path in tmp_path.iterdir():
        assert verify_file(path).status == OK, path
    doc = json.loads((tmp_path / "matmul__r=3__seed=1.json").read_text())
    assert (doc["claim"], doc["params"]["r"], doc["params"]["seed"], doc["params"]["k"]) == ("matmul", 3, 1, 3)
    rows = table(out)
    assert counts(rows["transpose"]) == (4, 4, 0, 0, 0, 0)
    assert counts(rows["matmul"]) == (4, 4, 0, 0, 0, 0)
    assert counts(rows["total"]) == (8, 8, 0, 0, 0, 0)


def test_parallel_sweep_then_a_second_run_skips_everything(tmp_path, capsys):
    code, out, _ = run(capsys, tmp_path, *SMALL, "--jobs", "2")
    assert code == 0
    assert counts(table(out)["total"]) == (8, 8, 0, 0, 0, 0)
    assert {p.name for p in tmp_path.iterdir()} == SMALL_FILES
    written = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}

    code, out, _ = run(capsys, tmp_path, *SMALL, "--jobs", "2")
    assert code == 0
    assert counts(table(out)["total"]) == (8, 0, 0, 0, 0, 8)
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == written  # nothing rewritten


def test_tampered_or_mismatched_certificates_are_proven_again(tmp_path, capsys):
    assert run(capsys, tmp_path, *SMALL, "--jobs", "1")[0] == 0
    tampered = tmp_path / "transpose__r=2__seed=0.json"
    tampered.write_text(tampered.read_text().replace('"seed":0', '"seed":7'))
    # A certificate that verifies but is of other values (r=2 where r=3 is asked) is no resume point either.
    misplaced = tmp_path / "matmul__r=3__seed=1.json"
    misplaced.write_bytes((tmp_path / "matmul__r=2__seed=1.json").read_bytes())
    assert verify_file(tampered).status != OK and verify_file(misplaced).status == OK

    code, out, _ = run(capsys, tmp_path, *SMALL, "--jobs", "1")
    assert code == 0
    rows = table(out)
    assert counts(rows["transpose"]) == (4, 1, 0, 0, 0, 3)
    assert counts(rows["matmul"]) == (4, 1, 0, 0, 0, 3)
    assert verify_file(tampered).status == OK
    assert json.loads(misplaced.read_text())["params"]["r"] == 3


def test_unknown_parameter_or_claim_is_exit_2_before_anything_runs(tmp_path, capsys):
    for args in (["transpose", "--size", "k=2"], ["transpose", "--size", "zz=1"], ["nosuchclaim"], ["transpose", "--seeds", "3-1"]):
        code, out, err = run(capsys, tmp_path, *args)
        assert code == 2, args
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_invalid_values_are_bad_rows_and_the_sweep_goes_on(tmp_path, capsys):
    code, out, err = run(capsys, tmp_path, "transpose", "--size", "r=0,2,two", "--jobs", "1")
    assert code == 2
    assert counts(table(out)["transpose"]) == (3, 1, 0, 0, 2, 0)
    bad = [line for line in out.splitlines() if line.startswith("BAD")]
    assert len(bad) == 2 and all("positive integer" in line for line in bad)
    assert [p.name for p in tmp_path.iterdir()] == ["transpose__r=2__seed=0.json"]


def test_a_certificate_that_does_not_verify_fails_the_sweep(tmp_path, capsys, monkeypatch):
    real = load_claims()["transpose"]

    def wrong_prove(**params):
        doc = real.prove(**params)
        doc["outputs"]["output"][0][0] = "12345/7"  # not what the construction computes
        return doc

    def broken_prove(**params):
        raise RuntimeError("a bug at this size")

    fake = {
        "transpose": Claim("transpose", real.statement, wrong_prove, real.params),
        "matmul": Claim("matmul", "", broken_prove, load_claims()["matmul"].params),
    }
    monkeypatch.setattr(sweep, "load_claim", fake.__getitem__)
    code, out, _ = run(capsys, tmp_path, "transpose", "matmul", "--seeds", "0-1", "--jobs", "1")
    assert code == 3  # REJECTED (the wrong output) outranks BAD (the broken claim), as in attncert verify
    rows = table(out)
    assert counts(rows["transpose"]) == (2, 0, 0, 2, 0, 0)
    assert counts(rows["matmul"]) == (2, 0, 0, 0, 2, 0)
    assert sum("RuntimeError: a bug at this size" in line for line in out.splitlines()) == 2
    fails = [line for line in out.splitlines() if line.startswith("REJECTED")]
    assert len(fails) == 2 and "(transpose__seed=0.json)" in fails[0]

    code, out, _ = run(capsys, tmp_path, "transpose", "--jobs", "1")
    assert code == 3 and counts(table(out)["transpose"]) == (1, 0, 0, 1, 0, 0)


def test_plan_seeds_sizes_and_claims_without_a_seed(tmp_path):
    plan = sweep.plan(["transpose", "matmul", "parity"], "0-2,7", ["k=2,3", "max_k=2"], tmp_path)
    by_claim = {c: [t for t in plan.tasks if t.claim == c] for c in ("transpose", "matmul", "parity")}
    assert len(by_claim["transpose"]) == 4  # seeds only: it has no k or max_k
    assert len(by_claim["matmul"]) == 8  # seeds x k
    assert [t.params for t in by_claim["parity"]] == [(("max_k", "2"),)]  # no seed parameter: runs once
    assert any("transpose" in n and "k" in n for n in plan.notes)
    assert all(os.path.isabs(t.path) for t in plan.tasks)
    assert len({t.path for t in plan.tasks}) == len(plan.tasks)


def test_seed_specs():
    assert sweep.seed_list(sweep.parse_seeds("0-3,7,2")) == [0, 1, 2, 3, 7]
    assert sweep.seed_list(sweep.parse_seeds("5")) == [5]
    for bad in ("", "a", "1-", "3-1", "0..9", "1" * 41):
        with pytest.raises(AttncertError):
            sweep.parse_seeds(bad)


def test_a_sweep_over_its_task_limit_is_refused_before_any_seed_is_listed(tmp_path):
    # 10^9 + 1 seeds would be a list of 8 GB; the count alone is formed, from the range's ends.
    with pytest.raises(LimitExceeded, match=r"1,000,000,001 tasks .* over the limit of 100,000 \(raise it with --max-tasks"):
        sweep.plan(["transpose"], "0-1000000000", [], tmp_path)
    # transpose: 3 seeds x 2 values of r; matmul: 3 seeds x 2 values of r x 2 of k; the repeated seed 1 counts twice
    with pytest.raises(LimitExceeded, match="18 tasks"):
        sweep.plan(["transpose", "matmul"], "0-1,1", ["r=1,2", "k=1,2"], tmp_path, Limits(max_tasks=17))
    assert len(sweep.plan(["transpose", "matmul"], "0-1,1", ["r=1,2", "k=1,2"], tmp_path, Limits(max_tasks=18)).tasks) == 12


def test_file_names_are_deterministic_and_distinct():
    assert sweep.file_name("transpose", (("c", 5), ("r", 3), ("seed", 4))) == "transpose__c=5__r=3__seed=4.json"
    a = sweep.file_name("sinkhorn_limit", (("eps", "1/10"),))
    b = sweep.file_name("sinkhorn_limit", (("eps", "1_10"),))
    assert a != b and "/" not in a and a.endswith(".json")
    assert len(sweep.file_name("x", (("eps", "9" * 400),))) < 255


def test_progress_bar_can_be_forced(tmp_path, capsys):
    tasks = sweep.plan(["transpose"], "0-1", ["r=2"], tmp_path).tasks
    results = sweep.run_tasks(tasks, execute.in_process, progress=True)
    assert [r.status for r in results] == [OK, OK]
    assert "2/2" in capsys.readouterr().err


def test_scheduler_without_dask_is_one_clear_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    code, _, err = run(capsys, tmp_path, "transpose", "--scheduler", "tcp://127.0.0.1:8786")
    assert code == 2
    assert err.strip() == "attncert: error: install dask[distributed] to use --scheduler"


def test_dask_local_cluster(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        code, out, err = run(capsys, tmp_path, *SMALL, "--scheduler", cluster.scheduler_address)
        assert code == 0, out + err
        assert counts(table(out)["total"]) == (8, 8, 0, 0, 0, 0)
        assert {p.name for p in tmp_path.iterdir()} == SMALL_FILES
        assert all(verify_file(p).status == OK for p in tmp_path.iterdir())
        code, out, _ = run(capsys, tmp_path, *SMALL, "--scheduler", cluster.scheduler_address)
        assert code == 0 and counts(table(out)["total"]) == (8, 0, 0, 0, 0, 8)
