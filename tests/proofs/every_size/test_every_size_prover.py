"""The every-size prover (issue 32): proofs for every size, and mutants wrong only at large sizes refused.

A mutant is the template of a real construction with one size expression changed (a source
coefficient c + floor(c/50), a bound min(n^2, 2500), ...): right at every small size, wrong past a
point. Each must be refused with a counterexample, and the counterexample is confirmed here on its
own: the mutant instantiated at those sizes, run exactly by the fixed-size machinery, against the
reference of proofs/checkers/references.py (never the prover's)."""

from __future__ import annotations

import json
import random
from typing import Any, Callable

import pytest

from attncert.constructions import activations, linalg, simulator
from attncert.constructions.layout import Construction
from attncert.constructions.rasp.graph import graph_from_json, graph_to_json
from attncert.constructions.rasp.template import instantiate_json
from attncert.constructions.sizes.expr import SizeExpr
from attncert.exact import EE, QQ
from attncert.proofs.every_size import references as R
from attncert.proofs.every_size.evaluate import Real
from attncert.proofs.every_size.forms import Factor, Form, Sizes, read
from attncert.proofs.every_size.prove import REFERENCES, SPECS, NoProof, Spec, prove
from attncert.proofs.checkers.references import BY_CLAIM


class _Graph(Construction):
    """A construction whose graph is given (a mutated template, or its instance)."""

    def __init__(self, base: Construction, graph: dict[str, Any]):
        super().__init__(base.name, base.program, base.layout)
        object.__setattr__(self, "_json", graph)

    def graph(self):
        return graph_from_json(self._json)


def mutant(builder: Callable[..., Construction], symbols: tuple[str, ...], edit: Callable[[dict], None]) -> Callable[..., Construction]:
    """The builder with its template edited: symbolic sizes give the edited template, integers its instance."""
    template = graph_to_json(builder(*(SizeExpr.symbol(s) for s in symbols)).graph())
    edit(template)

    def build(*sizes: Any) -> Construction:
        base = builder(*sizes)
        if all(isinstance(x, int) for x in sizes):
            return _Graph(base, instantiate_json(template, dict(zip(symbols, sizes))))
        return _Graph(base, template)

    return build


def node(template: dict, label: str) -> dict:
    return next(n for n in template["nodes"] if n["label"] == label)


def fn_params(template: dict, node_id: int) -> dict:
    return next(n for n in template["nodes"] if n["id"] == node_id)["params"]["fn"]["params"]


def refused(name: str, symbols: tuple[str, ...], build: Callable[..., Construction], reference=None) -> NoProof:
    with pytest.raises(NoProof) as e:
        prove(Spec(name, symbols, build, reference or REFERENCES[name]), symbols, {})
    return e.value


def confirm(name: str, build: Callable[..., Construction], symbols: tuple[str, ...], found: dict) -> None:
    """The counterexample, on its own: the mutant at those sizes, exactly, against the fixed-size reference."""
    sizes = found["sizes"]
    con = build(*(sizes[s] for s in symbols))
    rng = random.Random(found["seed"])
    mats = {n: [[QQ.convert(rng.randint(-3, 3)) for _ in range(c)] for _ in range(r)] for n, r, c in con.layout.inputs}
    want = BY_CLAIM[name](mats, EE)
    rows, cols = con.layout.output
    try:
        out = con.run(mats, EE)
    except Exception as e:  # the construction fails where the reference is defined
        assert "division" in str(e)
        return
    assert any(EE.convert(out[t]) != EE.convert(want[t // cols][t % cols]) for t in range(rows * cols)) or any(out[t] != 0 for t in range(rows * cols, len(out)))


def test_a_nested_sum_keeps_its_binder_apart_from_the_outer_one():
    """Σ_k exp(Σ_j X[i][j] X[k][j]) in canonical form: the outer binder k becomes z0_0 while the inner sum,
    built first, already binds z0_0; substituted naively, X[k][j] would read X[z0_0][z0_0]."""
    S = Sizes(["n", "d"])
    i, j, k = (SizeExpr.symbol(x) for x in "ijk")
    inner = (read(S, "X", i, j) * read(S, "X", k, j)).summed("j", SizeExpr.symbol("d"))
    outer = Form.factor(S, Factor("exp", (inner,))).summed("k", SizeExpr.symbol("n"))
    (c, t), = outer.terms.values()
    (outer_binder, _), = t.binders
    (e,) = t.factors
    (_, t_inner), = e.args[0].terms.values()
    (inner_binder, _), = t_inner.binders
    assert outer_binder != inner_binder
    rows = sorted(f.args[1].text() for f in t_inner.factors)
    assert rows == sorted(["i", outer_binder]) and all(f.args[2].text() == inner_binder for f in t_inner.factors)


@pytest.mark.parametrize("name", ["transpose", "matmul", "softmax", "relu", "maxmin"])
def test_the_lemmas_are_proven_for_every_size(name):
    spec = SPECS[name]
    proof = prove(spec, spec.symbols, {})
    assert proof["regions"] and all(r.equal for r in proof["regions"]) and proof["facts"]
    # every output or rest region's value is a quotient whose forms were compared: no region passes without them
    # (a div region's divisor is shown nonzero instead: nothing to compare)
    assert all(r.value is not None and (r.kind == "rest" or r.reference is not None) for r in proof["regions"] if not r.kind.startswith("div "))


def test_maxmin_splits_by_parity_and_the_last_odd_entry():
    proof = prove(SPECS["maxmin"], ("n",), {})
    paths = [r.path for r in proof["regions"]]
    assert {"refine": "j", "radix": "2", "residue": 0} in [p for path in paths for p in path]
    assert any(st["kind"] == "pin" and st["decision"] == "j = n - 1" for r in proof["regions"] for st in r.steps)


@pytest.mark.slow
@pytest.mark.parametrize("name, fixed", [("universal", {}), ("multihead", {"h": 2}), ("encoder_layer", {"h": 1})])
def test_the_simulator_is_proven_for_every_size(name, fixed):
    spec = SPECS[name]
    proof = prove(spec, tuple(s for s in spec.symbols if s not in fixed), fixed)
    assert [c.text() for c in proof["cases"]][0].startswith("d = 1") and all(r.equal for r in proof["regions"])


def test_a_proof_twice_is_the_same_record():
    a, b = (prove(SPECS["matmul"], ("r", "k", "c"), {}) for _ in range(2))
    assert [r.to_json() for r in a["regions"]] == [r.to_json() for r in b["regions"]]
    assert [f.smtlib for f in a["facts"]] == [f.smtlib for f in b["facts"]]


def test_transpose_reading_c_plus_floor_c_over_50_is_refused_with_a_counterexample_past_50():
    def edit(t):
        node(t, "transpose_source")["params"]["fn"]["params"]["coeffs"]["list"][1] = {"size": "c + floor(c, 50)"}

    build = mutant(linalg.transpose, ("r", "c"), edit)
    e = refused("transpose", ("r", "c"), build)
    assert e.counterexample is not None and e.counterexample["sizes"]["c"] >= 50
    confirm("transpose", build, ("r", "c"), e.counterexample)
    # and it is right at every size below 50 that small sizes reach
    for r, c in [(1, 1), (3, 5), (4, 49)]:
        con = build(r, c)
        mats = {"M": [[QQ.convert(i * c + j) for j in range(c)] for i in range(r)]}
        assert con(mats, QQ) == BY_CLAIM["transpose"](mats, QQ)


def test_softmax_dividing_by_c_plus_floor_c_over_40_is_refused_with_a_counterexample_at_40():
    def edit(t):
        for n in t["nodes"]:
            if "div_const" in json.dumps(n):
                n["params"]["fn"]["params"]["fns"]["list"][1]["fn"]["params"]["c"] = {"size": "c + floor(c, 40)"}

    build = mutant(activations.softmax_rows, ("r", "c"), edit)
    e = refused("softmax", ("r", "c"), build)
    assert e.counterexample is not None and e.counterexample["sizes"]["c"] >= 40
    confirm("softmax", build, ("r", "c"), e.counterexample)


def test_a_reference_with_s_transposed_is_refused_and_its_counterexample_is_real():
    """S_ki for S_ik: the same at n = 1 (a formal difference only); a real counterexample needs n >= 2."""

    def wrong(sz, s, i, v, decide):
        def scores(a, b):
            return R._sum(lambda j: R._sum(lambda l: read(sz, "X", b, l) * read(sz, "A", l, j) * read(sz, "X", a, j), s["d"]), s["d"])

        num = R._sum(lambda k: R._exp(sz, scores(i, k)) * R._xv(sz, s, "V", k, v), s["n"])
        return Real(num, R._sum(lambda k: R._exp(sz, scores(i, k)), s["n"]))

    e = refused("universal", ("n", "d", "dv"), simulator.universal, wrong)
    assert e.counterexample is not None and e.counterexample["sizes"]["n"] >= 2
    # U itself is right there: the counterexample is against the wrong reference, which differs from attention
    sizes = e.counterexample["sizes"]
    con = simulator.universal(sizes["n"], sizes["d"], sizes["dv"])
    rng = random.Random(e.counterexample["seed"])
    mats = {n: [[QQ.convert(rng.randint(-3, 3)) for _ in range(c)] for _ in range(r)] for n, r, c in con.layout.inputs}
    assert con(mats, EE) == BY_CLAIM["universal"](mats, EE)


@pytest.mark.slow
@pytest.mark.parametrize(
    "case",
    [
        ("matmul", ("r", "k", "c"), linalg.matmul, lambda t: node(t, "B_source")["params"]["fn"]["params"].update(const={"size": "k*r + max(r - 49, 0)"}), ("r", 50)),
        ("universal", ("n", "d", "dv"), simulator.universal, lambda t: fn_params(t, 29).update(bound={"size": "min(n^2, 2500)"}), ("n", 51)),
        ("universal", ("n", "d", "dv"), simulator.universal, lambda t: fn_params(t, 23)["coeffs"]["list"].__setitem__(2, {"size": "d + floor(n, 60)"}), ("n", 60)),
    ],
    ids=["matmul-offset-past-49", "U-mask-bound-2500", "U-row-stride-past-60"],
)
def test_mutants_wrong_only_at_large_sizes_are_refused_with_confirmed_counterexamples(case):
    name, symbols, builder, edit, (size, least) = case
    build = mutant(builder, symbols, edit)
    e = refused(name, symbols, build)
    assert e.counterexample is not None and e.counterexample["sizes"][size] >= least
    confirm(name, build, symbols, e.counterexample)


def test_softmax_dividing_by_c_minus_1_is_refused_and_false_at_c_1():
    """A divisor that vanishes at some size (c - 1 at c = 1) is not shown nonzero: no proof, and the run at c = 1
    fails where the reference is defined."""

    def edit(t):
        for n in t["nodes"]:
            if "div_const" in json.dumps(n):
                n["params"]["fn"]["params"]["fns"]["list"][1]["fn"]["params"]["c"] = {"size": "c - 1"}

    build = mutant(activations.softmax_rows, ("r", "c"), edit)
    e = refused("softmax", ("r", "c"), build)
    assert "not shown nonzero" in str(e) and e.counterexample is not None and e.counterexample["sizes"]["c"] == 1
    confirm("softmax", build, ("r", "c"), e.counterexample)
