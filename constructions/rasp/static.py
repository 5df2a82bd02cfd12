"""Static selections: every select of a graph reads positions only, never the input.

A select is *static* when its predicate is TRUE or FALSE, or when no path leads from the
input (``tokens``, or a Python callable, whose values the graph cannot see) to its keys or
to its queries. Its selection pattern is then the same for every input of a given length,
so each output entry is one fixed composition of the graph's elementwise maps over the
input entries, and evaluating the graph over a symbolic field (the inputs as variables)
computes that composition: the basis of the for-all-inputs claims (docs/identity.md).

:func:`static_selections` gives, for every select, the ancestry of its keys and of its
queries (the nodes they are computed from), which a certificate records and a checker
re-derives; a value-dependent select is refused with :class:`ValueDependentSelect`.
"""

from __future__ import annotations

from typing import Any

import networkx as nx

from attncert.constructions.rasp.evaluate import trace_graph
from attncert.constructions.rasp.graph import arguments
from attncert.exact import QQ
from attncert.exact.errors import AttncertError

#: Nodes whose value depends on the input (or cannot be seen by the graph).
_INPUT_OPS = frozenset({"tokens"})


class ValueDependentSelect(AttncertError):
    """A select whose keys or queries depend on the input: its pattern changes with the input."""


def _ancestry(g: nx.MultiDiGraph, v: int) -> list[int]:
    """v and every node it is computed from, sorted."""
    return sorted(nx.ancestors(g, v) | {v})


def _reads_input(g: nx.MultiDiGraph, nodes: list[int]) -> int | None:
    """A node among ``nodes`` that is the input or a callable, or None."""
    for u in nodes:
        d = g.nodes[u]
        if d["op"] in _INPUT_OPS or "callable" in d:
            return u
    return None


def static_selections(g: nx.MultiDiGraph) -> list[dict[str, Any]]:
    """For each select (in node order): its id, predicate, and the ancestry of its keys and queries.

    Raises ValueDependentSelect naming the first select whose keys or queries read the input.
    """
    out = []
    for v in sorted(g.nodes):
        d = g.nodes[v]
        if d["op"] != "select":
            continue
        keys, queries = arguments(g, v)
        predicate = d["params"]["predicate"]
        entry: dict[str, Any] = {"select": v, "predicate": predicate}
        if predicate not in ("TRUE", "FALSE"):
            for role, u in (("keys", keys), ("queries", queries)):
                anc = _ancestry(g, u)
                bad = _reads_input(g, anc)
                if bad is not None:
                    raise ValueDependentSelect(
                        f"select {d['label']!r} (node {v}) is value-dependent: its {role} are computed from "
                        f"{g.nodes[bad]['label']!r}, so its pattern changes with the input; a for-all-inputs proof needs position-only selections"
                    )
                entry[role] = anc
        out.append(entry)
    return out


def influences(g: nx.MultiDiGraph, n: int, node: int) -> list[frozenset[int]]:
    """For each position of ``node`` on inputs of length n, the input positions its value can depend on.

    Read from the graph and its static selections alone: ``tokens`` at position p depends on p;
    a map at position p on its arguments at p; an aggregate at query q on the values at the keys
    q selects; static nodes (positions, constants) on nothing. An over-approximation: it ignores
    what the maps compute, so it also holds for whatever a sign decision inside a map selects.
    """
    static_selections(g)  # the data flow is input-independent only if every select is
    sources = [v for v, d in g.nodes(data=True) if d["op"] in _INPUT_OPS]
    data = set(sources).union(*(nx.descendants(g, v) for v in sources))
    static = g.subgraph([v for v in g.nodes if v not in data]).copy()
    static.graph.update(g.graph)
    values = trace_graph(static, [0] * n, QQ) if static.number_of_nodes() else {}
    none = [frozenset()] * n
    dep: dict[int, list[frozenset[int]]] = {}
    for v in nx.lexicographical_topological_sort(g):
        if v not in data:
            dep[v] = none
            continue
        d, args = g.nodes[v], arguments(g, v)
        op = d["op"]
        if op == "tokens":
            dep[v] = [frozenset((p,)) for p in range(n)]
        elif op in ("map", "sequence_map"):
            dep[v] = [frozenset().union(*(dep[u][p] for u in args)) for p in range(n)]
        elif op == "aggregate":
            sel, vals = values[args[0]], dep[args[1]]
            cols, offsets = sel.csr()
            dep[v] = [frozenset().union(*(vals[k] for k in cols[offsets[q] : offsets[q + 1]].tolist())) for q in range(n)]
        else:  # a selector_width of a static selection, or a selector (static_selections refused the others)
            dep[v] = none
    return dep[node]
