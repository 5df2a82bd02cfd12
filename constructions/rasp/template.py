"""Templates: RASP graphs whose parameters are size expressions, and their instances at given sizes.

A builder called with size symbols (:class:`constructions.sizes.expr.SizeExpr`) builds a *template*:
the same nodes as at any integer sizes, its function parameters size expressions (``{"size":
"h*n*d^2"}`` in the graph JSON) and its size-dependent choices explicit cases (``size_case1`` /
``size_case2``: ``then`` where ``when`` is 0, ``otherwise`` elsewhere). :func:`instantiate` replaces
each expression by its integer and each case by its branch, recursively, so that

    instantiate(builder(n, d, ...), {"n": 4, "d": 2, ...}) == builder(4, 2, ...)

node for node: one source of truth, what is proven for every size is what runs at any size
(``tests/constructions/test_templates.py`` checks it at sampled sizes).
"""

from __future__ import annotations

from typing import Any, Mapping

import networkx as nx

from attncert.constructions.rasp.graph import graph_from_json, graph_to_json
from attncert.constructions.sizes.expr import parse
from attncert.exact import ParseError


def instantiate(template: nx.MultiDiGraph, sizes: Mapping[str, int]) -> nx.MultiDiGraph:
    """The graph of the template at the given sizes (every symbol it holds must be given, >= 1)."""
    if any(not isinstance(v, int) or isinstance(v, bool) or v < 1 for v in sizes.values()):
        raise ParseError("a template is instantiated at positive integer sizes")
    return graph_from_json(instantiate_json(graph_to_json(template), sizes))


def instantiate_json(obj: Any, sizes: Mapping[str, int]) -> Any:
    """The same on the graph JSON: every ``{"size": text}`` its integer, every size case its branch."""
    return substitute_json(obj, sizes, whole=True)


def substitute_json(obj: Any, sizes: Mapping[str, int], whole: bool = False) -> Any:
    """Some sizes given: each size expression with those symbols replaced (a number once no symbol is
    left), each size case whose condition became a number replaced by its branch. ``whole``: every
    symbol must be given (:func:`instantiate_json`)."""
    if isinstance(obj, list):
        return [substitute_json(x, sizes, whole) for x in obj]
    if not isinstance(obj, dict):
        return obj
    if set(obj) == {"size"}:
        e = parse(obj["size"])
        if whole:
            return {"q": str(e.value(sizes))}
        e = e.substitute(sizes)
        return {"size": e.text()} if e.constant() is None else {"q": str(e.constant())}
    if set(obj) == {"name", "params"} and isinstance(obj["name"], str) and obj["name"].startswith("size_case"):
        p = obj["params"]
        when = substitute_json(p["when"], sizes, whole)
        if set(when) == {"q"}:
            branch = p["then"] if when == {"q": "0"} else p["otherwise"]
            return substitute_json(branch["fn"], sizes, whole)
    return {k: substitute_json(v, sizes, whole) for k, v in obj.items()}


def symbols_of(template: nx.MultiDiGraph) -> set[str]:
    """The size symbols a template's parameters hold."""
    out: set[str] = set()

    def walk(obj: Any) -> None:
        if isinstance(obj, list):
            for x in obj:
                walk(x)
        elif isinstance(obj, dict):
            if set(obj) == {"size"}:
                out.update(parse(obj["size"]).symbols())
            else:
                for x in obj.values():
                    walk(x)

    walk(graph_to_json(template))
    return out
