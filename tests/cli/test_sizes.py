"""One spelling of sizes on every verb, in its two forms (--n 4 --d 3 and --sizes n=4,d=3), and --inputs FILE
taking the sizes from the file."""

import json
import subprocess
import sys

import pytest


def attncert(cwd, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attncert", *args], capture_output=True, cwd=cwd, timeout=120)


def certificate(cwd, *args: str) -> dict:
    r = attncert(cwd, "prove", *args, "--out", "c.json")
    assert r.returncode == 0, r.stderr
    return json.loads((cwd / "c.json").read_text())


@pytest.mark.parametrize(
    "verb, options, spelt",
    [
        (["graph", "transpose", "--format", "json"], ["--r", "2", "--c", "3"], ["--sizes", "r=2,c=3"]),
        (["compile", "transpose", "--out", "-"], ["--r", "2", "--c", "3"], ["--sizes", "r=2,c=3"]),
        # a list-valued parameter: the values after NAME= are its value's text
        (["plot", "sinkhorn_universality", "--out", "-"], ["--pairs", "1", "--held-out", "0", "--widths", "1,2"], ["--sizes", "pairs=1,held_out=0,widths=1,2"]),
    ],
)
def test_both_forms_give_the_same_output(tmp_path, verb, options, spelt):
    a, b = attncert(tmp_path, *verb, *options), attncert(tmp_path, *verb, *spelt)
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert a.stdout == b.stdout and a.stdout


def test_prove_takes_both_forms_and_a_compiled_claim_the_constructions_sizes_in_both(tmp_path):
    doc = certificate(tmp_path, "transpose", "--sizes", "r=2", "--c", "3")  # the forms mix, each size once
    assert (doc["params"]["r"], doc["params"]["c"]) == (2, 3)
    assert doc["inputs"]["M"] and len(doc["inputs"]["M"]) == 2 and len(doc["inputs"]["M"][0]) == 3
    by_option = certificate(tmp_path, "compiled", "--of", "transpose", "--r", "2", "--c", "3")
    by_spec = certificate(tmp_path, "compiled", "--of", "transpose", "--sizes", "r=2,c=3")
    assert by_option["params"]["sizes"] == by_spec["params"]["sizes"] == "c=3,r=2"
    assert by_option["construction"]["model"] == by_spec["construction"]["model"]


def test_sweep_takes_both_forms_each_value_a_task(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    common = ["sweep", "transpose", "matmul", "--jobs", "1", "--no-progress"]
    a = attncert(tmp_path, *common, "--r", "2,3", "--k", "2", "--out-dir", "a")
    b = attncert(tmp_path, *common, "--sizes", "r=2,3,k=2", "--out-dir", "b")
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    names = {f"transpose__r={r}__seed=0.json" for r in (2, 3)} | {f"matmul__k=2__r={r}__seed=0.json" for r in (2, 3)}
    assert {p.name for p in (tmp_path / "a").iterdir()} == {p.name for p in (tmp_path / "b").iterdir()} == names


@pytest.mark.parametrize(
    "args, says",
    [
        (["prove", "transpose", "--sizes", "r=2", "--r", "3"], "--sizes r=... and --r both give r; give it once"),
        (["compile", "transpose", "--sizes", "r=2", "--r", "3"], "--sizes r=... and --r both give r; give it once"),
        (["prove", "transpose", "--sizes", "q=2"], "transpose has no parameter 'q'"),
        (["graph", "transpose", "--sizes", "r"], "--sizes: expected NAME=V1,V2,... such as n=4,d=3"),
        (["prove", "transpose", "--sizes", "r=2,3"], "expected a positive integer, got '2,3'"),
    ],
)
def test_a_bad_size_is_one_line_and_exit_2(tmp_path, args, says):
    r = attncert(tmp_path, *args)
    err = r.stderr.decode().strip()
    assert r.returncode == 2 and len(err.splitlines()) == 1 and says in err, err


def test_inputs_take_the_sizes_from_the_file(tmp_path):
    (tmp_path / "m.json").write_text(json.dumps({"M": [[1, 2, 3, 4], [5, 6, 7, 8]]}))
    doc = certificate(tmp_path, "transpose", "--inputs", "m.json")
    assert (doc["params"]["r"], doc["params"]["c"]) == (2, 4)  # M is 2 x 4, not the default 3 x 5
    assert doc["outputs"]["output"] == [["1", "5"], ["2", "6"], ["3", "7"], ["4", "8"]]  # M^T
    # three heads of width d = 2, values of width dv = 1, X of one row, W_O (h dv) x d_o = 3 x 4
    eye = [[1, 0], [0, 1]]
    heads = {f"A{m}": eye for m in (1, 2, 3)} | {f"V{m}": [[1], [2]] for m in (1, 2, 3)}
    (tmp_path / "mh.json").write_text(json.dumps({"X": [[1, 2]], **heads, "WO": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]}))
    doc = certificate(tmp_path, "multihead", "--inputs", "mh.json")
    assert {k: doc["params"][k] for k in ("n", "d", "dv", "h", "do")} == {"n": 1, "d": 2, "dv": 1, "h": 3, "do": 4}
    assert attncert(tmp_path, "verify", "c.json").returncode == 0
    # a size given keeps its value, and the file that does not fit it is refused in one line
    r = attncert(tmp_path, "prove", "multihead", "--inputs", "mh.json", "--h", "2", "--out", "x.json")
    err = r.stderr.decode().strip()
    assert r.returncode == 2 and len(err.splitlines()) == 1 and "'A3', which the construction at these sizes does not take" in err
