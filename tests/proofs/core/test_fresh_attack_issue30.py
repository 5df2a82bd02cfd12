"""A fresh hostile audit of issue 30's changes: what was tried, and what it found.

Every expected verdict below is derived from the definitions (RASP's semantics as attncert's
evaluator states them, tracr's forward pass, the documented limits), never from the code under
test. Attempts that succeeded (a false claim that ``verify`` says OK, ``prove`` writing a false
certificate, ``verify`` exhausting time or memory on a small hostile file) are marked
``xfail(strict=True)`` with the reason; they must keep failing until the hole is fixed. The others
are plain tests: the attack was refused (REJECTED, BAD, or one line and exit 2).

Successes:

* compiled_program --method compositional: a categorical Aggregate of a numerical SOp whose values
  are booleans. RASP treats booleans as tokens in a categorical Aggregate (the selected value, here
  True), the proof and the compiler take the mean of 0/1. The certificate says "proven for all 14
  inputs" and verifies OK, while the recorded program's own evaluation raises on every input and the
  program (str of the aggregate) gives 'True' where the model gives '1'.
* compositional: an ordered Comparison between a boolean and a number (LT) raises in attncert's RASP
  evaluation, but the proof records ``may_be_undefined = []`` and "proven for all 14 inputs".
* a numerical output that holds booleans: the exhaustive prover writes holds = true, which verify
  FAILs (the checker decodes a numerical column only to numbers); the compositional certificate of
  the same program verifies OK.
* compositional tabulation records the compiler's calls only (Python ints for an integer
  vocabulary), while attncert's evaluation calls with exact rationals: a type-sensitive function
  (isinstance(x, int)) is "proven" although attncert's evaluation of the program disagrees with the
  model at every input holding a number.
* prove compiled on Select(tokens, numbers, GEQ) ends in a TypeError traceback, not one line.
* verify exhausts time or memory on small hostile files (60 s, 3 GiB cap): a compositional
  certificate whose head has N V^2 key configurations (materialised before they are counted); an
  identity graph that squares the mean of 1,200 tokens at every position (each product within the
  per-product term limit, their number unbounded); an identity graph of 16,000 selects over a chain
  of 16,000 maps (the ancestry of each select recomputed and kept); a tracr_model certificate with
  1,500 extra residual columns read diagonally by W_Q, W_K and W_1 (the cost model reads only the
  vocabulary and max_seq_len): 113 s and 3.9 GB, and under a 3 GiB address-space cap FLINT aborts the
  process ("Unable to allocate memory", SIGABRT, exit 134) instead of a BAD line.
* the certificate-size estimate does not cover identity certificates: prove universal --for-all
  --n 32 --d 32 --dv 8 ran 217 s with 9.1 GB and then refused its own 85,068,586-byte document.
"""

from __future__ import annotations

import copy
import json
import resource
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from attncert.exact import ParseError
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.core.verify import BAD, OK, REJECTED, verify_bytes

HERE = "tests.proofs.core.test_fresh_attack_issue30"


def status(doc: dict) -> str:
    return verify_bytes(canonical_json(seal(doc))).status


def unsealed(doc: dict) -> dict:
    doc = copy.deepcopy(doc)
    doc.pop("sha256", None)
    return doc


# -- tracr programs (module-level, so that --program tests.proofs.core.test_fresh_attack_issue30:NAME imports them) --


def _bool_aggregate():
    from tracr.rasp import rasp

    # b is numerical and holds booleans; the categorical Aggregate selects the keys holding the query's own
    # token, so every selected b is the same boolean: RASP gives that boolean (True at token "a")
    b = rasp.numerical(rasp.Map(lambda x: x == "a", rasp.tokens))
    return rasp.categorical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ), b, default=0))


def bool_aggregate_str():
    from tracr.rasp import rasp

    return rasp.categorical(rasp.Map(lambda v: str(v), _bool_aggregate()))


def bool_vs_number_lt():
    from tracr.rasp import rasp

    m = rasp.categorical(rasp.Map(lambda x: True if x == "a" else 2, rasp.tokens))
    return rasp.categorical(rasp.SelectorWidth(rasp.Select(m, m, rasp.Comparison.LT)))


def numerical_bool():
    from tracr.rasp import rasp

    return rasp.numerical(rasp.Map(lambda x: x == "a", rasp.tokens))


def is_a_number():
    from tracr.rasp import rasp

    return rasp.categorical(rasp.Map(lambda x: isinstance(x, int), rasp.tokens))


def string_vs_number_geq():
    from tracr.rasp import rasp

    one = rasp.categorical(rasp.Map(lambda x: 1, rasp.tokens))
    return rasp.numerical(rasp.SelectorWidth(rasp.Select(rasp.tokens, one, rasp.Comparison.GEQ)))


def shift():
    from tracr.rasp import rasp

    sel = rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + 1)
    return rasp.categorical(rasp.Aggregate(sel, rasp.tokens, default=None))


def _program(method: str, name: str, vocab: str, n: int, lengths: str = "every") -> dict:
    from attncert.proofs.compiled import program as P

    return P.prove(vocab, n, lengths, False, 100_000, 10, program=f"{HERE}:{name}", method=method)


# -- compiled_program --method compositional ----------------------------------------------------------


def test_a_categorical_aggregate_of_booleans_is_not_proven_as_a_mean():
    pytest.importorskip("tracr")
    from attncert.constructions.rasp.evaluate import evaluate
    from attncert.constructions.tracr.program import from_tracr, to_rasp

    # By RASP's definition at input ['a']: b = [True]; the query selects its own key, whose value is True, so the
    # categorical Aggregate gives True and the map str gives 'True', while a head reading b's one numerical column
    # gives the mean 1 (str: '1'). The audit's certificate said "every one of the 14 inputs" and verified OK.
    assert evaluate(to_rasp(from_tracr(bool_aggregate_str())), ["a"]) == ["True"]
    # The fix refuses the program (the brief allows refusing or modelling it exactly): no certificate is written,
    # by either method, so none can state the false claim; the checker refuses such a recorded program too
    # (tests/proofs/compiled/test_compositional_kinds.py, a forged certificate of this class).
    for method in ("compositional", "exhaustive"):
        with pytest.raises(ParseError, match="may hold booleans"):
            _program(method, "bool_aggregate_str", "a,b", 3)


def test_an_ordered_comparison_of_a_boolean_with_a_number_is_outside_the_domain():
    pytest.importorskip("tracr")
    from attncert.constructions.rasp.evaluate import EvaluationError, evaluate
    from attncert.constructions.tracr.program import from_tracr, to_rasp

    # the definition: attncert's evaluator orders values of one kind (numbers, or strings, ...); True against 2 is refused
    with pytest.raises(EvaluationError):
        evaluate(to_rasp(from_tracr(bool_vs_number_lt())), ["a", "b"])
    doc = _program("compositional", "bool_vs_number_lt", "a,b", 3)
    assert doc["result"]["may_be_undefined"] != [], "the input ['a', 'b'] is not in the program's domain"


def test_prove_and_verify_agree_on_a_numerical_output_that_holds_booleans():
    pytest.importorskip("tracr")
    doc = _program("exhaustive", "numerical_bool", "a,b", 2)
    assert status(doc) == OK, verify_bytes(canonical_json(seal(unsealed(doc)))).reason


def test_the_two_methods_agree_on_a_numerical_output_that_holds_booleans():
    pytest.importorskip("tracr")
    comp = _program("compositional", "numerical_bool", "a,b", 2)
    exh = _program("exhaustive", "numerical_bool", "a,b", 2)
    # the exhaustive checker's reading (a numerical column decodes to a number, never to the boolean RASP gives)
    reason = verify_bytes(canonical_json(seal(unsealed(exh)))).reason
    judged_false = "counterexamples" in reason and "'correct': 0" in reason
    assert not (judged_false and comp["result"]["holds"] and status(comp) == OK)


def test_the_compositional_tables_are_the_program_as_attncert_evaluates_it():
    pytest.importorskip("tracr")
    from attncert.constructions.rasp.evaluate import evaluate
    from attncert.constructions.tracr.program import from_tracr, to_rasp

    # the definition: numeric tokens are converted exactly into the domain (docs/rasp.md), so the token 1 is the
    # rational 1, not a Python int: the program gives False there
    assert evaluate(to_rasp(from_tracr(is_a_number())), [1]) == [False]
    doc = _program("compositional", "is_a_number", "a,1,2", 2)
    table = doc["construction"]["program"]["program"]["nodes"][-1]["table"]
    assert [[{"q": "1"}], {"b": False}] in table or not doc["result"]["holds"]


def test_an_ordered_comparison_of_strings_with_numbers_is_refused_in_one_line():
    pytest.importorskip("tracr")
    with pytest.raises(ParseError):
        _program("compositional", "string_vs_number_geq", "a,b", 2)


# -- verify on small hostile files: within a minute and 3 GiB, one line, REJECTED or BAD ----------------------------

CAP = 3 << 30


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def _cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attncert", *args], capture_output=True, text=True, timeout=timeout)


def verified_within_a_minute(path: Path) -> tuple[int, str] | None:
    """(exit code, output) of verify, or None if it ran past a minute (address space capped at 3 GiB)."""
    try:
        r = subprocess.run([sys.executable, "-m", "attncert", "verify", str(path)], capture_output=True, text=True, timeout=60, preexec_fn=_capped)
    except subprocess.TimeoutExpired:
        return None
    return r.returncode, r.stdout + r.stderr


def assert_refused_cleanly(path: Path) -> None:
    done = verified_within_a_minute(path)
    assert done is not None, "verify ran past a minute"
    code, line = done
    assert code in (2, 3), f"verify exited with {code} (a negative code or 134 is a signal): {line[-300:]}"
    assert "out of memory" not in line, line
    assert line.split()[0] in (REJECTED, BAD) and "Traceback" not in line, line


def _write(path: Path, doc: dict) -> Path:
    path.write_bytes(canonical_json(seal(unsealed(doc))))
    return path


def compositional_bomb(base: dict, V: int, N: int) -> dict:
    """A compositional certificate (program recorded as tables) over V tokens and lengths 1..N: m is a map of
    the tokens with V values, and a head aggregates tokens under Select(m, tokens, EQ), reading m on the key
    side (W_QK) and tokens (W_OV): its key configurations are N V^2."""
    from attncert.proofs.checkers.compiled.construction import model_sha256

    d = unsealed(base)
    toks = [f"t{i}" for i in range(V)]
    vocab = [{"s": t} for t in toks]
    tc, mc, ac = (list(range(2 + k * V, 2 + (k + 1) * V)) for k in range(3))
    basis = ["one", "bos"] + [f"tokens={t!r}" for t in toks] + [f"m={i}" for i in range(V)] + [f"agg={t!r}" for t in toks]
    m = d["construction"]["model"]
    m.update({
        "basis": basis, "max_seq_len": N, "vocab": vocab, "token_columns": tc,
        "positional": {"0": [[p, "1"] for p in range(N + 1)], "1": [[0, "1"]]},
        "layers": [
            {"heads": [], "mlp": {"stages": [], "out": [], "activations": []}},
            {"heads": [{"aggregate": "agg", "qk": [[tc[0], mc[0], "1"]], "ov": [[tc[0], ac[0], "1"]]}], "mlp": None},
        ],
        "nodes": {"tokens": {"columns": tc, "slot": -1, "values": vocab}, "m": {"columns": mc, "slot": 1, "values": [{"q": str(i)} for i in range(V)]},
                  "agg": {"columns": ac, "slot": 2, "values": vocab}},
        "outputs": {"output": ac}, "output_values": {"output": vocab},
        "summary": {"activations": [[], []], "heads": [0, 1], "layers": 2, "mlp_stages": [0, 0], "parameters": 2, "width": len(basis)},
    })
    d["construction"]["program"] = {"kind": "tables", "program": {"nodes": [
        {"args": [], "encoding": "categorical", "label": "tokens", "op": "tokens"},
        {"args": ["tokens"], "encoding": "categorical", "label": "m", "op": "map", "table": [[[{"s": t}], {"q": str(i)}] for i, t in enumerate(toks)]},
        {"args": ["m", "tokens"], "label": "sel", "op": "select", "predicate": "EQ"},
        {"args": ["sel", "tokens"], "default": None, "encoding": "categorical", "label": "agg", "op": "aggregate"},
    ], "output": "agg"}}
    d["construction"]["model_sha256"] = model_sha256(m)
    d["construction"]["output"] = "output"
    d["params"].update({"vocab": ",".join(toks), "max_seq_len": N})
    d["inputs"].update({"vocab": vocab, "max_seq_len": N, "count": sum(V**n for n in range(1, N + 1))})
    d["result"].update(inputs=d["inputs"]["count"], lengths=list(range(1, N + 1)))
    return d


def test_a_small_compositional_bomb_fails_quickly():
    """The same document at V = 5, N = 3 (375 key configurations): REJECTED in a fraction of a second."""
    pytest.importorskip("tracr")
    doc = compositional_bomb(_program("compositional", "shift", "a,b", 3), 5, 3)
    assert status(doc) == REJECTED


@pytest.mark.slow
def test_verify_refuses_a_compositional_head_with_too_many_configurations_quickly(tmp_path: Path):
    pytest.importorskip("tracr")
    base = _program("compositional", "shift", "a,b", 3)
    # 100 x 300^2 = 9,000,000 key configurations, while the cost model (vocab and max_seq_len) sees a small run
    assert_refused_cleanly(_write(tmp_path / "bomb.json", compositional_bomb(base, 300, 100)))


def _identity_base(tmp_path: Path, r: int, c: int) -> dict:
    out = tmp_path / f"transpose_{r}_{c}.json"
    _cli("prove", "transpose", "--for-all", "--r", str(r), "--c", str(c), "--out", str(out)).check_returncode()
    return json.loads(out.read_text())


def squares_of_the_mean(base: dict) -> dict:
    """The graph: mean of every token (Select TRUE), then its square at every position (m^3/2 terms in all for m
    variables: each product within the per-product limit, N of them)."""
    d = unsealed(base)
    d["construction"]["graph"] = {"format": "attncert-rasp/1", "outputs": {"output": 3}, "nodes": [
        {"encoding": "numerical", "id": 0, "label": "tokens", "name": "tokens", "op": "tokens", "params": {}},
        {"id": 1, "label": "all", "name": "select", "op": "select", "params": {"predicate": "TRUE"}},
        {"encoding": "numerical", "id": 2, "label": "mean", "name": "mean", "op": "aggregate", "params": {"default": {"q": "0"}}},
        {"encoding": "numerical", "id": 3, "label": "sq", "name": "sq", "op": "sequence_map", "params": {"fn": {"name": "mul", "params": {}}}},
    ], "edges": [{"arg": 0, "source": 0, "target": 1}, {"arg": 1, "source": 0, "target": 1}, {"arg": 0, "source": 1, "target": 2},
                 {"arg": 1, "source": 0, "target": 2}, {"arg": 0, "source": 2, "target": 3}, {"arg": 1, "source": 2, "target": 3}]}
    d["construction"]["static_selections"] = [{"predicate": "TRUE", "select": 1}]
    return d


@pytest.mark.slow
def test_verify_refuses_an_identity_graph_of_many_large_products_quickly(tmp_path: Path):
    assert_refused_cleanly(_write(tmp_path / "squares.json", squares_of_the_mean(_identity_base(tmp_path, 30, 40))))


def selects_over_a_chain(base: dict, K: int, S: int) -> dict:
    """K maps in a chain from indices, and S selects whose keys and queries are the chain's end."""
    from tests.proofs.identity.test_identity_costs import selects_over_a_chain as chain_graph

    d = unsealed(base)
    d["construction"]["graph"] = chain_graph(K, S)
    d["construction"]["static_selections"] = []
    return d


def test_a_small_chain_of_selects_fails_quickly(tmp_path: Path):
    doc = selects_over_a_chain(_identity_base(tmp_path, 2, 2), 20, 20)
    assert status(doc) == REJECTED


@pytest.mark.slow
def test_verify_refuses_a_graph_of_many_selects_over_a_long_chain_quickly(tmp_path: Path):
    # 32,001 nodes, within max_nodes (100,000) and a few MB
    assert_refused_cleanly(_write(tmp_path / "chain.json", selects_over_a_chain(_identity_base(tmp_path, 2, 2), 16_000, 16_000)))


def wide_tracr_model(base: dict, J: int) -> dict:
    """The model with J extra residual columns, written by every token, read diagonally by W_Q, W_K (key_size + J)
    and W_1 (J more hidden units): nothing in the cost model (vocabulary and max_seq_len) sees the width."""
    import numpy as np

    from attncert.proofs.checkers.tracr.model import model_sha256

    d = unsealed(base)
    m = d["construction"]["model"]
    D0 = len(m["residual"])
    D, K = D0 + J, m["key_size"] + J
    m["residual"] = m["residual"] + [f"junk{i}" for i in range(J)]

    def widen(mat: dict, rows: int | None = None, cols: int | None = None) -> None:
        r, c = mat["shape"]
        mat["shape"] = [rows or r, cols or c]

    widen(m["token_embed"], cols=D)
    widen(m["pos_embed"], cols=D)
    m["token_embed"]["w"] = sorted(m["token_embed"]["w"] + [[t, D0 + i, "1"] for t in range(m["token_embed"]["shape"][0]) for i in range(J)])
    m["key_size"] = K
    f = Fraction(float(np.sqrt(K).astype(np.float32)))
    m["scale"] = str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"
    for layer in m["layers"]:
        for part in ("query", "key", "value"):
            widen(layer[part], rows=D, cols=K)
        widen(layer["linear"], rows=K, cols=D)
        widen(layer["linear_2"], cols=D)
        hidden = layer["linear_1"]["shape"][1]
        widen(layer["linear_1"], rows=D, cols=hidden + J)
        widen(layer["linear_2"], rows=hidden + J)
        for part in ("query", "key"):
            layer[part]["w"] = sorted(layer[part]["w"] + [[D0 + i, K - J + i, "1/1024"] for i in range(J)])
        layer["linear_1"]["w"] = sorted(layer["linear_1"]["w"] + [[D0 + i, hidden + i, "1"] for i in range(J)])
    d["construction"]["model_sha256"] = model_sha256(m)
    return d


def _tracr_base(tmp_path: Path, program: str, vocab: str, n: int) -> dict:
    out = tmp_path / "tracr.json"
    _cli("prove", "tracr_model", "--program", program, "--vocab", vocab, "--max-seq-len", str(n), "--out", str(out))
    return json.loads(out.read_text())


@pytest.mark.slow
def test_verify_refuses_a_hugely_wide_tracr_model_quickly(tmp_path: Path):
    pytest.importorskip("tracr")
    base = _tracr_base(tmp_path, "tracr.compiler.lib:make_length", "a,b,c", 6)
    assert_refused_cleanly(_write(tmp_path / "wide.json", wide_tracr_model(base, 1500)))


# -- the certificate-size estimate --------------------------------------------------------------------------


def test_prove_refuses_up_front_an_identity_certificate_over_max_bytes():
    # measured: U(16, 8, 8) 1.20 MB, U(16, 16, 8) 4.98 MB, U(32, 8, 8) 4.93 MB: about 75 n^2 d^2 bytes, so
    # U(32, 32, 8) is about 79 MB (written: 85,068,586 bytes), over the default --max-bytes of 64 MiB
    r = _cli("prove", "universal", "--for-all", "--n", "32", "--d", "32", "--dv", "8", "--estimate", timeout=120)
    assert "would be refused" in r.stdout and "certificate" in r.stdout, r.stdout


# -- attempts that were refused ------------------------------------------------------------------------------


def _tracr_forgeries(base: dict) -> dict[str, dict]:
    from attncert.proofs.checkers.tracr.model import model_sha256

    out = {}

    def forged(name, change):
        d = unsealed(base)
        change(d["construction"]["model"], d)
        d["construction"]["model_sha256"] = model_sha256(d["construction"]["model"])
        out[name] = d

    forged("decoder without class 0", lambda m, d: m["output"].__setitem__("classes", m["output"]["classes"][1:]))
    forged("two classes' columns exchanged", lambda m, d: m["output"].__setitem__("classes", [[m["output"]["classes"][0][0], m["output"]["classes"][1][1]], [m["output"]["classes"][1][0], m["output"]["classes"][0][1]]] + m["output"]["classes"][2:]))
    forged("BOS is a token of the vocabulary", lambda m, d: m.__setitem__("bos", {"s": "a"}))
    forged("causal", lambda m, d: m.__setitem__("causal", True))
    forged("max_seq_len over the model's", lambda m, d: d["inputs"].__setitem__("max_seq_len", m["max_seq_len"] + 1))
    forged("a weight that is not a float32", lambda m, d: m["layers"][0]["linear_1"]["w"].__setitem__(0, m["layers"][0]["linear_1"]["w"][0][:2] + ["1/3"]))
    # the token a embedded as b: on ['a', 'b'] the model sees ['b', 'b'], whose histogram [2, 2] is not RASP's [1, 1]
    forged("a embedded with b's row", lambda m, d: m.__setitem__("tokens", [[t, 2 if r == 1 else r] for t, r in m["tokens"]]))
    return out


def test_tracr_model_forgeries_are_refused(tmp_path: Path):
    pytest.importorskip("tracr")
    base = _tracr_base(tmp_path, "tracr.compiler.lib:make_hist", "a,b", 3)
    assert [t for t, r in base["construction"]["model"]["tokens"] if r in (1, 2)] == [{"s": "a"}, {"s": "b"}]
    for name, doc in _tracr_forgeries(base).items():
        assert status(doc) in (REJECTED, BAD), name


@pytest.mark.parametrize(
    "cost, eps",
    [
        ([["NaN", "1"], ["1", "0"]], "1/5"),
        ([["1e400", "0"], ["0", "1"]], "1/5"),
        ([["1", "0"], ["0", "1"]], "5e-324"),
        ([["1e308", "0"], ["-1e308", "0"]], "1"),
        ([["1", "0"], ["0", "1"]], "-1"),
    ],
)
def test_sinkhorn_convergence_on_extreme_numbers_is_one_line(tmp_path: Path, cost, eps):
    (tmp_path / "C.json").write_text(json.dumps(cost))
    (tmp_path / "a.json").write_text(json.dumps(["1/2", "1/2"]))
    (tmp_path / "b.json").write_text(json.dumps(["1/2", "1/2"]))
    r = _cli("prove", "sinkhorn_convergence", "--cost", str(tmp_path / "C.json"), "--a", str(tmp_path / "a.json"), "--b", str(tmp_path / "b.json"),
             "--eps", eps, "--out", str(tmp_path / "c.json"), timeout=120)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize(
    "a, b, M, reg",
    [
        ([1.0, 1.0], [1.0, 1.0], [[float("nan"), 0.0], [0.0, 1.0]], 1.0),
        ([1.0, 1.0], [1.0, 1.0], [[1e308, 0.0], [-1e308, 0.0]], 1.0),
        ([5e-324, 5e-324], [5e-324, 5e-324], [[1.0, 0.0], [0.0, 1.0]], 1.0),
        ([1.0, 1.0], [1.0, 1.0], [[1.0, 0.0], [0.0, 1.0]], float("inf")),
        ([1.0, -1.0], [0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]], 1.0),
    ],
)
def test_sinkhorn_on_extreme_numbers_raises_its_documented_error(a, b, M, reg):
    import attncert
    from attncert.constructions.sinkhorn.problem import SinkhornInputError

    with pytest.raises(SinkhornInputError):
        attncert.sinkhorn(a, b, M, reg)
