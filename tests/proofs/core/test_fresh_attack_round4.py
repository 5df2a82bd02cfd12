"""A fresh hostile audit, round 4: compiled-program claims, verify's four verdicts, the npz export.

Every expected verdict below is derived from the definitions: RASP's semantics as attncert's evaluator
(constructions/rasp/evaluate.py) states them, run on the input, or arithmetic by hand; and a compiled
model's output from a forward pass written here (:func:`forward`, Fractions, the model class of
docs/compiler.md), never from the checker or the prover under test. Attempts that succeeded are marked
``xfail(strict=True)`` with the reason and must keep failing until the hole is fixed; a premise of such a
test that no longer holds raises RuntimeError (a real failure, not an expected one). The others are plain
tests: the attack was refused (REJECTED, BAD, or one line and exit 2).

Successes (root causes in the reasons of the tests):

* ``compiled_program --method compositional``: a program ordering tuples, one holding None and one holding
  the 1-tuple ("n",), by LT verifies OK as "proven compositionally for all 14 inputs" with
  ``may_be_undefined = []``, while attncert's RASP evaluation raises on the 8 inputs holding both tokens
  (proofs/checkers/compiled/every_input.py, ``_plain``: None becomes the tuple ("n",)).
* The same confusion with EQ: a correct model (every one of its 14 inputs decodes to RASP's output; the
  exhaustive certificate verifies OK) is verified DOES-NOT-HOLD, "genuine; the claim does not hold".
* An incomplete compositional proof is a disproof: a recorded program whose map is tabulated on every mean
  the proof enumerates (the definition's own values) gives a correct model, proven OK exhaustively, that
  verify calls DOES-NOT-HOLD (``check_compositional`` passes the proof's problems to ``conclude`` as failures).
* compiled_softmax at a low working precision, and lipschitz_approx with an undecidable grid pair, are
  DOES-NOT-HOLD although their claims hold (a bound not reached, or a pair not decided, is not a disproof).
* A genuine exhaustive certificate of tracr's shift-by-one (RASP gives None at position 0) is REJECTED: the
  checker's ``_decodes`` never decodes None from all-zero columns.
* A genuine compositional certificate verified under a stricter ``--max-pairs`` is REJECTED (forged), not BAD.
* Small files that run verify out of time or memory: a 3.8 KB exhaustive certificate whose model and
  inputs hold 10 tokens and length 9 while its parameters say 2 and 3 (the checker materialises every
  input before comparing anything: past 1 GiB in seconds); an 8 KB compositional certificate with a chain of
  static SequenceMap(x, x) nodes (``Program.at`` recomputes both arguments: 2^depth); a 4 KB compositional
  certificate of a mean of a mean at length 115 (``_means`` builds 4,073^2 sums before any budget is charged).
* The npz export: a vocabulary value {"q": "1e99999999"} makes ``float_forward`` / ``run_npz`` run for
  minutes (``Fraction`` builds 10^99999999); a pickled object array is refused without being run.
"""

from __future__ import annotations

import copy
import io
import itertools
import json
import resource
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from attncert.exact import ParseError
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.core.verify import BAD, DOES_NOT_HOLD, OK, REJECTED, verify_bytes

HERE = "tests.proofs.core.test_fresh_attack_round4"
ROOT = Path(__file__).resolve().parents[3]


def unsealed(doc: dict) -> dict:
    doc = copy.deepcopy(doc)
    doc.pop("sha256", None)
    return doc


def outcome(doc: dict):
    """verify's outcome for the document resealed as a forger would (the model's sha256 recomputed too)."""
    from attncert.proofs.checkers.compiled.construction import model_sha256

    doc = unsealed(doc)
    cons = doc.get("construction")
    if isinstance(cons, dict) and isinstance(cons.get("model"), dict) and "model_sha256" in cons:
        cons["model_sha256"] = model_sha256(cons["model"])
    return verify_bytes(canonical_json(seal(doc)))


def status(doc: dict) -> str:
    return outcome(doc).status


def premise(cond: bool, what: str) -> None:
    """A fact the test derives from the definitions; if it no longer holds the test is wrong, not the code."""
    if not cond:
        raise RuntimeError(f"premise no longer holds: {what}")


# -- an exact forward pass of a compiled model, written here (docs/compiler.md, "The model class") -----------


def _tag(v):
    (t, b), = v.items()
    return Fraction(b) if t == "q" else tuple(_tag(x) for x in b) if t == "t" else b


def forward(model: dict, tokens: list) -> list[list[Fraction]]:
    """Rows 0..n (BOS at 0) of the residual after the last layer: positional row plus one-hot tokens; each
    layer adds every head's exact mean of x_j W_OV over its keys of maximal score x_i W_QK x_j (keys j <= i
    when causal), then the MLP's output (stages of affine -> relu / product / reciprocal, then affine)."""
    n, width = len(tokens), len(model["basis"])
    x = [[Fraction(0)] * width for _ in range(n + 1)]
    for c, entries in model["positional"].items():
        for p, v in entries:
            if p <= n:
                x[p][int(c)] += Fraction(v)
    vocab = [_tag(v) for v in model["vocab"]]
    for t, tok in enumerate(tokens, start=1):
        k = next(k for k, v in enumerate(vocab) if same(v, tok))
        x[t][model["token_columns"][k]] += 1
    for layer in model["layers"]:
        add = [[Fraction(0)] * width for _ in range(n + 1)]
        for h in layer["heads"]:
            qk = [(a, b, Fraction(w)) for a, b, w in h["qk"]]
            ov = [(a, b, Fraction(w)) for a, b, w in h["ov"]]
            for i in range(n + 1):
                keys = range(i + 1) if model.get("causal") else range(n + 1)
                s = {j: sum((w * x[i][a] * x[j][b] for a, b, w in qk), Fraction(0)) for j in keys}
                best = [j for j in keys if s[j] == max(s.values())]
                for j in best:
                    for a, b, w in ov:
                        add[i][b] += w * x[j][a] / len(best)
        x = [[u + v for u, v in zip(r, s)] for r, s in zip(x, add)]
        mlp = layer["mlp"]
        if mlp:
            for p in range(n + 1):
                inp = x[p]
                for stage in mlp["stages"]:
                    z = [[Fraction(a["bias"]) + sum((Fraction(w) * inp[i] for i, w in a["terms"]), Fraction(0)) for a in u["args"]] for u in stage]
                    kinds = [u["unit"] for u in stage]
                    inp = [max(a[0], 0) if k == "relu" else a[0] * a[1] if k == "product" else 1 / a[0] for a, k in zip(z, kinds)]
                for c, a in mlp["out"]:
                    x[p][c] += Fraction(a["bias"]) + sum((Fraction(w) * inp[i] for i, w in a["terms"]), Fraction(0))
    return x


def decoded(model: dict, x: list[list[Fraction]], p: int):
    """The output at row p: a numerical column's number; a one-hot output's value where one column is exactly 1
    and the others 0, None where all are 0 (docs/compiler.md, "Decoding"); anything else is no value."""
    cols, values = model["outputs"]["output"], model["output_values"]["output"]
    if values is None:
        return x[p][cols[0]]
    row = [x[p][c] for c in cols]
    if all(v == 0 for v in row):
        return None
    if sorted(row) == [0] * (len(row) - 1) + [1]:
        return _tag(values[row.index(1)])
    return ("no value", row)


def same(a, b) -> bool:
    """Equality of RASP values that keeps kinds apart (True is not 1, "1" is not 1)."""
    a, b = _plain(a), _plain(b)
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and all(same(u, v) for u, v in zip(a, b))
    if isinstance(a, (bool, str)) or isinstance(b, (bool, str)) or a is None or b is None:
        return type(a) is type(b) and a == b
    return a == b


def _plain(v):
    if type(v).__name__ == "fmpq":
        return Fraction(int(v.p), int(v.q))
    return v


def mismatches(expr, model: dict, vocab: list, lengths, causal: bool = False) -> tuple[int, int, list]:
    """(inputs, inputs where RASP's evaluation raises, inputs whose decoded output differs from RASP's)."""
    from attncert.constructions.rasp.evaluate import evaluate

    total, undefined, wrong = 0, 0, []
    numerical = model["output_values"]["output"] is None
    for n in lengths:
        for xs in itertools.product(vocab, repeat=n):
            total += 1
            try:
                want = evaluate(expr, list(xs), causal=causal)
            except Exception:
                undefined += 1
                continue
            x = forward(model, list(xs))
            for p in range(1, n + 1):
                w = want[p - 1]
                w = Fraction(int(w)) if numerical and isinstance(w, bool) else w
                if not same(decoded(model, x, p), w):
                    wrong.append((xs, p - 1))
                    break
    return total, undefined, wrong


# -- tracr programs (module-level, so that --program tests.proofs.core.test_fresh_attack_round4:NAME imports them) --


def _marked():
    from tracr.rasp import rasp

    # a: the tuple (None,); b: the tuple (("n",),), a 1-tuple holding the 1-tuple holding the string "n"
    return rasp.categorical(rasp.Map(lambda t: (None,) if t == "a" else (("n",),), rasp.tokens))


def tuple_none_lt():
    from tracr.rasp import rasp

    m = _marked()
    return rasp.numerical(rasp.SelectorWidth(rasp.Select(m, m, rasp.Comparison.LT)))


def tuple_none_eq():
    from tracr.rasp import rasp

    m = _marked()
    return rasp.numerical(rasp.SelectorWidth(rasp.Select(m, m, rasp.Comparison.EQ)))


def shift_by_one():
    from tracr.rasp import rasp

    prev = rasp.Map(lambda i: i - 1, rasp.indices)
    return rasp.categorical(rasp.Aggregate(rasp.Select(rasp.indices, prev, rasp.Comparison.EQ), rasp.tokens))


def pair_mean_above():
    """The mean of [token == a] over a position and the one before it, then whether it is above 2/5."""
    from tracr.rasp import rasp

    x = rasp.numerical(rasp.Map(lambda t: 1 if t == "a" else 0, rasp.tokens))
    sel = rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q or k == q - 1)
    m = rasp.numerical(rasp.Aggregate(sel, x, default=0))
    return rasp.categorical(rasp.Map(lambda v: v > Fraction(2, 5), m, simplify=False))


def true_or_one():
    from tracr.rasp import rasp

    v = rasp.categorical(rasp.Map(lambda x: True if x == "a" else 1, rasp.tokens))
    return rasp.categorical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE), v))


def _shifted():
    from tracr.rasp import rasp

    prev = rasp.Map(lambda i: i - 1, rasp.indices)
    return rasp.categorical(rasp.Aggregate(rasp.Select(rasp.indices, prev, rasp.Comparison.EQ), rasp.tokens))


def selects_none_query():
    from tracr.rasp import rasp

    return rasp.numerical(rasp.SelectorWidth(rasp.Select(rasp.tokens, _shifted(), lambda k, q: q is None)))


def selects_none_key():
    from tracr.rasp import rasp

    return rasp.numerical(rasp.SelectorWidth(rasp.Select(_shifted(), rasp.tokens, lambda k, q: k is None)))


def true_apart_from_one():
    from tracr.rasp import rasp

    x = rasp.numerical(rasp.Map(lambda t: True if t == "a" else 1, rasp.tokens))
    return rasp.categorical(rasp.Map(lambda v: "T" if v is True else "one", x, simplify=False))


def not_none_width():
    from tracr.rasp import rasp

    return rasp.numerical(rasp.SelectorWidth(rasp.Select(rasp.tokens, _shifted(), lambda k, q: q is not None)))


def prove_claim(name: str, **given) -> dict:
    """A claim proven as the command line proves it: its defaults, and the given options parsed by its own parsers."""
    from attncert.proofs.core.registry import load_claim

    claim = load_claim(name)
    types = {p.name: p.type for p in claim.params}
    return claim.prove(**{**claim.defaults(), **{k: types[k](str(v)) for k, v in given.items()}})


def _program(method: str, name: str, vocab: str = "a,b", n: int = 3, lengths: str = "every", causal: bool = False) -> dict:
    from attncert.proofs.compiled import program as P

    return P.prove(vocab, n, lengths, causal, 100_000, 10, program=f"{HERE}:{name}", method=method)


def _rasp(name: str):
    from attncert.constructions.tracr.program import from_tracr, to_rasp

    return to_rasp(from_tracr(globals()[name]()))


def _recorded(record: dict, method: str, vocab: str = "a,b", n: int = 3) -> dict:
    """The certificate prove writes for a recorded tracr program (tables): the rebuild's own path, so the
    document is what verify recomputes from it."""
    from attncert.proofs.compiled import program as P

    src = P._from_record({"kind": "tables", "program": record}, {"program": "recorded"})
    return P._certify(src, P._tokens(vocab), n, "every", False, 100_000, 10, file=None, expr=None, program=f"{HERE}:recorded", method=P._method(method))


def _pair_mean_record() -> dict:
    """pair_mean_above recorded with its map v > 2/5 tabulated on every mean of 1..4 values of {0, 1}, as the
    definition gives it: the compositional proof, which enumerates those means, cannot show the model right on 1/3
    (a mean no input reaches), so its certificate records holds = false."""
    base = _program("exhaustive", "pair_mean_above", n=4)
    record = copy.deepcopy(base["construction"]["program"]["program"])
    above = next(d for d in record["nodes"] if d["label"] == record["output"])
    premise(above["op"] == "map", "the output is the map v > 2/5")
    means = sorted({Fraction(a, w) for w in range(1, 5) for a in range(w + 1)})
    above["table"] = [[[{"q": str(m)}], {"b": m > Fraction(2, 5)}] for m in means]
    return record


# == compiled_program: false claims that verify accepted ==========================================================


def test_a_tuple_holding_none_ordered_against_a_tuple_is_outside_the_domain():
    pytest.importorskip("tracr")
    from attncert.constructions.rasp.evaluate import EvaluationError, evaluate

    # the definition: an ordered comparison of (None,) with (("n",),) compares None with ("n",), which is not defined
    try:
        evaluate(_rasp("tuple_none_lt"), ["a", "b"])
        premise(False, "RASP's evaluation raises on ['a', 'b']")
    except EvaluationError:
        pass
    doc = _program("compositional", "tuple_none_lt")
    premise(doc["result"]["holds"], "the prover says the claim holds")
    verdict = status(doc)
    assert not (verdict == OK and doc["result"]["may_be_undefined"] == []), "verify accepts 'every one of the 14 inputs is in the domain'"


def test_a_correct_model_is_not_disproven_by_a_wrong_equality():
    pytest.importorskip("tracr")
    comp = _program("compositional", "tuple_none_eq")
    total, undefined, wrong = mismatches(_rasp("tuple_none_eq"), comp["construction"]["model"], ["a", "b"], range(1, 4))
    premise((total, undefined, wrong) == (14, 0, []), "the model decodes to RASP's output on every input")
    premise(status(_program("exhaustive", "tuple_none_eq")) == OK, "the exhaustive certificate verifies OK")
    assert status(comp) != DOES_NOT_HOLD


def test_an_incomplete_compositional_proof_is_not_a_disproof():
    pytest.importorskip("tracr")
    record = _pair_mean_record()
    comp, exh = _recorded(record, "compositional", n=4), _recorded(record, "exhaustive", n=4)
    from attncert.constructions.tracr.program import program_from_json, to_rasp

    total, undefined, wrong = mismatches(to_rasp(program_from_json(record)), comp["construction"]["model"], ["a", "b"], range(1, 5))
    premise((total, undefined, wrong) == (30, 0, []), "the model decodes to RASP's output on every input")
    premise(status(exh) == OK, "the exhaustive certificate of the same recorded program verifies OK")
    assert status(comp) != DOES_NOT_HOLD


def test_a_genuine_exhaustive_certificate_with_none_outputs_verifies():
    pytest.importorskip("tracr")
    doc = _program("exhaustive", "shift_by_one", n=2, lengths="fixed")
    total, undefined, wrong = mismatches(_rasp("shift_by_one"), doc["construction"]["model"], ["a", "b"], [2])
    premise((total, undefined, wrong) == (4, 0, []) and doc["result"]["holds"], "the model is right on the 4 inputs")
    assert status(doc) == OK, outcome(doc).reason


# == verify's verdicts: DOES-NOT-HOLD where the claim holds ========================================================


def _softmax_distance(model: dict, tokens: list, beta: int, digits: int = 120):
    """max over positions 1..N of |softmax_beta model - AHAT model| on the output column, in mpmath at ``digits``
    digits (weights e^{beta (s - max s)}, normalised); the same forward pass as :func:`forward` otherwise."""
    import mpmath

    mpmath.mp.dps = digits
    exact = forward_numeric(model, tokens)
    soft = forward_numeric(model, tokens, beta)
    col = model["outputs"]["output"][0]
    return max(abs(soft[p][col] - mpmath.mpf(exact[p][col].numerator) / exact[p][col].denominator) for p in range(1, len(tokens) + 1))


def forward_numeric(model: dict, tokens: list, beta: int | None = None):
    """:func:`forward` for numeric (scalar) tokens; with ``beta`` the heads use softmax attention in mpmath."""
    import mpmath

    n, width = len(tokens), len(model["basis"])
    num = (lambda q: q) if beta is None else (lambda q: mpmath.mpf(q.numerator) / q.denominator)
    x = [[num(Fraction(0))] * width for _ in range(n + 1)]
    for c, entries in model["positional"].items():
        for p, v in entries:
            if p <= n:
                x[p][int(c)] += num(Fraction(v))
    for t, tok in enumerate(tokens, start=1):
        x[t][model["token_columns"][0]] += num(Fraction(tok))
    for layer in model["layers"]:
        add = [[num(Fraction(0))] * width for _ in range(n + 1)]
        for h in layer["heads"]:
            qk = [(a, b, num(Fraction(w))) for a, b, w in h["qk"]]
            ov = [(a, b, num(Fraction(w))) for a, b, w in h["ov"]]
            for i in range(n + 1):
                s = [sum((w * x[i][a] * x[j][b] for a, b, w in qk), num(Fraction(0))) for j in range(n + 1)]
                top = max(s)
                if beta is None:
                    weights = [Fraction(1) if v == top else Fraction(0) for v in s]
                else:
                    weights = [mpmath.exp(beta * (v - top)) for v in s]
                total = sum(weights)
                for j in range(n + 1):
                    for a, b, w in ov:
                        add[i][b] += weights[j] / total * w * x[j][a]
        x = [[u + v for u, v in zip(r, s)] for r, s in zip(x, add)]
        mlp = layer["mlp"]
        if mlp:
            for p in range(n + 1):
                inp = x[p]
                for stage in mlp["stages"]:
                    z = [[num(Fraction(a["bias"])) + sum((num(Fraction(w)) * inp[i] for i, w in a["terms"]), num(Fraction(0))) for a in u["args"]] for u in stage]
                    inp = [max(a[0], 0) if u["unit"] == "relu" else a[0] * a[1] if u["unit"] == "product" else 1 / a[0] for a, u in zip(z, stage)]
                for c, a in mlp["out"]:
                    x[p][c] += num(Fraction(a["bias"])) + sum((num(Fraction(w)) * inp[i] for i, w in a["terms"]), num(Fraction(0)))
    return x


def test_a_loose_softmax_bound_is_not_a_disproof():
    doc = prove_claim("compiled_softmax", of="matmul", sizes="r=1,k=2,c=1", betas="1000", tol="1/1000", prec=4)
    cons = doc["construction"]
    tokens = [Fraction(v) for row in doc["inputs"]["A"] for v in row] + [Fraction(v) for row in doc["inputs"]["B"] for v in row]
    tokens += [Fraction(0)] * (cons["layout"]["length"] - len(tokens))
    import mpmath

    premise(_softmax_distance(cons["model"], tokens, 1000) < mpmath.mpf(10) ** -100, "softmax at beta = 1000 is within 1e-100")
    assert status(doc) != DOES_NOT_HOLD, outcome(doc).reason


@pytest.mark.slow
def test_an_undecided_lipschitz_pair_is_not_a_disproof():
    doc = prove_claim("lipschitz_approx", target="expr", expr="x1 + sin(x1)**2 + cos(x1)**2", d=1, h="1/4", L="1")
    assert status(doc) != DOES_NOT_HOLD


# == resources: small files that run verify out of time or memory ===============================================

CAP = 3 << 30


def _capped(cap: int):
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def verified_within(path: Path, seconds: float, cap: int = CAP) -> tuple[int, str] | None:
    """(exit code, output) of attncert verify run with its address space capped, or None past ``seconds``."""
    try:
        r = subprocess.run([sys.executable, "-m", "attncert", "verify", str(path)], capture_output=True, text=True, timeout=seconds, preexec_fn=_capped(cap), cwd=ROOT)
    except subprocess.TimeoutExpired:
        return None
    return r.returncode, r.stdout + r.stderr


def assert_refused_cleanly(path: Path, seconds: float = 60, cap: int = CAP) -> None:
    done = verified_within(path, seconds, cap)
    assert done is not None, f"verify ran past {seconds} s"
    code, line = done
    assert code in (2, 3), f"verify exited with {code}: {line[-300:]}"
    assert "out of memory" not in line and "Traceback" not in line, line
    assert line.split()[0] in (REJECTED, BAD), line


def _write(path: Path, doc: dict) -> Path:
    from attncert.proofs.checkers.compiled.construction import model_sha256

    doc = unsealed(doc)
    if "model_sha256" in doc.get("construction", {}):
        doc["construction"]["model_sha256"] = model_sha256(doc["construction"]["model"])
    path.write_bytes(canonical_json(seal(doc)))
    return path


def wide_inputs(base: dict, symbols: int, n: int) -> dict:
    """An exhaustive certificate whose model and inputs hold ``symbols`` tokens and length n, its parameters (and
    so the cost verify checks first) left at the base's."""
    d = unsealed(base)
    vocab = [{"s": f"t{i}"} for i in range(symbols)]
    d["inputs"].update(vocab=vocab, max_seq_len=n)
    d["construction"]["model"].update(vocab=vocab, max_seq_len=n)
    return d


def test_a_small_wide_input_forgery_is_refused(tmp_path: Path):
    """The attack below at 3 tokens and length 3 (39 inputs): refused at once."""
    pytest.importorskip("tracr")
    assert_refused_cleanly(_write(tmp_path / "w.json", wide_inputs(_program("exhaustive", "not_none_width"), 3, 3)), 60)


def test_verify_bounds_the_inputs_it_lists_by_what_it_checked(tmp_path: Path):
    pytest.importorskip("tracr")
    path = _write(tmp_path / "wide.json", wide_inputs(_program("exhaustive", "not_none_width"), 10, 9))
    premise(path.stat().st_size < 8000, "a file of a few kilobytes")
    assert_refused_cleanly(path, 60, cap=1 << 30)


def static_chain(base: dict, depth: int) -> dict:
    """A compositional certificate whose recorded program also holds s_1 = SequenceMap(indices, indices), s_k =
    SequenceMap(s_{k-1}, s_{k-1}) (tables of 3 entries each, the identity on 0..2): dead code, the claim unchanged."""
    d = unsealed(base)
    nodes = d["construction"]["program"]["program"]["nodes"]
    prev = "indices"
    for k in range(depth):
        nodes.insert(1 + k, {"args": [prev, prev], "encoding": "categorical", "label": f"s{k}", "op": "sequence_map",
                             "table": [[[{"q": str(i)}, {"q": str(i)}], {"q": str(i)}] for i in range(3)]})
        prev = f"s{k}"
    return d


def test_a_short_static_chain_verifies():
    """Depth 6: the document (dead code added to a true claim) verifies OK at once."""
    pytest.importorskip("tracr")
    base = _program("compositional", "shift_by_one")
    assert status(static_chain(base, 6)) == OK


@pytest.mark.slow
def test_verify_refuses_a_deep_static_chain_quickly(tmp_path: Path):
    pytest.importorskip("tracr")
    path = _write(tmp_path / "chain.json", static_chain(_program("compositional", "shift_by_one"), 26))
    premise(path.stat().st_size < 12000, "a file of a few kilobytes")
    done = verified_within(path, 60)
    assert done is not None, "verify ran past a minute"


def mean_of_mean(base: dict, n: int) -> dict:
    """A compositional certificate over lengths 1..n whose recorded program is a numerical mean m1 of [t == a] under
    Select(indices, indices, LEQ), then the mean m2 of m1 under the same selection (the model left as the base's)."""
    d = unsealed(base)
    d["construction"]["program"]["program"] = {"nodes": [
        {"args": [], "encoding": "categorical", "label": "tokens", "op": "tokens"},
        {"args": [], "encoding": "categorical", "label": "indices", "op": "indices"},
        {"args": ["tokens"], "encoding": "numerical", "label": "x", "op": "map", "table": [[[{"s": "a"}], {"q": "1"}], [[{"s": "b"}], {"q": "0"}]]},
        {"args": ["indices", "indices"], "label": "sel", "op": "select", "predicate": "LEQ"},
        {"args": ["sel", "x"], "default": {"q": "0"}, "encoding": "numerical", "label": "m1", "op": "aggregate"},
        {"args": ["sel", "m1"], "default": {"q": "0"}, "encoding": "numerical", "label": "m2", "op": "aggregate"},
    ], "output": "m2"}
    for part in (d["construction"]["model"], d["inputs"], d["params"]):
        part["max_seq_len"] = n
    return d


def test_a_short_mean_of_a_mean_is_refused():
    """Length 8: REJECTED at once (the recorded model is not this program's)."""
    pytest.importorskip("tracr")
    assert status(mean_of_mean(_program("compositional", "shift_by_one"), 8)) == REJECTED


@pytest.mark.slow
def test_verify_refuses_a_mean_of_a_mean_quickly(tmp_path: Path):
    pytest.importorskip("tracr")
    path = _write(tmp_path / "means.json", mean_of_mean(_program("compositional", "shift_by_one"), 115))
    premise(path.stat().st_size < 8000, "a file of a few kilobytes")
    assert_refused_cleanly(path, 60)


# == the npz export ==============================================================================================


def _npz(tmp_path: Path, vocab: np.ndarray) -> Path:
    """A minimal npz model of one token column (max_seq_len 1, no layer), with the given vocabulary array."""
    buf = io.BytesIO()
    np.savez(buf, vocab=vocab, max_seq_len=np.array(1), mode=np.array("fixed"), embedding=np.zeros((2, 3)),
             token_columns=np.array([2]), tokens=np.array("categorical"), causal=np.array(False), layers=np.array(0),
             outputs=np.array([2]), output_values=np.array(['{"s": "a"}']))
    path = tmp_path / "m.npz"
    path.write_bytes(buf.getvalue())
    return path


class _Evil:
    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def test_a_pickled_vocabulary_is_never_run(tmp_path: Path):
    from attncert.constructions.compiler.export import run_npz

    marker = tmp_path / "ran"
    arr = np.empty(1, dtype=object)
    arr[0] = _Evil(str(marker))
    path = _npz(tmp_path, arr)
    with pytest.raises(ValueError, match="allow_pickle"):
        run_npz(path, ["a"])
    assert not marker.exists()


def test_an_npz_model_is_refused_by_the_command_line(tmp_path: Path):
    path = _npz(tmp_path, np.array(['{"s": "a"}']))
    r = subprocess.run([sys.executable, "-m", "attncert", "prove", "compiled", "--model", str(path), "--out", str(tmp_path / "c.json")],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    v = subprocess.run([sys.executable, "-m", "attncert", "verify", str(path)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert v.returncode == 2 and v.stdout.split()[0] == BAD and "Traceback" not in v.stderr


def test_an_npz_model_runs_as_exported(tmp_path: Path):
    """The minimal model above: its one token column reads 1 at the token, the decoder gives 'a' there."""
    from attncert.constructions.compiler.export import run_npz

    assert run_npz(_npz(tmp_path, np.array(['{"s": "a"}'])), ["a"]) == ["a"]


@pytest.mark.slow
def test_a_hostile_npz_number_is_refused_quickly(tmp_path: Path):
    path = _npz(tmp_path, np.array(['{"s": "a"}', '{"q": "1e99999999"}']))
    code = f"from attncert.constructions.compiler.export import run_npz\ntry:\n    run_npz({str(path)!r}, ['a'])\nexcept Exception:\n    pass\n"
    try:
        subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=10, cwd=ROOT)
    except subprocess.TimeoutExpired:
        raise AssertionError("run_npz ran past 10 s on a 1 KB file") from None


# == refused attacks: compiled_program ===========================================================================


def test_true_and_one_in_one_categorical_aggregate_are_refused():
    pytest.importorskip("tracr")
    from attncert.constructions.rasp.evaluate import evaluate

    # the definition: a categorical mean of [True, 1] is defined (True == 1) and is the first, True; a one-hot
    # column cannot hold both values, so the only honest outcomes are a refusal or a model that gives True
    premise(evaluate(_rasp("true_or_one"), ["a", "b"]) == [True, True], "RASP gives True")
    for method in ("compositional", "exhaustive"):
        with pytest.raises(ParseError):
            _program(method, "true_or_one")


@pytest.mark.parametrize("name", ["selects_none_query", "selects_none_key"])
def test_a_callable_predicate_selecting_none_is_refused(name: str):
    pytest.importorskip("tracr")
    for method in ("compositional", "exhaustive"):
        with pytest.raises(ParseError, match="None"):
            _program(method, name)


def test_a_map_telling_true_from_one_in_a_numerical_column_is_refused():
    pytest.importorskip("tracr")
    from attncert.constructions.rasp.evaluate import evaluate

    premise(evaluate(_rasp("true_apart_from_one"), ["a", "b"]) == ["T", "one"], "RASP tells True from 1")
    for method in ("compositional", "exhaustive"):
        with pytest.raises(ParseError):
            _program(method, "true_apart_from_one")


def test_a_static_select_table_missing_the_masked_pairs_is_refused():
    """Causal: a recorded callable Select(indices, indices) tabulated on k <= q only. RASP's evaluation calls the
    predicate on every pair before masking (so it raises), the proof would look up k <= q alone: refused."""
    pytest.importorskip("tracr")
    from attncert.proofs.compiled import program as P

    table = [[[{"q": str(k)}, {"q": str(q)}], {"b": k == q}] for q in range(3) for k in range(q + 1)]
    record = {"nodes": [
        {"args": [], "encoding": "categorical", "label": "indices", "op": "indices"},
        {"args": ["indices", "indices"], "label": "sel", "op": "select", "table": table},
        {"args": [], "encoding": "categorical", "label": "tokens", "op": "tokens"},
        {"args": ["sel", "tokens"], "default": None, "encoding": "categorical", "label": "out", "op": "aggregate"},
    ], "output": "out"}
    src = P._from_record({"kind": "tables", "program": record}, {"program": "recorded"})
    with pytest.raises(ParseError, match="no entry"):
        P._certify(src, P._tokens("a,b"), 3, "every", True, 100_000, 10, file=None, expr=None, program="recorded", method="compositional")


def test_a_correct_none_query_width_verifies_and_its_forgeries_are_rejected():
    """Select(tokens, shifted, q is not None): proven, and the model is right on every input (by the definition);
    resealed forgeries of its verdict, its steps and its model are REJECTED."""
    pytest.importorskip("tracr")
    doc = _program("compositional", "not_none_width")
    premise(mismatches(_rasp("not_none_width"), doc["construction"]["model"], ["a", "b"], range(1, 4))[1:] == (0, []), "the model is right")
    assert status(doc) == OK
    false = unsealed(doc)
    false["result"].update(holds=False, problems=["made up"])
    assert status(false) == REJECTED
    dropped = unsealed(doc)
    dropped["outputs"]["proof"]["steps"].pop()
    assert status(dropped) == REJECTED
    doubled = unsealed(doc)
    doubled["outputs"]["proof"]["steps"].append(doubled["outputs"]["proof"]["steps"][0])
    assert status(doubled) == REJECTED
    moved = unsealed(doc)
    head = next(h for layer in moved["construction"]["model"]["layers"] for h in layer["heads"])
    head["qk"][0][2] = str(Fraction(head["qk"][0][2]) + 1)
    assert status(moved) in (REJECTED, DOES_NOT_HOLD)
    assert status(moved) == REJECTED, "a moved weight is not this program's compile"


def test_a_disproven_certificate_cannot_be_turned_into_a_proof():
    """A compositional certificate recording holds = false (the incomplete proof of _pair_mean_record), edited to hold.
    (It used the certificate of tuple_none_eq, which recorded holds = false only through the tuple confusion.)"""
    pytest.importorskip("tracr")
    doc = _recorded(_pair_mean_record(), "compositional", n=4)
    premise(not doc["result"]["holds"], "the prover records holds = false")
    forged = unsealed(doc)
    forged["result"].update(holds=True, problems=[])
    assert status(forged) == REJECTED


def test_an_undefined_note_cannot_be_dropped():
    """The certificate of an Aggregate over shifted tokens records where RASP's mean is undefined; dropping it
    (claiming every input) is REJECTED."""
    pytest.importorskip("tracr")
    from tracr.rasp import rasp  # noqa: F401

    doc = _program("compositional", "tuple_none_lt")
    forged = unsealed(doc)
    forged["result"]["may_be_undefined"] = ["Select 'select' may order tuple against tuple values"]
    assert status(forged) == REJECTED


def test_a_recorded_table_cannot_say_something_else():
    """shift_by_one's map i - 1 recorded as i (the identity: the program then copies its tokens), the model and the
    rest unchanged: REJECTED (the recorded model is not that program's compile)."""
    pytest.importorskip("tracr")
    doc = _program("compositional", "shift_by_one")
    forged = unsealed(doc)
    m = next(d for d in forged["construction"]["program"]["program"]["nodes"] if d["op"] == "map")
    m["table"] = [[k, k[0]] for k, _ in m["table"]]
    assert status(forged) == REJECTED


def test_the_vocabulary_in_another_order_is_rejected():
    """The recorded vocabulary and the model's reversed together with its token columns (the same embedding)."""
    pytest.importorskip("tracr")
    doc = _program("compositional", "shift_by_one")
    forged = unsealed(doc)
    forged["inputs"]["vocab"].reverse()
    model = forged["construction"]["model"]
    model["vocab"].reverse()
    model["token_columns"].reverse()
    assert status(forged) == REJECTED


def test_an_exhaustive_output_relabelled_is_rejected():
    """The recorded RASP outputs of a numerical width with two of its interned values exchanged everywhere."""
    pytest.importorskip("tracr")
    doc = _program("exhaustive", "not_none_width")
    forged = unsealed(doc)
    ref = forged["reference"]["rasp"]
    premise(len(ref["values"]) >= 2, "two values")
    ref["values"][0], ref["values"][1] = ref["values"][1], ref["values"][0]
    assert status(forged) == REJECTED


def test_a_genuine_compositional_certificate_over_a_stricter_limit_is_bad_not_rejected():
    pytest.importorskip("tracr")
    from attncert.exact.limits import Limits

    doc = _program("compositional", "not_none_width")
    premise(status(doc) == OK, "the genuine certificate verifies under the default limits")
    data = canonical_json(seal(unsealed(doc)))
    premise(verify_bytes(data, lim=Limits(max_pairs=2)).status == BAD, "a lower limit that the cost model sees is BAD")
    assert verify_bytes(data, lim=Limits(max_pairs=20)).status == BAD


def test_a_count_recorded_as_a_boolean_is_rejected():
    """result.lengths [True, 2, 3] for [1, 2, 3]: Python's == says equal (the checker compares with !=); the
    rebuild compares with kinds."""
    pytest.importorskip("tracr")
    doc = _program("compositional", "not_none_width")
    forged = unsealed(doc)
    forged["result"]["lengths"][0] = True
    assert status(forged) == REJECTED


# == refused attacks: verdicts of other claims ====================================================================


def test_a_sinkhorn_fixed_point_recorded_as_failing_is_rejected():
    doc = prove_claim("sinkhorn_fixed_point", n=3, seed=1)
    premise(status(doc) == OK, "the genuine certificate verifies")
    forged = unsealed(doc)
    forged["result"]["holds"] = False
    assert status(forged) == REJECTED


def test_a_transport_plan_recorded_as_failing_is_rejected():
    doc = prove_claim("transport_plan", n=3, seed=1)
    premise(status(doc) == OK, "the genuine certificate verifies")
    forged = unsealed(doc)
    forged["result"]["holds"] = False
    assert status(forged) == REJECTED
    unequal = unsealed(doc)
    unequal["inputs"]["a"][0] = str(Fraction(unequal["inputs"]["a"][0]) * 2)
    unequal["result"]["holds"] = False
    assert status(unequal) in (REJECTED, BAD)


def test_a_softmax_certificate_cannot_be_moved_from_does_not_hold_to_ok():
    doc = prove_claim("compiled_softmax", of="matmul", sizes="r=1,k=2,c=1", betas="1000", tol="1/1000", prec=4)
    premise(not doc["result"]["holds"], "recorded as not holding")
    forged = unsealed(doc)
    forged["result"].update(holds=True, least_beta_within_tol="1000", least_beta_within_tol_output_block="1000")
    forged["outputs"]["softmax"][0].update(bound="1/10000", bound_output_block="1/10000")
    assert status(forged) == REJECTED


def test_verify_of_a_folder_with_a_link_to_itself_ends(tmp_path: Path):
    pytest.importorskip("tracr")
    folder = tmp_path / "certs"
    folder.mkdir()
    doc = _program("compositional", "shift_by_one")
    (folder / "c.json").write_bytes(canonical_json(seal(unsealed(doc))))
    (folder / "self").symlink_to(folder)
    r = subprocess.run([sys.executable, "-m", "attncert", "verify", str(folder)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.count(OK) >= 1, r.stdout + r.stderr
