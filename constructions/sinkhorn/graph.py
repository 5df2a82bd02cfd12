r"""The Sinkhorn Transformer as one computation graph: encoder nodes, a cost node, a Sinkhorn node.

A ``networkx.MultiDiGraph`` in the style of the RASP graphs
(:mod:`constructions.rasp.graph`): one node per operation, integer ids in a
deterministic order, node attributes ``op``, ``name``, ``label`` and JSON
``params`` (every weight a canonical rational string), and an edge u -> v with
key and attribute ``arg`` when u is argument ``arg`` of v. The ops:

=============  ====  ==========================================================
op             args  params
=============  ====  ==========================================================
``text``       0     ``side``: "mu" (query) or "nu" (key)
``embed``      1     ``E``: tokens (x, a, 1) -> residual stream
``attention``  1     ``heads``: [{"A", "V"}], ``W_O`` (residual)
``mlp``        1     ``W1``, ``b1``, ``W2``, ``b2`` (ReLU, residual)
``layer_norm`` 1     ``gamma``, ``beta``, ``delta``
``readout``    1     ``R``: residual stream -> features
``cost``       2     ``rule``: C_ij = -<Q_i, K_j> (args: query, key features)
``sinkhorn``   3     ``eps``, ``tol``, ``method``, ``prec`` (args: cost, mu, nu)
=============  ====  ==========================================================

The semantics of each encoder op are those of :mod:`constructions.sinkhorn.encoder`;
the Sinkhorn node is :func:`constructions.sinkhorn.operator.sinkhorn` in Ball
with its certification parameters. :func:`graph_from_json` validates a recorded
graph completely (ops, arities, the two encoder chains, shapes of every weight,
eps > 0, tol > 0) and executes nothing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import networkx as nx
from flint import fmpq

from attncert.constructions.drawing import Node, dot_document
from attncert.constructions.sinkhorn.encoder import MLP, Attention, Encoder, Layer, LayerNorm
from attncert.exact.canonical import canonical_json
from attncert.exact.domains.qq import QQ
from attncert.exact.errors import ParseError
from attncert.exact.matrices import Rows, matrix_from_json, matrix_to_json

GRAPH_FORMAT = "attncert-sinkhorn-transformer/1"

#: op -> number of arguments
OPS: dict[str, int] = {"text": 0, "embed": 1, "attention": 1, "mlp": 1, "layer_norm": 1, "readout": 1, "cost": 2, "sinkhorn": 3}
COST_RULE = "C_ij = -<Q(mu)_i, K(nu)_j>"
METHODS = ("auto", "hilbert", "krawczyk")


@dataclass(frozen=True)
class SinkhornLayer:
    """The Sinkhorn node: S_eps(C; a, b) certified in Ball(prec) to tol by ``method``."""

    eps: fmpq
    tol: fmpq = fmpq(1, 10**30)
    method: str = "auto"
    prec: int = 128


# -- build ------------------------------------------------------------------------------------


def model_graph(query: Encoder, key: Encoder, layer: SinkhornLayer) -> nx.MultiDiGraph:
    """The model's graph: mu -> query encoder -> Q, nu -> key encoder -> K, (Q, K) -> cost, (cost, mu, nu) -> sinkhorn."""
    g = nx.MultiDiGraph(format=GRAPH_FORMAT)

    def node(op: str, name: str, params: dict[str, Any], *args: int) -> int:
        v = g.number_of_nodes()
        g.add_node(v, op=op, name=name, label=name, params=params)
        for pos, u in enumerate(args):
            g.add_edge(u, v, key=pos, arg=pos)
        return v

    texts = {side: node("text", side, {"side": side}) for side in ("mu", "nu")}
    feats = {}
    for side, enc, letter in (("mu", query, "Q"), ("nu", key, "K")):
        v = node("embed", f"{letter}.embed", {"E": _mat(enc.embed)}, texts[side])
        for k, lay in enumerate(enc.layers):
            v = node(lay.op, f"{letter}.{k}.{lay.op}", layer_params(lay), v)
        feats[side] = node("readout", letter, {"R": _mat(enc.readout)}, v)
    cost = node("cost", "C", {"rule": COST_RULE}, feats["mu"], feats["nu"])
    params = {"eps": QQ.to_json(layer.eps), "tol": QQ.to_json(layer.tol), "method": layer.method, "prec": layer.prec}
    g.graph["outputs"] = {"coupling": node("sinkhorn", "sinkhorn", params, cost, texts["mu"], texts["nu"])}
    return g


def _mat(M: Rows) -> list[list[str]]:
    return matrix_to_json(M, QQ)


def _vec(v: list[fmpq]) -> list[str]:
    return [QQ.to_json(x) for x in v]


def layer_params(lay: Layer) -> dict[str, Any]:
    if isinstance(lay, Attention):
        return {"heads": [{"A": _mat(A), "V": _mat(V)} for A, V in lay.heads], "W_O": _mat(lay.wo)}
    if isinstance(lay, MLP):
        return {"W1": _mat(lay.w1), "b1": _vec(lay.b1), "W2": _mat(lay.w2), "b2": _vec(lay.b2)}
    return {"gamma": _vec(lay.gamma), "beta": _vec(lay.beta), "delta": QQ.to_json(lay.delta)}


# -- export -------------------------------------------------------------------------------------


def graph_to_json(g: nx.MultiDiGraph) -> dict[str, Any]:
    """Node-link JSON {"format", "outputs", "nodes", "edges"}, deterministic."""
    nodes = [{"id": v, **{k: g.nodes[v][k] for k in ("op", "name", "label", "params")}} for v in sorted(g.nodes)]
    edges = [{"source": u, "target": v, "arg": a} for u, v, a in sorted(g.edges(data="arg"), key=lambda e: (e[1], e[2]))]
    return {"format": GRAPH_FORMAT, "outputs": dict(g.graph["outputs"]), "nodes": nodes, "edges": edges}


#: Fill colour of each op, in the legend's order (as the RASP drawings: inputs green, attention orange, MLPs blue).
PALETTE = {
    "text": "#b8e0b0",
    "embed": "#d4edc9",
    "attention": "#f6b26b",
    "mlp": "#a9cdf0",
    "layer_norm": "#d9c3e9",
    "readout": "#cfe2f7",
    "cost": "#e0e0e0",
    "sinkhorn": "#ea9999",
}


def graph_to_dot(g: nx.MultiDiGraph) -> str:
    """Graphviz DOT (:mod:`constructions.drawing`): one box per node (label, op, shapes or Sinkhorn parameters),
    coloured by op; the layers are the nodes' depths (the longest path from a text), so that the two encoders'
    k-th sublayers stand side by side; edges labelled by argument."""
    outs = set(g.graph["outputs"].values())
    nodes = [Node(v, (g.nodes[v]["label"], g.nodes[v]["op"], _summary(g.nodes[v]["op"], g.nodes[v]["params"])), g.nodes[v]["op"], v in outs) for v in sorted(g.nodes)]
    depth: dict[int, int] = {}
    for v in nx.topological_sort(g):
        depth[v] = max((depth[u] + 1 for u in g.predecessors(v)), default=0)
    members: dict[int, list[int]] = {}
    for v in sorted(g.nodes):
        members.setdefault(depth[v], []).append(v)
    titles = [" / ".join(dict.fromkeys(g.nodes[v]["op"] for v in members[k])) for k in sorted(members)]
    seen: Counter = Counter()
    numbered = []
    for t in titles:  # an encoder's k-th attention, MLP or layer norm: numbered when its op recurs
        seen[t] += 1
        numbered.append(f"{t} {seen[t]}" if titles.count(t) > 1 else t)
    edges = sorted(g.edges(data="arg"), key=lambda e: (e[1], e[2]))
    return dot_document("sinkhorn_transformer", nodes, edges, list(zip(numbered, (members[k] for k in sorted(members)))), PALETTE)


def _summary(op: str, params: dict[str, Any]) -> str:
    """A short description of a node's parameters for drawing."""
    shape = lambda M: f"{len(M)}x{len(M[0])}"  # noqa: E731
    if op == "embed":
        return f"E {shape(params['E'])}"
    if op == "attention":
        return f"{len(params['heads'])} head(s), W_O {shape(params['W_O'])}"
    if op == "mlp":
        return f"ReLU, W1 {shape(params['W1'])}"
    if op == "readout":
        return f"R {shape(params['R'])}"
    if op == "layer_norm":
        return f"delta {params['delta']}"
    if op == "sinkhorn":
        return f"eps {params['eps']}, tol {params['tol']}, {params['method']}, {params['prec']} bits"
    return params.get("rule", params.get("side", ""))


def graph_to_graphml(g: nx.MultiDiGraph) -> str:
    """GraphML via networkx; params stored as canonical JSON strings."""
    h = nx.MultiDiGraph()
    for v in sorted(g.nodes):
        d = g.nodes[v]
        h.add_node(v, op=d["op"], label=d["label"], params=canonical_json(d["params"]).decode())
    for u, v, a in g.edges(data="arg"):
        h.add_edge(u, v, key=a, arg=a)
    h.graph["outputs"] = canonical_json(g.graph["outputs"]).decode()
    return "\n".join(nx.generate_graphml(h)) + "\n"


# -- import, validated --------------------------------------------------------------------------


def graph_from_json(obj: Any) -> nx.MultiDiGraph:
    """Rebuild and validate a recorded model graph; ParseError naming the first problem."""
    if not isinstance(obj, dict) or obj.get("format") != GRAPH_FORMAT:
        raise ParseError(f"not a Sinkhorn Transformer graph of format {GRAPH_FORMAT!r}")
    nodes, edges, outputs = obj.get("nodes"), obj.get("edges"), obj.get("outputs")
    if not isinstance(nodes, list) or not isinstance(edges, list) or not isinstance(outputs, dict) or set(outputs) != {"coupling"}:
        raise ParseError('a model graph needs lists "nodes", "edges" and outputs {"coupling": node}')
    g = nx.MultiDiGraph(format=GRAPH_FORMAT)
    for n in nodes:
        if not isinstance(n, dict) or set(n) != {"id", "op", "name", "label", "params"}:
            raise ParseError(f"malformed model node {n!r:.80}")
        if not isinstance(n["id"], int) or isinstance(n["id"], bool) or n["id"] in g:
            raise ParseError(f"bad or duplicate node id {n['id']!r:.20}")
        if n["op"] not in OPS or not isinstance(n["params"], dict) or not isinstance(n["name"], str) or not isinstance(n["label"], str):
            raise ParseError(f"node {n['id']}: unknown op {n['op']!r:.30} or malformed name/params")
        g.add_node(n["id"], op=n["op"], name=n["name"], label=n["label"], params=n["params"])
    for e in edges:
        if not isinstance(e, dict) or set(e) != {"source", "target", "arg"} or e["source"] not in g or e["target"] not in g:
            raise ParseError(f"malformed model edge {e!r:.80}")
        a = e["arg"]
        if not isinstance(a, int) or isinstance(a, bool) or not 0 <= a < OPS[g.nodes[e["target"]]["op"]] or g.has_edge(e["source"], e["target"], key=a):
            raise ParseError(f"edge {e['source']} -> {e['target']} has a bad or repeated argument position")
        g.add_edge(e["source"], e["target"], key=a, arg=a)
    if not nx.is_directed_acyclic_graph(g):
        raise ParseError("the model graph has a cycle")
    for v, d in g.nodes(data=True):
        if sorted(a for _, _, a in g.in_edges(v, data="arg")) != list(range(OPS[d["op"]])):
            raise ParseError(f"node {v} ({d['op']}) needs exactly {OPS[d['op']]} argument(s)")
    if outputs["coupling"] not in g or g.nodes[outputs["coupling"]]["op"] != "sinkhorn":
        raise ParseError("the output must be the sinkhorn node")
    g.graph["outputs"] = {"coupling": outputs["coupling"]}
    decode(g)  # the chains, the shapes, every weight and parameter
    return g


def argument(g: nx.MultiDiGraph, v: int, pos: int) -> int:
    """The node that is argument ``pos`` of v."""
    return next(u for u, _, a in g.in_edges(v, data="arg") if a == pos)


def decode(g: nx.MultiDiGraph) -> tuple[Encoder, Encoder, SinkhornLayer, dict[str, int]]:
    """The query and key encoders, the Sinkhorn layer and the node ids {"mu", "nu", "Q", "K", "cost", "sinkhorn"}."""
    sink = g.graph["outputs"]["coupling"]
    cost, mu, nu = (argument(g, sink, k) for k in range(3))
    if g.nodes[cost]["op"] != "cost" or g.nodes[cost]["params"] != {"rule": COST_RULE}:
        raise ParseError(f"argument 0 of the sinkhorn node must be the cost node with rule {COST_RULE!r}")
    ids = {"mu": mu, "nu": nu, "cost": cost, "sinkhorn": sink, "Q": argument(g, cost, 0), "K": argument(g, cost, 1)}
    if g.number_of_nodes() != len(nx.ancestors(g, sink)) + 1:
        raise ParseError("every node of a model graph must feed the sinkhorn node")
    encs = [_chain(g, ids[f], ids[t], side) for f, t, side in (("Q", "mu", "mu"), ("K", "nu", "nu"))]
    if encs[0].width != encs[1].width:
        raise ParseError(f"the query features have width {encs[0].width}, the key features {encs[1].width}")
    if len(encs[0].embed) != len(encs[1].embed):
        raise ParseError("the two embeddings read tokens of different dimensions")
    return encs[0], encs[1], _sinkhorn_layer(g.nodes[sink]["params"]), ids


def _chain(g: nx.MultiDiGraph, top: int, text: int, side: str) -> Encoder:
    """text -> embed -> layers -> readout, read from the readout node down."""
    if g.nodes[text]["op"] != "text" or g.nodes[text]["params"] != {"side": side}:
        raise ParseError(f"the {side} argument of the sinkhorn node must be the text node of side {side!r}")
    if g.nodes[top]["op"] != "readout":
        raise ParseError(f"the {side} features must come from a readout node")
    path, v = [], argument(g, top, 0)
    while g.nodes[v]["op"] in ("attention", "mlp", "layer_norm"):
        path.append(v)
        v = argument(g, v, 0)
    if g.nodes[v]["op"] != "embed" or argument(g, v, 0) != text:
        raise ParseError(f"the {side} encoder must be text -> embed -> attention/mlp/layer_norm ... -> readout")
    _keys(g.nodes[v]["params"], {"E"}, v)
    _keys(g.nodes[top]["params"], {"R"}, top)
    E = _matrix(g.nodes[v]["params"], "E", v)
    d = len(E[0])
    layers = tuple(_layer(g.nodes[u]["op"], g.nodes[u]["params"], d, u) for u in reversed(path))
    R = _matrix(g.nodes[top]["params"], "R", top)
    _shape(R, d, None, f"node {top}: R")
    return Encoder(E, layers, R)


def _keys(params: dict[str, Any], keys: set[str], v: int) -> None:
    if set(params) != keys:
        raise ParseError(f"node {v} must have exactly the parameters {sorted(keys)}")


def _matrix(params: dict[str, Any], key: str, v: int) -> Rows:
    try:
        return matrix_from_json(params.get(key), QQ)
    except ParseError as e:
        raise ParseError(f"node {v}, {key}: {e}") from None


def _vector(params: dict[str, Any], key: str, v: int, length: int) -> list[fmpq]:
    x = params.get(key)
    if not isinstance(x, list) or len(x) != length:
        raise ParseError(f"node {v}: {key} must be a list of {length} rationals")
    return [QQ.from_json(t) for t in x]


def _shape(M: Rows, rows: int | None, cols: int | None, what: str) -> None:
    if (rows is not None and len(M) != rows) or (cols is not None and len(M[0]) != cols):
        raise ParseError(f"{what} is {len(M)}x{len(M[0])}, expected {rows or 'any'}x{cols or 'any'}")


def _layer(op: str, params: dict[str, Any], d: int, v: int) -> Layer:
    """One residual layer of width d, its weights' shapes checked."""
    if op == "attention":
        _keys(params, {"heads", "W_O"}, v)
        heads = params["heads"]
        if not isinstance(heads, list) or not heads or not all(isinstance(h, dict) and set(h) == {"A", "V"} for h in heads):
            raise ParseError(f"node {v}: heads must be a non-empty list of {{A, V}}")
        hv = [(_matrix(h, "A", v), _matrix(h, "V", v)) for h in heads]
        dv = len(hv[0][1][0])
        for A, V in hv:
            _shape(A, d, d, f"node {v}: A")
            _shape(V, d, dv, f"node {v}: V")
        wo = _matrix(params, "W_O", v)
        _shape(wo, len(hv) * dv, d, f"node {v}: W_O")
        return Attention(tuple(hv), wo)
    if op == "mlp":
        _keys(params, {"W1", "b1", "W2", "b2"}, v)
        w1, w2 = _matrix(params, "W1", v), _matrix(params, "W2", v)
        f = len(w1[0])
        _shape(w1, d, f, f"node {v}: W1")
        _shape(w2, f, d, f"node {v}: W2")
        return MLP(w1, _vector(params, "b1", v, f), w2, _vector(params, "b2", v, d))
    _keys(params, {"gamma", "beta", "delta"}, v)
    delta = QQ.from_json(params["delta"])
    if not delta > 0:
        raise ParseError(f"node {v}: layer norm needs delta > 0, got {delta}")
    return LayerNorm(_vector(params, "gamma", v, d), _vector(params, "beta", v, d), delta)


def _sinkhorn_layer(params: dict[str, Any]) -> SinkhornLayer:
    if set(params) != {"eps", "tol", "method", "prec"}:
        raise ParseError("the sinkhorn node must have exactly the parameters eps, tol, method, prec")
    eps, tol = QQ.from_json(params["eps"]), QQ.from_json(params["tol"])
    prec = params["prec"]
    if not eps > 0 or not tol > 0:
        raise ParseError(f"the sinkhorn node needs eps > 0 and tol > 0, got eps = {eps}, tol = {tol}")
    if params["method"] not in METHODS or not isinstance(prec, int) or isinstance(prec, bool) or not 2 <= prec <= 1 << 16:
        raise ParseError(f"the sinkhorn node's method must be one of {METHODS} and prec an integer in [2, 65536]")
    return SinkhornLayer(eps, tol, params["method"], prec)
