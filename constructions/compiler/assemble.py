"""Stage 5: assembly into a :class:`~constructions.compiler.model.Model`.

Columns are laid out (:mod:`.basis`), attention heads and MLP blocks are built
layer by layer (:mod:`.blocks`), and the BOS position is simulated alongside,
exactly in EE: it attends only to itself, so its residual is the same for every
input, and the heads' BOS corrections (default - value at BOS) and the
reciprocals' guards are read from it.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import replace
from typing import Any

import networkx as nx
from flint import fmpq

from attncert.constructions.compiler.basis import Basis, columns
from attncert.constructions.compiler.blocks import ONE, Block, aff, affine_block, finite_function_block, map_block, maxmin_pick_block
from attncert.constructions.compiler.check import check_model
from attncert.constructions.compiler.layers import allocate
from attncert.constructions.compiler.model import MLP, Head, Layer, Model, Unit, _mlp
from attncert.constructions.compiler.values import NodeInfo, NotCompilable, infer, numeric, numeric_mean_of_one_hot, symbols, tabulate
from attncert.constructions.rasp.evaluate import kind
from attncert.constructions.rasp.graph import arguments, decode_params
from attncert.exact import EE, QQ, AttncertError, EENumber
from attncert.exact.limits import current as current_limits


def compile_graph(
    g: nx.MultiDiGraph, length: int, tokens: str = "scalar", vocab: Any = None, check: bool = True, lengths: str = "fixed", causal: bool = False
) -> Model:
    """The transformer that computes RASP graph ``g`` on sequences of ``length`` tokens, exactly.

    ``tokens``: "scalar" (a number per position), "pair" ((value, tag)) or "categorical"
    (symbols of ``vocab``, one-hot). ``lengths``: "fixed" (a model for exactly ``length``
    tokens) or "every" (one model, the same weights, for every length 1..``length`` =
    max_seq_len: what depends on the live length is computed by the network, :func:`.values.infer`).
    ``causal``: each query attends only to the keys at or before it (BOS included), and the
    model computes tracr's causal semantics of ``g`` (every selector masked to the keys k <= q).
    With ``check`` (the default) the model is run against the RASP evaluation, SOp by SOp,
    on the inputs of :mod:`.check` (at every length in the "every" mode) before it is returned
    (``model.checked`` says which); a disagreement raises :class:`~.check.CheckFailed`.
    ``check=False`` returns the model unchecked."""
    if lengths == "every" and not causal:
        g = length_as_width(g)
    model = _assemble(g, length, tokens, vocab, lengths, causal)
    return replace(model, checked=check_model(g, model)) if check else model


def length_as_width(g: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """g with each primitive ``length`` written as SelectorWidth(Select(tokens, tokens, TRUE)), under its
    own label: the same value n at every position of every input (without a causal mask), and one the
    network computes at the live length (a model for every length cannot hold it in its positional table).
    g itself if it has none."""
    lengths = [v for v in g.nodes if g.nodes[v]["op"] == "length"]
    if not lengths:
        return g
    h = g.copy()
    toks = next((v for v in h.nodes if h.nodes[v]["op"] == "tokens"), None)
    fresh = iter(range(max(h.nodes) + 1, max(h.nodes) + 2 + 2 * len(lengths)))
    if toks is None:
        toks = next(fresh)
        h.add_node(toks, op="tokens", name="tokens", params={}, encoding="categorical", label="tokens")
    taken = {h.nodes[v]["label"] for v in h.nodes}
    for v in lengths:
        label = h.nodes[v]["label"]
        sel, name = next(fresh), f"{label}:all_true"
        while name in taken:
            name += "'"
        taken.add(name)
        h.add_node(sel, op="select", name="select", params={"predicate": "TRUE"}, label=name)
        h.add_edge(toks, sel, key=0, arg=0)
        h.add_edge(toks, sel, key=1, arg=1)
        h.nodes[v].update(op="selector_width", name="selector_width", params={})
        h.add_edge(sel, v, key=0, arg=0)
    return h


def _assemble(g: nx.MultiDiGraph, length: int, tokens: str, vocab: Any, lengths: str = "fixed", causal: bool = False) -> Model:
    info = infer(g, length, tokens, vocab, lengths, causal)
    layers, heads, maps, slot, decoded = allocate(g, info)
    c = _Columns(g, info, length)
    for v in nx.topological_sort(g):  # dynamic SOps get their columns in topological order
        if not info[v].static and g.nodes[v]["op"] != "select" and not _unread(g, info, v):
            c.dynamic(v)
    bos = {col: EE.convert(vals[0]) for col, vals in c.positional.items()}
    built = []
    for layer in range(layers):
        hs = tuple(_width_head(g, v, c) if v in decoded else _head(g, v, c, bos) for v in heads[layer])
        for v in heads[layer]:
            if v in decoded:
                bos[c.basis[f"inv:{g.nodes[v]['label']}"]] = EE.one()  # BOS reads its own bos = 1
                continue
            default = EE.convert(_numeric_default(g, v))
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
        g.nodes[v]["label"]: {"columns": list(c.of(v)), "slot": -1 if info[v].static or g.nodes[v]["op"] == "tokens" else slot[v] + (v in decoded)}
        for v in g.nodes
        if g.nodes[v]["op"] != "select" and (_positional(info[v]) or v in c.cols)
    }
    token_cols = [c.cols[t] for t in g.nodes if g.nodes[t]["op"] == "tokens" and t in c.cols]
    output_values = {name: list(info[v].categories) if info[v].categories is not None else None for name, v in g.graph["outputs"].items()}
    one_hot = {g.nodes[v]["label"]: info[v].categories for v in c.cols if info[v].categories is not None}
    return Model(
        basis=tuple(c.basis.labels),
        length=length,
        tokens=tokens,
        token_columns=tuple(token_cols[0]) if token_cols else (),
        positional={col: vals for col, vals in c.positional.items()},
        layers=tuple(built),
        outputs=outputs,
        nodes=nodes,
        vocab=symbols(vocab) if tokens == "categorical" else None,
        output_values=output_values,
        one_hot=one_hot,
        lengths=lengths,
        causal=bool(causal),  # a flag given as 0 or 1 (a recorded parameter) is written as the JSON boolean
    )


def _positional(info: NodeInfo) -> bool:
    """A static SOp with a positional column: its values are numbers or booleans, read as 0 and 1 (static
    tokens live only in value tables)."""
    return info.static and info.values is not None and all(isinstance(x, (fmpq, bool)) for x in info.values)


class _Columns:
    """The basis as it is laid out: positional columns (with their values), token and SOp columns."""

    def __init__(self, g: nx.MultiDiGraph, info: dict[int, NodeInfo], length: int):
        self.g, self.info, self.N = g, info, length
        # Every column holds a value per position. A value table over N positions has about N columns,
        # so basis x positions is the size of a dense selection: it is bounded by the pair limit in force.
        self.basis = Basis(limit=max(2, current_limits().max_pairs // (length + 1)))
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
        cats = self.info[v].categories
        names = [f"{label}={x!r}" for x in cats] if cats is not None else columns(label, self.info[v].width)
        self.cols[v] = [self.basis.add(name) for name in names]

    def indicator(self, v: int, value: Any) -> int:
        """The column that is 1 where SOp v takes ``value`` and 0 elsewhere (one-hot, static or categorical)."""
        cats = self.info[v].categories
        if cats is not None:
            return self.cols[v][cats.index(value)]
        return self.static(v, f"is={value!r}", lambda x: int(x == value))

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
    default = _numeric_default(g, v)
    cats = c.info[vals].categories
    if numeric_mean_of_one_hot(g.nodes[v], cats):
        # the mean of the numbers: value x read from x's indicator column, booleans as 0 and 1
        (dst,) = c.cols[v]
        copies = [[(src, fmpq(int(x)) if isinstance(x, bool) else QQ.convert(x)) for src, x in zip(c.of(vals), cats)]]
    else:
        copies = [[(src, fmpq(1))] for src in c.of(vals)]
    ov = []
    for reads, dst in zip(copies, c.cols[v]):
        at_bos = EE.sum(EE.convert(w) * bos.get(src, EE.zero()) for src, w in reads)
        q_bos = at_bos.rational_value() if isinstance(at_bos, EENumber) else at_bos
        if q_bos is None:
            raise NotCompilable(g.nodes[v]["label"], "an irrational value at the BOS position", "the BOS correction must be a rational weight")
        ov += [(src, dst, w) for src, w in reads] + [(b, dst, fmpq(default) - fmpq(q_bos))]
    return Head(g.nodes[v]["label"], qk, tuple((s, d, w) for s, d, w in ov if w != 0))


def _width_head(g: nx.MultiDiGraph, v: int, c: _Columns) -> Head:
    """SelectorWidth of a data-dependent selection (tracr's construction, exactly): BOS ties with the
    selected keys, and the head averages the bos column, so it reads 1/(w + 1) into ``inv:LABEL``."""
    inv = c.basis.add(f"inv:{g.nodes[v]['label']}")
    return Head(g.nodes[v]["label"], _scores(g, arguments(g, v)[0], c, tie=True), ((c.basis["bos"], inv, fmpq(1)),))


def _width_block(g: nx.MultiDiGraph, v: int, c: _Columns) -> Block:
    """Decode w from x = 1/(w + 1): r = 1/x = w + 1, numerically w = r - 1; categorically the one-hot of w
    by exact hat functions relu(r - k) - 2 relu(r - 1 - k) + relu(r - 2 - k) (1 at w = k, 0 at other integers).
    At BOS the reciprocal reads x + (1/(N + 3) - 1) bos = 1/(N + 3), so w = N + 2 and no one-hot bit is set."""
    label = g.nodes[v]["label"]
    inv, b = c.basis[f"inv:{label}"], c.basis["bos"]
    cats = c.info[v].categories
    if cats is None:
        return Block([[Unit("reciprocal", (aff({inv: 1}),))]], [aff({0: 1}, -1)])
    r = Unit("reciprocal", (aff({inv: 1, b: fmpq(1, c.N + 3) - 1}),))
    hats = [Unit("relu", (aff({0: 1}, -k - j),)) for k in cats for j in (0, 1, 2)]
    return Block([[r], hats], [aff({3 * i: 1, 3 * i + 1: -2, 3 * i + 2: 1}) for i in range(len(cats))])


def _scores(g: nx.MultiDiGraph, sel: int, c: _Columns, tie: bool = False) -> tuple[tuple[int, int, fmpq], ...]:
    """W_QK of a static Select: token keys it selects score highest, BOS just below them, BOS reads BOS.

    * EQ on numbers: 2 q k - k^2 (+ the BOS terms), width 4 whatever N;
    * TRUE / FALSE: every token key scores 1 / 0, BOS 1/2;
    * any other predicate: a one-hot table over the distinct key and query values,
      W_QK[q = v, k = u] = predicate(u, v), BOS 1/2 (width: the numbers of distinct values).

    With ``tie`` (selector widths) BOS scores as much as a selected key instead.
    """
    d = g.nodes[sel]
    pred = d["callable"] if "callable" in d else decode_params("select", d.get("params", {}))["predicate"]
    name = getattr(pred, "name", None)
    one, b = c.basis["one"], c.basis["bos"]
    half = fmpq(0) if tie else fmpq(1, 2)  # how far BOS sits below a selected key
    if name == "TRUE":
        return ((one, one, fmpq(1)), (one, b, -half), (b, b, fmpq(2)))
    if name == "FALSE":
        return ((one, b, 1 - half), (b, b, fmpq(1)))
    keys, queries = arguments(g, sel)
    kv, qv = c.info[keys].values, c.info[queries].values
    if name == "EQ" and kv is not None and qv is not None and all(isinstance(x, fmpq) for x in kv + qv):
        k, q = c.static(keys), c.static(queries)
        kk, qq = c.static(keys, "sq", lambda x: x * x), c.static(queries, "sq", lambda x: x * x)
        delta = fmpq(0) if tie else _gap(kv, qv) ** 2 / 2
        return ((q, k, fmpq(2)), (one, kk, fmpq(-1)), (qq, b, fmpq(1)), (one, b, -delta), (b, b, delta + 1))
    qk = [(one, b, 1 - half), (b, b, fmpq(2))]
    key_values, query_values = (_with_none(c.info[u]) for u in (keys, queries))
    defined = False  # whether some pair is in the program's domain
    for u in key_values:
        for w in query_values:
            if u is None or w is None:
                _refuse_selecting_none(d, pred, u, w)
                continue
            picked = _selects(pred, u, w)
            defined = defined or picked is not None
            if picked:
                qk.append((c.indicator(queries, w), c.indicator(keys, u), fmpq(1)))
    if not defined:
        kinds = lambda vals: " or ".join(sorted({kind(x) for x in vals if x is not None}))  # noqa: E731
        raise NotCompilable(
            d["label"], f"a selection of {kinds(key_values)} keys by {kinds(query_values)} queries under {name or 'its predicate'}",
            "RASP's evaluation refuses every pair of their values (an ordered comparison orders values of one kind only), so no input is in the program's domain",
        )
    return tuple(qk)


def _selects(pred: Any, u: Any, w: Any) -> bool | None:
    """Whether the predicate selects key u for query w, as RASP's evaluation decides it; None where that
    evaluation refuses any input presenting the pair: an ordered Comparison between values of two kinds
    (:func:`constructions.rasp.evaluate.one_kind`), or a callable predicate that fails on them (the
    evaluation raises what it raises). Such pairs are outside the program's domain, so their scores do not matter."""
    if getattr(pred, "name", None) in ("LT", "LEQ", "GT", "GEQ") and kind(u) != kind(w):
        return None
    try:
        return bool(pred(u, w))
    except (AttncertError, TypeError, ValueError, ArithmeticError):
        return None


def _with_none(info: NodeInfo) -> list[Any]:
    """A key's or query's values with indicator columns, then None if the SOp may hold it (all its columns 0)."""
    return [x for x in info.finite() if x is not None] + ([None] if info.none else [])


def _refuse_selecting_none(d: dict[str, Any], pred: Any, u: Any, w: Any) -> None:
    """The one-hot scores above read a key or query holding None as all 0: such a key is never selected
    and such a query selects BOS alone. That is RASP's selection only where the predicate does not select
    the pair; where RASP's evaluation raises on it (a Comparison), no input presenting it is in the domain.
    A callable predicate is called on None, as RASP calls it, and the node is refused where it selects."""
    if getattr(pred, "name", None) is not None:
        return  # a Comparison raises on None: the input is outside the program's domain
    try:
        picked = bool(pred(u, w))
    except Exception:  # the predicate fails there, and so does RASP's evaluation on any input presenting the pair
        return
    if picked:
        raise NotCompilable(
            d["label"],
            f"a predicate that selects a {'key' if u is None else 'query'} holding None (predicate({u!r:.20}, {w!r:.20}) is true)",
            "None has all-0 one-hot columns, which this head's scores cannot select; RASP's evaluation selects it",
        )


def _numeric_default(g: nx.MultiDiGraph, v: int) -> Any:
    """An Aggregate's default as a number: None (tracr's) reads as 0, where values.infer allowed it."""
    default = decode_params("aggregate", g.nodes[v].get("params", {}))["default"]
    return 0 if default is None else default


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
        if d["op"] == "selector_width":
            blocks.append((v, _width_block(g, v, c)))
            continue
        if _tabulated(g, v, c):
            blocks.append((v, _table_block(g, v, c)))
            continue
        if "callable" in d:
            raise NotCompilable(d["label"], "an unregistered Python function of a numerical value", "only finite value sets are tabulated")
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
                if any(c.info[u].known() is None for u in arguments(g, v)):
                    raise NotCompilable(d["label"], f"function {f.name}", "it has no compiled MLP block, and its arguments' value sets are not finite") from None
                block = _table_block(g, v, c)
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


def _tabulated(g: nx.MultiDiGraph, v: int, c: _Columns) -> bool:
    """Maps of finite value sets whose output or input is categorical, or whose function is a Python
    callable, are compiled from their table (tracr's way); numerical maps of numbers use their rule."""
    args = arguments(g, v)
    if c.info[v].categories is not None or any(c.info[u].categories is not None for u in args):
        return True
    return "callable" in g.nodes[v] and all(c.info[u].known() is not None for u in args)


def _table_block(g: nx.MultiDiGraph, v: int, c: _Columns) -> Block:
    """f on finite value sets. With one-hot or static arguments only: a sum over the arguments' indicator
    columns (one argument: affine, no unit), or over products of indicator pairs (two arguments: one
    product unit per pair). With a numerical argument of finite value set (one column):
    :func:`~.blocks.finite_function_block` (affine, a piecewise-linear interpolant, or products of
    indicators, each exact on the value sets)."""
    d = g.nodes[v]
    args = arguments(g, v)
    known = [c.info[u].known() for u in args]
    if any(f is None for f in known):
        raise NotCompilable(d["label"], "a function of a numerical value whose value set is not finite", "only finite value sets are tabulated")
    table = tabulate(d, d["op"], known)
    cats = c.info[v].categories

    def weight(out: Any, target: Any) -> fmpq:
        if cats is not None:
            return fmpq(int(out == target)) if out is not None else fmpq(0)
        if out is None:
            return fmpq(0)
        try:
            return fmpq(int(out)) if isinstance(out, bool) else QQ.convert(out)
        except AttncertError:
            raise NotCompilable(d["label"], f"the value {out!r}", "a numerical map must give exact numbers") from None

    targets = list(cats) if cats is not None else [None]
    if any(c.info[u].numbers is not None for u in args):
        specs = [
            (aff({c.of(u)[0]: 1}), vals, None) if c.info[u].numbers is not None else (None, [a for a in vals if a is not None], [aff({c.indicator(u, a): 1}) for a in vals if a is not None])
            for u, vals in zip(args, known)
        ]
        return finite_function_block(specs, lambda *combo: [weight(table[combo], t) for t in targets], len(targets))
    if len(args) == 1:
        ind = {a: c.indicator(args[0], a) for a in known[0] if a is not None}
        outs = [aff({ind[a]: weight(table[(a,)], t) for a in ind}) for t in targets]
        return affine_block(*outs)
    pairs = [(a, b) for a in known[0] for b in known[1] if a is not None and b is not None and any(weight(table[(a, b)], t) != 0 for t in targets)]
    units = [Unit("product", (aff({c.indicator(args[0], a): 1}), aff({c.indicator(args[1], b): 1}))) for a, b in pairs]
    outs = [aff({k: weight(table[p], t) for k, p in enumerate(pairs)}) for t in targets]
    return Block([units], outs)


def _shift(a, by: int):
    terms, bias = a
    return tuple((i + by, w) for i, w in terms), bias
