"""A sweep run again says in one line that its certificates were already proven, and that they hold."""

import subprocess
import sys


def sweep(cwd, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "attncert", "sweep", "transpose", "--seeds", "0-2", "--jobs", "1", "--no-progress", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=120)


def test_a_rerun_says_already_proven_and_hold_in_one_line(tmp_path):
    first = sweep(tmp_path, "--size", "r=2")
    assert first.returncode == 0 and first.stdout.splitlines()[-1].startswith("3 proven now, 3 of 3 hold; wall time ")
    again = sweep(tmp_path, "--size", "r=2")
    assert again.returncode == 0
    assert again.stdout.splitlines()[-1].startswith("3 already proven (skipped), 3 of 3 hold; wall time "), again.stdout
    # a refused combination is counted apart, and not among those that hold
    mixed = sweep(tmp_path, "--size", "r=2,0")
    assert mixed.returncode == 2
    assert mixed.stdout.splitlines()[-1].startswith("3 already proven (skipped), 3 refused (bad), 3 of 6 hold; "), mixed.stdout
