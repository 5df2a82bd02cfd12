"""The check of ``tracr_model``: the recorded tracr model on every input, by this module's own forward pass.

It never imports the constructions (nor tracr, nor JAX). From the certificate alone:

0. **Size.** Before any weight is read, the cost model of the forward passes
   (:func:`proofs.core.cost.tracr_model`) is evaluated on the recorded shapes (residual width, heads,
   key size, the largest hidden layer, layers, embeddings) and the number of inputs, and a model
   over the limits in force is refused in one line (BAD): the largest matrix the pass builds
   (``--max-entries``: a block of weights, an embedding, a chunk's residual), its memory, the inputs.
1. **Hypotheses.** Every recorded weight is a float32 value (a dyadic rational whose float32
   rounding is itself); the logit divisor is ``np.sqrt(key_size).astype(float32)`` and the masked
   logit float32(-1e30), as tracr's attention computes them; the shapes fit (token and position
   embeddings D wide, max_seq_len + 1 position rows, D x H K projections, H K x D output, D x M
   and M x D MLP); every token of the vocabulary and BOS has an embedding row, BOS is not in the
   vocabulary, max_seq_len is at most the model's; each output class's residual column is
   labelled ``OUTPUT:VALUE`` with VALUE a spelling of the class's value.
2. **Every input.** For each length n = 1..max_seq_len, every sequence over the vocabulary in the
   recorded order is run through tracr's forward pass in arb balls, written plainly: one
   (B (n + 1)) x D matrix per chunk of B inputs, per-input softmax attention (logits (x W_Q + b_Q)(x W_K +
   b_K)^T / s, the mask above the diagonal of a causal model, weights e^{l - c} / sum e^{l - c} for
   an exact c), the heads' outputs through W_O, b_O, the ReLU MLP, the residual adds (the chunks
   as the cost model sizes them, :func:`proofs.core.cost.tracr_chunk`; each weight block formed once). Each
   position 1..n is decided against the recorded exact RASP output (``reference.rasp``) by the
   rules of the statement: a categorical output by a separated argmax, a numerical one by
   |y - v| <= tol proven, exact comparisons of the balls' endpoints; inputs left undecided are run
   again at 2 and 4 times the precision.
3. **Verdicts.** The counts of correct, counterexample, undecided and undefined inputs, and the
   listed ones (the first of each kind, their inputs, RASP outputs and the positions not correct)
   must be what step 2 found; ``result`` must state them, and holds only if every input is correct.

The rebuild (:func:`proofs.tracr.model.rebuild`) then recomputes every field from the recorded
model and program (the RASP outputs by attncert's evaluator on the tabulated program).
"""

from __future__ import annotations

import hashlib
import itertools
from fractions import Fraction
from typing import Any, Sequence

import numpy as np
from flint import arb, arb_mat, ctx, fmpq

from attncert.exact import ParseError
from attncert.exact.canonical import canonical_json
from attncert.exact.rationals import parse_rational, rational_from_json
from attncert.exact.limits import current as current_limits
from attncert.proofs.checkers.reading import integer, obj, whole
from attncert.proofs.checkers.values import same, value
from attncert.proofs.core.cost import check, every_input, tracr_balls, tracr_chunk, tracr_model

_PARTS = ("query", "key", "value", "linear", "linear_1", "linear_2")


def float32(q: fmpq) -> bool:
    """Whether a rational is a float32 value: its float32 rounding (through float64, exact for
    float32 values, and never equal to q otherwise) gives it back."""
    r = np.float32(float(Fraction(int(q.p), int(q.q))))
    return Fraction(float(r)) == Fraction(int(q.p), int(q.q))


class Model:
    """The recorded model, read and checked (hypotheses of step 1)."""

    def __init__(self, m: dict[str, Any]):
        self.labels = m.get("residual")
        if not isinstance(self.labels, list) or not all(isinstance(s, str) for s in self.labels) or len(set(self.labels)) != len(self.labels):
            raise ParseError("the recorded residual labels must be distinct strings")
        d = self.width = len(self.labels)
        self.max_seq_len = integer(m, "max_seq_len", 1, 1 << 16)
        self.heads = integer(m, "heads", 1, 1 << 10)
        self.key_size = integer(m, "key_size", 1, 1 << 16)
        self.causal = m.get("causal")
        if not isinstance(self.causal, bool):
            raise ParseError('"causal" must be true or false')
        self.scale, self.mask = rational_from_json(m.get("scale")), rational_from_json(m.get("mask_logit"))
        if Fraction(int(self.scale.p), int(self.scale.q)) != Fraction(float(np.sqrt(self.key_size).astype(np.float32))):
            raise _Hypothesis("the logit divisor is not tracr's float32 sqrt(key_size)")
        if Fraction(int(self.mask.p), int(self.mask.q)) != Fraction(float(np.float32(-1e30))):
            raise _Hypothesis("the masked logit is not tracr's float32(-1e30)")
        rows = m.get("tokens")
        if not isinstance(rows, list):
            raise ParseError('"tokens" must be a list of [token, row]')
        self.bos, self.pad = value(m.get("bos")), value(m.get("pad"))
        self.token_embed = self._matrix(m.get("token_embed"), None, d)
        self.row_of = []
        for entry in rows:
            if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[1], int) or not 0 <= entry[1] < self.token_embed[0]:
                raise ParseError("a token's embedding row must be [token, row index]")
            self.row_of.append((value(entry[0]), entry[1]))
        hk = self.heads * self.key_size
        self.pos_embed = self._matrix(m.get("pos_embed"), self.max_seq_len + 1, d)
        layers = m.get("layers")
        if not isinstance(layers, list):
            raise ParseError('"layers" must be a list')
        hidden = None
        self.layers = []
        for layer in layers:
            if not isinstance(layer, dict) or set(layer) != set(_PARTS):
                raise ParseError(f"a layer holds {', '.join(_PARTS)}")
            mlp_hidden = layer["linear_1"].get("shape", [0, 0])[1] if isinstance(layer["linear_1"], dict) else 0
            hidden = mlp_hidden if hidden is None else hidden
            shapes = {"query": (d, hk), "key": (d, hk), "value": (d, hk), "linear": (hk, d), "linear_1": (d, hidden), "linear_2": (hidden, d)}
            self.layers.append({p: self._matrix(layer[p], *shapes[p]) for p in _PARTS})
        out = obj(m, "output")
        self.output = out.get("label")
        self.categorical = out.get("encoding") == "categorical"
        if not isinstance(self.output, str) or out.get("encoding") not in ("categorical", "numerical") or not isinstance(out.get("classes"), list) or not out["classes"]:
            raise ParseError("the recorded output must name its label, encoding and classes")
        self.classes = []
        for entry in out["classes"]:
            if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[1], int) or isinstance(entry[1], bool) or not 0 <= entry[1] < d:
                raise ParseError("an output class is [value, residual column]")
            v, c = (_Double(rational_from_json(entry[0]["f"])) if isinstance(entry[0], dict) and set(entry[0]) == {"f"} else value(entry[0])), entry[1]
            label = self.labels[c]
            if self.categorical and not (label.startswith(self.output + ":") and _spells(label[len(self.output) + 1 :], v)):
                raise _Hypothesis(f"the output class {v!r:.30} reads column {label!r:.40}, which is not the output's column for it")
            if not self.categorical and (label != self.output or v is not None or len(out["classes"]) != 1):
                raise _Hypothesis("a numerical output reads the one column labelled by the output")
            self.classes.append((v, c))
        if len({c for _, c in self.classes}) != len(self.classes):
            raise _Hypothesis("two output classes read the same column")
        if self.categorical:
            # tracr decodes by the argmax over its output space: every residual column labelled OUTPUT:VALUE
            space = {c for c, label in enumerate(self.labels) if label.startswith(self.output + ":")}
            if space != {c for _, c in self.classes}:
                raise _Hypothesis(
                    f"the recorded decoder reads {len(self.classes)} of the {len(space)} columns labelled {self.output!r:.40}:VALUE; "
                    "tracr's argmax reads every one"
                )
            if any(same(u, v) or isinstance(u, _Double) and isinstance(v, _Double) and u.value == v.value for i, (u, _) in enumerate(self.classes) for v, _ in self.classes[:i]):
                raise _Hypothesis("two output classes have the same value")

    def _matrix(self, m: Any, rows: int | None, cols: int) -> tuple[int, int, dict[tuple[int, int], fmpq], dict[int, fmpq]]:
        if not isinstance(m, dict) or not isinstance(m.get("shape"), list) or len(m["shape"]) != 2:
            raise ParseError("a recorded matrix has a shape, w and b")
        r, c = m["shape"]
        if not isinstance(r, int) or not isinstance(c, int) or (rows is not None and r != rows) or c != cols or r < 1:
            raise ParseError(f"a recorded matrix is {r}x{c}, expected {rows if rows is not None else 'R'}x{cols}")
        w: dict[tuple[int, int], fmpq] = {}
        for entry in m.get("w") or []:
            i, j, x = entry
            if not (isinstance(i, int) and isinstance(j, int) and 0 <= i < r and 0 <= j < c) or (i, j) in w:
                raise ParseError("a weight outside its matrix, or given twice")
            w[i, j] = rational_from_json(x)
        b: dict[int, fmpq] = {}
        for entry in m.get("b") or []:
            j, x = entry
            if not (isinstance(j, int) and 0 <= j < c) or j in b:
                raise ParseError("a bias outside its matrix, or given twice")
            b[j] = rational_from_json(x)
        if not all(float32(x) for x in itertools.chain(w.values(), b.values())):
            raise _Hypothesis("a recorded weight is not a float32 value")
        return r, c, w, b


class _Double:
    """An output class tracr holds as a float: it stands for the exact numbers whose double is ``value``."""

    def __init__(self, value: fmpq):
        self.value = value

    def matches(self, v: Any) -> bool:
        if isinstance(v, (bool, str, tuple)) or v is None:
            return False
        return Fraction(float(Fraction(int(v.p), int(v.q)))) == Fraction(int(self.value.p), int(self.value.q))


class _Hypothesis(Exception):
    """A hypothesis of the forward pass that the recorded model does not meet (a problem, not malformed)."""


def _spells(suffix: str, v: Any) -> bool:
    if isinstance(v, _Double):
        try:
            return Fraction(float(suffix)) == Fraction(int(v.value.p), int(v.value.q))
        except ValueError:
            return False
    if isinstance(v, (bool, str)):
        return suffix == str(v)
    try:
        return v is not None and parse_rational(suffix) == v
    except (ParseError, ValueError):
        return False


def _dense(m: tuple[int, int, dict[tuple[int, int], fmpq], dict[int, fmpq]]) -> arb_mat:
    r, c, w, _ = m
    out = [[fmpq(0)] * c for _ in range(r)]
    for (i, j), x in w.items():
        out[i][j] = x
    return arb_mat(out)


Weights = tuple[int, int, dict[tuple[int, int], fmpq], dict[int, fmpq]]


def _affine(x: list[list[arb]], m: Weights, cols: list[int], place: dict[int, int] | None = None, blocks: dict[Any, Any] | None = None) -> list[list[arb]]:
    """Columns ``cols`` of x W + b: one product [x[:, read], 1] [W[read, cols]; b[cols]], ``read`` the
    rows of W with a nonzero weight in those columns (the others multiply by 0). ``place`` maps a
    column of the full input to its place in the rows of x (default: x is full); a column x does not
    hold is exactly 0 and is not read. ``blocks`` keeps each (read, block) for the next chunk of inputs."""
    if not cols:
        return [[] for _ in x]
    key = (id(m), tuple(cols), None if place is None else tuple(place.items()), ctx.prec)
    known = blocks.get(key) if blocks is not None else None
    where, block = known if known is not None else _block(m, cols, place)
    if blocks is not None:
        blocks[key] = where, block
    one = arb(1)
    return (arb_mat([[r[i] for i in where] + [one] for r in x]) * block).tolist()


def _block(m: Weights, cols: list[int], place: dict[int, int] | None) -> tuple[list[int], arb_mat]:
    """The places in x of the rows ``read`` of :func:`_affine`, and [W[read, cols]; b[cols]] as a matrix."""
    _, _, w, b = m
    want = set(cols)
    read = sorted({i for (i, j) in w if j in want and (place is None or i in place)})
    at, to = {r: n for n, r in enumerate(read)}, {j: n for n, j in enumerate(cols)}
    dense = [[fmpq(0)] * len(cols) for _ in range(len(read) + 1)]
    for (i, j), v in w.items():
        if j in to and i in at:
            dense[at[i]][to[j]] = v
    for j, v in b.items():
        if j in to:
            dense[len(read)][to[j]] = v
    return (read if place is None else [place[i] for i in read]), arb_mat(dense)


def _added(x: list[list[arb]], out: list[list[arb]], written: list[int]) -> list[list[arb]]:
    """x + out in the columns ``written`` (``out`` holds those columns, in order); the other columns
    receive exactly 0 and keep their balls."""
    new = []
    for r, o in zip(x, out):
        r = list(r)
        for n, j in enumerate(written):
            r[j] = r[j] + o[n]
        new.append(r)
    return new


def _reached(m: Weights) -> list[int]:
    """The output columns the weights or bias of m reach; every other output column is exactly 0."""
    return sorted({j for (_, j) in m[2]} | set(m[3]))


#: Endpoints on the grid of 2^-GRID: exact for balls with no bit below it, else rounded outward (the
#: masked keys of a causal model weigh about e^{-10^30}); the statement's decisions use these.
GRID = 1024


def _ends(x: arb) -> tuple[fmpq, fmpq]:
    (m, k), (r, j) = x.mid().man_exp(), x.rad().man_exp()
    mid_lo, mid_hi = _on_grid(int(m), int(k))
    rad_hi = _on_grid(int(r), int(j))[1]
    return fmpq(mid_lo - rad_hi, 1 << GRID), fmpq(mid_hi + rad_hi, 1 << GRID)


def _on_grid(m: int, k: int) -> tuple[int, int]:
    """floor and ceil of m 2^(k + GRID)."""
    e = k + GRID
    if e >= 0:
        return m << e, m << e
    if -e > m.bit_length():
        return (-1, 0) if m < 0 else (0, 1 if m else 0)
    f = m >> -e
    return f, f + (f << -e != m)


def run(model: Model, batch: Sequence[Sequence[Any]], blocks: dict[Any, Any] | None = None) -> list[list[list[arb]]]:
    """The final residual stream of every input of one length (positions 0..n), at the precision in force.

    Only the columns that can be nonzero are computed: a query or key column that the weights and
    bias of W_Q or W_K do not reach is exactly 0 and adds nothing to a logit; a value column they
    do not reach averages to exactly 0; a head with no such value column that W_O reads adds exactly
    0."""
    rows_of = {repr((type(t).__name__, t)): r for t, r in model.row_of}
    tok, pos = _dense(model.token_embed).tolist(), _dense(model.pos_embed).tolist()
    B, T = len(batch), len(batch[0]) + 1
    x = [
        [a + b for a, b in zip(tok[rows_of[repr((type(token).__name__, token))]], pos[t])]
        for xs in batch for t, token in enumerate([model.bos] + list(xs))
    ]
    k = model.key_size
    scale, masked, one = arb(model.scale), arb(model.mask).exp(), arb(1)
    for layer in model.layers:
        qc, kc = set(_reached(layer["query"])), set(_reached(layer["key"]))
        read_o = {i for (i, _) in layer["linear"][2]}
        vc = [j for j in _reached(layer["value"]) if j in read_o]
        heads = [(h, [j for j in range(h * k, (h + 1) * k) if j in qc and j in kc], [j for j in vc if h * k <= j < (h + 1) * k]) for h in range(model.heads)]
        heads = [(h, s, v) for h, s, v in heads if v]
        scored = sorted({j for _, s, _ in heads for j in s})
        q, kk = _affine(x, layer["query"], scored, None, blocks), _affine(x, layer["key"], scored, None, blocks)
        v = _affine(x, layer["value"], vc, None, blocks)
        at_s, at_v = {j: n for n, j in enumerate(scored)}, {j: n for n, j in enumerate(vc)}
        out: list[list[arb]] = [[] for _ in range(B * T)]
        for b in range(B):
            block = range(b * T, (b + 1) * T)
            for h, s, vs in heads:
                si, vi = [at_s[j] for j in s], [at_v[j] for j in vs]
                if si:
                    logits = (arb_mat([[q[i][n] for n in si] for i in block]) * arb_mat([[kk[i][n] for n in si] for i in block]).transpose()).tolist()
                else:
                    logits = [[arb(0)] * T for _ in block]
                # softmax_j(l_ij) v_j = (sum_j e^{l_ij} v_j) / (sum_j e^{l_ij}): one product with [v, 1], then a division per entry
                e = [[masked if model.causal and j > i else (l / scale).exp() for j, l in enumerate(r)] for i, r in enumerate(logits)]
                sums = (arb_mat(e) * arb_mat([[v[i][n] for n in vi] + [one] for i in block])).tolist()
                for i, r in zip(block, sums):
                    out[i] += [u / r[-1] for u in r[:-1]]
        # out's columns, in the order the heads were visited: each head's value columns, which are vc in order
        wo, hc, w2 = _reached(layer["linear"]), _reached(layer["linear_1"]), _reached(layer["linear_2"])
        x = _added(x, _affine(out, layer["linear"], wo, at_v, blocks), wo)
        hidden = [[h.nonnegative_part() for h in r] for r in _affine(x, layer["linear_1"], hc, None, blocks)]
        x = _added(x, _affine(hidden, layer["linear_2"], w2, {j: n for n, j in enumerate(hc)}, blocks), w2)
    return [x[b * T : (b + 1) * T] for b in range(B)]


def position_status(model: Model, row: list[arb], v: Any, tol: fmpq, seen: dict[Any, str]) -> str:
    """correct, counterexample or undecided, by the statement's rules (``seen``: verdicts of identical balls)."""
    balls = [row[c] for _, c in model.classes]
    memo = (tuple((b.mid().man_exp(), b.rad().man_exp()) for b in balls), repr(v), type(v).__name__)
    found = seen.get(memo)
    if found is None:
        found = seen[memo] = _status(model, balls, v, tol)
    return found


def _status(model: Model, balls: list[arb], v: Any, tol: fmpq) -> str:
    if model.categorical:
        ends = [_ends(b) for b in balls]
        top = max(lo for lo, _ in ends)
        cands = [i for i, (_, hi) in enumerate(ends) if hi >= top]
        mine = next((i for i, (u, _) in enumerate(model.classes) if not isinstance(u, _Double) and same(u, v)), None)
        if mine is None:
            mine = next((i for i, (u, _) in enumerate(model.classes) if isinstance(u, _Double) and u.matches(v)), None)
        if mine is None or mine not in cands:
            return "counterexample"
        return "correct" if cands == [mine] else "undecided"
    if isinstance(v, bool):
        v = fmpq(int(v))
    if v is None or isinstance(v, (str, tuple)):
        return "counterexample"
    lo, hi = _ends(balls[0])
    upper = max(abs(lo - v), abs(hi - v))
    lower = fmpq(0) if lo <= v <= hi else min(abs(lo - v), abs(hi - v))
    return "correct" if upper <= tol else "counterexample" if lower > tol else "undecided"


def model_sha256(model: dict[str, Any]) -> str:
    """The sha256 of a model record's canonical JSON: what names the model a certificate is about."""
    return hashlib.sha256(canonical_json(model)).hexdigest()


def _shape(m: Any, key: str, axis: int) -> int:
    """A recorded matrix's rows (axis 0) or columns (axis 1), a positive integer, read before any weight."""
    shape = m.get(key).get("shape") if isinstance(m.get(key), dict) else None
    if not isinstance(shape, list) or len(shape) != 2 or not whole(shape[axis]) or shape[axis] < 1:
        raise ParseError(f'the recorded matrix "{key}" needs a shape of two positive integers')
    return shape[axis]


def refuse_over_limits(m: dict[str, Any], inputs: int, precision: int) -> None:
    """LimitExceeded, in the cost model's line (:func:`proofs.core.cost.tracr_model`), if the forward passes of
    ``inputs`` sequences through the recorded model are over the limits in force, from its shapes alone (width,
    heads, key size, largest hidden layer, layers, embeddings, max_seq_len), before any weight is read."""
    labels, layers = m.get("residual"), m.get("layers")
    if not isinstance(labels, list) or not isinstance(layers, list) or not all(isinstance(layer, dict) for layer in layers):
        raise ParseError('the recorded model needs a list "residual" and a list of layers')
    sizes = {
        "width": len(labels),
        "heads": integer(m, "heads", 1, 1 << 10),
        "key_size": integer(m, "key_size", 1, 1 << 16),
        "hidden": max((_shape(layer, "linear_1", 1) for layer in layers), default=0),
        "layers": len(layers),
        "max_seq_len": integer(m, "max_seq_len", 1, 1 << 16),
    }
    rows = _shape(m, "token_embed", 0) + _shape(m, "pos_embed", 0)
    cost = tracr_model(inputs, embedding_rows=rows, precision=precision, **sizes)
    check("tracr_model", {**sizes, "sequences": inputs}, cost, current_limits(), writes=False)


#: The checks of the other methods, by name: their modules install them (compositional.py), so that this one
#: imports none of them and no import cycle forms.
METHODS: dict[str, Any] = {}


def check_tracr_model(doc: dict[str, Any]) -> list[str]:
    """Problems with a tracr_model certificate (empty: its claim holds as recorded)."""
    params, given, cons = obj(doc, "params"), obj(doc, "inputs"), obj(doc, "construction")
    if cons.get("model_sha256") != model_sha256(obj(cons, "model")):
        return ["construction.model_sha256 is not the sha256 of the recorded model"]
    compositional = params.get("method") == "compositional"
    if compositional:  # its ball passes run the listed inputs only, at their own precision
        refuse_over_limits(obj(cons, "model"), 0, 0)
    else:
        vocab = given.get("vocab")
        if not isinstance(vocab, list) or not vocab:
            raise ParseError('"inputs.vocab" must be a non-empty list')
        n = integer(given, "max_seq_len", 1, 1 << 16)
        prec = integer(params, "precision", 16, 4096)
        refuse_over_limits(obj(cons, "model"), every_input(len(vocab), n), prec)
    try:
        model = Model(obj(cons, "model"))
    except _Hypothesis as e:
        return [str(e)]
    if compositional:  # every input of every length by induction: its own module, which installs its check
        if "compositional" not in METHODS:
            return ["the check of --method compositional is not loaded (proofs/checkers/tracr/compositional.py)"]
        return METHODS["compositional"](doc, model)
    vocab = [value(t) for t in vocab]
    problems = []
    known = {repr((type(t).__name__, t)) for t, _ in model.row_of}
    if any(same(t, model.bos) for t in vocab):
        problems.append("the vocabulary holds the BOS token")
    if any(repr((type(t).__name__, t)) not in known for t in vocab + [model.bos]):
        problems.append("a token of the vocabulary (or BOS) has no embedding row")
    if n > model.max_seq_len:
        problems.append(f"max_seq_len {n} is over the model's {model.max_seq_len}")
    if problems:
        return problems
    tol = parse_rational(params.get("tolerance"))
    listed = integer(params, "listed", 0, 1 << 20)
    ref = obj(obj(doc, "reference"), "rasp")
    values = [value(v) for v in ref.get("values") or []]
    outputs = ref.get("outputs")
    if not isinstance(outputs, list) or len(outputs) != n:
        raise ParseError('"reference.rasp.outputs" must hold one list per length')
    counts = {"correct": 0, "counterexample": 0, "undecided": 0, "undefined": 0}
    found: dict[str, list[tuple[list[Any], list[Any] | None, list[tuple[int, str]]]]] = {s: [] for s in ("counterexample", "undecided", "undefined")}
    balls = tracr_balls(model.width, model.heads, model.key_size, max((layer["linear_1"][1] for layer in model.layers), default=0))
    chunk = tracr_chunk(model.max_seq_len + 1, balls)  # the cost model's: memory bounded whatever the number of inputs
    blocks: dict[Any, Any] = {}  # the weights' blocks, formed once for every chunk
    for length in range(1, n + 1):
        recorded = outputs[length - 1]
        if not isinstance(recorded, list) or len(recorded) != len(vocab) ** length:
            raise ParseError(f"the RASP outputs of length {length} must be one per input")
        batch = list(itertools.product(vocab, repeat=length))
        exact = [None if r is None else [values[i] for i in r] for r in recorded]
        if any(e is not None and len(e) != length for e in exact):
            raise ParseError(f"a RASP output of length {length} has the wrong length")
        status: list[tuple[str, list[tuple[int, str]]]] = [("undefined", [])] * len(batch)
        todo = [i for i, e in enumerate(exact) if e is not None]
        for step in range(3):
            if not todo:
                break
            seen: dict[Any, str] = {}
            for start in range(0, len(todo), chunk):
                part = todo[start : start + chunk]
                with ctx.workprec(prec << step):
                    streams = run(model, [batch[i] for i in part], blocks)
                for i, stream in zip(part, streams):
                    pos = [(t, position_status(model, stream[t], v, tol, seen)) for t, v in enumerate(exact[i], start=1)]
                    bad = [(t, s) for t, s in pos if s != "correct"]
                    s = "counterexample" if any(s == "counterexample" for _, s in bad) else "undecided" if bad else "correct"
                    status[i] = (s, bad)
            todo = [i for i in todo if status[i][0] == "undecided"]
        for i, (s, bad) in enumerate(status):
            counts[s] += 1
            if s in found and len(found[s]) < listed:
                found[s].append((list(batch[i]), exact[i], bad))
    return _compare(doc, counts, found)


def _compare(doc: dict[str, Any], counts: dict[str, int], found: dict[str, Any]) -> list[str]:
    out, res = obj(doc, "outputs"), obj(doc, "result")
    total = sum(counts.values())
    problems = []
    recorded = obj(out, "counts")
    mine = {"inputs": total, "correct": counts["correct"], "counterexamples": counts["counterexample"], "undecided": counts["undecided"], "undefined": counts["undefined"]}
    for k, v in mine.items():
        if recorded.get(k) != v:
            problems.append(f"the forward pass finds {v:,} {k}, the certificate records {recorded.get(k)!r:.20}")
    for key_, status in (("counterexamples", "counterexample"), ("undecided", "undecided"), ("undefined", "undefined")):
        listed = out.get(key_)
        if not isinstance(listed, list) or len(listed) != len(found[status]):
            problems.append(f'"outputs.{key_}" does not list the first {len(found[status])} such inputs')
            continue
        for entry, (xs, exact, bad) in zip(listed, found[status]):
            if not isinstance(entry, dict) or not isinstance(entry.get("input"), list) or len(entry["input"]) != len(xs) or not all(same(value(a), b) for a, b in zip(entry["input"], xs)):
                problems.append(f'"outputs.{key_}" lists another input than {xs!r:.60}')
                break
            if status != "undefined":
                rasp = entry.get("rasp")
                positions = entry.get("positions")
                if not isinstance(rasp, list) or len(rasp) != len(exact) or not all(same(value(a), b) for a, b in zip(rasp, exact)):
                    problems.append(f"the RASP output listed for input {xs!r:.60} is not the recorded one")
                    break
                if not isinstance(positions, list) or [(p.get("position"), p.get("status")) for p in positions if isinstance(p, dict)] != bad:
                    problems.append(f"the positions listed for input {xs!r:.60} are not those the forward pass decides: {bad!r:.80}")
                    break
    holds = counts["correct"] == total
    stated = {"inputs": total, "correct": counts["correct"], "counterexamples": counts["counterexample"], "undecided": counts["undecided"], "undefined": counts["undefined"], "holds": holds}
    for k, v in stated.items():
        if res.get(k) is not v and res.get(k) != v or isinstance(res.get(k), bool) != isinstance(v, bool):
            problems.append(f'"result.{k}" must be {v!r}')
    if res.get("relation") != "enclosure":
        problems.append('"result.relation" must be "enclosure"')
    return problems
