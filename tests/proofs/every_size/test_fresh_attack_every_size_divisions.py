"""A fresh hostile audit of the every-size checker's division rules (commit a4cb84a): ``div N`` regions, the refined
digit's ``quotient_bound`` and cvc5's first try from the ``_lean`` hypotheses (docs/every-size.md).

Found and fixed here: the checker examined only the nodes its regions evaluate (the output, each div's divisor) and
every div_const, while the RASP program computes every node at every position. A node no region reaches dividing by
zero (``rdiv_const`` 1 / x, ``mod_const`` by 0, ``mod`` by a zero sequence: functions the checker has no semantics
for, never asked about because never evaluated) left the output right and the claim checked OK, though the program
raises at every size. Two shapes: a node the output does not read at all, and one the output reads only through a
gather whose query is -1 everywhere (attncert's own prover proved that template; the checker said OK). Now every
node must be read by the output and use only ops and functions the evaluator has semantics for
(``proofs/checkers/every_size/examined.py``; the prover refuses the same, ``proofs/every_size/evaluate.unexamined``).

Tried and refused without a change (each asserted below): the div region dropped, relabelled (``div 6``, ``rest``,
``div 07``), duplicated, recording a value, its refinement dropped with its steps kept, its steps emptied; the div
node's function renamed or its arguments swapped. Tried by reading (no forgery found): quotient_bound's multiplier
``a`` must be a monomial of plain sizes with a coefficient >= 1 (``Poly.divided`` refuses a max/min/floor/mod atom,
so ``min(s, -1) t < min(s, -1) E`` gives no bound), R >= 1 on both branch shapes; ``_lean`` asks a subset of the
renamed hypotheses (a proof from fewer is a proof from all).
"""

from __future__ import annotations

import copy
import dataclasses
import re
from typing import Any

import pytest
from flint import fmpq

from attncert.constructions.rasp import evaluate_graph
from attncert.constructions.rasp.graph import graph_from_json, graph_to_json
from attncert.constructions.rasp.template import instantiate_json
from attncert.exact.certificate import seal
from attncert.exact.domains.ee import EE
from attncert.proofs.checkers.every_size import check as checker
from attncert.proofs.checkers.every_size import check_every_size
from attncert.proofs.every_size import claims
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


def _zero_over(g: dict[str, Any], k: int, fn: str, params: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, int]], int]:
    """Nodes k (x - x for the template's exp node: 0 everywhere) and k + 1 (fn of it, or of tokens and it): a division
    by zero at every position; the node k + 1's id last."""
    exp = next(n["id"] for n in g["nodes"] if n["name"] == "exp")
    tokens = next(n["id"] for n in g["nodes"] if n["op"] == "tokens")
    nodes = [_node(k, "sequence_map", "sub"), _node(k + 1, "sequence_map" if fn == "mod" else "map", fn, **params)]
    edges = [_edge(exp, k, 0), _edge(exp, k, 1)]
    edges += [_edge(tokens, k + 1, 0), _edge(k, k + 1, 1)] if fn == "mod" else [_edge(tokens if fn == "mod_const" else k, k + 1, 0)]
    return nodes, edges, k + 1


def _run(template: dict[str, Any], r: int = 2, c: int = 3) -> None:
    """The template at r x c on the tokens 0 .. rc - 1, exactly (EE): the fixed-size machinery runs every node."""
    evaluate_graph(graph_from_json(instantiate_json(template, {"r": r, "c": c})), [fmpq(k) for k in range(r * c)], domain=EE)


DIVISIONS = [("rdiv_const", {"c": {"q": "1"}}), ("mod_const", {"k": {"q": "0"}}), ("mod", {})]


@pytest.mark.parametrize("fn,params", DIVISIONS, ids=[f for f, _ in DIVISIONS])
def test_a_node_no_one_reads_dividing_by_zero_is_refused(softmax, fn, params, monkeypatch):
    """Was OK: nothing evaluated the two extra nodes, and the output is untouched; the program divides by zero."""
    doc = copy.deepcopy(softmax)
    g = doc["construction"]["template"]
    nodes, edges, _ = _zero_over(g, 8, fn, params)
    g["nodes"] += nodes
    g["edges"] += edges
    with pytest.raises(Exception, match="division by an exact zero"):
        _run(g)
    problems = check_every_size(seal(doc))
    assert problems == [f"node {v} ({op}) is not read by the output: no region examines it, and the program computes it at every position" for v, op in ((8, "sequence_map"), (9, nodes[1]["op"]))]
    monkeypatch.setattr(checker, "unexamined", lambda g: [])
    assert check_every_size(seal(doc)) == []  # the hole: every region checks, the program divides by zero


def _gathered_never(g: dict[str, Any]) -> dict[str, Any]:
    """The template with its output plus a gather of 1 / 0 whose query is -1 at every position (no key: the default
    0), so the output is unchanged and the node 1 / 0 is read by the output, never evaluated by a region."""
    g = copy.deepcopy(g)
    out, k = g["outputs"]["output"], max(n["id"] for n in g["nodes"]) + 1
    indices = next(n["id"] for n in g["nodes"] if n["op"] == "indices")
    nodes, edges, inv = _zero_over(g, k, "rdiv_const", {"c": {"q": "1"}})
    q, sel, agg, add = range(k + 2, k + 6)
    minus_one = {"bound": None, "coeffs": {"list": [{"q": "0"}]}, "const": {"q": "-1"}, "other": {"q": "-1"}, "radices": {"list": [{"q": "0"}]}}
    select = {"id": sel, "label": "sel", "name": "sel", "op": "select", "params": {"predicate": "EQ"}}
    g["nodes"] += nodes + [_node(q, "map", "radix_affine", **minus_one), select, _node(agg, "aggregate", default={"q": "0"}), _node(add, "sequence_map", "add")]
    g["edges"] += edges + [_edge(indices, q, 0), _edge(indices, sel, 0), _edge(q, sel, 1), _edge(sel, agg, 0), _edge(inv, agg, 1), _edge(out, add, 0), _edge(agg, add, 1)]
    g["outputs"]["output"] = add
    return g


class _Edited:
    """The construction with the template edited (:func:`_gathered_never`), as the prover reads it."""

    def __init__(self, construction: Any):
        self.construction, self.layout = construction, construction.layout

    def graph(self) -> Any:
        return graph_from_json(_gathered_never(graph_to_json(self.construction.graph())))


def _proven_before_the_fix(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """softmax's certificate for the edited template, as attncert's prover wrote it before the fix (its new refusal
    patched out): the gather's query -1 < 0 proven, its default read, the 1 / 0 under it never evaluated."""
    spec = claims.SPECS["softmax"]
    with monkeypatch.context() as m:
        m.setitem(claims.SPECS, "softmax", dataclasses.replace(spec, build=lambda *a: _Edited(spec.build(*a))))
        m.setattr(prover, "unexamined", lambda *a: None)
        return EverySizeClaim("softmax").prove("r,c")


def test_a_node_the_output_reads_but_no_region_evaluates_is_refused(monkeypatch):
    """Was OK: the checker evaluated the gather and never the 1 / 0 under it, which the program computes at every
    position. Refused now by the new rule alone (without it the same document checks OK), and by the prover."""
    doc = _proven_before_the_fix(monkeypatch)
    inv = next(n["id"] for n in doc["construction"]["template"]["nodes"] if n["params"].get("fn", {}).get("name") == "rdiv_const")
    with pytest.raises(Exception, match="division by an exact zero"):
        _run(doc["construction"]["template"])
    problems = check_every_size(doc)
    assert problems == [f"node {inv}: the function 'rdiv_const' has no every-size semantics in the checker, and the program computes it at every position"], problems
    with monkeypatch.context() as m:
        m.setattr(checker, "unexamined", lambda g: [])
        assert check_every_size(doc) == []  # the hole: every region checks, the program divides by zero
    spec = claims.SPECS["softmax"]
    monkeypatch.setattr(prover, "counterexample", lambda *a, **k: None)  # the wrapper runs nothing at a fixed size
    monkeypatch.setattr(prover, "_atom_models", lambda *a, **k: [])
    with pytest.raises(prover.NoProof, match="'rdiv_const' has no every-size semantics here"):
        prover.prove(dataclasses.replace(spec, build=lambda *a: _Edited(spec.build(*a))), ("c", "r"), {})


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
