"""prove --estimate says whether the run would go ahead, or be refused and by which limits, and exits as the run
would: 0 when it would go ahead, 2 (bad input) when it would be refused."""

import subprocess
import sys


def estimate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attncert", "prove", *args, "--estimate"], capture_output=True, text=True, timeout=120)


def test_within_the_limits_says_the_run_would_go_ahead():
    r = estimate("transpose", "--r", "2", "--c", "3")
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "  within the limits: the run would go ahead"
    assert "sequence length (positions)  6" in r.stdout  # transpose 2 x 3 lays out r c = 6 positions


def test_over_the_limits_names_each_limit_and_its_option():
    # transpose 40 x 50 needs 2,000 positions (r c), and 2,000 selection pairs (fan-in 1)
    r = estimate("transpose", "--r", "40", "--c", "50", "--max-positions", "1000", "--max-pairs", "1999")
    refused = [line for line in r.stdout.splitlines() if line.startswith("  would be refused: ")]
    assert r.returncode == 2 and len(refused) == 2, r.stdout
    assert "a sequence of 2,000 positions, over the limit of 1,000 (raise it with --max-positions" in refused[0]
    assert "about 2,000 selection pairs, over the limit of 1,999 (raise it with --max-pairs" in refused[1]
    assert "within the limits" not in r.stdout
    run = subprocess.run([sys.executable, "-m", "attncert", "prove", "transpose", "--r", "40", "--c", "50", "--max-positions", "1000", "--out", "-"], capture_output=True, text=True, timeout=120)
    assert run.returncode == r.returncode and "over the limit of 1,000" in run.stderr and not run.stdout  # the run itself, refused


def test_a_cost_model_that_refuses_while_estimating_is_reported_the_same_way():
    # a universality family of 2,000 + 16 text pairs is over its limit of 1,024 pairs
    r = estimate("sinkhorn_universality", "--pairs", "2000")
    assert r.returncode == 2 and r.stdout.splitlines()[-1].startswith("  would be refused: a family of 2,016 text pairs"), r.stdout
