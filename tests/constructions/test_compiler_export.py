"""The npz export of compiled models and its float forward pass (issue 35, part 6): categorical models with
their vocabulary and decoder, models for every length and causal ones, run by numpy alone and decoded, agree
with attncert's exact evaluation of the RASP program on every input (float agreement: the exact JSON model and
its certificate are the proof)."""

import itertools
import json
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from attncert.constructions.compiler.export import float_forward, run_npz
from attncert.constructions.rasp.language import session

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "examples" / "prog.rasp"


def compile_npz(tmp_path: Path, expr: str, vocab: str, n: int, *more: str) -> Path:
    out = tmp_path / f"{expr}{'-'.join(more)}.npz"
    r = subprocess.run(
        [sys.executable, "-m", "attncert", "compile", "--file", str(PROGRAM), "--expr", expr, "--vocab", vocab, "--max-seq-len", str(n), *more, "--format", "npz", "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out


def exact(expr: str, word: tuple) -> list:
    """attncert's exact evaluation of the RASP program (the interpreter, not the compiler)."""
    return session.run_program(PROGRAM.read_text(), str(PROGRAM), expr, list(word)).value


def same(got, want) -> bool:
    return all(g is None and w is None or w is not None and g is not None and abs(Fraction(g) - Fraction(str(w))) < Fraction(1, 10**9) for g, w in zip(got, want))


def test_a_categorical_model_exports_with_its_vocabulary_and_decoder_and_runs_on_every_input(tmp_path):
    path = compile_npz(tmp_path, "reverse", "a,b,c", 4)
    z = np.load(path)  # no pickled object: np.load's default refuses them
    assert str(z["tokens"]) == "categorical" and list(map(json.loads, z["vocab"])) == [{"s": "a"}, {"s": "b"}, {"s": "c"}]
    assert list(map(json.loads, z["output_values"])) == [{"s": "a"}, {"s": "b"}, {"s": "c"}]
    assert str(z["mode"]) == "fixed" and not bool(z["causal"]) and int(z["max_seq_len"]) == 4
    for word in itertools.product("abc", repeat=4):
        assert run_npz(path, word) == exact("reverse", word) == list(reversed(word))


def test_every_length_and_causal_models_run_at_each_length(tmp_path):
    path = compile_npz(tmp_path, "reverse", "a,b,c", 3, "--lengths", "every")
    frac = compile_npz(tmp_path, "frac_a", "a,b", 4, "--lengths", "every", "--causal")
    assert str(np.load(frac)["mode"]) == "every_length" and bool(np.load(frac)["causal"])
    for n in (1, 2, 3):
        for word in itertools.product("abc", repeat=n):
            assert run_npz(path, word) == list(reversed(word))
    for n in (1, 2, 3, 4):
        for word in itertools.product("ab", repeat=n):
            got = run_npz(frac, word)  # a numerical output: floats, near the exact fractions
            assert same(got, exact("frac_a", word)), (word, got)


def test_the_float_pass_refuses_what_the_model_does_not_take(tmp_path):
    path = compile_npz(tmp_path, "reverse", "a,b,c", 3)
    with pytest.raises(ValueError, match="not in the model's vocabulary"):
        run_npz(path, ["a", "d", "a"])
    with pytest.raises(ValueError, match="takes 3 tokens, not 2"):
        run_npz(path, ["a", "b"])
    assert float_forward(path, "abc").shape == (4, np.load(path)["embedding"].shape[1])  # positions 0..3 by width


def test_the_documented_use_of_the_export(tmp_path, monkeypatch):
    """docs/compiler.md's npz example runs as written and prints what it says."""
    text = (ROOT / "docs" / "compiler.md").read_text()
    section = text[text.index("## The npz format") :]
    shell = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "prog.rasp").write_text(PROGRAM.read_text())
    for line in shell.strip().splitlines():
        args = line.split("#")[0].split()
        assert args[0] == "attncert"
        assert subprocess.run([sys.executable, "-m", "attncert", *args[1:]], capture_output=True, timeout=120).returncode == 0, line
    printed = []
    exec(compile(code, "docs/compiler.md", "exec"), {"print": lambda *a: printed.append(" ".join(map(str, a)))})
    said = re.findall(r"^# (.*)$", code, re.M)  # each print's output, on the comment line under it
    assert printed and printed == said, (printed, said)
