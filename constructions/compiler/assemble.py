"""Stage 5: assembly into a :class:`~constructions.compiler.model.Model`.

Columns are laid out (:mod:`.basis`), attention heads and MLP blocks are built
layer by layer (:mod:`.blocks`), and the BOS position is simulated alongside,
exactly in EE: it attends only to itself, so its residual is the same for every
input, and the heads' BOS corrections (default - value at BOS) and the
reciprocals' guards are read from it.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

import networkx as nx
from flint import fmpq

from constructions.compiler.basis import Basis, columns
from constructions.compiler.blocks import ONE, Block, aff, map_block, maxmin_pick_block
from constructions.compiler.layers import allocate
from constructions.compiler.model import MLP, Head, Layer, Model, Unit, _mlp
from constructions.compiler.values import NodeInfo, NotCompilable, infer, numeric
from constructions.rasp.graph import arguments, decode_params
from exact import EE, EENumber


def compile_graph(g: nx.MultiDiGraph, length: int, tokens: str = "scalar") -> Model:
    """The transformer that computes RASP graph ``g`` on sequences of ``length`` tokens, exactly."""
    info = infer(g, length, tokens)
    layers, heads, maps, slot = allocate(g, info)
    c = _Columns(g, info, length)
    for v in nx.topological_sort(g):  # dynamic SOps get their columns in topological order
        if not info[v].static and g.nodes[v]["op"] != "select" and not _unread(g, info, v):
            c.dynamic(v)
    bos = {col: EE.convert(vals[0]) for col, vals in c.positional.items()}
    built = []
    for layer in range(layers):
        hs = tuple(_head(g, v, c, bos) for v in heads[layer])
        for v in heads[layer]:
            default = EE.convert(decode_params("aggregate", g.nodes[v].get("params", {}))["default"] or 0)
            for col in c.cols[v]:
                bos[col] = default  # BOS reads BOS alone, corrected to the default
        mlp = _mlp_of(g, maps[layer], c, bos) if maps[layer] else None
        if mlp is not None:
            row = [[bos.get(i, EE.zero())] for i in range(len(c.basis))]
            for col, vals in _mlp(mlp, row, EE, 0).items():
                bos[col] = bos.get(col, EE.zero()) + vals[0]
        built.append(Layer(hs, mlp))
    outputs = {name: tuple(c.of(v)) for name, v in g.graph["outputs"].items()}
    nodes = {
        g.nodes[v]["label"]: {"columns": list(c.of(v)), "slot": -1 if info[v].static or g.nodes[v]["op"] == "tokens" else slot[v]}
        for v in g.nodes
        if g.nodes[v]["op"] != "select" and (info[v].static or v in c.cols)
    }
    token_cols = [c.cols[t] for t in g.nodes if g.nodes[t]["op"] == "tokens" and t in c.cols]
    return Model(
        basis=tuple(c.basis.labels),
        length=length,
        tokens=tokens,
        token_columns=tuple(token_cols[0]) if token_cols else (),
        positional={col: vals for col, vals in c.positional.items()},
        layers=tuple(built),
        outputs=outputs,
        nodes=nodes,
    )


class _Columns:
    """The basis as it is laid out: positional columns (with their values), token and SOp columns."""

    def __init__(self, g: nx.MultiDiGraph, info: dict[int, NodeInfo], length: int):
        self.g, self.info, self.N = g, info, length
        self.basis = Basis()
        self.positional: dict[int, list[fmpq]] = {0: [fmpq(1)] * (length + 1), 1: [fmpq(1)] + [fmpq(0)] * length}
        self.cols: dict[int, list[int]] = {}

    def static(self, v: int, derived: str = "", f: Any = None) -> int:
        """The positional column of static SOp v (or of f applied to it, named ``derived:label``)."""
        label = self.g.nodes[v]["label"]
        name = f"{derived}:{label}" if derived else label
        if name not in self.basis.index:
            vals = self.info[v].values if f else numeric(self.info[v])
            col = self.basis.add(name)
            self.positional[col] = [fmpq(0)] + [fmpq(f(x)) if f else x for x in vals]
            if not derived:
                self.cols[v] = [col]
        return self.basis[name]

    def dynamic(self, v: int) -> None:
        # Every ``tokens`` node of a program (copies have their own labels) reads the same token columns.
        label = "tokens" if self.g.nodes[v]["op"] == "tokens" else self.g.nodes[v]["label"]
        self.cols[v] = [self.basis.add(name) for name in columns(label, self.info[v].width)]

    def of(self, v: int) -> list[int]:
        if self.info[v].static:
            return [self.static(v)]
        return self.cols[v]


def _head(g: nx.MultiDiGraph, v: int, c: _Columns, bos: dict[int, Any]) -> Head:
    sel, vals = arguments(g, v)
    if g.nodes[sel]["op"] != "select":
        raise NotCompilable(g.nodes[v]["label"], f"a {g.nodes[sel]['op']} selector", "only Select compiles")
    qk = _scores(g, sel, c)
    b = c.basis["bos"]
    default = decode_params("aggregate", g.nodes[v].get("params", {}))["default"]
    default = 0 if default is None else default  # None only where every query selects a key (values.infer)
    ov = []
    for src, dst in zip(c.of(vals), c.cols[v]):
        at_bos = bos.get(src, EE.zero())
        q_bos = at_bos.rational_value() if isinstance(at_bos, EENumber) else at_bos
        if q_bos is None:
            raise NotCompilable(g.nodes[v]["label"], "an irrational value at the BOS position", "the BOS correction must be a rational weight")
        ov += [(src, dst, fmpq(1)), (b, dst, fmpq(default) - fmpq(q_bos))]
    return Head(g.nodes[v]["label"], qk, tuple((s, d, w) for s, d, w in ov if w != 0))


def _scores(g: nx.MultiDiGraph, sel: int, c: _Columns) -> tuple[tuple[int, int, fmpq], ...]:
    """W_QK of a static Select: token keys it selects score highest, BOS just below them, BOS reads BOS.

    * EQ on numbers: 2 q k - k^2 (+ the BOS terms), width 4 whatever N;
    * TRUE / FALSE: every token key scores 1 / 0, BOS 1/2;
    * any other predicate: a one-hot table over the distinct key and query values,
      W_QK[q = v, k = u] = predicate(u, v), BOS 1/2 (width: the numbers of distinct values).
    """
    pred = decode_params("select", g.nodes[sel].get("params", {}))["predicate"]
    one, b = c.basis["one"], c.basis["bos"]
    half = fmpq(1, 2)
    if pred.name == "TRUE":
        return ((one, one, fmpq(1)), (one, b, -half), (b, b, fmpq(2)))
    if pred.name == "FALSE":
        return ((one, b, half), (b, b, fmpq(1)))
    keys, queries = arguments(g, sel)
    kv, qv = c.info[keys].values, c.info[queries].values
    if pred.name == "EQ" and all(isinstance(x, fmpq) for x in kv + qv):
        k, q = c.static(keys), c.static(queries)
        kk, qq = c.static(keys, "sq", lambda x: x * x), c.static(queries, "sq", lambda x: x * x)
        delta = _gap(kv, qv) ** 2 / 2
        return ((q, k, fmpq(2)), (one, kk, fmpq(-1)), (qq, b, fmpq(1)), (one, b, -delta), (b, b, delta + 1))
    qk = [(one, b, half), (b, b, fmpq(2))]
    for u in sorted(set(kv), key=repr):
        ku = c.static(keys, f"is={u!r}", lambda x, u=u: int(x == u))
        for w in sorted(set(qv), key=repr):
            if pred(u, w):
                qk.append((c.static(queries, f"is={w!r}", lambda x, w=w: int(x == w)), ku, fmpq(1)))
    return tuple(qk)


def _unread(g: nx.MultiDiGraph, info: dict[int, NodeInfo], v: int) -> bool:
    """A dynamic SOp that only TRUE / FALSE selections read (e.g. tokens for the length): it needs no column."""
    return g.out_degree(v) > 0 and all(info[u].static for u in g.successors(v))


def _gap(keys: list[fmpq], queries: list[fmpq]) -> fmpq:
    """The least nonzero |k - q| over key and query values (1 if there is none)."""
    ks = sorted(set(keys))
    best = None
    for qv in set(queries):
        i = bisect_left(ks, qv)
        for j in (i - 1, i, i + 1):
            if 0 <= j < len(ks) and ks[j] != qv:
                d = abs(ks[j] - qv)
                best = d if best is None or d < best else best
    return best if best is not None else fmpq(1)


def _mlp_of(g: nx.MultiDiGraph, vs: list[int], c: _Columns, bos: dict[int, Any]) -> MLP:
    def bos_zero(a) -> bool:
        terms, bias = a
        return EE.sign(EE.convert(bias) + EE.sum(EE.convert(w) * bos.get(i, EE.zero()) for i, w in terms)) == 0

    blocks: list[tuple[int, Block]] = []
    for v in vs:
        d = g.nodes[v]
        f = decode_params(d["op"], d.get("params", {}))["fn"]
        args = [[aff({col: 1}) for col in c.of(u)] for u in arguments(g, v)]
        if f.name == "maxmin_pick":
            pack = arguments(g, v)[0]
            if g.nodes[pack]["op"] != "sequence_map" or not c.info[arguments(g, pack)[1]].static:
                raise NotCompilable(d["label"], "maxmin_pick of a pair whose position is not static", "parity must be a positional column")
            even = c.static(arguments(g, pack)[1], "even", lambda t: fmpq(int(int(t) % 2 == 0)))
            block = maxmin_pick_block(args[0][0], args[1][0], even)
        else:
            try:
                block = map_block(f.name, dict(f.params), args, c.basis["bos"], bos_zero)
            except KeyError:
                raise NotCompilable(d["label"], f"function {f.name}", "it has no compiled MLP block") from None
        blocks.append((v, block))
    depth = max([1] + [len(b.stages) for _, b in blocks])
    stages: list[list[Unit]] = [[] for _ in range(depth)]
    out = []
    for v, block in blocks:
        st, outs = list(block.stages), list(block.outputs)
        while len(st) < depth:  # carried by identity units: a product with 1
            st.append([Unit("product", (o, ONE)) for o in outs])
            outs = [aff({i: 1}) for i in range(len(outs))]
        offsets = [len(stages[k]) for k in range(depth)]
        for k in range(depth):
            shift = 0 if k == 0 else offsets[k - 1]
            stages[k] += [Unit(u.kind, tuple(_shift(a, shift) for a in u.args)) for u in st[k]]
        out += [(col, _shift(o, offsets[-1])) for col, o in zip(c.cols[v], outs)]
    return MLP(tuple(tuple(s) for s in stages), tuple(out))


def _shift(a, by: int):
    terms, bias = a
    return tuple((i + by, w) for i, w in terms), bias
