"""attncert's own programs in the RASP language, shipped with the package.

``classic.rasp`` holds the classic programs of constructions/classic.py; ``transpose``,
``matmul``, ``relu``, ``maxmin`` and ``softmax`` (with ``layout.rasp``, what they share) are the
lemma constructions of constructions/linalg.py and constructions/activations.py, one file each,
in the style of the universal-simulator paper's published .rasp files. Each builds the same
values as its Python counterpart, on the same layout (tests/constructions/test_rasp_programs.py).
``softmax`` writes e as the literal 2.718281828459045, so it needs that literal as an e-literal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flint import fmpq

from attncert.constructions.rasp.language.interpreter import Interpreter, read_e_literal
from attncert.constructions.rasp.language.sources import BUNDLED, BUNDLED_DIRECTORY

DIRECTORY = BUNDLED_DIRECTORY
#: The literal softmax.rasp writes for e (run it with this --e-literal).
E_LITERAL: fmpq = read_e_literal("2.718281828459045")


def path(name: str) -> Path:
    """The shipped program ``name`` (e.g. "classic", "matmul")."""
    return DIRECTORY / f"{name}.rasp"


def portable(name: str) -> str:
    """The shipped program ``name`` as a run names it on every machine (``<attncert>/classic.rasp``)."""
    return f"{BUNDLED}/{name}.rasp"


def build(name: str, expr: str, e_literals: frozenset[fmpq] = frozenset()) -> Any:
    """The value of ``expr`` (e.g. ``"matmul(tokens, 2, 3, 4)"``) after running the program ``name``:
    a sequence operation for a program's function applied to sequences. ``e_literals`` as for
    :class:`Interpreter`."""
    return build_all(name, [expr], e_literals)[0]


def build_all(name: str, exprs: list[str], e_literals: frozenset[fmpq] = frozenset()) -> list[Any]:
    """The values of several expressions after running the program ``name`` once."""
    it = Interpreter(str(path(name)), e_literals=e_literals)
    it.run(path(name).read_text())
    source = "".join(e.rstrip().rstrip(";") + ";" for e in exprs)
    return [v for _, v in Interpreter("--eval", it.env, it.loaded, e_literals).run(source)]
