r"""The compiled model: exact rational weights over a labelled residual stream, and its forward pass.

Model class (recorded in every compiled certificate, :data:`MODEL_CLASS`):

* Positions 0..N: position 0 is a beginning-of-sequence (BOS) position, position
  t + 1 holds token t. The embedding of position p is a positional row (a rational
  table, one row per position, whose columns are the data-independent SOps) plus
  the token's components in the token columns (zero at BOS).
* The residual stream is additive: every sublayer adds its output to it. All
  heads of a layer read the residual before the layer; then the MLP reads it
  with their outputs added.
* Attention is average-hard (AHAT): head h scores s_ij = x_i^T W_QK x_j and each
  query i takes the exact mean of W_OV^T x_j over the keys j of maximal score
  (all keys, BOS included; a *causal* model masks the keys j > i).
* Lengths: a model is for exactly N tokens (``lengths="fixed"``), or the same
  weights serve every length n = 1..N (``lengths="every"``, N = max_seq_len):
  at length n the positions are 0..n and the positional rows are the first n + 1.
* Each MLP is K >= 1 stages "affine, then an activation" followed by an affine
  map. Units are ReLU(z), exp(z), 1/z (reciprocal) or z_a z_b (product, a
  bilinear/GLU unit of two affine features); a product with the constant 1 is
  the identity.

The forward pass below is a code path separate from the RASP evaluator. Scores
of heads that read only positional columns are rational and the same for every
input: they are compared exactly as integers (numpy, chunked); other heads are
scored in the evaluation domain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from flint import fmpq

from attncert.constructions.rasp.values import decode_value, encode_value
from attncert.exact import QQ, Domain
from attncert.exact.errors import ParseError

MODEL_FORMAT = "attncert-model/1"
#: Models for every length 1..max_seq_len, or causal ones: a reader of /1 alone refuses them, so that
#: it never runs a causal model without its mask, nor a model at a length it was not compiled for.
MODEL_FORMAT_2 = "attncert-model/2"

MODEL_CLASS = {
    "positions": "0..N; 0 is BOS, t + 1 holds token t",
    "embedding": "positional table (rational, one row per position) + token components in the token columns (zero at BOS)",
    "residual": "additive; every SOp has its own columns, written once",
    "layer": "every head reads the residual before the layer and their outputs are added; then the MLP reads the result and adds its output",
    "attention": "average-hard: each query takes the exact mean of W_OV^T x_j over the keys of maximal score x_i^T W_QK x_j",
    "mlp": "K stages of affine then an activation (relu, exp, reciprocal, product), then affine",
    "activations": ["relu", "exp", "reciprocal", "product"],
}
UNITS = ("relu", "exp", "reciprocal", "product")


def model_class(lengths: str = "fixed", causal: bool = False) -> dict[str, Any]:
    """The model class of a model in this mode: :data:`MODEL_CLASS`, with the positions and attention
    of a model for every length 1..N or of a causal one."""
    out = dict(MODEL_CLASS)
    if lengths == "every":
        out["positions"] = "0..n for every length n = 1..max_seq_len, the same weights; 0 is BOS, t + 1 holds token t"
        out["embedding"] = "positional table (rational, rows 0..max_seq_len; at length n the first n + 1) + token components in the token columns (zero at BOS)"
    if causal:
        out["attention"] = (
            "average-hard, causal: each query i takes the exact mean of W_OV^T x_j over the keys j <= i (BOS included) of maximal score x_i^T W_QK x_j"
        )
    return out

Affine = tuple[tuple[tuple[int, fmpq], ...], fmpq]  # ((input, weight), ...), bias
_ONE: Affine = ((), fmpq(1))


@dataclass(frozen=True)
class Unit:
    kind: str  # one of UNITS
    args: tuple[Affine, ...]  # one pre-activation, two for a product


@dataclass(frozen=True)
class MLP:
    stages: tuple[tuple[Unit, ...], ...]  # stage 1 reads the residual, stage k the units of stage k - 1
    out: tuple[tuple[int, Affine], ...]  # (residual column, affine over the last stage's units)

    def activations(self) -> list[str]:
        return sorted({u.kind for stage in self.stages for u in stage})


@dataclass(frozen=True)
class Head:
    label: str  # the Aggregate it computes
    qk: tuple[tuple[int, int, fmpq], ...]  # (query column, key column, weight)
    ov: tuple[tuple[int, int, fmpq], ...]  # (value column, output column, weight)


@dataclass(frozen=True)
class Layer:
    heads: tuple[Head, ...]
    mlp: MLP | None


@dataclass(frozen=True)
class Model:
    basis: tuple[str, ...]
    length: int  # N, the RASP sequence length
    tokens: str  # "scalar", "pair" or "categorical"
    token_columns: tuple[int, ...]
    positional: dict[int, list[fmpq]]  # column -> values at positions 0..N
    layers: tuple[Layer, ...]
    outputs: dict[str, tuple[int, ...]]
    nodes: dict[str, dict[str, Any]]  # SOp label -> {"columns": [...], "slot": s} (-1: embedding)
    vocab: tuple[Any, ...] | None = None  # categorical tokens: the symbols of the one-hot token columns
    output_values: dict[str, list[Any] | None] = field(default_factory=dict)  # categorical outputs: column values
    one_hot: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # SOp label -> the values of its one-hot columns
    lengths: str = "fixed"  # "fixed": exactly N tokens; "every": every length 1..N (N is max_seq_len)
    causal: bool = False  # each query attends only to the keys at or before it
    #: What the compiler's check ran (:class:`constructions.compiler.check.CheckReport`); None: unchecked.
    checked: Any = field(default=None, compare=False, repr=False)
    #: Selections of heads with rational scores: the same for every input, so found once per model.
    _selections: dict[int, tuple[list[int], np.ndarray]] = field(default_factory=dict, compare=False, repr=False)

    # -- sizes --------------------------------------------------------------------------------

    def width(self) -> int:
        return len(self.basis)

    def parameters(self) -> int:
        """Nonzero weights, biases and positional entries."""
        n = sum(1 for col in self.positional.values() for x in col if x != 0)
        for layer in self.layers:
            n += sum(len(h.qk) + len(h.ov) for h in layer.heads)
            if layer.mlp:
                n += sum(_affine_size(a) for st in layer.mlp.stages for u in st for a in u.args)
                n += sum(_affine_size(a) for _, a in layer.mlp.out)
        return n

    def summary(self) -> dict[str, Any]:
        return {
            "width": self.width(),
            "layers": len(self.layers),
            "heads": [len(layer.heads) for layer in self.layers],
            "mlp_stages": [len(layer.mlp.stages) if layer.mlp else 0 for layer in self.layers],
            "activations": [layer.mlp.activations() if layer.mlp else [] for layer in self.layers],
            "parameters": self.parameters(),
        }

    # -- forward ------------------------------------------------------------------------------

    def forward(
        self, tokens: Sequence[Any], domain: Domain, trace: bool = False, beta: Any = None
    ) -> tuple[dict[str, list[Any]], list[list[list[Any]]]]:
        """The outputs at positions 1..n (pairs as tuples), and with ``trace`` the residual
        (column-major) after the embedding and after every sublayer; n = len(tokens) is N, or
        any length 1..N for a model of every length.

        ``beta``: evaluate the same weights with softmax attention at inverse temperature
        beta (a rational) instead of average-hard attention (the limit beta -> infinity)."""
        N = len(tokens)
        if N != self.length and not (self.lengths == "every" and 1 <= N <= self.length):
            which = f"every length 1..{self.length}" if self.lengths == "every" else f"{self.length} tokens"
            raise ParseError(f"the model was compiled for {which}, got {N} tokens")
        positional = {c: vals[: N + 1] for c, vals in self.positional.items()} if N != self.length else self.positional
        zero = domain.zero()
        cols: list[list[Any]] = [[zero] * (N + 1) for _ in self.basis]
        for c, vals in positional.items():
            cols[c] = [domain.native(v) for v in vals]
        if self.tokens == "categorical":  # one-hot: token column k is 1 where the token is the k-th symbol
            symbol = {s: k for k, s in enumerate(self.vocab)}
            try:
                ks = [symbol[t] for t in tokens]
            except (KeyError, TypeError):
                raise ParseError(f"a token is not a symbol of the vocabulary {list(self.vocab)!r:.60}") from None
            one = domain.one()
            parts = [[zero] + [one if k == j else zero for k in ks] for j in range(len(self.token_columns))]
        else:
            # a plain number in a pair layout is the pair (number, 1): a data token (token_tag's rule)
            comps = [[t[k] if isinstance(t, tuple) else (t if k == 0 else 1) for t in tokens] if self.tokens == "pair" else list(tokens) for k in range(len(self.token_columns))]
            parts = [[zero] + [domain.native(x) for x in comp] for comp in comps]
        with domain.context():  # at the domain's precision: a ball's sum is rounded there
            for c, part in zip(self.token_columns, parts):
                cols[c] = [a + b for a, b in zip(cols[c], part)]  # the embedding: the positional row plus the token's components
        # a column a head scores from its exact positional values: one no token writes (those depend on the input)
        positional = {c: vals for c, vals in positional.items() if c not in self.token_columns}
        history = [[list(c) for c in cols]] if trace else []
        written = {c for layer in self.layers for h in layer.heads for _, c, _ in h.ov}
        written |= {c for layer in self.layers if layer.mlp for c, _ in layer.mlp.out}
        fresh = written - set(self.positional) - set(self.token_columns)  # still zero: adding is assigning

        def add(c: int, vals: list[Any]) -> None:
            cols[c] = vals if c in fresh else [x + y for x, y in zip(cols[c], vals)]
            fresh.discard(c)

        with domain.context():
            for layer in self.layers:
                added = [_head(h, cols, domain, positional, written, N, beta, self._selections, self.causal) for h in layer.heads]
                for h, out in zip(layer.heads, added):
                    for c, vals in out.items():
                        add(c, vals)
                if trace:
                    history.append([list(c) for c in cols])
                if layer.mlp:
                    for c, vals in _mlp(layer.mlp, cols, domain, N).items():
                        add(c, vals)
                if trace:
                    history.append([list(c) for c in cols])
        outputs = {}
        one = domain.one()
        for name, cs in self.outputs.items():
            parts = [cols[c][1:] for c in cs]
            values = self.output_values.get(name)
            if values is not None:  # one-hot: the value whose column holds 1 (None where none does)
                outputs[name] = [next((v for v, x in zip(values, row) if domain.eq(x, one)), None) for row in zip(*parts)]
            else:
                outputs[name] = parts[0] if len(parts) == 1 else list(zip(*parts))
        return outputs, history


def _affine_size(a: Affine) -> int:
    return len(a[0]) + (a[1] != 0)


def _apply(a: Affine, inputs: list[list[Any]], domain: Domain, n: int) -> list[Any]:
    """The affine form at every position; weights 1 and a zero bias cost no arithmetic."""
    terms, bias = a
    out = None if bias == 0 else [domain.native(bias)] * n
    for i, w in terms:
        col = inputs[i] if w == 1 else [domain.native(w) * x for x in inputs[i]]
        out = col if out is None else [o + x for o, x in zip(out, col)]
    return out if out is not None else [domain.zero()] * n


def _mlp(mlp: MLP, cols: list[list[Any]], domain: Domain, N: int) -> dict[int, list[Any]]:
    inputs = cols
    for stage in mlp.stages:
        units = []
        for u in stage:
            if u.kind == "product" and u.args[1] == _ONE:  # a product with 1: the identity
                units.append(_apply(u.args[0], inputs, domain, N + 1))
                continue
            z = [_apply(a, inputs, domain, N + 1) for a in u.args]
            if u.kind == "product":
                units.append([x * y for x, y in zip(*z)])
            elif u.kind == "relu":
                units.append([domain.relu(x) for x in z[0]])
            elif u.kind == "exp":
                units.append([domain.exp(x) for x in z[0]])
            elif u.kind == "reciprocal":
                one = domain.one()
                units.append([domain.div(one, x) for x in z[0]])
            else:
                raise ParseError(f"unknown unit {u.kind!r}")
        inputs = units
    return {c: _apply(a, inputs, domain, N + 1) for c, a in mlp.out}


def _head(
    h: Head,
    cols: list[list[Any]],
    domain: Domain,
    positional: dict[int, list[fmpq]],
    written: set[int],
    N: int,
    beta: fmpq | None = None,
    cache: dict[tuple[int, int], tuple[list[int], np.ndarray]] | None = None,
    causal: bool = False,
) -> dict[int, list[Any]]:
    reads = {a for a, _, _ in h.qk} | {b for _, b, _ in h.qk}
    static = reads <= set(positional) and not reads & written
    if beta is not None:
        if not static:
            raise ParseError(f"softmax mode needs rational scores; head {h.label} reads columns the layers write")
        return _softmax_head(h, cols, domain, positional, N, beta, causal)
    if static:
        key = (id(h), N)
        if cache is None or key not in cache:
            found = _argmax_rational(h, positional, N, causal=causal)
            if cache is None:
                offsets, keys = found
            else:
                cache[key] = found
        if cache is not None:
            offsets, keys = cache[key]
    else:
        offsets, keys = _argmax_in_domain(h, cols, domain, N, causal)
    out: dict[int, list[Any]] = {}
    means: dict[int, list[Any]] = {}
    for src, dst, w in h.ov:
        if src not in means:
            means[src] = domain.means(cols[src], keys, offsets)
        wd = domain.native(w)
        prev = out.get(dst, [domain.zero()] * (N + 1))
        out[dst] = [p + wd * m for p, m in zip(prev, means[src])]
    return out


def _integer_scores(h: Head, cols: dict[int, list[fmpq]], N: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(Q, K, D) with s_ij = (Q K^T)_ij / D exactly, Q and K integer matrices (int64 when no product can overflow).

    With x_c scaled to integers z_c = x_c l_c (l_c the lcm of column c's denominators),
    D s_ij = sum_a z_a[i] (sum_b C_ab z_b[j]), C_ab = D w_ab / (l_a l_b) integers: Q's columns
    are the query columns read, K's the key forms each of them meets (terms merged per query column)."""
    read = {a for a, _, _ in h.qk} | {b for _, b, _ in h.qk}
    scale = {c: math.lcm(1, *(int(x.q) for x in cols[c])) for c in read}
    ints = {c: np.array([int(x * scale[c]) for x in cols[c]], dtype=object) for c in read}
    coeffs = [(a, b, fmpq(w) / (scale[a] * scale[b])) for a, b, w in h.qk]
    D = math.lcm(1, *(int(c.q) for _, _, c in coeffs))
    forms: dict[int, np.ndarray] = {}
    for a, b, c in coeffs:
        term = int(c * D) * ints[b]
        forms[a] = forms[a] + term if a in forms else term
    queries = sorted(forms)
    bound = sum(max(map(abs, ints[a])) * max(map(abs, forms[a])) for a in queries)
    dtype = np.int64 if bound < 2**62 else object
    if not queries:
        return np.zeros((N + 1, 0), dtype=np.int64), np.zeros((N + 1, 0), dtype=np.int64), D
    Q = np.array([ints[a] for a in queries], dtype=dtype).T.reshape(N + 1, len(queries))
    K = np.array([forms[a] for a in queries], dtype=dtype).T.reshape(N + 1, len(queries))
    return Q, K, D


def _argmax_rational(h: Head, cols: dict[int, list[fmpq]], N: int, chunk: int = 1 << 22, causal: bool = False) -> tuple[list[int], np.ndarray]:
    """Keys of maximal score for every query, in CSR form, for a head that reads positional columns only:
    the scores are rational and the same for every input, compared exactly as integers (``causal``:
    among the keys j <= i)."""
    Q, K, _ = _integer_scores(h, cols, N)
    rows = max(1, chunk // (N + 1))
    offsets, keys = [0], []
    for start in range(0, N + 1, rows):
        S = Q[start : start + rows] @ K.T
        for r in range(S.shape[0]):
            row = S[r, : start + r + 1] if causal else S[r]
            sel = np.flatnonzero(row == row.max())
            keys.append(sel)
            offsets.append(offsets[-1] + len(sel))
    return offsets, np.concatenate(keys).astype(np.int64)


def _softmax_head(
    h: Head, cols: list[list[Any]], domain: Domain, positional: dict[int, list[fmpq]], N: int, beta: fmpq, causal: bool = False
) -> dict[int, list[Any]]:
    """Softmax attention at inverse temperature beta: weights e^{beta (s_ij - max_j s_ij)}, normalised
    (``causal``: over the keys j <= i).

    The scores are rational, so the weights are exact in EE and rigorous balls in Ball."""
    Q, K, D = _integer_scores(h, positional, N)
    srcs = sorted({a for a, _, _ in h.ov})
    mixed: dict[int, list[Any]] = {a: [] for a in srcs}
    for i in range(N + 1):
        row = [int(v) for v in (Q[i] @ K[: i + 1 if causal else N + 1].T)]
        top = max(row)
        w = [domain.exp(domain.convert(fmpq(beta) * fmpq(v - top, D))) for v in row]
        total = domain.sum(w)
        for a in srcs:
            mixed[a].append(domain.div(domain.sum(wj * xj for wj, xj in zip(w, cols[a])), total))
    out: dict[int, list[Any]] = {}
    for src, dst, wt in h.ov:
        wd = domain.native(wt)
        prev = out.get(dst, [domain.zero()] * (N + 1))
        out[dst] = [p + wd * m for p, m in zip(prev, mixed[src])]
    return out


def _argmax_in_domain(h: Head, cols: list[list[Any]], domain: Domain, N: int, causal: bool = False) -> tuple[list[int], np.ndarray]:
    """The same, for heads whose scores depend on the input: scored and compared in the domain.

    Query i's scores are sum over terms (a, b, w) of (w x_a[i]) x_b, a term whose query entry
    is exactly 0 adding nothing (one-hot columns are mostly 0); ``causal``: keys j <= i only."""
    terms = [(cols[a], cols[b], domain.convert(w)) for a, b, w in h.qk]
    zero = domain.zero()
    offsets, keys = [0], []
    for i in range(N + 1):
        live = i + 1 if causal else N + 1
        s = [zero] * live
        for query, key, w in terms:
            if query[i] == 0:
                continue
            c = w * query[i]
            s = [x + c * y for x, y in zip(s, key)]
        best = s[0]
        for x in s[1:]:
            best = domain.max(best, x)
        sel = [j for j, x in enumerate(s) if domain.eq(x, best)]
        keys.extend(sel)
        offsets.append(offsets[-1] + len(sel))
    return offsets, np.array(keys, dtype=np.int64)


# -- JSON (docs/compiler.md) ------------------------------------------------------------------


def _q(x: fmpq) -> str:
    return QQ.to_json(x)


def _affine_json(a: Affine) -> dict[str, Any]:
    return {"terms": [[i, _q(w)] for i, w in a[0]], "bias": _q(a[1])}


def model_to_json(m: Model) -> dict[str, Any]:
    """The model as canonical JSON: sparse exact weights (rational strings) over the labelled basis.

    A model for exactly N tokens without a causal mask is written as ``attncert-model/1`` (as before
    issue 25, byte for byte); a model for every length or a causal one as ``attncert-model/2``, with
    ``mode`` ("fixed" or "every_length"), ``max_seq_len`` (N, in place of ``length``) and ``causal``."""
    if m.lengths == "fixed" and not m.causal:
        head: dict[str, Any] = {"format": MODEL_FORMAT, "model_class": MODEL_CLASS, "length": m.length}
    else:
        mode = {"fixed": "fixed", "every": "every_length"}[m.lengths]
        head = {"format": MODEL_FORMAT_2, "model_class": model_class(m.lengths, m.causal), "mode": mode, "max_seq_len": m.length, "causal": m.causal}
    return {
        **head,
        "tokens": m.tokens,
        "basis": list(m.basis),
        "token_columns": list(m.token_columns),
        "positional": {str(c): [[p, _q(x)] for p, x in enumerate(vals) if x != 0] for c, vals in sorted(m.positional.items())},
        "layers": [
            {
                "heads": [{"aggregate": h.label, "qk": [[a, b, _q(w)] for a, b, w in h.qk], "ov": [[a, b, _q(w)] for a, b, w in h.ov]} for h in layer.heads],
                "mlp": None
                if layer.mlp is None
                else {
                    "stages": [[{"unit": u.kind, "args": [_affine_json(a) for a in u.args]} for u in stage] for stage in layer.mlp.stages],
                    "out": [[c, _affine_json(a)] for c, a in layer.mlp.out],
                    "activations": layer.mlp.activations(),
                },
            }
            for layer in m.layers
        ],
        "outputs": {k: list(v) for k, v in m.outputs.items()},
        "output_values": {k: None if v is None else [encode_value(x) for x in v] for k, v in m.output_values.items()},
        "vocab": None if m.vocab is None else [encode_value(x) for x in m.vocab],
        "nodes": {label: {**node, "values": [encode_value(x) for x in m.one_hot[label]]} if label in m.one_hot else node for label, node in m.nodes.items()},
        "summary": m.summary(),
    }


def model_from_json(obj: Any) -> Model:
    """Read a model written by :func:`model_to_json`, checking every index and unit; ParseError otherwise."""
    try:
        lengths, causal, N = _mode(obj)
        width = len(obj["basis"])
        col = lambda i: i if isinstance(i, int) and not isinstance(i, bool) and 0 <= i < width else _bad(f"column {i!r:.20}")  # noqa: E731

        def affine(a: Any, inputs: int) -> Affine:
            idx = lambda i: i if isinstance(i, int) and 0 <= i < inputs else _bad(f"input {i!r:.20}")  # noqa: E731
            return tuple((idx(i), QQ.from_json(w)) for i, w in a["terms"]), QQ.from_json(a["bias"])

        positional = {}
        for c, entries in obj["positional"].items():
            vals = [fmpq(0)] * (N + 1)
            for p, x in entries:
                vals[p if 0 <= p <= N else _bad(f"position {p}")] = QQ.from_json(x)
            positional[col(int(c))] = vals
        layers = []
        for layer in obj["layers"]:
            heads = tuple(
                Head(str(h["aggregate"]), tuple((col(a), col(b), QQ.from_json(w)) for a, b, w in h["qk"]), tuple((col(a), col(b), QQ.from_json(w)) for a, b, w in h["ov"]))
                for h in layer["heads"]
            )
            mlp = None
            if layer["mlp"] is not None:
                stages, inputs = [], width
                for stage in layer["mlp"]["stages"]:
                    units = []
                    for u in stage:
                        if u["unit"] not in UNITS or len(u["args"]) != (2 if u["unit"] == "product" else 1):
                            _bad(f"unit {u['unit']!r:.20}")
                        units.append(Unit(u["unit"], tuple(affine(a, inputs) for a in u["args"])))
                    stages.append(tuple(units))
                    inputs = len(units)
                mlp = MLP(tuple(stages), tuple((col(c), affine(a, inputs)) for c, a in layer["mlp"]["out"]))
            layers.append(Layer(heads, mlp))
        return Model(
            basis=tuple(str(b) for b in obj["basis"]),
            length=N,
            tokens=obj["tokens"] if obj["tokens"] in ("scalar", "pair", "categorical") else _bad("tokens"),
            token_columns=tuple(col(c) for c in obj["token_columns"]),
            positional=positional,
            layers=tuple(layers),
            outputs={str(k): tuple(col(c) for c in v) for k, v in obj["outputs"].items()},
            nodes={str(k): {f: x for f, x in node.items() if f != "values"} for k, node in obj["nodes"].items()},
            vocab=None if obj.get("vocab") is None else tuple(decode_value(x) for x in obj["vocab"]),
            output_values={str(k): None if v is None else [decode_value(x) for x in v] for k, v in obj.get("output_values", {}).items()},
            one_hot={str(k): tuple(decode_value(x) for x in node["values"]) for k, node in obj["nodes"].items() if "values" in node},
            lengths=lengths,
            causal=causal,
        )
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        raise ParseError(f"malformed model: {type(e).__name__}: {str(e)[:80]}") from None


def _mode(obj: dict[str, Any]) -> tuple[str, bool, int]:
    """(lengths, causal, N) of a model's JSON: /1 is for exactly ``length`` tokens, not causal; /2 says
    its ``mode`` and ``causal`` and gives ``max_seq_len``; ParseError for any other format or value."""
    if obj.get("format") == MODEL_FORMAT:
        return "fixed", False, int(obj["length"])
    if obj.get("format") != MODEL_FORMAT_2:
        raise ParseError(f"not a model of format {MODEL_FORMAT} or {MODEL_FORMAT_2}")
    lengths = {"fixed": "fixed", "every_length": "every"}.get(obj.get("mode"))
    if lengths is None or not isinstance(obj.get("causal"), bool):
        raise ParseError('malformed model: mode must be "fixed" or "every_length", causal true or false')
    N = obj["max_seq_len"]
    if not isinstance(N, int) or isinstance(N, bool) or N < 1:
        raise ParseError("malformed model: max_seq_len must be a positive integer")
    return lengths, obj["causal"], N


def model_weights(obj: Any, where: str) -> Model:
    """The model of a JSON value that is exactly a model as :func:`model_to_json` writes it (every field, the
    summary included, is what the weights it reads give); ParseError naming ``where`` otherwise."""
    if not isinstance(obj, dict):
        raise ParseError(f"{where}: a model is a JSON object")
    m = model_from_json(obj)
    written = model_to_json(m)
    differing = sorted(k for k in set(written) | set(obj) if written.get(k) != obj.get(k))
    if differing:
        raise ParseError(f"{where}: not a model as attncert compile writes it: its {differing[0]!r:.40} is not what its weights give")
    return m


#: The first bytes of a zip archive, which an npz file is.
_ZIP = b"PK\x03\x04"


def read_model_file(path: str) -> Model:
    """The model of a model file written by ``attncert compile`` (format attncert-model/1), read within the
    limits in force. The npz export is refused: its weights are float64, not the exact rationals a proof needs."""
    from attncert.exact.certificate import parse_json, read_bounded

    data = read_bounded(path)
    if data.startswith(_ZIP) or str(path).lower().endswith(".npz"):
        raise ParseError(f"{path}: an npz model holds float64 weights, which are not exact; certify the JSON weights (attncert compile ... --format json)")
    try:
        obj = parse_json(data)
    except ParseError as e:
        raise ParseError(f"{path}: {e}") from None
    if not isinstance(obj, dict) or obj.get("format") not in (MODEL_FORMAT, MODEL_FORMAT_2):
        raise ParseError(f"{path}: not a model of format {MODEL_FORMAT} or {MODEL_FORMAT_2} (attncert compile writes one)")
    try:
        return model_weights(obj, str(path))
    except ParseError as e:
        raise ParseError(str(e) if str(e).startswith(str(path)) else f"{path}: {e}") from None


def _bad(what: str) -> Any:
    raise ParseError(f"malformed model: bad {what}")
