"""RASP programs as ``networkx.MultiDiGraph`` computation graphs (docs/design.md, "RASP as computation graphs").

One node per operation. Node ids are integers in a deterministic post-order
(children before parents), so building the same program twice gives the same
graph. Node attributes:

* ``op``: one of :data:`OPS`;
* ``label``: a stable human-readable label (the expression's name, with ``#k``
  appended when names repeat);
* ``encoding``: ``"categorical"`` or ``"numerical"`` for SOps, absent for selectors;
* ``params``: JSON parameters: ``{"fn": {...}}`` for maps, ``{"predicate": "EQ"}``
  for selects, ``{"fill": v}``, ``{"value": [...]}``, ``{"default": v}``; constants
  are encoded by :mod:`constructions.rasp.values`.

An edge u -> v means "u is argument ``arg`` of v" (``arg`` is 0 or 1, in the order
keys/queries, selector/values, fst/snd). The graph is a ``networkx.MultiDiGraph``
(a DiGraph that allows parallel edges), because one SOp may be both arguments,
as in ``Select(tokens, tokens, TRUE)``; the edge key is the argument position. ``G.graph["outputs"]`` maps output names to
nodes.

Python callables that are not registered functions may be used in-process: they
are kept in the node attribute ``callable`` and are refused by every export,
with a message naming the function.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping

import networkx as nx

from attncert.constructions.rasp import expr as E
from attncert.constructions.rasp.functions import NamedFn
from attncert.constructions.rasp.values import decode_value, encode_value
from attncert.exact import ParseError
from attncert.exact.errors import LimitExceeded
from attncert.exact.limits import current as current_limits
from attncert.exact.canonical import canonical_json

GRAPH_FORMAT = "attncert-rasp/1"

#: op -> (number of arguments, whether it is a selector)
OPS: dict[str, tuple[int, bool]] = {
    "tokens": (0, False),
    "indices": (0, False),
    "length": (0, False),
    "full": (0, False),
    "constant_sop": (0, False),
    "map": (1, False),
    "sequence_map": (2, False),
    "aggregate": (2, False),
    "selector_width": (1, False),
    "select": (2, True),
    "constant_selector": (0, True),
    "selector_and": (2, True),
    "selector_or": (2, True),
    "selector_not": (1, True),
}

#: Attention sublayers; maps are MLP sublayers (see :mod:`constructions.rasp.size`).
ATTENTION_OPS = frozenset({"aggregate", "selector_width"})
MLP_OPS = frozenset({"map", "sequence_map"})

_OP_OF_CLASS: list[tuple[type, str]] = [
    (E.TokensType, "tokens"),
    (E.IndicesType, "indices"),
    (E.LengthType, "length"),
    (E.Full, "full"),
    (E.ConstantSOp, "constant_sop"),
    (E.Map, "map"),
    (E.SequenceMap, "sequence_map"),
    (E.Aggregate, "aggregate"),
    (E.SelectorWidth, "selector_width"),
    (E.Select, "select"),
    (E.ConstantSelector, "constant_selector"),
    (E.SelectorAnd, "selector_and"),
    (E.SelectorOr, "selector_or"),
    (E.SelectorNot, "selector_not"),
]


def _op_of(x: E.RASPExpr) -> str:
    for cls, op in _OP_OF_CLASS:
        if isinstance(x, cls):
            return op
    raise TypeError(f"not a RASP expression: {x!r:.60}")


def _fn_params(f: Any) -> tuple[dict[str, Any], Any]:
    if isinstance(f, NamedFn):
        return {"fn": f.to_json()}, None
    return {"fn": None}, f


def _node_params(x: E.RASPExpr, op: str) -> tuple[dict[str, Any], Any]:
    """(JSON params, in-process callable or None) of one expression."""
    if op in ("map", "sequence_map"):
        return _fn_params(x.f)
    if op == "select":
        if isinstance(x.predicate, E.Comparison):
            return {"predicate": x.predicate.name}, None
        return {"predicate": None}, x.predicate
    if op == "full":
        return {"fill": encode_value(x.fill)}, None
    if op == "constant_sop":
        return {"value": [encode_value(v) for v in x.value], "check_length": x.check_length}, None
    if op == "constant_selector":
        return {"value": x.value, "check_length": x.check_length}, None
    if op == "aggregate":
        return {"default": encode_value(x.default)}, None
    return {}, None


def to_graph(outputs: E.RASPExpr | Mapping[str, E.RASPExpr]) -> nx.MultiDiGraph:
    """The computation graph of a program (or of several named outputs sharing nodes)."""
    if isinstance(outputs, E.RASPExpr):
        outputs = {"output": outputs}
    g = nx.MultiDiGraph(format=GRAPH_FORMAT)
    ids: dict[int, int] = {}

    def visit(root: E.RASPExpr) -> int:
        # Iterative post-order: constructions may be deep, Python recursion is not.
        stack: list[tuple[E.RASPExpr, bool]] = [(root, False)]
        while stack:
            x, done = stack.pop()
            if id(x) in ids:
                continue
            if not done:
                stack.append((x, True))
                for c in reversed(list(x.children)):
                    if id(c) not in ids:
                        stack.append((c, False))
                continue
            op = _op_of(x)
            params, py = _node_params(x, op)
            node = len(ids)
            ids[id(x)] = node
            attrs: dict[str, Any] = {"op": op, "name": x.name, "params": params}
            if isinstance(x, E.SOp):
                attrs["encoding"] = E.get_encoding(x).value
            if py is not None:
                attrs["callable"] = py
            if "source" in x.annotations:  # where a RASP-language program wrote it (kept in memory, not in JSON)
                fused = x.annotations.get("fused_source")
                attrs["source"] = x.annotations["source"] + (f" (fused with the map at {fused})" if fused else "")
            g.add_node(node, **attrs)
            for pos, c in enumerate(x.children):
                g.add_edge(ids[id(c)], node, key=pos, arg=pos)
        return ids[id(root)]

    g.graph["outputs"] = {name: visit(x) for name, x in outputs.items()}
    _assign_labels(g)
    return g


def _assign_labels(g: nx.MultiDiGraph) -> None:
    counts = Counter(d["name"] for _, d in g.nodes(data=True))
    seen: Counter = Counter()
    for v in sorted(g.nodes):
        name = g.nodes[v]["name"]
        seen[name] += 1
        g.nodes[v]["label"] = name if counts[name] == 1 else f"{name}#{seen[name]}"


def arguments(g: nx.MultiDiGraph, v: int) -> list[int]:
    """The argument nodes of v, in argument order."""
    preds = sorted(g.in_edges(v, data="arg"), key=lambda e: e[2])
    return [u for u, _, _ in preds]


# --- export ----------------------------------------------------------------------------


def _check_serialisable(g: nx.MultiDiGraph) -> None:
    for v, d in g.nodes(data=True):
        if "callable" in d:
            f = d["callable"]
            what = getattr(f, "__qualname__", repr(f))
            kind = "predicate" if d["op"] == "select" else "function"
            raise ParseError(
                f"node {d['label']!r} uses the unregistered {kind} {what}: a graph that is saved or "
                "certified may only use registered functions (constructions.rasp.register_function) "
                "and Comparison predicates"
            )


def graph_to_json(g: nx.MultiDiGraph) -> dict[str, Any]:
    """Node-link JSON: {"format", "outputs", "nodes": [...], "edges": [...]}, deterministic."""
    _check_serialisable(g)
    nodes = []
    for v in sorted(g.nodes):
        d = g.nodes[v]
        node = {"id": v, "op": d["op"], "label": d["label"], "name": d["name"], "params": d["params"]}
        if "encoding" in d:
            node["encoding"] = d["encoding"]
        nodes.append(node)
    edges = [{"source": u, "target": v, "arg": a} for u, v, a in sorted(g.edges(data="arg"), key=lambda e: (e[1], e[2]))]
    return {"format": GRAPH_FORMAT, "outputs": dict(g.graph["outputs"]), "nodes": nodes, "edges": edges}


def _node_id(v: Any) -> bool:
    """A node id as JSON writes it: an int, not a bool (True is a key of a graph with a node 1)."""
    return isinstance(v, int) and not isinstance(v, bool)


def graph_from_json(obj: Any) -> nx.MultiDiGraph:
    """Rebuild and validate a graph written by :func:`graph_to_json`.

    Checks the format, the op names, argument counts and kinds (SOp or selector),
    acyclicity, the outputs, and that every function comes from the registry.
    Nothing in the document is executed.
    """
    if not isinstance(obj, dict) or obj.get("format") != GRAPH_FORMAT:
        raise ParseError(f"not a RASP graph of format {GRAPH_FORMAT!r}")
    nodes, edges, outputs = obj.get("nodes"), obj.get("edges"), obj.get("outputs")
    if not isinstance(nodes, list) or not isinstance(edges, list) or not isinstance(outputs, dict) or not outputs:
        raise ParseError('a RASP graph needs lists "nodes", "edges" and a non-empty object "outputs"')
    max_nodes = current_limits().max_nodes
    if len(nodes) > max_nodes:
        raise LimitExceeded(f"a graph of {len(nodes):,} nodes exceeds the limit of {max_nodes:,} (raise it with --max-nodes)")
    g = nx.MultiDiGraph(format=GRAPH_FORMAT)
    for n in nodes:
        if not isinstance(n, dict) or not isinstance(n.get("id"), int) or isinstance(n.get("id"), bool):
            raise ParseError(f"malformed graph node {n!r:.80}")
        op = n.get("op")
        if op not in OPS:
            raise ParseError(f"unknown op {op!r:.40} at node {n['id']}")
        if n["id"] in g:
            raise ParseError(f"duplicate node id {n['id']}")
        if not isinstance(n.get("params"), dict) or not isinstance(n.get("label"), str) or not isinstance(n.get("name"), str):
            raise ParseError(f"node {n['id']} lacks params/label/name")
        attrs = {"op": op, "label": n["label"], "name": n["name"], "params": n["params"]}
        if not OPS[op][1]:
            if n.get("encoding") not in ("categorical", "numerical"):
                raise ParseError(f"SOp node {n['id']} needs an encoding, categorical or numerical")
            attrs["encoding"] = n["encoding"]
        g.add_node(n["id"], **attrs)
        decode_params(op, n["params"])  # validates functions and constants now
    for e in edges:
        if not isinstance(e, dict) or set(e) != {"source", "target", "arg"}:
            raise ParseError(f"malformed graph edge {e!r:.80}")
        u, v, a = e["source"], e["target"], e["arg"]
        if not _node_id(u) or not _node_id(v) or u not in g or v not in g:
            raise ParseError(f"edge {u!r:.20} -> {v!r:.20} names an unknown node")
        if not isinstance(a, int) or isinstance(a, bool) or not 0 <= a < OPS[g.nodes[v]["op"]][0]:
            raise ParseError(f"edge {u} -> {v} has a bad argument position {a!r:.20}")
        if g.has_edge(u, v, key=a):
            raise ParseError(f"duplicate edge {u} -> {v} at argument {a}")
        g.add_edge(u, v, key=a, arg=a)
    if not nx.is_directed_acyclic_graph(g):
        raise ParseError("the RASP graph has a cycle")
    for v, d in g.nodes(data=True):
        args = arguments(g, v)
        arity, _ = OPS[d["op"]]
        if sorted(a for _, _, a in g.in_edges(v, data="arg")) != list(range(arity)):
            raise ParseError(f"node {v} ({d['op']}) needs exactly {arity} arguments, numbered 0..{arity - 1}")
        for pos, u in enumerate(args):
            want_selector = _argument_is_selector(d["op"], pos)
            if OPS[g.nodes[u]["op"]][1] != want_selector:
                kind = "a selector" if want_selector else "a sequence (SOp)"
                raise ParseError(f"argument {pos} of node {v} ({d['op']}) must be {kind}")
    for name, v in outputs.items():
        if not _node_id(v) or v not in g:
            raise ParseError(f"output {name!r:.40} names an unknown node")
    g.graph["outputs"] = dict(outputs)
    return g


def _argument_is_selector(op: str, pos: int) -> bool:
    return op in ("selector_and", "selector_or", "selector_not", "selector_width") or (op == "aggregate" and pos == 0)


def decode_params(op: str, params: dict[str, Any]) -> dict[str, Any]:
    """Turn JSON params into live objects (NamedFn, Comparison, values), validating them."""
    try:
        if op in ("map", "sequence_map"):
            f = NamedFn.from_json(params.get("fn"))
            if f.arity != OPS[op][0]:
                raise ParseError(f"function {f.name!r} takes {f.arity} argument(s), but {op} gives {OPS[op][0]}")
            return {"fn": f}
        if op == "select":
            name = params.get("predicate")
            if name not in E.Comparison.__members__:
                raise ParseError(f"unknown predicate {name!r:.40}; expected one of {list(E.Comparison.__members__)}")
            return {"predicate": E.Comparison[name]}
        if op == "full":
            return {"fill": decode_value(params.get("fill"))}
        if op == "constant_sop":
            vals = params.get("value")
            if not isinstance(vals, list):
                raise ParseError("constant_sop needs a list value")
            return {"value": [decode_value(v) for v in vals], "check_length": bool(params.get("check_length", True))}
        if op == "constant_selector":
            vals = params.get("value")
            if not isinstance(vals, list) or not all(isinstance(r, list) and all(isinstance(b, bool) for b in r) for r in vals):
                raise ParseError("constant_selector needs a list of lists of booleans")
            return {"value": vals, "check_length": bool(params.get("check_length", True))}
        if op == "aggregate":
            return {"default": decode_value(params.get("default"))}
        return {}
    except ParseError:
        raise
    except (TypeError, AttributeError) as e:
        raise ParseError(f"malformed parameters for {op}: {e}") from None


# --- other formats -------------------------------------------------------------------------


def graph_to_graphml(g: nx.MultiDiGraph) -> str:
    """GraphML via networkx; params are stored as canonical JSON strings."""
    data = graph_to_json(g)
    h = nx.MultiDiGraph()
    for n in data["nodes"]:
        h.add_node(
            n["id"],
            op=n["op"],
            label=n["label"],
            encoding=n.get("encoding", ""),
            params=canonical_json(n["params"]).decode(),
        )
    for e in data["edges"]:
        h.add_edge(e["source"], e["target"], key=e["arg"], arg=e["arg"])
    h.graph["outputs"] = canonical_json(data["outputs"]).decode()
    return "\n".join(nx.generate_graphml(h)) + "\n"
