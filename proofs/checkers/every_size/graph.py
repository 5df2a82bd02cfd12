r"""The recorded template, read by the checker: its nodes, their arguments, and their parameters at a case.

The template is a RASP graph in JSON (``attncert-rasp/1``): nodes ``{"id", "op", "params", ...}``,
edges ``{"source", "target", "arg"}`` (the arguments of a node in the order of ``arg``, 0, 1, ...),
and ``outputs.output``, the node whose value is the output sequence. The graph must be acyclic, its
chains of arguments at most :data:`MAX_DEPTH` long.

A parameter is a size text ``{"size": text}``, a rational ``{"q": text}``, a list ``{"list": [...]}``,
a function ``{"fn": {"name", "params"}}`` or null. In a size case that fixes some sizes (d = 1), each
size text is read with those sizes replaced by their values (:func:`decode`); a ``size_case``
function whose condition is then a number is its branch (then where the number is 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from attncert.exact import ParseError
from attncert.exact.rationals import parse_rational
from attncert.proofs.checkers.every_size.sizes import Poly, parse_size
from attncert.proofs.checkers.reading import whole

#: The most nodes and edges a template may hold, and the longest chain of arguments (the evaluation recurses along it).
MAX_NODES, MAX_DEPTH = 20_000, 96


@dataclass(frozen=True)
class Graph:
    nodes: dict[int, dict[str, Any]]
    args: dict[int, list[int]]
    output: int


def read_graph(obj: Any) -> Graph:
    """The template's nodes and arguments; ParseError unless it is an acyclic graph whose edges name its nodes."""
    if not isinstance(obj, dict) or obj.get("format") != "attncert-rasp/1":
        raise ParseError('the template must be a graph of format "attncert-rasp/1"')
    nodes_raw, edges, outputs = obj.get("nodes"), obj.get("edges"), obj.get("outputs")
    if not isinstance(nodes_raw, list) or not isinstance(edges, list) or len(nodes_raw) + len(edges) > MAX_NODES:
        raise ParseError(f"the template's nodes and edges are lists (at most {MAX_NODES} entries)")
    nodes: dict[int, dict[str, Any]] = {}
    for n in nodes_raw:
        if not isinstance(n, dict) or not whole(n.get("id")) or not isinstance(n.get("op"), str) or not isinstance(n.get("params"), dict):
            raise ParseError("a template node has an integer id, an op and params")
        if n["id"] in nodes:
            raise ParseError(f"the template has two nodes {n['id']}")
        nodes[n["id"]] = n
    slots: dict[int, dict[int, int]] = {v: {} for v in nodes}
    for e in edges:
        if not isinstance(e, dict) or not all(whole(e.get(k)) for k in ("source", "target", "arg")):
            raise ParseError("a template edge has integer source, target and arg")
        if e["source"] not in nodes or e["target"] not in nodes or e["arg"] in slots[e["target"]]:
            raise ParseError(f"a template edge {e['source']} -> {e['target']} names no node, or an argument twice")
        slots[e["target"]][e["arg"]] = e["source"]
    args = {}
    for v, s in slots.items():
        if sorted(s) != list(range(len(s))):
            raise ParseError(f"node {v}'s arguments are not numbered 0, 1, ...")
        args[v] = [s[k] for k in range(len(s))]
    if not isinstance(outputs, dict) or outputs.get("output") not in nodes:
        raise ParseError("the template's outputs.output must name a node")
    if _depth(args) > MAX_DEPTH:
        raise ParseError(f"the template's chains of arguments are longer than {MAX_DEPTH}")
    return Graph(nodes, args, outputs["output"])


def _depth(args: dict[int, list[int]]) -> int:
    """The longest chain of arguments; ParseError if there is a cycle."""
    depth: dict[int, int] = {}
    state: dict[int, int] = {}
    for root in args:
        if state.get(root) == 2:
            continue
        state[root] = 1
        stack = [(root, iter(args[root]))]
        while stack:
            v, it = stack[-1]
            u = next(it, None)
            if u is None:
                state[v] = 2
                depth[v] = 1 + max((depth[a] for a in args[v]), default=0)
                stack.pop()
            elif state.get(u) == 1:
                raise ParseError(f"the template has a cycle through node {u}")
            elif state.get(u) is None:
                state[u] = 1
                stack.append((u, iter(args[u])))
    return max(depth.values(), default=0)


def decode(obj: Any, fixed: Mapping[str, Poly]) -> Any:
    """A parameter at a case: a :class:`Poly` (a size, or an integer), an fmpq (a non-integer rational),
    a tuple (a list), a function's JSON (``{"name", "params"}``), or None."""
    if obj is None:
        return None
    if isinstance(obj, dict) and len(obj) == 1:
        ((kind, x),) = obj.items()
        if kind == "size":
            return parse_size(x).substitute(fixed)
        if kind == "q":
            q = parse_rational(x) if isinstance(x, str) else None
            if q is None:
                raise ParseError("a rational parameter is a string")
            return Poly.const(int(q.p)) if q.q == 1 else q
        if kind == "list" and isinstance(x, list):
            return tuple(decode(y, fixed) for y in x)
        if kind == "fn":
            return function(x)
    raise ParseError(f"a template parameter {str(obj)[:60]} is no size, rational, list or function")


def integer(x: Any, what: str) -> Poly:
    """An integer-valued parameter (a size or an integer), or ParseError."""
    if not isinstance(x, Poly):
        raise ParseError(f"{what} must be a size or an integer, not {x!r:.30}")
    return x



def function(obj: Any) -> dict[str, Any]:
    """A function's JSON: ``{"name": text, "params": {...}}``."""
    if not isinstance(obj, dict) or set(obj) != {"name", "params"} or not isinstance(obj["name"], str) or not isinstance(obj["params"], dict):
        raise ParseError(f"a template function is {{name, params}}, not {str(obj)[:60]}")
    return obj
