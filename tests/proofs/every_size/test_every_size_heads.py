"""A symbolic number of heads (issue 32): multi-head attention and the encoder layer for every h.

With h a symbol the heads' matrices are one stacked block each (A: h d x d, V: h d x d_v, the positions of A_1 ..
A_h and V_1 .. V_h), and the output sums over the head digit m quotients whose denominators depend on m: the Σ normal
form holds them as Σ_m a_m inv(b_m), each b_m shown positive (forms.reciprocal, prover and checker). Tested here: the
reciprocal's own rules on both sides, the proofs, mutants wrong only at many heads or with a wrong reference
(refused, the counterexample confirmed by a fixed-size run against proofs/checkers/references.py), and forged
certificates (the inv factor changed, dropped, or given a denominator not shown positive)."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from flint import fmpq

from attncert.constructions import simulator
from attncert.constructions.sizes.expr import SizeExpr
from attncert.exact import EE, QQ
from attncert.exact.certificate import seal
from attncert.proofs.checkers.every_size import check_every_size
from attncert.proofs.checkers.every_size import forms as checker_forms
from attncert.proofs.checkers.every_size.sizes import Poly
from attncert.proofs.checkers.references import BY_CLAIM
from attncert.proofs.every_size import forms as prover_forms
from attncert.proofs.every_size import references as R
from attncert.proofs.every_size.claims import EverySizeClaim
from attncert.proofs.every_size.evaluate import Real, _add
from attncert.proofs.every_size.prove import REFERENCES, SPECS, NoProof, Spec, prove

from .test_every_size_prover import confirm, fn_params, mutant

SYMBOLS = ("n", "d", "dv", "h", "do")


# -- the reciprocal, on both sides --------------------------------------------------------------------------


def _prover_softmax_denominator(scale: int) -> prover_forms.Form:
    """scale Σ_{k<n} e^{x[0][k]} in the prover's forms."""
    S = prover_forms.Sizes(["n"])
    e = prover_forms.Form.factor(S, prover_forms.Factor("exp", (prover_forms.read(S, "x", SizeExpr.const(0), SizeExpr.symbol("k")),)))
    return e.summed("k", SizeExpr.symbol("n")).scale(S.const(scale))


def test_the_reciprocal_of_a_scaled_sum_is_the_inverse_scale_times_one_factor():
    """inv(c F) = c^{-1} inv(F): 1 / (3 Σ e) and (1/3) (1 / Σ e) are one form (the 1/n of a mean cancels so)."""
    S = prover_forms.Sizes(["n"])
    three = prover_forms.reciprocal(_prover_softmax_denominator(3))
    one = prover_forms.reciprocal(_prover_softmax_denominator(1)).scale(S.const(fmpq(1, 3)))
    assert three.same(one) and "inv(" in three.key()
    # and its value is 1 / (3 Σ_k e^{x_k}) at a concrete size (n = 2, x = (0, 1)), exactly in EE
    value = prover_forms.value_at(three, {"n": 2}, {"x": [[QQ.convert(0), QQ.convert(1)]]}, EE)
    assert value == EE.convert(1) / (EE.convert(3) * (EE.exp(QQ.convert(0)) + EE.exp(QQ.convert(1))))


def test_the_reciprocal_of_a_form_not_shown_nonzero_is_refused_on_both_sides():
    S = prover_forms.Sizes(["n"])
    x = prover_forms.read(S, "x", SizeExpr.const(0), SizeExpr.symbol("k")).summed("k", SizeExpr.symbol("n"))  # Σ x_k may be 0
    with pytest.raises(prover_forms.FormError, match="not shown nonzero"):
        prover_forms.reciprocal(x)
    K = checker_forms.Coefficients(["n"])
    y = checker_forms.read(K, "x", Poly.const(0), Poly.symbol("k")).summed("k", Poly.symbol("n"))
    with pytest.raises(checker_forms.FormError, match="not shown nonzero"):
        checker_forms.reciprocal(y)
    with pytest.raises(checker_forms.FormError):  # n - 1 e^{x}: a coefficient of no sign at n = 1
        checker_forms.reciprocal(checker_forms.exp(K, y).scale(K.of(Poly.symbol("n") - Poly.const(1))))


def test_the_checker_normalises_a_recorded_inv_factor_as_the_prover_does():
    """The checker reads {"inv": [form]} from a record and gives it the same normal form as its own reciprocal."""
    K = checker_forms.Coefficients(["n"])
    e = checker_forms.exp(K, checker_forms.read(K, "x", Poly.const(0), Poly.symbol("k"))).summed("k", Poly.symbol("n"))
    mine = checker_forms.reciprocal(e.scale(K.const(2)))
    recorded = prover_forms.reciprocal(_prover_softmax_denominator(2)).to_json()
    assert checker_forms.read_form(K, recorded, frozenset({"x"})).same(mine)
    assert not checker_forms.read_form(K, recorded, frozenset({"x"})).same(checker_forms.reciprocal(e))


# -- proofs --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def proven() -> dict[str, Any]:
    return {"multihead": EverySizeClaim("multihead").prove(), "encoder_layer": EverySizeClaim("encoder_layer").prove()}


@pytest.mark.parametrize("base", ["multihead", "encoder_layer"])
def test_every_number_of_heads_is_proven_and_checks_clean(proven, base):
    doc = proven[base]
    assert doc["construction"]["sizes"] == {"quantified": sorted(EverySizeClaim(base).spec.symbols), "fixed": {}}
    assert "h >= 1" in doc["result"]["hypotheses"] and doc["result"]["holds"] is True
    names = [b["name"] for b in doc["construction"]["layout"]["inputs"]]
    assert names[:4] == ["X", "A", "V", "WO"] and doc["construction"]["layout"]["inputs"][1]["rows"] == "d*h"
    assert '"inv"' in json.dumps(doc["outputs"]["regions"])  # the heads' sum holds the reciprocal factors
    assert check_every_size(doc) == []


def test_the_proof_for_every_h_holds_at_h_3_on_a_concrete_input():
    """An independent look at what was proven: the template at h = 3 (stacked blocks are A_1 .. A_3's positions) on
    random rationals, against the fixed-size reference of proofs/checkers/references.py."""
    con = simulator.multihead(2, 2, 1, 3, 2)
    rng = random.Random(7)
    mats = {name: [[QQ.convert(rng.randint(-3, 3)) for _ in range(c)] for _ in range(r)] for name, r, c in con.layout.inputs}
    assert con(mats, EE) == BY_CLAIM["multihead"](mats, EE)


def _refused(build, reference=None) -> NoProof:
    with pytest.raises(NoProof) as e:
        prove(Spec("multihead", SYMBOLS, build, reference or REFERENCES["multihead"]), SYMBOLS, {})
    return e.value


def _a_gather(template: dict, coeffs: list[str]) -> int:
    """The radix_affine node whose coefficients print as ``coeffs`` (the gathers of A_m, V_m)."""
    for n in template["nodes"]:
        fn = n["params"].get("fn") if n["op"] == "map" else None
        if fn and fn["name"] == "radix_affine":
            got = [c.get("size", c.get("q")) for c in fn["params"]["coeffs"]["list"]]
            if got == coeffs:
                return n["id"]
    raise AssertionError(f"no gather with coefficients {coeffs}")


def _a_shifted_from(k: int):
    """multihead with head m reading A at m (d^2 + floor(h / k)): right for every h < k, wrong from there."""

    def edit(t):
        fn_params(t, _a_gather(t, ["d^2", "0", "1", "d"]))["coeffs"]["list"][0] = {"size": f"d^2 + floor(h, {k})"}

    return mutant(simulator.multihead, SYMBOLS, edit)


def _right_at(build, sizes: tuple[int, ...]) -> bool:
    con = build(*sizes)
    rng = random.Random(3)
    mats = {name: [[QQ.convert(rng.randint(-3, 3)) for _ in range(c)] for _ in range(r)] for name, r, c in con.layout.inputs}
    return con(mats, EE) == BY_CLAIM["multihead"](mats, EE)


@pytest.mark.slow  # a counterexample search: concrete runs at several sizes
def test_heads_reading_a_wrong_a_from_the_third_head_on_are_refused_with_a_confirmed_counterexample():
    """Right at h = 1 and 2 (so a proof with h fixed to its default 2 would hold), wrong from h = 3."""
    build = _a_shifted_from(3)
    e = _refused(build)
    assert e.counterexample is not None and e.counterexample["sizes"]["h"] >= 3
    confirm("multihead", build, SYMBOLS, e.counterexample)
    assert _right_at(build, (2, 2, 1, 2, 1))


@pytest.mark.slow  # 45 s: no counter-model, so the search runs all 64 small sizes, each exactly
def test_heads_reading_a_wrong_a_from_the_50th_head_on_are_not_proven():
    """Wrong only from h = 50: refused. The solver gives no counter-model here and small sizes are right, so the
    refusal is "unproven", without a counterexample (never "false" without one); h = 50 is wrong, h = 49 right
    (with n = 2: over one key the softmax weight is 1 whatever A is)."""
    build = _a_shifted_from(50)
    e = _refused(build)
    assert e.counterexample is None or e.counterexample["sizes"]["h"] >= 50
    assert _right_at(build, (2, 1, 1, 49, 1)) and not _right_at(build, (2, 1, 1, 50, 1))


@pytest.mark.slow  # a counterexample search: concrete runs at several sizes
def test_a_reference_whose_heads_all_read_the_first_rows_of_w_o_is_refused_with_a_counterexample_at_two_heads():
    """W_O[v][o] for W_O[m dv + v][o]: the same at h = 1; at h = 2 a real difference, which U does not have."""

    def wrong(sz, s, i, o, decide):
        if s["h"].constant() is not None:  # at concrete sizes (the counterexample's), the heads one by one
            return R.multihead(sz, {**s, "h": SizeExpr.const(1)}, i, o, decide) if s["h"].constant() == 1 else _summed_heads(sz, s, i, o)
        m = SizeExpr.symbol(prover_forms.fresh())
        t = R.attention(sz, s, i, SizeExpr.symbol("v"), "A", "V", s["d"] * m)
        v = prover_forms.fresh()
        w = prover_forms.read(sz, "WO", SizeExpr.symbol("v"), o)
        num = (t.num * w * prover_forms.reciprocal(t.den)).rename({"v": SizeExpr.symbol(v)}).summed(v, s["dv"])
        return Real(num.summed(m.text(), s["h"]), prover_forms.Form.const(sz, 1))

    def _summed_heads(sz, s, i, o):
        out = None
        for m in range(s["h"].constant()):
            t = R.attention(sz, s, i, SizeExpr.symbol("v"), f"A{m + 1}", f"V{m + 1}")
            v = prover_forms.fresh()
            head = Real((t.num * prover_forms.read(sz, "WO", SizeExpr.symbol("v"), o)).rename({"v": SizeExpr.symbol(v)}).summed(v, s["dv"]), t.den)
            out = head if out is None else _add(out, head)
        return out

    e = _refused(simulator.multihead, wrong)
    assert e.counterexample is not None and e.counterexample["sizes"]["h"] >= 2
    sizes = e.counterexample["sizes"]
    con = simulator.multihead(*(sizes[s] for s in SYMBOLS))
    rng = random.Random(e.counterexample["seed"])
    mats = {name: [[QQ.convert(rng.randint(-3, 3)) for _ in range(c)] for _ in range(r)] for name, r, c in con.layout.inputs}
    assert con(mats, EE) == BY_CLAIM["multihead"](mats, EE)  # the construction is right: the reference was wrong


# -- forgeries -------------------------------------------------------------------------------------------------


def _inv_places(obj: Any, path: tuple = ()) -> list[tuple]:
    if isinstance(obj, dict):
        here = [path] if set(obj) == {"inv"} else []
        return here + [p for k, v in obj.items() for p in _inv_places(v, path + (k,))]
    if isinstance(obj, list):
        return [p for i, v in enumerate(obj) for p in _inv_places(v, path + (i,))]
    return []


def _at(doc: Any, path: tuple) -> Any:
    for k in path:
        doc = doc[k]
    return doc


def _problems(doc: dict[str, Any]) -> str:
    problems = check_every_size(seal(doc))
    assert problems, "a forgery checked clean"
    return " | ".join(problems)


def test_an_inv_factor_made_exp_is_refused(proven):
    doc = copy.deepcopy(proven["multihead"])
    (path, *_) = _inv_places(doc["outputs"]["regions"])
    parent = _at(doc["outputs"]["regions"], path[:-1])
    parent[path[-1]] = {"exp": parent[path[-1]]["inv"]}
    assert "recorded" in _problems(doc)


def test_an_inv_factor_dropped_from_value_and_reference_alike_is_refused(proven):
    """The value and the reference changed the same way stay equal to each other, not to the template's."""
    doc = copy.deepcopy(proven["multihead"])
    for r in doc["outputs"]["regions"]:
        for what in ("value", "reference"):
            for term in (r.get(what) or {}).get("num", []):
                term["factors"] = [f for f in term["factors"] if "inv" not in f]
    assert "recorded" in _problems(doc)


def test_a_heads_denominator_the_template_can_make_zero_is_refused(proven):
    """The heads' softmax weights e^{d S/d} made d S/d (``masked_exp`` replaced by ``mul``): each head's denominator
    Σ_k S_ik / n is no longer shown positive, so Σ_m a_m / b_m is not a form the checker makes."""
    doc = copy.deepcopy(proven["multihead"])
    node = next(n for n in doc["construction"]["template"]["nodes"] if n["op"] == "sequence_map" and n["params"]["fn"]["name"] == "masked_exp")
    node["params"]["fn"] = {"name": "mul", "params": {}}
    text = _problems(doc)
    assert "not shown" in text or "recorded" in text
