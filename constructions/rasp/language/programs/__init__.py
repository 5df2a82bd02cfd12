"""attncert's own programs in the RASP language, shipped with the package.

``classic.rasp`` holds the classic programs of constructions/classic.py; ``transpose``,
``matmul``, ``relu`` and ``maxmin`` (with ``layout.rasp``, what they share) are the lemma
constructions of constructions/linalg.py and constructions/activations.py, one file each, in
the style of the universal-simulator paper's published .rasp files. Each builds the same values
as its Python counterpart, on the same layout (tests/constructions/test_rasp_programs.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from constructions.rasp.language.interpreter import Interpreter

DIRECTORY = Path(__file__).parent


def path(name: str) -> Path:
    """The shipped program ``name`` (e.g. "classic", "matmul")."""
    return DIRECTORY / f"{name}.rasp"


def build(name: str, expr: str) -> Any:
    """The value of ``expr`` (e.g. ``"matmul(tokens, 2, 3, 4)"``) after running the program ``name``:
    a sequence operation for a program's function applied to sequences."""
    it = Interpreter(str(path(name)))
    it.run(path(name).read_text())
    return Interpreter("--eval", it.env, it.loaded).run(expr.rstrip().rstrip(";") + ";")[-1][1]
