"""The REPL at a terminal: line editing, history kept between sessions, Tab completion of names, Ctrl-C.

The history is the file :func:`history_file` (``$XDG_STATE_HOME/attncert/rasp_history``,
by default ``~/.local/state/attncert/rasp_history``): its last :data:`HISTORY_LENGTH`
lines are read when a session starts, and the session's lines added to them are
written back (atomically) when it ends. Line editing, history and completion are
readline's (GNU readline or libedit), and only when standard input is a terminal:
piped input is read as it comes and leaves no history.

While the REPL runs at a terminal, each Ctrl-C is a KeyboardInterrupt, which the REPL
turns into "drop this line" or "stop this statement" (:meth:`.session.Repl.run`);
around it, and for piped input throughout, the command line's own handlers hold (a
first Ctrl-C ends the run, a second one at once). Ctrl-D at the prompt ends the
session on a new line.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import Callable, Iterator, TextIO

from flint import fmpq

from attncert.constructions.rasp.language.session import DrawPatterns, Repl

#: Lines of history kept.
HISTORY_LENGTH = 1000


def history_file() -> Path:
    """Where the REPL's history is kept: $XDG_STATE_HOME/attncert/rasp_history (XDG's default ~/.local/state)."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "attncert" / "rasp_history"


def interactive() -> bool:
    """Whether standard input is a terminal (a person typing), not a pipe or a file."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError, OSError):  # closed, or replaced by an object without a descriptor
        return False


def run(
    out: TextIO, err: TextIO, decimals: int | None, e_literals: frozenset[fmpq], notes: list[str], draw: DrawPatterns | None, preload: str | None = None
) -> int:
    """The REPL on standard input, printing to ``out`` (greeting and ``notes`` on ``err``), after running
    ``preload`` (``-i FILE``); the number of statements that failed. Piped input is ``<stdin>`` in messages,
    with its own line numbers."""
    piped = not interactive()
    session = Repl(out, decimals, e_literals, draw, "<stdin>" if piped else "<repl>")
    print("attncert RASP (exact); running example \"hello\"; 'help' for help, 'exit' to leave", file=err)
    for line in notes:
        print(line, file=err)
    if preload is not None:
        session.run_file(preload)
    if piped:  # read as it comes; Ctrl-C ends the run, as the command line's handlers do
        return session.run(_reader(out), ctrl_c_per_line=False, numbered=True)
    with ctrl_c_per_line(), line_editing(session.names, history_file()):
        return session.run(_reader(out))


def _reader(out: TextIO) -> Callable[[str], str]:
    def read(prompt: str) -> str:
        try:
            return input(prompt)
        except EOFError:
            print(file=out)  # Ctrl-D (or the input's end) after the prompt: the shell's prompt gets a line of its own
            raise

    return read


@contextlib.contextmanager
def ctrl_c_per_line() -> Iterator[None]:
    """Within the block, every SIGINT is a KeyboardInterrupt (Python's default handler); the handler
    before it comes back after. Outside the main thread nothing changes (signals reach only that thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)


@contextlib.contextmanager
def line_editing(names: Callable[[], list[str]], history: Path) -> Iterator[None]:
    """readline for the block: the history read from ``history`` and written back after, Tab
    completing the words ``names()`` gives at the time."""
    import readline

    readline.clear_history()
    readline.set_history_length(HISTORY_LENGTH)
    with contextlib.suppress(OSError):  # no history yet, or unreadable: start without
        readline.read_history_file(history)
    previous = readline.get_completer()
    readline.set_completer(_completer(names))
    readline.parse_and_bind("bind ^I rl_complete" if "libedit" in (readline.__doc__ or "") else "tab: complete")
    try:
        yield
    finally:
        readline.set_completer(previous)
        _save_history(readline, history)


def _completer(names: Callable[[], list[str]]) -> Callable[[str, int], str | None]:
    """readline's completer: the state-th word of ``names()`` that starts with the text typed."""
    matches: list[str] = []

    def complete(text: str, state: int) -> str | None:
        nonlocal matches
        if state == 0:
            matches = [n for n in names() if n.startswith(text)]
        return matches[state] if state < len(matches) else None

    return complete


def _save_history(readline: object, history: Path) -> None:
    """Write the history atomically (a temporary file beside it, renamed); a failure is one note on stderr."""
    tmp = None
    try:
        history.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{history.name}.", suffix=".tmp", dir=history.parent)
        os.close(fd)
        readline.write_history_file(tmp)  # type: ignore[attr-defined]
        os.replace(tmp, history)
        tmp = None
    except OSError as e:
        print(f"attncert: note: the REPL's history was not saved in {history}: {e.strerror or e}", file=sys.stderr)
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
