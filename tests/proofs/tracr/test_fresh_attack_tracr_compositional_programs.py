"""A fresh hostile audit of ``prove tracr_model --method compositional`` on a program other than make_length.

One certificate is proven once per module: tracr's ``make_hist`` (a SelectorWidth of ``tokens == tokens``, its
categorical MLP decoding the width) over a,b,c to length 5, proven on every input. Each test edits it as a forger
would (the model's ``model_sha256`` recomputed where the model changes, the recorded runs of the induction
recomputed with the checker's own function where the forgery needs them to agree, the document resealed) and runs
``attncert verify`` in a fresh process. Whether a forged model is wrong is decided here from the definitions: a
float64 forward pass of the recorded weights (softmax attention with tracr's scale, ReLU MLPs, argmax over the
recorded output classes) against RASP's histogram counted here (how often each position's token occurs); the
margins are whole classes, far above float error. Exit codes: OK 0, DOES-NOT-HOLD 1, BAD 2, REJECTED 3.

Two holes were found and fixed (``proofs/checkers/tracr/every_input.py``, ``Layout``): a configuration's centre
holds the position's embedding row only when the step reads the position, and a token's row only when it reads a
token column, so an embedding entry in any other column (a position writing ``tokens:a``; a token writing the
SelectorWidth's attention column) was missing from every centre, and the induction proved models wrong at
length 1 or 3. One resource hole was fixed too (``proofs/checkers/tracr/compositional.py``): thousands of copies
of a listed counterexample each cost a ball forward pass before the refusal (30,000 copies: 51 s). And a
categorical Aggregate whose query may select keys holding different tokens (RASP's mean undefined there) was
"proven on every input" with ``may_be_undefined`` empty, OK, where the exhaustive method finds 8 of 14 inputs
undefined (:func:`mixed_categorical`, slow: tracr compiles it); the BOS row left out of the model's token map
was a StopIteration traceback. And a sublayer's radius was measured only on the columns its weights write: an
MLP with every unit writing hist:2 removed, or a head whose W_O leaves out make_reverse's reverse:c, verified OK
while the value whose column is never written decodes as another.
"""

from __future__ import annotations

import copy
import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.proofs.tracr.test_fresh_attack_tracr_compositional import decode, rehash
from tests.proofs.tracr.test_fresh_attack_tracr_compositional import verify as verify_doc

ATTNCERT = str(Path(sys.executable).with_name("attncert"))
VOCAB = ["a", "b", "c"]
N = 5


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("hist") / "hist.json"
    r = subprocess.run(
        [ATTNCERT, "prove", "tracr_model", "--program", "tracr.compiler.lib:make_hist", "--vocab", ",".join(VOCAB),
         "--max-seq-len", str(N), "--method", "compositional", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(out.read_text())


def verify(doc: dict[str, Any], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return verify_doc(doc, tmp_path, timeout=300)


def rerun(doc: dict[str, Any]) -> int:
    """The forger's tool: the recorded runs and N* made those the checker's induction gives (N* returned)."""
    from flint import fmpq

    from attncert.proofs.checkers.tracr.every_input import by_length, prove_every_input
    from attncert.proofs.checkers.tracr.model import Model

    m, prog, vocab = Model(doc["construction"]["model"]), doc["construction"]["program"], doc["inputs"]["vocab"]
    exact = by_length(prog, m.causal)
    run = lambda n: prove_every_input(m, prog, vocab, n, fmpq(1, 10**6), exact=exact)  # noqa: E731
    good = 0
    while good < N and run(good + 1)["holds"]:
        good += 1
    doc["outputs"]["proof"]["proven"] = run(good) if good else None
    doc["outputs"]["proof"]["failing"] = run(good + 1) if good < N else None
    doc["result"]["proven_up_to"] = good
    return good


def hist(tokens: list[str]) -> list[int]:
    return [tokens.count(t) for t in tokens]


def wrong_inputs(model: dict[str, Any]) -> list[tuple[str, ...]]:
    return [xs for n in range(1, N + 1) for xs in itertools.product(VOCAB, repeat=n) if decode(model, list(xs)) != hist(list(xs))]


def mixed_categorical() -> Any:
    """A categorical Aggregate of the tokens over Select(indices, indices, LEQ): position 2 of 'ab' selects an a and
    a b, whose mean RASP's evaluation does not define (--program MODULE:FUNCTION of the slow test below)."""
    from tracr.rasp import rasp

    return rasp.categorical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ), rasp.tokens))


def test_the_certificate_and_the_decoder(cert: dict[str, Any], tmp_path: Path) -> None:
    """The genuine certificate verifies OK, and the decoder above agrees with RASP on every input of it."""
    assert cert["result"]["holds"] is True and cert["result"]["proven_up_to"] == N
    assert wrong_inputs(cert["construction"]["model"]) == []
    r = verify(copy.deepcopy(cert), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_position_writing_a_token_column(cert: dict[str, Any], tmp_path: Path) -> None:
    """Hole (fixed): position 3's embedding moves token a's 1 to b's column. Heads reading tokens alone do not read
    the position, so their configurations' centres lacked the position's row, and the induction proved every
    length (the recorded runs did not even change): verify said OK while 'aaa' decodes 2, 2, 1, not 3, 3, 3."""
    doc = copy.deepcopy(cert)
    m = doc["construction"]["model"]
    labels = m["residual"]
    m["pos_embed"]["w"] = sorted(m["pos_embed"]["w"] + [[3, labels.index("tokens:a"), "-1"], [3, labels.index("tokens:b"), "1"]])
    rehash(doc)
    assert decode(m, ["a", "a", "a"]) == [2, 2, 1]
    r = verify(doc, tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "the positional embedding of position 3 writes column 'tokens:a', which is no indices column" in r.stdout


def test_token_writing_the_width_column(cert: dict[str, Any], tmp_path: Path) -> None:
    """Hole (fixed): token c's embedding writes 1/8 into the SelectorWidth's attention column, which its MLP reads;
    the MLP's configurations hold the width alone (no token), so their centres lacked it and the induction, its
    runs recomputed, proved every length: verify said OK while 645 inputs decode wrong, e.g. 'cc' as 1, 1."""
    doc = copy.deepcopy(cert)
    m = doc["construction"]["model"]
    row = {t["s"]: r for t, r in m["tokens"]}
    m["token_embed"]["w"] = sorted(m["token_embed"]["w"] + [[row["c"], m["residual"].index("hist_selector_width_attn_output"), "1/8"]])
    rehash(doc)
    assert decode(m, ["c", "c"]) != [2, 2]
    r = verify(doc, tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "the embedding of token 'c' writes column 'hist_selector_width_attn_output', which is no token column" in r.stdout


@pytest.mark.parametrize("entry", [("pos", 2, "one", "1"), ("pos", 1, "tokens:BOS", "1"), ("token", "a", "tokens:BOS", "1"), ("token", "b", "indices:2", "1")])
def test_stray_embeddings_are_outside_the_class(cert: dict[str, Any], entry: tuple[Any, ...]) -> None:
    """The induction itself refuses (Unsupported, one line) a position writing a column not of ``indices`` or a
    token one not of ``tokens`` beyond the shared columns, before any run: so does the prover."""
    from flint import fmpq

    from attncert.proofs.checkers.programs import Unsupported
    from attncert.proofs.checkers.tracr.every_input import prove_every_input

    m = copy.deepcopy(cert["construction"]["model"])
    kind, at, label, v = entry
    col = m["residual"].index(label)
    if kind == "pos":
        m["pos_embed"]["w"] = sorted(m["pos_embed"]["w"] + [[at, col, v]])
    else:
        r = {t["s"]: r for t, r in m["tokens"]}[at]
        m["token_embed"]["w"] = sorted(e for e in m["token_embed"]["w"] if e[:2] != [r, col]) + [[r, col, v]]
        m["token_embed"]["w"].sort()
    with pytest.raises(Unsupported, match="which is no (indices|token) column"):
        prove_every_input(m, cert["construction"]["program"], cert["inputs"]["vocab"], 2, fmpq(1, 10**6))


@pytest.mark.parametrize("predicate", ["NEQ", "TRUE", "LEQ", "GT"])
def test_select_predicate_forged(cert: dict[str, Any], tmp_path: Path, predicate: str) -> None:
    """The program's Select compared otherwise (its RASP output another), the runs recomputed: the induction
    fails at length 1, so N* = 0 and the claim of every length is refused."""
    doc = copy.deepcopy(cert)
    (sel,) = [n for n in doc["construction"]["program"]["nodes"] if n["op"] == "select"]
    sel["predicate"] = predicate
    assert rerun(doc) == 0
    doc["result"]["proven_up_to"] = N  # the claim kept: every length
    r = verify(doc, tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "the induction does not prove every length up to the recorded N* = 5" in r.stdout


def test_causal_flag_set(cert: dict[str, Any], tmp_path: Path) -> None:
    """The model made causal (runs recomputed: the induction proves it, a prefix count is what both compute under
    tracr's causal semantics): refused by the rebuild, whose reference semantics is the recorded non-causal one."""
    doc = copy.deepcopy(cert)
    doc["construction"]["model"]["causal"] = True
    doc["params"]["causal"] = 1
    rehash(doc)
    assert rerun(doc) == N
    r = verify(doc, tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "reference.semantics" in r.stdout


@pytest.mark.parametrize("edit", ["delete select", "duplicate select", "output to select", "vocab twice", "vocab token unknown"])
def test_structural_edits(cert: dict[str, Any], tmp_path: Path, edit: str) -> None:
    doc = copy.deepcopy(cert)
    prog = doc["construction"]["program"]
    i = next(k for k, n in enumerate(prog["nodes"]) if n["op"] == "select")
    if edit == "delete select":
        del prog["nodes"][i]
    elif edit == "duplicate select":
        prog["nodes"].insert(i, copy.deepcopy(prog["nodes"][i]))
    elif edit == "output to select":
        prog["output"] = prog["nodes"][i]["label"]
    elif edit == "vocab twice":
        doc["inputs"]["vocab"].append({"s": "a"})
    else:
        doc["inputs"]["vocab"].append({"s": "d"})
    r = verify(doc, tmp_path)
    assert r.returncode in (2, 3), r.stdout + r.stderr


@pytest.mark.parametrize("listed", [10, 5000])
def test_thousands_of_listed_counterexamples_refused_before_any_pass(cert: dict[str, Any], tmp_path: Path, listed: int) -> None:
    """Resource hole (fixed): a confirmation listing one counterexample 3,000 times (counts raised to match) ran a
    ball forward pass for each before its refusal (30,000 copies of sort_unique's [1, 1]: 51 s, 10 MB). Now more
    than ``params.listed`` or an input twice is refused before any pass (``params.listed`` raised too: twice)."""
    doc = copy.deepcopy(cert)
    doc["params"]["listed"] = listed
    doc["result"].update(proven_up_to=N - 1, first_failing_length=N, holds=False, verdict="counterexample", counterexample_length=N)
    entry = {"input": [{"s": "a"}] * N, "rasp": [{"q": str(N)}] * N, "leaves_encoding": None, "precision": 64,
             "positions": [{"position": p, "status": "counterexample"} for p in range(1, N + 1)]}
    doc["outputs"]["confirmation"] = [{"length": N, "inputs": "constructed", "counterexamples": [entry] * 3000,
                                       "counts": {"correct": 0, "counterexamples": 3000, "inputs": 3000, "undecided": 0, "undefined": 0}}]
    r = verify(doc, tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    assert ("more counterexamples are listed than params.listed = 10" if listed == 10 else "a counterexample is listed twice") in r.stdout


def test_bos_row_left_out_of_the_token_map(cert: dict[str, Any], tmp_path: Path) -> None:
    """The model's token -> row map without BOS's entry: one line, BAD (was a StopIteration traceback)."""
    doc = copy.deepcopy(cert)
    tokens = doc["construction"]["model"]["tokens"]
    tokens[:] = [t for t in tokens if t[0] != {"s": "BOS"}]
    rehash(doc)
    r = verify(doc, tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "has no embedding row" in r.stdout


@pytest.mark.slow
def test_categorical_mean_of_different_tokens_is_undefined(tmp_path: Path) -> None:
    """Hole (fixed): RASP's evaluation is undefined at position 2 of 'ab' (a mean of a and b), yet the compositional
    method proved every input with may_be_undefined empty, verify OK. Now the head records where the selected keys
    may hold two values (the compiled checker's rules: Select(K, Q, EQ) with K distinct or determining the value, or
    a static selection of one key), so the claim of every input does not hold, as the exhaustive method finds."""
    out = tmp_path / "mixed.json"
    program = f"{__name__}:mixed_categorical"
    r = subprocess.run([ATTNCERT, "prove", "tracr_model", "--method", "compositional", "--program", program, "--vocab", "a,b",
                        "--max-seq-len", "3", "--out", str(out)], capture_output=True, text=True, timeout=300)
    doc = json.loads(out.read_text())
    assert doc["result"]["holds"] is False, r.stdout + r.stderr
    assert any("may select keys holding different values" in u for u in doc["result"]["may_be_undefined"])
    assert subprocess.run([ATTNCERT, "verify", str(out)], capture_output=True, timeout=300).returncode == 1
    doc["result"].update(holds=True, may_be_undefined=[])
    for run in (doc["outputs"]["proof"]["proven"],):
        run["may_be_undefined"] = []
    v = verify(doc, tmp_path)
    assert v.returncode == 3, v.stdout + v.stderr


def test_mlp_never_writing_a_value_s_column(cert: dict[str, Any], tmp_path: Path) -> None:
    """Hole (fixed): every weight of the SelectorWidth's MLP writing hist:2 removed (the model can never decode 2:
    'aa' decodes 0, 0). The MLP step measured the radius on the columns its units write only, so width 2's column,
    1 in the centre and 0 in the model, was never compared, and the induction (runs recomputed) proved every
    length: verify said OK. Now every column of the SOp's encoding is measured."""
    doc = copy.deepcopy(cert)
    m = doc["construction"]["model"]
    (layer,) = m["layers"]
    col = m["residual"].index("hist:2")
    layer["linear_2"]["w"] = [e for e in layer["linear_2"]["w"] if e[1] != col]
    rehash(doc)
    assert decode(m, ["a", "a"]) == [0, 0]
    assert rerun(doc) == 1  # length 1 alone: every count there is 1
    doc["result"]["proven_up_to"] = N
    r = verify(doc, tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "the induction does not prove every length up to the recorded N* = 5" in r.stdout


@pytest.mark.slow
def test_head_never_writing_a_value_s_column(tmp_path: Path) -> None:
    """Hole (fixed): make_reverse over a,b,c to length 4 with the W_O weight writing reverse:c removed (the input
    'c' decodes a). The head's radius was measured on the columns W_O writes only, so the induction proved every
    length: verify said OK. Now every column of the Aggregate's encoding is measured."""
    out = tmp_path / "reverse.json"
    r = subprocess.run([ATTNCERT, "prove", "tracr_model", "--method", "compositional", "--program", "tracr.compiler.lib:make_reverse(tokens)",
                        "--vocab", "a,b,c", "--max-seq-len", "4", "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.read_text())
    m = doc["construction"]["model"]
    col = m["residual"].index("reverse:c")
    (layer,) = [x for x in m["layers"] if any(e[1] == col for e in x["linear"]["w"])]
    layer["linear"]["w"] = [e for e in layer["linear"]["w"] if e[1] != col]
    rehash(doc)
    v = verify(doc, tmp_path)
    assert v.returncode == 3, v.stdout + v.stderr
    assert "the induction does not prove every length up to the recorded N* = 4" in v.stdout
