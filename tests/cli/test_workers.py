"""Worker pools: --jobs is capped by the work there is, workers ignore Ctrl-C, and a pool whose
block ends by an exception stops its workers at once."""

from __future__ import annotations

import contextlib
import os
import signal
import time

import pytest

from attncert.proofs.core import execute, sweep, workers
from attncert.proofs.simulator import languages
from attncert.proofs.simulator.languages import prove_parity


def test_cap():
    cpus = workers.MAX_PROCESSES
    assert workers.cap(100_000, 3) == min(3, cpus)
    assert workers.cap(100_000, 10**6) == cpus  # never more processes than CPUs
    assert workers.cap(1, 10) == 1
    assert workers.cap(4, 0) == 1


@pytest.fixture
def pools(monkeypatch):
    """The sizes of the pools opened (languages and sweep both go through proofs.core.workers.pool)."""
    sizes: list[int] = []
    real = workers.pool

    def recording(n: int):
        sizes.append(n)
        return real(n)

    monkeypatch.setattr(workers, "pool", recording)
    return sizes


def test_language_jobs_are_capped_by_the_pieces_of_work(pools, monkeypatch):
    assert prove_parity(max_k=1, max_length=1, jobs=100_000)["result"]["holds"]
    assert pools == []  # one word: one piece, no process at all
    monkeypatch.setattr(languages, "CHUNK", 4)
    doc = prove_parity(max_k=1, max_length=3, jobs=100_000)
    assert pools == [min(4, workers.MAX_PROCESSES)]  # 2, 4 and 8 words: 1 + 1 + 2 pieces; never more than the CPUs
    assert doc["outputs"] == prove_parity(max_k=1, max_length=3)["outputs"]


def test_sweep_jobs_are_capped_by_the_tasks(pools, tmp_path):
    plan = sweep.plan(["transpose"], "0-1", [], tmp_path)
    results = sweep.run_tasks(plan.tasks, execute.local_pool(100_000), progress=False)
    assert pools == [min(2, workers.MAX_PROCESSES)] and [r.status for r in results] == ["OK", "OK"]


def test_workers_ignore_ctrl_c():
    with workers.pool(1) as pool:
        assert pool.submit(signal.getsignal, signal.SIGINT).result() == signal.SIG_IGN


def test_an_exception_in_the_block_stops_the_workers_at_once():
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with workers.pool(2) as pool:
            futures = [pool.submit(time.sleep, 60) for _ in range(4)]
            pids = list(pool._processes)
            time.sleep(0.3)
            raise KeyboardInterrupt
    assert time.monotonic() - t0 < 5
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # already reaped: it has ended
    assert all(f.done() for f in futures)


def _write_slowly(folder: str) -> None:
    """A task that holds a partial file until it ends, and removes it however it ends."""
    partial = os.path.join(folder, ".partial.tmp")
    try:  # created inside the try: SIGTERM may land the moment the file exists (the parent waits for it)
        open(partial, "w").close()
        time.sleep(60)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(partial)


def test_a_terminated_task_unwinds_and_its_worker_exits_quietly(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with workers.pool(1) as pool:
            pool.submit(_write_slowly, str(tmp_path))
            processes = list(pool._processes.values())
            deadline = time.monotonic() + 10
            while not (tmp_path / ".partial.tmp").exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []  # the finally block ran in the worker
    assert [p.exitcode for p in processes] == [128 + signal.SIGTERM]  # left by itself, not killed


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs Linux /proc")
def test_an_exited_unreaped_parent_counts_as_gone():
    """A worker starting as its parent is killed finds the parent a zombie (not yet waited for) and must exit."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        assert _wait_zombie(pid)
        assert not workers._alive(pid)
    finally:
        os.waitpid(pid, 0)
    assert workers._alive(os.getpid())


def _wait_zombie(pid: int, timeout: float = 5) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat", "rb") as f:
            if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                return True
        time.sleep(0.01)
    return False
