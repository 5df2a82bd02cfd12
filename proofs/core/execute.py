"""Running independent pieces of work: in this process, in local processes, or on a Dask cluster.

``attncert sweep`` (one task per claim and size) and the exhaustive language
claims (one chunk of words per task) run their work through the same three
runners. A runner is called as ``run(fn, items)`` and yields ``fn(item)`` for
every item, in the order they finish (so results must say which item they
answer); ``fn`` and the items must be picklable, and ``fn`` importable where it
runs:

* :func:`in_process`: one after the other, here (``--jobs 1``);
* :func:`local_pool`: a pool of local processes (:func:`proofs.core.workers.pool`:
  workers ignore Ctrl-C, die with this process, and are stopped when the
  caller's loop ends by an exception);
* :func:`dask_cluster`: a Dask distributed cluster (``--scheduler ADDRESS``);
  Dask is imported only there, so local runs need no Dask install.
"""

from __future__ import annotations

import concurrent.futures as cf
from typing import Any, Callable, Iterator, Sequence

from attncert.exact.errors import AttncertError
from attncert.proofs.core import workers

#: ``run(fn, items)`` yields ``fn(item)`` for every item, in the order they finish.
Runner = Callable[[Callable[[Any], Any], Sequence[Any]], Iterator[Any]]


def in_process(fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Any]:
    """One item after the other, in this process."""
    return map(fn, items)


def local_pool(jobs: int) -> Runner:
    """A pool of ``jobs`` local processes, no more than there are items (one item runs here, in no pool).

    On Ctrl-C, SIGTERM or an error in the caller's loop, pending items are cancelled
    and the workers terminated (an item cut short unwinds: its temporary files go).
    """

    def run(fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Any]:
        processes = workers.cap(jobs, len(items))
        if processes == 1:
            yield from map(fn, items)
            return
        with workers.pool(processes) as pool:
            futures = [pool.submit(fn, item) for item in items]
            for f in cf.as_completed(futures):
                yield f.result()

    return run


def dask_cluster(address: str, warn: Callable[[str], None]) -> Runner:
    """The items on the Dask distributed cluster at ``address``.

    Workers need attncert installed. FLINT's ball precision is one setting per
    process, so workers should run one thread each (a warning says so otherwise).
    """
    try:
        import distributed
    except ImportError:
        raise AttncertError("install dask[distributed] to use --scheduler") from None

    def run(fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Any]:
        try:
            client = distributed.Client(address, timeout="10s")
        except (OSError, ValueError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise AttncertError(f"cannot reach the Dask scheduler at {address}: {first}") from None
        with client:
            threaded = [w for w, n in client.nthreads().items() if n > 1]
            if threaded:
                warn(f"{len(threaded)} Dask worker(s) run several threads; start them with --nthreads 1 (FLINT precision is per process)")
            futures = client.map(fn, items, pure=False)
            try:
                for f in distributed.as_completed(futures):
                    yield f.result()
            finally:
                client.cancel(futures)

    return run


def runner_for(jobs: int, scheduler: str | None, warn: Callable[[str], None]) -> Runner:
    """The Dask cluster at ``scheduler`` if one is named, else ``jobs`` local processes (1: this process)."""
    if scheduler:
        return dask_cluster(scheduler, warn)
    if jobs < 1:
        raise AttncertError(f"--jobs must be at least 1, got {jobs}")
    return in_process if jobs == 1 else local_pool(jobs)
