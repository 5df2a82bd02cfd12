"""A fresh hostile audit of ``attncert prove tracr_model --method compositional``: self-consistent forgeries.

One certificate is proven once per module (tracr's ``make_length`` over a,b, max_seq_len 12: proven to N* = 9,
a real counterexample at 10, ``['a'] * 10`` decoding to 9 where RASP says 10). Each test edits it, rehashes the
model record where the model changes (``model_sha256``: sha256 of its canonical JSON) and reseals it, then runs
``attncert verify`` in a fresh process. A forgery's falsity is derived from the definitions (argmax decoding of
the recorded output classes over a float64 forward pass written here, an agreement not an exact decision, with
margins far above float error), never from the checker. Exit codes: OK 0, DOES-NOT-HOLD 1, BAD 2, REJECTED 3,
NOT-PROVEN 4.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.checkers.tracr.model import model_sha256

ATTNCERT = str(Path(sys.executable).with_name("attncert"))


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("fa") / "length.json"
    subprocess.run(
        [ATTNCERT, "prove", "tracr_model", "--program", "tracr.compiler.lib:make_length", "--vocab", "a,b",
         "--max-seq-len", "12", "--method", "compositional", "--out", str(out)],
        capture_output=True, timeout=120,
    )
    return json.loads(out.read_text())


def verify(doc: dict[str, Any], tmp_path: Path, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    """``attncert verify`` of the document resealed as a forger would, in a fresh process."""
    path = tmp_path / "forged.json"
    path.write_bytes(canonical_json(seal(doc)))
    return subprocess.run([ATTNCERT, "verify", str(path)], capture_output=True, text=True, timeout=timeout)


def rehash(doc: dict[str, Any]) -> None:
    doc["construction"]["model_sha256"] = model_sha256(doc["construction"]["model"])


def _dense(m: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = m["shape"]
    w = np.zeros((rows, cols))
    for i, j, v in m["w"]:
        w[i, j] = float(Fraction(v))
    b = np.zeros(cols)
    for j, v in (m["b"] or []):
        b[j] = float(Fraction(v))
    return w, b


def decode(model: dict[str, Any], tokens: list[str]) -> list[Any]:
    """The recorded model's decoded outputs at positions 1..n: a float64 forward pass of the definitions
    (embeddings, one softmax head per layer with scale, ReLU MLP, residual adds; argmax over the classes)."""
    row = {t["s"]: r for t, r in model["tokens"]}
    tok, _ = _dense(model["token_embed"])
    pos, _ = _dense(model["pos_embed"])
    seq = [model["bos"]["s"]] + tokens
    x = np.array([tok[row[t]] + pos[i] for i, t in enumerate(seq)])
    scale = float(Fraction(model["scale"]))
    assert model["heads"] == 1 and not model["causal"]
    for layer in model["layers"]:
        (wq, bq), (wk, bk), (wv, bv), (wo, bo) = (_dense(layer[k]) for k in ("query", "key", "value", "linear"))
        s = (x @ wq + bq) @ (x @ wk + bk).T / scale
        a = np.exp(s - s.max(axis=1, keepdims=True))
        a /= a.sum(axis=1, keepdims=True)
        x = x + (a @ (x @ wv + bv)) @ wo + bo
        (w1, b1), (w2, b2) = _dense(layer["linear_1"]), _dense(layer["linear_2"])
        x = x + np.maximum(x @ w1 + b1, 0) @ w2 + b2
    classes = model["output"]["classes"]
    return [int(Fraction(classes[int(np.argmax([x[p, c] for _, c in classes]))][0]["q"])) for p in range(1, len(seq))]


def test_own_forward_pass_agrees_with_the_recorded_counterexample(cert: dict[str, Any]) -> None:
    """Sanity of the independent decoder: length 9 correct, length 10 read as 9 (tracr's ramp, docs/tracr.md)."""
    model = cert["construction"]["model"]
    assert decode(model, ["a"] * 9) == [9] * 9
    assert decode(model, ["b", "a"] * 5)[0] == 9


def test_unchanged_certificate_does_not_hold(cert: dict[str, Any], tmp_path: Path) -> None:
    assert verify(copy.deepcopy(cert), tmp_path).returncode == 1


def test_counterexample_hidden_claiming_every_length(cert: dict[str, Any], tmp_path: Path) -> None:
    doc = copy.deepcopy(cert)
    res = doc["result"]
    res.update(holds=True, proven_up_to=12, first_failing_length=None, counterexample_length=None, verdict="proven")
    doc["outputs"]["confirmation"] = []
    doc["outputs"]["proof"]["failing"] = None
    doc["outputs"]["proof"]["proven"]["n"] = 12
    r = verify(doc, tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr


def test_n_star_raised_to_ten(cert: dict[str, Any], tmp_path: Path) -> None:
    doc = copy.deepcopy(cert)
    doc["result"].update(proven_up_to=10, first_failing_length=11, counterexample_length=None, verdict="undecided")
    conf = doc["outputs"]["confirmation"]
    doc["outputs"]["confirmation"] = [dict(conf[0], length=11, counterexamples=[])]
    doc["outputs"]["proof"]["proven"] = copy.deepcopy(doc["outputs"]["proof"]["failing"])
    doc["outputs"]["proof"]["proven"]["holds"] = True
    doc["outputs"]["proof"]["proven"]["problems"] = []
    r = verify(doc, tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr


def test_radius_lowered(cert: dict[str, Any], tmp_path: Path) -> None:
    doc = copy.deepcopy(cert)
    steps = doc["outputs"]["proof"]["proven"]["steps"]
    steps[1]["radius"][0][1] = "1/1000"
    steps[2]["margin"] = "499/1000"
    r = verify(doc, tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr


def test_confirmation_counterexample_deleted(cert: dict[str, Any], tmp_path: Path) -> None:
    """The confirmation's counterexample removed (counts kept): result must follow, so it is refused as stated."""
    doc = copy.deepcopy(cert)
    doc["outputs"]["confirmation"][0]["counterexamples"] = []
    r = verify(doc, tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr


def test_confirmation_runs_duplicated(cert: dict[str, Any], tmp_path: Path) -> None:
    doc = copy.deepcopy(cert)
    conf = doc["outputs"]["confirmation"]
    doc["outputs"]["confirmation"] = [conf[0], copy.deepcopy(conf[0])]
    r = verify(doc, tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr


def test_output_classes_swapped_model_wrong_at_length_3(cert: dict[str, Any], tmp_path: Path) -> None:
    """The output classes of 3 and 4 swapped (model rehashed, every other field kept): the model now decodes
    length 3 as 4 (own forward pass), so 'proven up to 9' is false."""
    doc = copy.deepcopy(cert)
    model = doc["construction"]["model"]
    classes = model["output"]["classes"]
    classes[3][1], classes[4][1] = classes[4][1], classes[3][1]
    rehash(doc)
    assert decode(model, ["a", "b", "a"]) == [4, 4, 4]
    r = verify(doc, tmp_path)
    assert r.returncode != 1 and r.returncode != 0 and r.returncode in (2, 3), r.stdout + r.stderr


def test_residual_labels_swapped_model_wrong_at_length_3(cert: dict[str, Any], tmp_path: Path) -> None:
    """The residual labels length:3 and length:4 swapped with the classes left: the recorded encoding of 3 is
    now the column the MLP writes for 4. The decoded output is unchanged (classes name columns), so this is a
    relabelling the checker must either reject or prove about the new labels consistently."""
    doc = copy.deepcopy(cert)
    model = doc["construction"]["model"]
    res = model["residual"]
    i, j = res.index("length:3"), res.index("length:4")
    res[i], res[j] = res[j], res[i]
    rehash(doc)
    r = verify(doc, tmp_path)
    assert r.returncode in (2, 3), r.stdout + r.stderr


def test_mlp_weight_changed_model_wrong_at_length_5(cert: dict[str, Any], tmp_path: Path) -> None:
    """One output weight of the counting MLP zeroed (model rehashed, N* and runs kept): the model is wrong at
    length 5 (own forward pass), so 'proven up to 9' is false."""
    doc = copy.deepcopy(cert)
    model = doc["construction"]["model"]
    before = decode(model, ["a"] * 5)
    w2 = model["layers"][0]["linear_2"]["w"]
    col = model["residual"].index("length:5")
    w2[:] = [e if e[1] != col else [e[0], e[1], "0"] for e in w2]
    rehash(doc)
    assert before == [5] * 5 and decode(model, ["a"] * 5) != [5] * 5
    r = verify(doc, tmp_path)
    assert r.returncode in (2, 3), r.stdout + r.stderr


def test_bos_token_renamed_to_a(cert: dict[str, Any], tmp_path: Path) -> None:
    doc = copy.deepcopy(cert)
    model = doc["construction"]["model"]
    model["bos"] = {"s": "a"}
    rehash(doc)
    r = verify(doc, tmp_path)
    assert r.returncode in (2, 3), r.stdout + r.stderr


def test_counts_as_text_is_bad_input(cert: dict[str, Any], tmp_path: Path) -> None:
    doc = copy.deepcopy(cert)
    doc["outputs"]["confirmation"][0]["counts"]["counterexamples"] = "many"
    r = verify(doc, tmp_path)
    assert r.returncode in (2, 3) and "Traceback" not in r.stderr, r.stdout + r.stderr


def test_listed_input_token_malformed(cert: dict[str, Any], tmp_path: Path) -> None:
    doc = copy.deepcopy(cert)
    doc["outputs"]["confirmation"][0]["counterexamples"][0]["input"][0] = {"zz": [1]}
    r = verify(doc, tmp_path)
    assert r.returncode in (2, 3) and "Traceback" not in r.stderr, r.stdout + r.stderr


def test_precision_at_its_largest_is_quick(cert: dict[str, Any], tmp_path: Path) -> None:
    doc = copy.deepcopy(cert)
    doc["params"]["precision"] = 4096
    r = verify(doc, tmp_path)
    assert r.returncode in (1, 2, 3) and "Traceback" not in r.stderr, r.stdout + r.stderr


@pytest.mark.parametrize("weight", ["99", "101"])
def test_bos_score_shifted_model_wrong_at_every_length(cert: dict[str, Any], tmp_path: Path, weight: str) -> None:
    """W_Q's 'one' row scaled so BOS no longer scores like the selected keys: the SelectorWidth's count is off
    at length 2 (own forward pass); N* = 9 kept must be refused."""
    doc = copy.deepcopy(cert)
    model = doc["construction"]["model"]
    for e in model["layers"][0]["query"]["w"]:
        if e[0] == model["residual"].index("one"):
            e[2] = weight
    rehash(doc)
    assert decode(model, ["a", "a"]) != [2, 2]
    r = verify(doc, tmp_path)
    assert r.returncode in (2, 3), r.stdout + r.stderr


def test_causal_flag_flipped(cert: dict[str, Any], tmp_path: Path) -> None:
    doc = copy.deepcopy(cert)
    doc["construction"]["model"]["causal"] = True
    doc["params"]["causal"] = 1
    rehash(doc)
    r = verify(doc, tmp_path)
    assert r.returncode in (2, 3), r.stdout + r.stderr


def test_attention_output_bias_added(cert: dict[str, Any], tmp_path: Path) -> None:
    doc = copy.deepcopy(cert)
    model = doc["construction"]["model"]
    model["layers"][0]["linear"]["b"] = [[model["residual"].index("length:0"), "1/2"]]
    rehash(doc)
    r = verify(doc, tmp_path)
    assert r.returncode in (2, 3), r.stdout + r.stderr


def test_position_embedding_writes_the_output(cert: dict[str, Any], tmp_path: Path) -> None:
    doc = copy.deepcopy(cert)
    model = doc["construction"]["model"]
    model["pos_embed"]["w"].append([1, model["residual"].index("length:2"), "1"])
    rehash(doc)
    r = verify(doc, tmp_path)
    assert r.returncode in (2, 3), r.stdout + r.stderr


def test_vocabulary_duplicated(cert: dict[str, Any], tmp_path: Path) -> None:
    doc = copy.deepcopy(cert)
    doc["inputs"]["vocab"] = doc["inputs"]["vocab"] * 1000
    r = verify(doc, tmp_path)
    assert r.returncode in (2, 3), r.stdout + r.stderr


def test_counterexample_rasp_output_forged(cert: dict[str, Any], tmp_path: Path) -> None:
    """The listed counterexample's RASP output made the decoded one: it is then no counterexample."""
    doc = copy.deepcopy(cert)
    entry = doc["outputs"]["confirmation"][0]["counterexamples"][0]
    entry["rasp"] = [{"q": "9"}] * 10
    r = verify(doc, tmp_path)
    assert r.returncode in (2, 3), r.stdout + r.stderr


@pytest.mark.parametrize("count", [15, pytest.param(150, marks=pytest.mark.slow)])
def test_perturbed_weights_induction_never_proves_a_wrong_model(cert: dict[str, Any], count: int) -> None:
    """Seeded small perturbations of make_length's weights (dyadic, float32): wherever the checker's induction
    proves lengths 1..N*, every input of those lengths decodes to RASP's length under the float64 forward pass
    above (an agreement). A 120 s run of this search (about 1,400 perturbations, 185 proven) found none wrong;
    the default run tries 15 of them, the slow one 150."""
    import itertools
    import random

    from flint import fmpq

    from attncert.proofs.checkers.programs import Unsupported
    from attncert.exact import ParseError
    from attncert.proofs.checkers.tracr.every_input import by_length, prove_every_input
    from attncert.proofs.checkers.tracr.model import Model, _Hypothesis

    rng = random.Random(20261204)
    program, vocab = cert["construction"]["program"], cert["inputs"]["vocab"]
    proven = 0
    for _ in range(count):
        m = copy.deepcopy(cert["construction"]["model"])
        layer = m["layers"][0]
        e = rng.choice(layer[rng.choice(["query", "key", "value", "linear", "linear_1", "linear_2"])]["w"])
        e[2] = str(Fraction(e[2]) * (1 + Fraction(rng.randint(-64, 64), rng.choice([16, 64, 256, 1024]))))
        try:
            model = Model(m)
            good = 0
            for n in range(1, 13):
                if not prove_every_input(model, program, vocab, n, fmpq(1, 10**6), exact=by_length(program, False))["holds"]:
                    break
                good = n
        except (Unsupported, ParseError, _Hypothesis):
            continue
        proven += good > 0
        for n in range(1, good + 1):
            assert all(decode(m, list(xs)) == [n] * n for xs in itertools.product(["a", "b"], repeat=n)), (e, n)
    assert proven > 0
