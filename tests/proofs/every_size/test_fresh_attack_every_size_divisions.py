"""A fresh hostile audit of the every-size checker's division rules (commit a4cb84a): ``div N`` regions, the refined
digit's ``quotient_bound`` and cvc5's first try from the ``_lean`` hypotheses (docs/every-size.md).

Found and fixed here: the checker examined only the nodes its regions evaluate (the output's ancestors at the positions
read, each div's divisor at every position) and every div_const, while the RASP program computes every node at every
position. A node no region evaluates left the output right and the claim checked OK though the program raises at
every size: a node no other reads computing ``rdiv_const`` (1 / x), ``mod_const`` by 0 or ``mod`` by a zero sequence,
and the values of a gather whose query is -1 everywhere (no key: its default) computing 1 / 0, ``radix_affine`` of a
real token or ``maxmin_pick`` of a number (attncert's own prover proved those templates; the checker said OK). Now
in each case every node must be evaluated by some region (a select and its keys where an aggregate reads them):
``proofs/checkers/every_size/examined.py``, and the prover refuses the same (``proofs/every_size/prove.py``).

Tried and refused without a change (each asserted below): the div region dropped, relabelled (``div 6``, ``rest``,
``div 07``), duplicated, recording a value, its refinement dropped with its steps kept, its steps emptied; the div
node's function renamed or its arguments swapped. Tried by reading and by brute force at small sizes (no forgery
found, asserted last): quotient_bound's multiplier ``a`` must be a monomial of plain sizes with a coefficient >= 1
(``Poly.divided`` refuses a max/min/floor/mod atom, so ``min(s, -1) t < min(s, -1) E`` gives no bound), R >= 1 on
both branch shapes; ``_lean`` asks a subset of the renamed hypotheses (a proof from fewer is a proof from all).
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import random
import re
from typing import Any, Callable

import pytest
from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions.rasp import evaluate_graph
from attncert.constructions.rasp.graph import graph_from_json, graph_to_json
from attncert.constructions.rasp.template import instantiate_json
from attncert.exact.certificate import seal
from attncert.exact.domains.ee import EE
from attncert.proofs.checkers.every_size import check as checker
from attncert.proofs.checkers.every_size import check_every_size, smtlib
from attncert.proofs.checkers.every_size.coverage import quotient_bound
from attncert.proofs.checkers.every_size.sizes import parse_rel, parse_size
from attncert.proofs.every_size import claims
from attncert.proofs.every_size import evaluate as prover_evaluate
from attncert.proofs.every_size import prove as prover
from attncert.proofs.every_size.claims import EverySizeClaim


@pytest.fixture(scope="module")
def softmax() -> dict[str, Any]:
    """softmax_rows for every r and c: one div node (7), its divisor the row's mean of exponentials."""
    doc = EverySizeClaim("softmax").prove("r,c")
    assert check_every_size(doc) == [] and [r["kind"] for r in doc["outputs"]["regions"]] == ["output", "div 7"]
    return doc


def _node(i: int, op: str, fn: str | None = None, **params: Any) -> dict[str, Any]:
    return {"encoding": "numerical", "id": i, "label": f"n{i}", "name": f"n{i}", "op": op, "params": {"fn": {"name": fn, "params": params}} if fn else params}


def _edge(source: int, target: int, arg: int) -> dict[str, int]:
    return {"arg": arg, "source": source, "target": target}


def _ids(g: dict[str, Any]) -> tuple[int, int, int, int]:
    """The template's exp node, tokens, indices, and the first free id."""
    find = lambda f: next(n["id"] for n in g["nodes"] if f(n))  # noqa: E731
    return find(lambda n: n["name"] == "exp"), find(lambda n: n["op"] == "tokens"), find(lambda n: n["op"] == "indices"), max(n["id"] for n in g["nodes"]) + 1


def _zero_over(g: dict[str, Any], k: int, fn: str, params: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, int]]]:
    """Nodes k (x - x for the template's exp node: 0 everywhere) and k + 1 (fn of it, or of the tokens and it): a
    division by zero at every position."""
    exp, tokens, _, _ = _ids(g)
    nodes = [_node(k, "sequence_map", "sub"), _node(k + 1, "sequence_map" if fn == "mod" else "map", fn, **params)]
    edges = [_edge(exp, k, 0), _edge(exp, k, 1)]
    edges += [_edge(tokens, k + 1, 0), _edge(k, k + 1, 1)] if fn == "mod" else [_edge(tokens if fn == "mod_const" else k, k + 1, 0)]
    return nodes, edges


def _run(template: dict[str, Any], tokens: list[fmpq]) -> None:
    """The template at r = 2, c = 3 on the tokens, exactly (EE): the fixed-size machinery runs every node."""
    evaluate_graph(graph_from_json(instantiate_json(template, {"r": 2, "c": 3})), tokens, domain=EE)


TOKENS = [fmpq(1, 3)] + [fmpq(k) for k in range(5)]  # 1/3 + 1/3 is no integer
DIVISIONS = [("rdiv_const", {"c": {"q": "1"}}), ("mod_const", {"k": {"q": "0"}}), ("mod", {})]


@pytest.mark.parametrize("fn,params", DIVISIONS, ids=[f for f, _ in DIVISIONS])
def test_a_node_no_one_reads_dividing_by_zero_is_refused(softmax, fn, params, monkeypatch):
    """Was OK: nothing evaluated the two extra nodes, and the output is untouched; the program divides by zero."""
    doc = copy.deepcopy(softmax)
    g = doc["construction"]["template"]
    nodes, edges = _zero_over(g, 8, fn, params)
    g["nodes"] += nodes
    g["edges"] += edges
    with pytest.raises(Exception, match="division by an exact zero"):
        _run(g, TOKENS)
    problems = check_every_size(seal(doc))
    assert problems == [f"case 0: no region evaluates the nodes 8 (sequence_map), 9 ({nodes[1]['op']}), while the program computes each at every position"]
    monkeypatch.setattr(checker, "unexamined", lambda *a: [])
    assert check_every_size(seal(doc)) == []  # the hole: every region checks, the program divides by zero


def _one_over_zero(g: dict[str, Any], k: int) -> tuple[list[dict[str, Any]], list[dict[str, int]]]:
    return _zero_over(g, k, "rdiv_const", {"c": {"q": "1"}})


def _integer_of_token(g: dict[str, Any], k: int) -> tuple[list[dict[str, Any]], list[dict[str, int]]]:
    """radix_affine of the token doubled: the program needs an integer there (2/3 is none)."""
    _, tokens, _, _ = _ids(g)
    ra = {"bound": None, "coeffs": {"list": [{"q": "1"}]}, "const": {"q": "0"}, "other": {"q": "0"}, "radices": {"list": [{"q": "0"}]}}
    return [_node(k, "sequence_map", "add"), _node(k + 1, "map", "radix_affine", **ra)], [_edge(tokens, k, 0), _edge(tokens, k, 1), _edge(k, k + 1, 0)]


def _pick_of_numbers(g: dict[str, Any], k: int) -> tuple[list[dict[str, Any]], list[dict[str, int]]]:
    """maxmin_pick of two numbers: the program needs a pair (x, t) first."""
    _, tokens, _, _ = _ids(g)
    return [_node(k, "sequence_map", "add"), _node(k + 1, "sequence_map", "maxmin_pick")], [_edge(tokens, k, 0), _edge(tokens, k, 1), _edge(k, k + 1, 0), _edge(k, k + 1, 1)]


def _gathered_never(g: dict[str, Any], hidden: Callable[..., Any]) -> dict[str, Any]:
    """The template with its output plus a gather whose query is -1 at every position (no key: the default 0) of the
    node ``hidden`` adds, so the output is unchanged and that node is read by the output, evaluated by no region."""
    g = copy.deepcopy(g)
    out, (_, _, indices, k) = g["outputs"]["output"], _ids(g)
    nodes, edges = hidden(g, k)
    q, sel, agg, add = range(k + 2, k + 6)
    minus_one = {"bound": None, "coeffs": {"list": [{"q": "0"}]}, "const": {"q": "-1"}, "other": {"q": "-1"}, "radices": {"list": [{"q": "0"}]}}
    select = {"id": sel, "label": "sel", "name": "sel", "op": "select", "params": {"predicate": "EQ"}}
    g["nodes"] += nodes + [_node(q, "map", "radix_affine", **minus_one), select, _node(agg, "aggregate", default={"q": "0"}), _node(add, "sequence_map", "add")]
    g["edges"] += edges + [_edge(indices, q, 0), _edge(indices, sel, 0), _edge(q, sel, 1), _edge(sel, agg, 0), _edge(k + 1, agg, 1), _edge(out, add, 0), _edge(agg, add, 1)]
    g["outputs"]["output"] = add
    return g


@dataclasses.dataclass
class _Edited:
    """The construction with the template edited (:func:`_gathered_never`), as the prover reads it."""

    construction: Any
    hidden: Callable[..., Any]

    @property
    def layout(self) -> Any:
        return self.construction.layout

    def graph(self) -> Any:
        return graph_from_json(_gathered_never(graph_to_json(self.construction.graph()), self.hidden))


def _edited_spec(hidden: Callable[..., Any]) -> prover.Spec:
    spec = claims.SPECS["softmax"]
    return dataclasses.replace(spec, build=lambda *a: _Edited(spec.build(*a), hidden))


def _proven_before_the_fix(monkeypatch: pytest.MonkeyPatch, hidden: Callable[..., Any]) -> dict[str, Any]:
    """softmax's certificate for the edited template, as attncert's prover wrote it before the fix (its new refusal
    off: every node counted as examined): the gather's query -1 < 0 proven, its default read, the node under it
    never evaluated."""
    init = prover_evaluate.Evaluator.__init__

    def every_node_examined(self: Any, *a: Any, **k: Any) -> None:
        init(self, *a, **k)
        self.examined.update(self.nodes)

    with monkeypatch.context() as m:
        m.setitem(claims.SPECS, "softmax", _edited_spec(hidden))
        m.setattr(prover_evaluate.Evaluator, "__init__", every_node_examined)
        return EverySizeClaim("softmax").prove("r,c")


HIDDEN = {
    "1 / 0": (_one_over_zero, [fmpq(k) for k in range(6)], "division by an exact zero"),
    "radix_affine of a real token": (_integer_of_token, TOKENS, "expected an integer position"),
    "maxmin_pick of numbers": (_pick_of_numbers, [fmpq(k) for k in range(6)], "maxmin_pick is not defined"),
}


@pytest.mark.parametrize("shape", list(HIDDEN), ids=list(HIDDEN))
def test_a_node_the_output_reads_but_no_region_evaluates_is_refused(softmax, shape, monkeypatch):
    """Was OK: the checker evaluated the gather (no key) and never the node under it, which the program computes at
    every position and fails on. Refused now by the new rule alone (without it the same document checks OK), and by
    the prover."""
    hidden, tokens, failure = HIDDEN[shape]
    doc = _proven_before_the_fix(monkeypatch, hidden)
    with pytest.raises(Exception, match=failure):
        _run(doc["construction"]["template"], tokens)
    g = doc["construction"]["template"]
    k = _ids(softmax["construction"]["template"])[3]  # the first node added
    ops = {n["id"]: n["op"] for n in g["nodes"]}
    assert check_every_size(doc) == [f"case 0: no region evaluates the nodes {k} ({ops[k]}), {k + 1} ({ops[k + 1]}), while the program computes each at every position"]
    with monkeypatch.context() as m:
        m.setattr(checker, "unexamined", lambda *a: [])
        assert check_every_size(doc) == []  # the hole: every region checks, the program fails
    monkeypatch.setattr(prover, "counterexample", lambda *a, **k: None)  # the wrapper runs nothing at a fixed size
    monkeypatch.setattr(prover, "_atom_models", lambda *a, **k: [])
    with pytest.raises(prover.NoProof, match=rf"no region evaluates the nodes \[{k}, {k + 1}\]"):
        prover.prove(_edited_spec(hidden), ("c", "r"), {})


# -- tried and refused: the div regions and the div node forged ------------------------------------------------------


def _div_region(doc: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in doc["outputs"]["regions"] if r["kind"] == "div 7")


def _dropped(doc: dict[str, Any]) -> None:
    doc["outputs"]["regions"].remove(_div_region(doc))
    doc["result"]["regions"] -= 1


def _duplicated(doc: dict[str, Any]) -> None:
    doc["outputs"]["regions"].append(copy.deepcopy(_div_region(doc)))
    doc["result"]["regions"] += 1


def _unrefined(doc: dict[str, Any]) -> None:
    _div_region(doc).update(path=[], digits=[["t", "c*r"]], assumed=[], position="t")


def _div_node(doc: dict[str, Any]) -> dict[str, Any]:
    return next(n for n in doc["construction"]["template"]["nodes"] if n["id"] == 7)


def _swapped(doc: dict[str, Any]) -> None:
    for e in doc["construction"]["template"]["edges"]:
        if e["target"] == 7:
            e["arg"] = 1 - e["arg"]


FORGED = {
    "dropped": (_dropped, "div 7 regions at \\[\\]"),
    "relabelled div 6": (lambda d: _div_region(d).update(kind="div 6"), "div 7 regions at \\[\\]"),
    "relabelled rest": (lambda d: _div_region(d).update(kind="rest"), "div 7 regions at \\[\\]"),
    "relabelled div 07": (lambda d: _div_region(d).update(kind="div 07"), "div 7 regions at \\[\\]"),
    "duplicated": (_duplicated, "have the same path"),
    "a value recorded": (lambda d: _div_region(d).update(value=copy.deepcopy(d["outputs"]["regions"][0]["value"])), "records a value"),
    "unrefined, steps kept": (_unrefined, "no recorded digit of t in radix c"),
    "steps emptied": (lambda d: _div_region(d).update(steps=[]), "no recorded digit"),
    "div renamed": (lambda d: _div_node(d)["params"]["fn"].update(name="div "), "'div ' has no every-size semantics"),
    "arguments swapped": (_swapped, "region 0: the recorded value is not the checker's"),
}


@pytest.mark.parametrize("forge", list(FORGED), ids=list(FORGED))
def test_a_forged_div_region_or_node_is_refused(softmax, forge):
    edit, why = FORGED[forge]
    doc = copy.deepcopy(softmax)
    edit(doc)
    problems = check_every_size(seal(doc))
    assert problems and any(re.search(why, p) for p in problems), problems


# -- tried by brute force: quotient_bound's bound and _lean's proofs hold at every small point ---------------------

_A = ["1", "2", "s", "2*s", "s*u", "max(s, 1)", "min(s, 0 - 1)", "floor(s, 2)", "t", "x"]
_E = ["s", "2*s", "s*u", "s - 1", "0 - s", "2*s*u - 4", "6", "s^2", "4*u - 2*s", "max(s, u)*2", "t"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_A), st.sampled_from(_E), st.sampled_from(["<", "<="])), max_size=3),
       st.sampled_from(["1", "2", "3", "s", "2*s", "s*u"]), st.sampled_from(["s*u", "2*s*u", "6", "s + u"]))
def test_a_quotient_bound_holds_wherever_its_region_does(rels, radix, bound):
    """t = R t_q + t_r (0 <= t_r < R) in a region 0 <= t < B where the relations hold: t_q < quotient_bound at every
    sizes s, u in [1, 4] and every such t (so no region claims a tighter bound than is true: a vacuous context).
    Multipliers that are not plain size monomials (min(s, -1) < 0, floor(s, 2) = 0 at s = 1) and digits or free
    names give no bound; E may be negative."""
    assumed = tuple(parse_rel(f"({a})*t {op} ({a})*({e})") for a, e, op in rels)
    R, B = parse_size(radix), parse_size(bound)
    top = quotient_bound("t", B, R, assumed, ("s", "u"))
    for s, u, x in itertools.product(range(1, 5), range(1, 5), (-2, 3)):
        sizes = {"s": s, "u": u}
        for t in range(B.value(sizes)):
            if all(r.holds({**sizes, "t": t, "x": x}) for r in assumed):
                assert t // R.value(sizes) < top.value(sizes), (t, [r.text for r in assumed], top.text())


_HYPOTHESES = ["1 <= s", "1 <= u", "0 <= t", "t < s*u", "t < max(s, u)", "2*t < s", "s <= u", "t != 3", "t < floor(s*u, 2)", "u < 3"]
_GOALS = ["t < s*u", "t + 1 <= s*u", "t < s", "2*t < s*u", "t < u", "t*t < s*s*u*u", "t < max(s, u)*u", "t <= 2", "s*t < s*s*u", "t != 3"]


def test_a_fact_proven_from_its_lean_hypotheses_holds_at_every_small_point():
    """Every fact over a pool of hypotheses (the lean ones, 1 <= s, 0 <= t, t < s*u, ..., and others: max, floor,
    !=) that smtlib.proven accepts (first from the lean ones alone) holds at every s, u in [1, 6], t in [-3, 40];
    some are proven, some refused (a false one, t < s, among them), so the check is not vacuous."""
    rng = random.Random(7)
    verdicts = []
    for _ in range(60):
        hyps = [parse_rel(h) for h in rng.sample(_HYPOTHESES, rng.randint(2, 6))]
        goal = parse_rel(rng.choice(_GOALS))
        ok = smtlib.proven(hyps, goal, False) is None
        verdicts.append(ok)
        if ok:
            for s, u, t in itertools.product(range(1, 7), range(1, 7), range(-3, 41)):
                env = {"s": s, "u": u, "t": t}
                if all(h.holds(env) for h in hyps):
                    assert goal.holds(env), ([h.text for h in hyps], goal.text, env)
    assert any(verdicts) and not all(verdicts)
