"""Progress of long runs: one home for the progress bars of claims and sweeps.

A claim reports its progress with ::

    with progress.bar(total, "words", desc="match2") as bar:
        for piece in pieces:
            ...
            bar.update(len(piece))

The bar is a tqdm bar on stderr, shown only when

* stderr is a terminal (so pipes, files and captured output never see one),
* the environment does not say CI (``CI`` set to anything but ``0``/``false``,
  as CI services do) or ``ATTNCERT_NO_PROGRESS`` (set to anything non-empty),
* progress is not disabled in this process (:func:`disable`, which worker
  processes call, or the block of :func:`disabled`),
* no other bar is open in this process (one bar at a time: a sweep's bar, not
  the bars of the claims it runs in this process).

Otherwise :func:`bar` yields a stand-in whose methods do nothing. A caller that
has decided already passes ``show`` (``attncert sweep``: a terminal and no
``--no-progress``). A bar appears
only after :data:`DELAY` seconds, so short runs print nothing extra, and it is
erased when its block ends (unless ``leave``), so it never mixes with what the
command prints afterwards. Because ``attncert verify`` proves a claim again to
compare the documents, verifying a large certificate shows the same bars.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, Iterator

from tqdm import tqdm

#: Seconds before a bar appears.
DELAY = 1.0

_disabled = False
_open = 0


class _Bar(tqdm):  # type: ignore[misc]
    monitor_interval = 0  # no monitor thread: worker processes are forked while a bar is open


class _NoBar:
    """What :func:`bar` yields when no bar is shown: the same calls, doing nothing."""

    n = 0

    def update(self, n: float = 1) -> None:
        pass

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        pass

    def set_description_str(self, desc: str | None = None, refresh: bool = True) -> None:
        pass


def _environment_allows() -> bool:
    if os.environ.get("ATTNCERT_NO_PROGRESS"):
        return False
    return os.environ.get("CI", "").strip().lower() in ("", "0", "false", "no")


def enabled() -> bool:
    """Would :func:`bar` show a bar now?"""
    if _disabled or _open or not _environment_allows():
        return False
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


def disable() -> None:
    """No bars in this process from now on (worker processes: their parent shows the progress)."""
    global _disabled
    _disabled = True


@contextlib.contextmanager
def disabled() -> Iterator[None]:
    """No bars inside this block."""
    global _disabled
    before, _disabled = _disabled, True
    try:
        yield
    finally:
        _disabled = before


@contextlib.contextmanager
def bar(
    total: int | None, unit: str, desc: str | None = None, *, show: bool | None = None, leave: bool = False, delay: float | None = None
) -> Iterator[Any]:
    """A progress bar over ``total`` ``unit``s on stderr, or a stand-in.

    ``show``: None decides as the module docstring says; True shows the bar whatever stderr
    is (a command that decided already, as ``attncert sweep`` does); False shows none
    (``--no-progress``). ``delay``: seconds before it appears (default :data:`DELAY`).
    """
    global _open
    if not (enabled() if show is None else show):
        yield _NoBar()
        return
    _open += 1
    try:
        with _Bar(
            total=total, unit=unit, desc=desc, file=sys.stderr, leave=leave, delay=DELAY if delay is None else delay, dynamic_ncols=True
        ) as b:
            yield b
    finally:
        _open -= 1
