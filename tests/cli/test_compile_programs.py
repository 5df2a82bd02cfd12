"""attncert compile --file F.rasp --expr NAME and --program MODULE:FUNCTION (issue 25, item 5).

Each written model is run by the independent forward pass of proofs/checkers/forward.py (which
never imports the compiler), and its output is compared with values worked out by hand."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from attncert.exact import QQ
from attncert.proofs.checkers.forward import forward

ROOT = Path(__file__).resolve().parents[2]
PROG = str(ROOT / "examples" / "prog.rasp")

PROGRAMS = '''
def ours():
    from attncert.constructions import rasp
    # the token one position back (position 0 keeps its own): Select(indices, max(indices - 1, 0), EQ)
    back = rasp.Map(lambda i: max(i - 1, 0), rasp.indices)
    return rasp.categorical(rasp.Aggregate(rasp.Select(rasp.indices, back, rasp.Comparison.EQ), rasp.tokens))

def tracr_reverse():
    from tracr.compiler import lib
    from tracr.rasp import rasp
    return lib.make_reverse(rasp.tokens)

def boom():
    raise RuntimeError("nope")

def not_a_program():
    return 3
'''


def attncert(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attncert", *args], capture_output=True, cwd=cwd, timeout=300)


def decoded(model: dict, word: str) -> str:
    """The output symbols the independent forward pass gives at positions 1..N (the one-hot column holding 1)."""
    x = forward(model, [{"s": t} for t in word], QQ)
    (label, cols), = model["outputs"].items()
    values = model["output_values"][label]
    out = []
    for p in range(1, len(word) + 1):
        hot = [v["s"] for c, v in zip(cols, values) if x[c][p] == 1]
        assert len(hot) == 1 and all(x[c][p] in (0, 1) for c in cols), (p, [x[c][p] for c in cols])
        out.append(hot[0])
    return "".join(out)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "progs.py").write_text(PROGRAMS)
    return tmp_path


def test_a_rasp_file_expression_compiles_to_a_model_that_reverses(work):
    r = attncert("compile", "--file", PROG, "--expr", "reverse", "--vocab", "a,b,c", "--max-seq-len", "5", cwd=work)
    assert r.returncode == 0, r.stderr.decode()
    assert b"reverse (vocab a,b,c, max_seq_len 5)" in r.stdout and b"written to models/reverse.json" in r.stdout
    model = json.loads((work / "models" / "reverse.json").read_text())
    for word, back in (("abcab", "bacba"), ("aabbc", "cbbaa"), ("ccccc", "ccccc")):
        assert decoded(model, word) == back


def test_a_python_function_returning_an_attncert_program_compiles(work):
    r = attncert("compile", "--program", "progs:ours", "--vocab", "x,y", "--max-seq-len", "4", "--out", "back.json", cwd=work)
    assert r.returncode == 0, r.stderr.decode()
    model = json.loads((work / "back.json").read_text())
    assert decoded(model, "xyyx") == "xxyy" and decoded(model, "yxxx") == "yyxx"


def test_a_python_function_returning_a_tracr_program_compiles(work):
    pytest.importorskip("tracr")
    r = attncert("compile", "--program", f"{work / 'progs.py'}:tracr_reverse", "--vocab", "a,b,c,d", "--max-seq-len", "4", "--out", "-", cwd=work)
    assert r.returncode == 0, r.stderr.decode()
    model = json.loads(r.stdout)
    assert decoded(model, "abcd") == "dcba" and decoded(model, "aabd") == "dbaa"


@pytest.mark.parametrize(
    "args, says",
    [
        (["--file", PROG, "--program", "progs:ours", "--vocab", "a", "--max-seq-len", "2"], "not both"),
        (["--expr", "reverse", "--program", "progs:ours", "--vocab", "a", "--max-seq-len", "2"], "--expr names a SOp of a --file program"),
        (["--file", PROG, "--max-seq-len", "2"], "needs --vocab a,b,c and --max-seq-len N"),
        (["universal", "--vocab", "a,b"], "--vocab is for a program of your own"),
        (["universal", "--file", PROG, "--vocab", "a", "--max-seq-len", "2"], "not both"),
        (["--file", PROG, "--sizes", "n=3", "--vocab", "a", "--max-seq-len", "2"], "--sizes is for a construction"),
        (["--program", "progs:boom", "--vocab", "a", "--max-seq-len", "2"], "the function raised RuntimeError: nope"),
        (["--program", "progs:not_a_program", "--vocab", "a", "--max-seq-len", "2"], "not a RASP SOp"),
        (["--program", "progs:nothing", "--vocab", "a", "--max-seq-len", "2"], "has no function 'nothing'"),
        (["--program", "no_such_module:f", "--vocab", "a", "--max-seq-len", "2"], "cannot import"),
        (["--program", "progs", "--vocab", "a", "--max-seq-len", "2"], "MODULE:FUNCTION"),
        (["--file", "missing.rasp", "--vocab", "a", "--max-seq-len", "2"], "missing.rasp"),
        (["--file", PROG, "--expr", "nosuch", "--vocab", "a", "--max-seq-len", "2"], "--expr:1:1: unknown name 'nosuch'"),
        (["--file", PROG, "--vocab", "a,a", "--max-seq-len", "2"], "names a token twice"),
        (["--file", PROG, "--vocab", "a", "--max-seq-len", "100000"], "raise it with --max-positions"),
        ([], "compile needs a construction"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(work, args, says):
    r = attncert("compile", *args, cwd=work)
    err = r.stderr.decode().strip()
    assert r.returncode == 2 and len(err.splitlines()) == 1 and says in err, err
    assert not (work / "models").exists()
