"""Golden REPL transcripts (tests/constructions/repl/*.txt) run through ``session.repl``.

Each transcript gives input lines ('>> ' first) and, after each, what the REPL prints for it;
the expected lines were worked out by hand from the language's meaning. '#:' lines set the
REPL's options (``decimals = N``, ``e-literal = LITERAL``); other '#' lines are comments. The
transcripts run in the directory of the shipped programs, so ``load "classic";`` finds them.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from attncert.constructions.rasp.language import programs, session
from attncert.constructions.rasp.language.interpreter import read_e_literal

TRANSCRIPTS = sorted(Path(__file__).with_name("repl").glob("*.txt"))


def read_transcript(path: Path) -> tuple[list[str], list[str], dict[str, str]]:
    """The input lines, the expected output lines and the options of a transcript."""
    inputs, expected, options = [], [], {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#:"):
            key, value = (s.strip() for s in line[2:].split("=", 1))
            options[key] = value
        elif line.startswith("#"):
            continue
        elif line.startswith(">> "):
            inputs.append(line[3:])
        else:
            expected.append(line)
    return inputs, expected, options


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.stem)
def test_golden_repl_transcript(path, monkeypatch):
    inputs, expected, options = read_transcript(path)
    assert inputs and set(options) <= {"decimals", "e-literal"}
    monkeypatch.chdir(programs.DIRECTORY)
    lines = iter(inputs)

    def read(prompt: str) -> str:
        line = next(lines, None)
        if line is None:
            raise EOFError  # as input() at the end of its input: the REPL ends
        return line

    out = io.StringIO()
    decimals = int(options["decimals"]) if "decimals" in options else None
    e_literals = frozenset({read_e_literal(options["e-literal"])}) if "e-literal" in options else frozenset()
    session.repl(read, out, decimals=decimals, e_literals=e_literals)
    assert out.getvalue().splitlines() == expected
