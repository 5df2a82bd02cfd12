r"""Every node of the template is one the checker examines: the program computes each node at every position.

The regions evaluate the output at their positions and each ``div`` node's divisor at every position; every
``div_const`` is checked at every size. A node the output does not read, or one whose function the checker has no semantics
for, would never be examined, while the RASP program still computes it at every position, read or not: a node no other
reads computing ``rdiv_const`` (1 / x), ``mod`` or ``mod_const`` by 0 divides by zero while the output is right
everywhere. So the template must be closed (:func:`unexamined`):

* every node is the output or an argument, at some depth, of the output;
* its op is one the evaluator reads (``tokens``, ``indices``, ``map``, ``sequence_map``, ``aggregate``, ``select``
  with the predicate EQ), and every function it names (through ``compose`` and both branches of a size case) is one
  of the evaluator's (:data:`.evaluate.ARITY`) or a size case; of these only ``div`` and ``div_const`` divide.
"""

from __future__ import annotations

from typing import Any, Iterator

from attncert.proofs.checkers.every_size.evaluate import ARITY
from attncert.proofs.checkers.every_size.graph import Graph

#: The ops the evaluator reads (a select only as an aggregate's selector), and the size cases the runtime registers.
OPS = frozenset({"tokens", "indices", "map", "sequence_map", "aggregate", "select"})
SIZE_CASES = frozenset({"size_case1", "size_case2"})


def unexamined(graph: Graph) -> list[str]:
    """Problems: the nodes of the template that no region examines (module docstring), at most one line each."""
    read = {graph.output}
    stack = [graph.output]
    while stack:
        for u in graph.args[stack.pop()]:
            if u not in read:
                read.add(u)
                stack.append(u)
    out = []
    for v, node in sorted(graph.nodes.items()):
        if v not in read:
            out.append(f"node {v} ({node['op'][:40]}) is not read by the output: no region examines it, and the program computes it at every position")
        elif node["op"] not in OPS or (node["op"] == "select" and node["params"].get("predicate") != "EQ"):
            out.append(f"node {v}: the op {node['op'][:40]} (predicate {str(node['params'].get('predicate'))[:20]}) has no every-size semantics in the checker")
        else:
            bad = next((name for name in _functions(node["params"]) if name not in ARITY and name not in SIZE_CASES), None)
            if bad is not None:
                out.append(f"node {v}: the function {str(bad)[:40]!r} has no every-size semantics in the checker, and the program computes it at every position")
    return out


def _functions(x: Any) -> Iterator[Any]:
    """The name of every function in a node's parameters: each value of a key ``fn`` (the node's own, a composition's
    parts, a size case's branches), at any depth."""
    if isinstance(x, dict):
        for k, y in x.items():
            if k == "fn":
                yield y.get("name") if isinstance(y, dict) else y
            yield from _functions(y)
    elif isinstance(x, list):
        for y in x:
            yield from _functions(y)
