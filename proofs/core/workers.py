"""Worker processes and signals: how attncert runs work in other processes, and how it stops.

Three things live here, so that the language claims (``--jobs``), ``attncert
sweep`` and the command line share one behaviour:

* :func:`cap`: how many processes ``--jobs N`` gives for a number of pieces of
  work (never more processes than pieces: ``--jobs 100000`` forks no more than
  there is work for).
* :func:`pool`: a process pool whose workers ignore SIGINT (Ctrl-C reaches the
  whole process group; the parent alone handles it), die with their parent (on
  Linux, ``prctl(PR_SET_PDEATHSIG)``), show no progress bars, and on SIGTERM
  unwind the task they run (so that a half-written certificate's temporary file
  is removed) and exit without a traceback. When the block it guards ends by an
  exception (Ctrl-C, SIGTERM, an error), pending work is cancelled and the
  workers are terminated (killed after :data:`GRACE` seconds) before the
  exception goes on.
* :func:`orderly_signals`: for ``main()``: SIGTERM raises :class:`Terminated` in
  the main thread as SIGINT raises KeyboardInterrupt; after the first of them a
  second one ends the process at once, with the same single line and no
  traceback. A stop raised while a finaliser runs (a weakref callback, a
  ``__del__``) is swallowed by Python ("Exception ignored in ..."); the
  unraisable hook sees it and delivers the signal again, so the run still stops.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Iterator


#: Seconds terminated workers get to unwind before they are killed.
GRACE = 2.0

#: prctl option: the signal a process receives when its parent dies (linux/prctl.h).
_PR_SET_PDEATHSIG = 1

_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: Seconds after a finaliser swallowed a stop before the signal is sent again (the finaliser has returned by then).
REDELIVERY = 0.01

#: How a stopped run ends: exit code and the word on its one line.
STOPPED = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated")}


class Terminated(BaseException):
    """SIGTERM, raised in the main thread by :func:`orderly_signals` (as SIGINT raises KeyboardInterrupt).

    A BaseException, like KeyboardInterrupt, so that ``except Exception`` (a claim
    that breaks at one size in a sweep) does not swallow it.
    """


#: Local processes never exceed this: the work is CPU-bound, more processes than cores only cost memory.
MAX_PROCESSES = max(1, os.cpu_count() or 1)


def cap(jobs: int, tasks: int) -> int:
    """Processes for ``tasks`` pieces of work at ``--jobs jobs``: at most one per piece and one per CPU, at least 1."""
    return max(1, min(jobs, tasks, MAX_PROCESSES))


# --- the worker side ----------------------------------------------------------------------

_busy = False  # a task is running in this worker


class _Stop(BaseException):
    """SIGTERM in a worker while a task runs: unwinds the task (its finally blocks run)."""


def _on_term_in_worker(signum: int, frame: Any) -> None:
    # Whatever happens next, this process ends: SIGALRM's default action kills it if unwinding
    # stalls (or the signal landed between two tasks, where nothing catches _Stop).
    if hasattr(signal, "alarm"):
        signal.alarm(int(GRACE) + 1)
    if _busy:
        raise _Stop
    os._exit(128 + signum)


def _run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run one task in a worker; on SIGTERM leave quietly once the task has unwound."""
    global _busy
    try:
        _busy = True
        return fn(*args, **kwargs)
    except _Stop:
        os._exit(128 + signal.SIGTERM)
    finally:
        _busy = False


def _alive(pid: int) -> bool:
    """Whether process pid still runs. A process that has exited but is not yet reaped (a zombie:
    a killed parent whose own parent has not waited for it) still answers kill(pid, 0), so where
    /proc tells, a zombie counts as gone: a worker whose parent died while it started exits."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def die_with_parent(parent: int) -> None:
    """Ask Linux to send this process SIGTERM when its parent dies; a no-op elsewhere.

    The parent may already have died before the request: then exit now.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent and not _alive(parent):
        os._exit(128 + signal.SIGTERM)


def _unraisable_in_worker(u: Any) -> None:
    # SIGTERM may land while a weakref callback or __del__ runs; Python swallows what those raise
    # and prints a traceback, so the _Stop meant to unwind the task ends the worker here instead.
    if isinstance(u.exc_value, _Stop):
        os._exit(128 + signal.SIGTERM)
    sys.__unraisablehook__(u)


def _init_worker(parent: int) -> None:
    sys.unraisablehook = _unraisable_in_worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_term_in_worker)
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):  # blocked by the parent around the fork (see _Pool)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    die_with_parent(parent)
    from attncert.proofs.core import progress  # tqdm loads in a worker, not when the command line starts

    progress.disable()


# --- the parent side ----------------------------------------------------------------------


class _Pool(cf.ProcessPoolExecutor):
    """A ProcessPoolExecutor whose tasks run under :func:`_run` in workers set up by :func:`_init_worker`."""

    def __init__(self, workers: int) -> None:
        super().__init__(max_workers=workers, initializer=_init_worker, initargs=(os.getpid(),))

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> cf.Future:
        return super().submit(_run, fn, *args, **kwargs)

    def _spawn_process(self) -> None:
        # A new worker starts with SIGINT and SIGTERM blocked, so that it never runs the parent's
        # handlers (which raise); its initializer installs its own and unblocks them.
        if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
            return super()._spawn_process()  # type: ignore[misc]
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            super()._spawn_process()  # type: ignore[misc]
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def stop(self) -> None:
        """Cancel pending work, terminate the workers (kill them after GRACE s), wait for the pool's thread."""
        processes = list((getattr(self, "_processes", None) or {}).values())
        manager = getattr(self, "_executor_manager_thread", None)
        self.shutdown(wait=False, cancel_futures=True)
        for p in processes:
            with contextlib.suppress(Exception):
                p.terminate()
        deadline = time.monotonic() + GRACE
        for p in processes:
            p.join(max(0.0, deadline - time.monotonic()))
        for p in processes:
            if p.is_alive():
                with contextlib.suppress(Exception):
                    p.kill()
                p.join(GRACE)
        if manager is not None and manager is not threading.current_thread():
            manager.join(GRACE)


@contextlib.contextmanager
def pool(workers: int) -> Iterator[cf.ProcessPoolExecutor]:
    """A pool of ``workers`` processes; any exception out of the block stops them before it goes on."""
    executor = _Pool(workers)
    try:
        yield executor
        executor.shutdown(wait=True)
    except BaseException:
        executor.stop()
        raise


# --- the command line ----------------------------------------------------------------------


class _Signals:
    """What :func:`orderly_signals` yields: :meth:`report` prints the run's one line and gives its exit code."""

    def __init__(self, program: str) -> None:
        self.program = program
        self.received: int | None = None
        self.reported = False
        self.previous_hook = sys.unraisablehook

    def line(self, signum: int) -> str:
        return f"{self.program}: {STOPPED[signum][1]}\n"

    def report(self, signum: int) -> int:
        """Print "PROGRAM: interrupted" (or "terminated") once; the exit code 130 (or 143)."""
        signum = self.received or signum
        if not self.reported:
            self.reported = True
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write(self.line(signum))
                sys.stderr.flush()
        return STOPPED[signum][0]

    def _first(self, signum: int, frame: Any) -> None:
        self.received = signum
        for s in _STOP_SIGNALS:
            signal.signal(s, self._again)
        raise KeyboardInterrupt if signum == signal.SIGINT else Terminated

    def _unraisable(self, unraisable: Any) -> None:
        """sys.unraisablehook: a stop that a finaliser swallowed is delivered again (re-armed), anything else is
        reported as before. The signal is sent from another thread a moment later: sent here, its handler would
        raise inside this hook, which Python swallows too."""
        if self.received is not None and isinstance(unraisable.exc_value, (KeyboardInterrupt, Terminated)):
            for s in _STOP_SIGNALS:
                signal.signal(s, self._first)
            pid, signum = os.getpid(), self.received
            threading.Thread(target=lambda: (time.sleep(REDELIVERY), os.kill(pid, signum)), daemon=True).start()
            return
        self.previous_hook(unraisable)

    def _again(self, signum: int, frame: Any) -> None:
        # A second signal while the first one is being handled (workers being stopped, the
        # interpreter shutting down): end now, quietly. Workers die with this process.
        first = self.received or signum
        if not self.reported:
            self.reported = True
            with contextlib.suppress(OSError):
                os.write(2, self.line(first).encode())
        os._exit(STOPPED[first][0])


@contextlib.contextmanager
def orderly_signals(program: str, keep_after_signal: bool = False) -> Iterator[_Signals]:
    """SIGINT and SIGTERM as exceptions in the main thread, a second one as an immediate quiet exit.

    The previous handlers come back when the block ends, unless a signal arrived and
    ``keep_after_signal`` (a process that is about to exit keeps the quiet second-signal exit
    through interpreter shutdown). Outside the main thread nothing is installed.
    """
    state = _Signals(program)
    if threading.current_thread() is not threading.main_thread():
        yield state
        return
    previous = {s: signal.getsignal(s) for s in _STOP_SIGNALS}
    for s in _STOP_SIGNALS:
        signal.signal(s, state._first)
    sys.unraisablehook = state._unraisable
    try:
        yield state
    finally:
        sys.unraisablehook = state.previous_hook
        if not (keep_after_signal and state.received):
            for s, handler in previous.items():
                signal.signal(s, handler if handler is not None else signal.SIG_DFL)
