"""The user's own RASP program, as ``attncert compile`` and the claims that take one read it.

Two sources, both read at compile or prove time only (a verifier reads a certificate's recorded
form and never these):

- ``--file F.rasp --expr NAME``: a program in attncert's RASP language, run by its bounded
  interpreter (:mod:`constructions.rasp.language`); NAME is the SOp to compile (default: the
  file's last statement).
- ``--program MODULE:FUNCTION``: FUNCTION, of no arguments, returns a RASP program: an attncert one
  (:mod:`constructions.rasp`) or a tracr one (``tracr.rasp.rasp``), which is rebuilt node for node
  as an attncert program with the same callables and labels (:mod:`constructions.tracr.program`).
  MODULE is a dotted module importable from the working directory, or a ``.py`` file. This runs
  the user's code.

Every failure of the user's side (no such file, module or name, a function that raises, a value
that is not a SOp) is one line.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any, Callable

from attncert.exact import ParseError


def parse_vocab(s: str) -> list[Any]:
    """'a,b,c' -> ['a', 'b', 'c']; an item spelled as an integer ('1', '-2') is the integer."""
    items = [t.strip() for t in str(s).split(",")]
    if not items or any(not t for t in items):
        raise ParseError(f"expected a comma-separated vocabulary such as a,b,c, got {s!r:.60}")
    vocab = [int(t) if re.fullmatch(r"-?[0-9]+", t) else t for t in items]
    if len(set(map(repr, vocab))) != len(vocab):
        raise ParseError(f"the vocabulary {s!r:.60} names a token twice")
    return vocab


def refuse_input_count(count: int, max_inputs: int) -> None:
    """One line, before the work, when the exhaustive input set is over --max-inputs."""
    if count > max_inputs:
        raise ParseError(f"{count:,} input sequences, over the limit of {max_inputs:,} (raise it with --max-inputs)")


def program_spec(spec: str) -> tuple[str, str]:
    """MODULE:FUNCTION -> (MODULE, FUNCTION), or one line."""
    module, sep, function = str(spec).rpartition(":")
    if not sep or not module or not function.isidentifier():
        raise ParseError(f"--program takes MODULE:FUNCTION, got {spec!r:.60}")
    return module, function


def load_program(module: str, function: str) -> Callable[[], Any]:
    """The function FUNCTION of MODULE, a dotted module importable from here or a .py file (the
    user's own code, imported when a proof runs; a verifier never does this)."""
    try:
        if module.endswith(".py"):
            path = Path(module)
            loaded = importlib.util.spec_from_file_location(path.stem, path)
            if loaded is None or not path.is_file():
                raise ParseError(f"no Python file {module!r:.60}")
            mod = importlib.util.module_from_spec(loaded)
            loaded.loader.exec_module(mod)  # type: ignore[union-attr]
        else:
            if "" not in sys.path:
                sys.path.insert(0, "")
            mod = importlib.import_module(module)
    except ImportError as e:
        raise ParseError(f"cannot import {module!r:.60}: {e}") from None
    fn = getattr(mod, function, None)
    if not callable(fn):
        raise ParseError(f"{module} has no function {function!r:.40}")
    return fn


def call_program(spec: str) -> Any:
    """The program FUNCTION() returns, for ``--program MODULE:FUNCTION``; an exception raised by the
    user's code is one line naming it."""
    fn = load_program(*program_spec(spec))
    try:
        return fn()
    except Exception as e:  # the user's code: any failure of it is theirs, reported in one line
        raise ParseError(f"{spec}: the function raised {type(e).__name__}: {str(e)[:80]}") from None


def attncert_program(program: Any, where: str) -> Any:
    """An attncert SOp for ``program``: itself if it is one, else a tracr program rebuilt node for node."""
    from attncert.constructions import rasp

    if isinstance(program, rasp.SOp):
        return program
    if type(program).__module__.startswith("tracr."):
        from attncert.constructions.tracr.program import from_tracr, to_rasp

        return to_rasp(from_tracr(program))
    raise ParseError(f"{where} gives a {type(program).__name__}, not a RASP SOp (attncert's or tracr's)")


def file_program(path: str, expr: str | None, text: str | None = None, files: Any = None) -> Any:
    """The SOp ``expr`` (default: the last statement) of a RASP-language program, run by attncert's
    interpreter under the file's portable name: the file's text (read from the disk, or ``text`` as
    recorded), its loads served by ``files`` (default: the disk)."""
    from attncert.constructions.rasp.language import session
    from attncert.constructions.rasp.language.sources import portable_name, read_source

    name = portable_name(path)
    value = session.program_value(read_source(name) if text is None else text, name, expr, files=files, expr_option="--expr")
    return attncert_program(value, f"{name}: {expr or 'its last statement'}")


def check_sources(file: str | None, expr: str | None, program: str | None) -> None:
    """One line for a program given twice (--file and --program) or an --expr without --file."""
    if file is not None and program is not None:
        raise ParseError("give --file F.rasp or --program MODULE:FUNCTION, not both")
    if expr is not None and file is None:
        raise ParseError("--expr names a SOp of a --file program")


def compile_program(sop: Any, vocab: list[Any], max_seq_len: int, lengths: str = "fixed", causal: bool = False) -> Any:
    """The exact compile of a user's program over categorical tokens (``compile_graph``, checked as
    every compile is), for exactly max_seq_len tokens or every length up to it (``lengths``), causal
    or not; the sequence length is checked against --max-positions before anything is built."""
    from attncert.constructions import rasp
    from attncert.constructions.compiler import compile_graph
    from attncert.exact.errors import LimitExceeded
    from attncert.exact.limits import current

    lim = current()
    if max_seq_len > lim.max_positions:
        raise LimitExceeded(f"--max-seq-len {max_seq_len:,} is over the limit of {lim.max_positions:,} positions (raise it with --max-positions if you mean it)")
    return compile_graph(rasp.to_graph(sop), max_seq_len, "categorical", vocab, lengths=lengths, causal=causal)
