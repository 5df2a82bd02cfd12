"""Every division the program makes, read or not (issue 32): each div node's divisor at every position t < N.

The RASP program computes every node at every position, so a quotient the output never reads still divides. Each div
node N has regions of kind "div N" (the positions 0 <= t < N, split and refined as the rest is), where its divisor is
shown nonzero by the rule of positivity; prover and checker both. A refined digit's quotient takes the bound the
region gives it exactly (t < c r, or a t < a c r with a a monomial in the sizes, gives t_q < r), which keeps the
facts about it linear. Tested here: the regions are there and check clean; a template whose divisor is 0 only at
positions no entry reads (the size hierarchy's denominator with default 0) is refused, and the run there fails;
forged div regions (deleted, given a value, relabelled to another node, a looser quotient bound) are refused."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from attncert.constructions import simulator
from attncert.exact import EE, ParseError, QQ
from attncert.exact.certificate import seal
from attncert.proofs.checkers.every_size import check_every_size
from attncert.proofs.checkers.every_size.coverage import quotient_bound
from attncert.proofs.checkers.every_size.sizes import Poly, Rel
from attncert.proofs.every_size import prove as prover
from attncert.proofs.every_size.claims import EverySizeClaim
from attncert.constructions.rasp.graph import graph_to_json


def _problems(doc: dict[str, Any]) -> str:
    problems = check_every_size(seal(doc))
    assert problems, "a forgery checked clean"
    return " | ".join(problems)


@pytest.fixture(scope="module")
def universal() -> dict[str, Any]:
    return EverySizeClaim("universal").prove()


def _div_regions(doc: dict[str, Any]) -> list[int]:
    return [k for k, r in enumerate(doc["outputs"]["regions"]) if r["kind"].startswith("div ")]


def test_each_division_has_regions_of_its_own_and_they_check_clean(universal):
    kinds = {r["kind"] for r in universal["outputs"]["regions"]}
    divs = [n["id"] for n in universal["construction"]["template"]["nodes"] if n["op"] == "sequence_map" and n["params"]["fn"]["name"] == "div"]
    assert divs and {f"div {v}" for v in divs} <= kinds
    assert all(universal["outputs"]["regions"][k]["value"] is None for k in _div_regions(universal))
    assert check_every_size(universal) == []


def test_the_quotient_bound_is_what_the_region_gives_exactly():
    t, c, r, a = (Poly.symbol(x) for x in ("t", "c", "r", "n"))
    N = Poly.symbol("N")
    assert quotient_bound("t", c * r, c, (), ("c", "r")) == r  # t < c r: t_q < r
    assert quotient_bound("t", N, c, (Rel("<", a * t, a * c * r),), ("c", "r", "n")) == r  # n t < n c r: t < c r
    assert quotient_bound("t", N, c, (Rel("<", t * t, c * r),), ("c", "r")) == N  # t^2 < c r says nothing of this form
    assert quotient_bound("t", N, c, (Rel("<", Poly.symbol("u") * t, Poly.symbol("u") * c * r),), ("c", "r")) == N  # u is no size
    assert quotient_bound("t", N, c, (Rel("<=", t, c * r),), ("c", "r")) == N  # t <= c r: t_q <= r, not < r


def test_a_div_region_deleted_is_refused(universal):
    doc = copy.deepcopy(universal)
    for k in reversed(_div_regions(doc)):
        del doc["outputs"]["regions"][k]
    doc["result"]["regions"] = len(doc["outputs"]["regions"])
    assert "div" in _problems(doc)


def test_a_div_region_given_a_value_is_refused(universal):
    doc = copy.deepcopy(universal)
    k = _div_regions(doc)[0]
    out = next(r for r in doc["outputs"]["regions"] if r["kind"] == "output")
    doc["outputs"]["regions"][k]["value"] = out["value"]
    assert "records a value" in _problems(doc)


def test_a_div_region_relabelled_to_a_node_that_does_not_divide_is_refused(universal):
    doc = copy.deepcopy(universal)
    for k in _div_regions(doc):
        doc["outputs"]["regions"][k]["kind"] = "div 0"
    assert "div" in _problems(doc)


def test_a_looser_quotient_bound_recorded_is_refused(universal):
    """A refined digit's quotient bound is the checker's to derive: the record must hold exactly that one."""
    doc = copy.deepcopy(universal)
    k = next(k for k in _div_regions(doc) if any("q" in d for d, _ in doc["outputs"]["regions"][k]["digits"]))
    region = doc["outputs"]["regions"][k]
    region["digits"] = [[d, "n^9" if d.endswith("q") else B] for d, B in region["digits"]]
    assert "not what its path gives" in _problems(doc)


def _hierarchy_with_denominator_default(default: int):
    """U(N, D, D_v) whose softmax denominator D/n is ``default`` where its query selects no key (1 in U): at the
    positions past the output block the program then divides by it."""

    def build(*sizes: Any):
        con = simulator.universal(*sizes[:3])
        graph = graph_to_json(con.graph())
        node = next(n for n in graph["nodes"] if n["label"] == "D_over_n")
        node["params"]["default"] = {"q": str(default)}
        from attncert.constructions.rasp.graph import graph_from_json

        class Edited(type(con)):
            def graph(self):
                return graph_from_json(graph)

        return Edited(con.name, con.program, con.layout)

    return build


@pytest.mark.slow  # two hierarchy proofs
def test_a_hierarchy_dividing_by_zero_past_the_entries_it_claims_is_refused():
    """The denominator's default 0: every entry (i < n, j < d_v) the hierarchy claims is right, but at a position past
    the output block the program divides 0 by 0. Before each division had its regions, the checker said OK (it
    evaluated the entries alone); now the prover finds no proof and the checker refuses its dishonest certificate."""
    build = _hierarchy_with_denominator_default(0)
    con = build(2, 1, 1, 1, 1, 1)
    tokens = simulator.pad_for((2, 1, 1), [[QQ.convert(1)]], [[QQ.convert(2)]], [[QQ.convert(3)]], QQ)
    from attncert.constructions import rasp

    with pytest.raises(Exception, match="division by an exact zero"):
        rasp.evaluate_graph(con.graph(), tokens, EE)
    claim = EverySizeClaim("hierarchy")
    claim.spec = dataclasses.replace(prover.SPECS["hierarchy"], build=build)
    with pytest.raises(ParseError, match="div"):
        claim.prove("D,d", N=2, Dv=1, n=1, dv=1)
    saved = prover.Evaluator.divisor
    try:
        prover.Evaluator.divisor = lambda self, v, y: None  # the prover made to write it
        doc = claim.prove("D,d", N=2, Dv=1, n=1, dv=1)
    finally:
        prover.Evaluator.divisor = saved
    assert "div by a value not shown nonzero" in _problems(doc)


@pytest.mark.slow  # an encoder-layer proof (test_every_size_cli's n1-h2 proves it too)
def test_a_head_digit_of_two_values_is_refined_where_its_blocks_are_named_apart():
    """Fixed here (a4cb84a refused it): with h = 2 fixed the heads' blocks A1, A2 are named apart, and in a div region
    the token at (head digit) + 1 lies in A1 or A2 by the digit's value; the region is refined into those values."""
    doc = EverySizeClaim("encoder_layer").prove("d", n=1, dv=2, h=2, f=1)
    assert any(step.get("residue") == 1 for r in doc["outputs"]["regions"] if r["kind"].startswith("div ") for step in r["path"])
    assert check_every_size(doc) == []
