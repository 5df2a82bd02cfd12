"""Signals leave no debris: SIGTERM and Ctrl-C end a run with one line and no traceback, the
worker processes end with their parent, and an interrupted sweep can be resumed.

Each run is a subprocess in its own process group (so that "Ctrl-C" can be sent to the group, as
a terminal does, and a failed test can clean up). Workers are found as the run's child processes
through /proc.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc to find the workers")

_SCRIPT = Path(sys.executable).with_name("attncert")
ATTNCERT = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "attncert"]

#: A run of tens of seconds with two worker processes (match2 on every word up to length 7, 123,032 words).
SLOW_PROVE = ["prove", "match2", "--max-length", "7", "--jobs", "2"]
#: A sweep of 100 tasks of about 1.5 s each, on two worker processes.
SLOW_SWEEP = ["sweep", "universal", "--size", "n=40", "--seeds", "0-99", "--jobs", "2", "--no-progress"]


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state) of a process, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) "
    return int(fields[1]), fields[0]


def children(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _stat(int(entry))) is not None and st[0] == pid and st[1] != "Z":
            found.add(int(entry))
    return found


def alive(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[1] != "Z"  # a zombie has ended; only its exit status is left


def wait_until(predicate, timeout: float, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


class Run:
    """An attncert subprocess in its own process group, killed with its group if a test fails."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k != "CI"}
        self.proc = subprocess.Popen(
            ATTNCERT + args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
        self.workers: set[int] = set()

    def wait_for_workers(self, n: int = 2, timeout: float = 20) -> set[int]:
        assert wait_until(lambda: len(children(self.proc.pid)) >= n or self.proc.poll() is not None, timeout), "no workers started"
        assert self.proc.poll() is None, self.proc.communicate()
        self.workers = children(self.proc.pid)
        return self.workers

    def signal_parent(self, sig: int) -> float:
        self.proc.send_signal(sig)
        return time.monotonic()

    def signal_group(self, sig: int) -> float:
        """As Ctrl-C in a terminal: the signal reaches the parent and every worker."""
        os.killpg(self.proc.pid, sig)
        return time.monotonic()

    def finish(self, timeout: float = 10) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err

    def cleanup(self) -> None:
        for pid in [self.proc.pid, *self.workers]:
            if alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if self.proc.poll() is None:
            self.proc.wait(5)


@pytest.fixture
def run(tmp_path):
    runs: list[Run] = []

    def start(*args: str) -> Run:
        r = Run(list(args), tmp_path)
        runs.append(r)
        return r

    yield start
    for r in runs:
        r.cleanup()


def assert_stopped(code: int, err: str, want_code: int, want_line: str) -> None:
    assert "Traceback" not in err, err
    assert err.splitlines() == [want_line], err
    assert code == want_code, (code, err)


def assert_workers_gone(workers: set[int], since: float, timeout: float = 5) -> float:
    """Every worker ends within timeout seconds of `since`; returns how long it took."""
    assert workers
    assert wait_until(lambda: not any(alive(p) for p in workers), timeout), [p for p in workers if alive(p)]
    return time.monotonic() - since


@pytest.mark.parametrize(
    "sig, send, code, line",
    [
        (signal.SIGTERM, "parent", 143, "attncert: terminated"),  # kill PID
        (signal.SIGINT, "group", 130, "attncert: interrupted"),  # Ctrl-C in a terminal
        (signal.SIGTERM, "group", 143, "attncert: terminated"),  # kill -TERM -PGID (a service manager)
    ],
)
def test_prove_with_jobs_stops_in_order(run, tmp_path, sig, send, code, line):
    r = run(*SLOW_PROVE, "--out", "m.json")
    workers = r.wait_for_workers()
    time.sleep(0.5)  # the workers are inside their first tasks
    t0 = r.signal_parent(sig) if send == "parent" else r.signal_group(sig)
    rc, out, err = r.finish()
    assert time.monotonic() - t0 < 5
    assert_stopped(rc, err, code, line)
    assert_workers_gone(workers, t0)
    # No certificate and no temporary file; only the resumable chunks that finished, whole.
    assert {p.name for p in tmp_path.iterdir()} <= {"m.json.chunks"}
    assert not [p for p in tmp_path.glob("m.json.chunks/*") if not p.name.endswith(".json") or p.name.startswith(".")]
    assert out == ""


def test_a_second_ctrl_c_prints_no_traceback(run):
    r = run(*SLOW_PROVE, "--out", "m.json")
    workers = r.wait_for_workers()
    time.sleep(0.5)
    t0 = r.signal_group(signal.SIGINT)
    time.sleep(0.02)
    if r.proc.poll() is None:
        r.signal_group(signal.SIGINT)
    rc, _, err = r.finish()
    # A second Ctrl-C that comes once the interpreter is shutting down (its handlers reset) ends the
    # process by SIGINT itself, which a shell reports as 130 too.
    assert_stopped(130 if rc == -signal.SIGINT else rc, err, 130, "attncert: interrupted")
    assert_workers_gone(workers, t0)


def test_workers_die_with_a_parent_that_is_killed(run):
    """SIGKILL leaves the parent no chance to clean up: the workers end by themselves (PR_SET_PDEATHSIG)."""
    r = run(*SLOW_PROVE, "--out", "m.json")
    workers = r.wait_for_workers()
    t0 = r.signal_parent(signal.SIGKILL)
    r.finish()
    assert_workers_gone(workers, t0)


def _seeds_done(out_dir: Path) -> list[int]:
    return sorted(int(m[1]) for p in out_dir.glob("*.json") if (m := re.fullmatch(r"universal__n=40__seed=(\d+)\.json", p.name)))


@pytest.mark.parametrize("sig, code, line", [(signal.SIGTERM, 143, "attncert: terminated"), (signal.SIGINT, 130, "attncert: interrupted")])
def test_sweep_stops_in_order_and_resumes(run, tmp_path, sig, code, line):
    out_dir = tmp_path / "sweep"
    out_dir.mkdir()  # an --out-dir must exist (only the default sweeps/ is made)
    r = run(*SLOW_SWEEP, "--out-dir", str(out_dir))
    workers = r.wait_for_workers()
    assert wait_until(lambda: len(_seeds_done(out_dir)) >= 2, 15), "no task finished"
    t0 = r.signal_parent(sig) if sig == signal.SIGTERM else r.signal_group(sig)
    rc, out, err = r.finish()
    assert_stopped(rc, err, code, line)
    assert_workers_gone(workers, t0)

    # Resumable: the certificates of finished tasks are there, whole; no temporary file is left.
    done = _seeds_done(out_dir)
    assert 2 <= len(done) < 100
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(f"universal__n=40__seed={s}.json" for s in done)
    again = subprocess.run(
        ATTNCERT + [*SLOW_SWEEP[:4], "--seeds", ",".join(map(str, done)), "--jobs", "2", "--no-progress", "--out-dir", str(out_dir)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    row = next(line.split() for line in again.stdout.splitlines() if line.startswith("universal "))
    assert row[1:8] == [str(len(done)), "0", "0", "0", "0", "0", str(len(done))]  # tasks, holds, fails, unproven, rejected, bad, skipped


@pytest.fixture
def certificate_file(tmp_path) -> Path:
    path = tmp_path / "t.json"
    done = subprocess.run(ATTNCERT + ["prove", "transpose", "--out", str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return path


def test_verify_into_head_exits_quietly(certificate_file):
    """`attncert verify FILE FILE | head -1`: head leaves after one line; attncert stops without a word."""
    if shutil.which("head") is None:
        pytest.skip("no head")
    cmd = " ".join(ATTNCERT + ["verify", str(certificate_file), str(certificate_file)])
    done = subprocess.run(["bash", "-c", f"{cmd} | head -1; exit ${{PIPESTATUS[0]}}"], capture_output=True, text=True, timeout=60)
    assert done.stderr == ""
    assert done.stdout.startswith("OK ") and len(done.stdout.splitlines()) == 1
    assert done.returncode in (0, 141)  # 0 if attncert had finished before head left


def test_verify_to_a_closed_pipe_exits_141_without_a_word(certificate_file):
    """The reader leaves while more lines are due: exit 141 (as a SIGPIPE death), nothing on stderr."""
    p = subprocess.Popen(ATTNCERT + ["verify", *[str(certificate_file)] * 30], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout.readline().startswith(b"OK ")
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait(60) == 141
    assert err == b""


_FINALISER_SCRIPT = """
import gc, os, signal, sys, time
from attncert.proofs.core.workers import Terminated, orderly_signals

class Dropped:
    def __del__(self):
        os.kill(os.getpid(), signal.SIG{sig})  # delivered while this finaliser runs: Python swallows the stop
        for _ in range(100000):
            pass

with orderly_signals("probe") as stopped:
    try:
        Dropped()
        gc.collect()
        for _ in range(200):  # the run goes on; the re-delivered stop must end it here
            time.sleep(0.01)
        print("ran to the end")
        sys.exit(0)
    except KeyboardInterrupt:
        sys.exit(stopped.report(signal.SIGINT))
    except Terminated:
        sys.exit(stopped.report(signal.SIGTERM))
"""


@pytest.mark.parametrize("sig, code, word", [("TERM", 143, "terminated"), ("INT", 130, "interrupted")])
def test_a_stop_swallowed_by_a_finaliser_still_stops_the_run(sig, code, word):
    """A signal whose exception is raised inside a ``__del__`` (Python prints "Exception ignored" and goes on) is
    delivered again by the unraisable hook: the run stops with its one line and exit code, not at its end."""
    run = subprocess.run([sys.executable, "-c", _FINALISER_SCRIPT.format(sig=sig)], capture_output=True, text=True, timeout=60)
    assert run.returncode == code, (run.returncode, run.stdout, run.stderr)
    assert "ran to the end" not in run.stdout
    assert run.stderr.strip() == f"probe: {word}", run.stderr
