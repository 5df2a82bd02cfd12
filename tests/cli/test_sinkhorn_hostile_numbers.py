"""`attncert prove sinkhorn_convergence --cost FILE --a FILE --b FILE` on numbers beyond float64's range: one line
and exit code 2 (or a certificate where the problem is within range after all), never a traceback (issue 30,
section 3). The files hold exact decimals, so 1e400 is the integer 10^400."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def run(tmp_path: Path, cost: list[list[str]], a: list[str], b: list[str], *extra: str) -> subprocess.CompletedProcess:
    for name, data in (("c", cost), ("a", a), ("b", b)):
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
    args = ["prove", "sinkhorn_convergence", "--cost", "c.json", "--a", "a.json", "--b", "b.json", "--out", "out.json", *extra]
    return subprocess.run([sys.executable, "-m", "attncert", *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)


HALF = ["1/2", "1/2"]


@pytest.mark.parametrize(
    "cost, a, extra, said",
    [
        ([["1e308", "0"], ["-1e308", "0"]], HALF, (), "bits of arb precision, over the limit of 65,536"),
        ([["1e308", "0"], ["-1e308", "0"]], HALF, ("--max-precision", str(1 << 24)), "over the limit of 16,777,216"),
        ([["1e400", "1e400"], ["1e400", "1e400"]], HALF, (), r"max |C_ij| / eps = 5.00e+400, over the limit of 2^53"),
        ([["1", "0"], ["0", "1"]], ["1e400", "1"], ("--eps", "1/5"), "a[0] = 1.00e+400 is outside float64's normal range"),
        ([["1", "0"], ["0", "1"]], ["1e-400", "1"], ("--eps", "1/5"), "a[0] = 1.00e-400 is outside float64's normal range"),
    ],
    ids=["the audit's cost", "at the precision ceiling", "a constant 1e400", "a mass 1e400", "a mass 1e-400"],
)
def test_refused_in_one_line(tmp_path, cost, a, extra, said):
    done = run(tmp_path, cost, a, a, *extra)
    assert done.returncode == 2, done.stderr[-800:]
    assert "Traceback" not in done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], lines
    assert not (tmp_path / "out.json").exists()


def test_estimate_names_the_refusal_without_a_traceback(tmp_path):
    # Was: OverflowError formatting a memory figure of 10^310 bytes.
    done = run(tmp_path, [["1e308", "0"], ["-1e308", "0"]], HALF, HALF, "--estimate")
    assert done.returncode == 2 and "Traceback" not in done.stdout + done.stderr, done.stderr[-800:]  # refused, as the run
    refusals = [line for line in done.stdout.splitlines() if "would be refused" in line]
    assert any("more than 10^18 bits of arb precision" in line for line in refusals), done.stdout


def test_a_problem_within_range_whose_numbers_have_no_double_is_certified(tmp_path):
    # C / eps = [[1, 0], [0, 1]] although C and eps are 10^400: the certified run takes it; POT, which takes doubles,
    # is not run (its side note says so; it was an OverflowError converting the cost).
    pytest.importorskip("ot")
    done = run(tmp_path, [["1e400", "0"], ["0", "1e400"]], HALF, HALF, "--eps", "1e400")
    assert done.returncode == 0, done.stderr[-800:]
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["result"]["holds"] is True
    assert doc["side_notes"]["pot"]["runs"][0]["outcome"].startswith("not run: a number of the problem is beyond float64")
    verified = subprocess.run([sys.executable, "-m", "attncert", "verify", "out.json"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert verified.returncode == 0 and verified.stdout.startswith("OK"), verified.stdout + verified.stderr
