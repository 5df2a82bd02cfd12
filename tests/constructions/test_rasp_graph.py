"""Graphs: structure, serialisation round trips, loading hostile graphs, size accounting."""

import json
import re

import networkx as nx
import pytest

from attncert.constructions import classic as C
from attncert.constructions import rasp
from attncert.constructions.rasp import Comparison as Cmp
from attncert.exact import ParseError
from attncert.exact.canonical import canonical_json

PROGRAMS = {
    "reverse": lambda: C.make_reverse(rasp.tokens),
    "double_histogram": C.make_double_histogram,
    "sort": lambda: C.make_sort(rasp.tokens, rasp.tokens),
    "dyck2": lambda: C.make_dyck(["()", "[]"]),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_json_round_trip_is_exact_and_deterministic(name):
    g = rasp.to_graph(PROGRAMS[name]())
    j = rasp.graph_to_json(g)
    again = rasp.graph_to_json(rasp.to_graph(PROGRAMS[name]()))
    assert canonical_json(j) == canonical_json(again)  # building twice gives the same graph
    h = rasp.graph_from_json(json.loads(canonical_json(j)))
    assert rasp.graph_to_json(h) == j
    assert isinstance(h, nx.DiGraph)
    xs = list("([x])") if name == "dyck2" else [3, 1, 2, 1]
    assert rasp.evaluate_graph(h, xs)["output"] == rasp.evaluate_graph(g, xs)["output"]


def test_graph_nodes_carry_op_params_label():
    g = rasp.to_graph(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, Cmp.EQ), rasp.tokens + 1, default=0))
    ops = sorted(d["op"] for _, d in g.nodes(data=True))
    assert ops == ["aggregate", "map", "select", "tokens"]
    sel = next(v for v, d in g.nodes(data=True) if d["op"] == "select")
    assert g.nodes[sel]["params"] == {"predicate": "EQ"}
    assert [a for _, _, a in g.in_edges(sel, data="arg")] == [0, 1]  # tokens is both keys and queries
    m = next(d for _, d in g.nodes(data=True) if d["op"] == "map")
    assert m["params"]["fn"] == {"name": "add_const", "params": {"c": {"q": "1"}}}


def test_dot_and_graphml_exports():
    g = rasp.to_graph(C.make_reverse(rasp.tokens))
    dot = rasp.graph_to_dot(g)
    assert dot.startswith("digraph rasp {") and "selector_width" in dot and len(re.findall(r"n\d+ -> n\d+ \[label=", dot)) == g.number_of_edges()
    h = nx.parse_graphml(rasp.graph_to_graphml(g))
    assert h.number_of_nodes() == g.number_of_nodes() and h.number_of_edges() == g.number_of_edges()


def test_unregistered_function_is_refused_with_its_name():
    def halve(x):
        return x / 2

    g = rasp.to_graph(rasp.Map(halve, rasp.tokens))
    with pytest.raises(ParseError, match="halve.*register_function"):
        rasp.graph_to_json(g)


def _json(prog):
    return json.loads(canonical_json(rasp.graph_to_json(rasp.to_graph(prog))))


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda j: j["nodes"][1]["params"].update(fn={"name": "os.system", "params": {}}), "unknown function"),
        (lambda j: j["nodes"][1].update(op="eval"), "unknown op"),
        (lambda j: j["edges"].append({"source": 1, "target": 0, "arg": 0}), "argument position|cycle|arguments"),
        (lambda j: j["edges"].pop(), "arguments"),
        (lambda j: j.update(outputs={"output": 99}), "unknown node"),
        (lambda j: j.update(format="other"), "format"),
        (lambda j: j["nodes"][1]["params"]["fn"]["params"].update(c=1.5), "malformed graph constant"),
    ],
)
def test_hostile_graphs_are_refused(mutate, match):
    j = _json(rasp.tokens + 1)
    mutate(j)
    with pytest.raises(ParseError, match=match):
        rasp.graph_from_json(j)


def test_selector_in_a_sequence_slot_is_refused_on_load():
    j = _json(rasp.SelectorWidth(rasp.Select(rasp.indices, rasp.indices, Cmp.EQ)))
    sel = next(n["id"] for n in j["nodes"] if n["op"] == "select")
    sw = next(n["id"] for n in j["nodes"] if n["op"] == "selector_width")
    j["nodes"] = [n if n["id"] != sw else {**n, "op": "map", "params": {"fn": {"name": "neg", "params": {}}}} for n in j["nodes"]]
    with pytest.raises(ParseError, match="must be a sequence"):
        rasp.graph_from_json(j)
    assert sel != sw


def test_size_schedule():
    agg = rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, Cmp.LEQ), rasp.tokens, default=0)
    two = rasp.Aggregate(rasp.Select(agg, rasp.indices, Cmp.EQ), rasp.tokens + 1, default=0)
    s = rasp.size(rasp.to_graph(two))
    # layer 0: head `agg` and the MLP `tokens + 1`; layer 1: the head `two`.
    assert s.layers == 2 and s.heads == [1, 1] and s.mlps == [1, 0]
    wide = rasp.SequenceMap(rasp.fn("add"), agg, rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, Cmp.EQ)))
    s = rasp.size(rasp.to_graph(wide))
    assert s.layers == 1 and s.heads == [2] and s.mlps == [1] and s.distinct_maps == 1
    assert rasp.size(rasp.to_graph(rasp.tokens)).layers == 0
    assert rasp.size(two) == rasp.size(rasp.to_graph(two))  # a program is accepted as well as its graph


def test_graph_nodes_are_bounded_by_the_limit_in_force():
    from dataclasses import replace

    from attncert.exact.errors import LimitExceeded
    from attncert.exact.limits import Limits, limits

    doc = rasp.graph_to_json(rasp.to_graph(rasp.SequenceMap(rasp.fn("add"), rasp.tokens, rasp.indices)))
    n = len(doc["nodes"])
    assert n == 3  # tokens, indices, their sum
    with limits(replace(Limits(), max_nodes=n - 1)):
        with pytest.raises(LimitExceeded, match=f"{n} nodes exceeds the limit of {n - 1} .*--max-nodes"):
            rasp.graph_from_json(doc)
    assert rasp.graph_from_json(doc).number_of_nodes() == n
