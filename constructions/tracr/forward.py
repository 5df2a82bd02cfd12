"""tracr's forward pass in arb balls, on every input of one length at once, with rows interned.

The model is the one :mod:`.model` reads: float32 weights as exact rationals, softmax attention
with tracr's scaling and causal mask, residual adds, ReLU MLPs (its docstring states the pass).
Every value is an arb ball containing the exact real value of that computation.

**Interning.** The residual stream of a batch of B inputs of T = n + 1 positions is kept as a
(B, T) array of row ids into a table of distinct rows of balls. A position-wise map (the
projections, the MLP) runs once per distinct row. An attention output at query (b, i) is a
function of the multiset of its keys' (logit, value) pairs, softmax being symmetric in the
keys: each key is given a *class*, the pair (id of its logit ball, id of its value row), ball ids
taken by bitwise identity of midpoint and radius; a query's problem is its sorted class codes,
and one problem is computed once for every query that has it,

    out = (sum_c n_c e^{l_c} v_c) / (sum_c n_c e^{l_c}),

with n_c the number of keys of class c. Identical balls stand for possibly different exact
values, but each input's exact value lies in its own ball, which is the one used: the result is
an enclosure for every query mapped to the problem. Masked keys of a causal model keep their
logit float32(-1e30), as tracr's ``jnp.where`` gives them; they weigh e^{-1e30 - l}, not 0.

The checker (:mod:`proofs.checkers.tracr.model`) computes the same pass with its own code, one
(B T) x D matrix per length and no interning: the independent route.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from flint import arb, arb_mat, fmpq

from attncert.constructions.tracr.model import MLP, Matrix, TracrModel
from attncert.constructions.tracr.program import key


@dataclass
class State:
    """The residual stream of a batch: row ids (B, T) into ``rows``, each a list of D balls."""

    ids: np.ndarray
    rows: list[list[arb]]

    def row(self, b: int, t: int) -> list[arb]:
        return self.rows[int(self.ids[b, t])]


def restricted(mats: Sequence[Matrix], read: list[int], cols: list[list[int]]) -> arb_mat:
    """[W_1[read, cols_1] | W_2[read, cols_2] | ...; the biases]: the weights of the rows a sublayer reads
    and the columns it keeps, side by side, the biases as a last row, so that one product
    [x[read], 1] M gives every x W + b at once."""
    at = {r: i for i, r in enumerate(read)}
    width = sum(len(c) for c in cols)
    dense = [[fmpq(0)] * width for _ in range(len(read) + 1)]
    offset = 0
    for m, keep in zip(mats, cols):
        place = {c: offset + i for i, c in enumerate(keep)}
        for (i, j), v in m.w.items():
            if i in at and j in place:
                dense[at[i]][place[j]] = v
        for j, v in m.b.items():
            if j in place:
                dense[len(read)][place[j]] = v
        offset += len(keep)
    return arb_mat(dense)


def distinct_rows(rows: Sequence[list[arb]], read: list[int]) -> tuple[np.ndarray, list[list[arb]]]:
    """Each row's id among the distinct restrictions to the columns ``read`` (bitwise-identical balls),
    and one restriction per id: a position-wise map of those columns runs once per id."""
    seen: dict[tuple[Any, ...], int] = {}
    ids = np.empty(len(rows), dtype=np.int64)
    out: list[list[arb]] = []
    for i, r in enumerate(rows):
        part = [r[c] for c in read]
        kb = tuple(ball_id(x) for x in part)
        j = seen.get(kb)
        if j is None:
            j = seen[kb] = len(out)
            out.append(part)
        ids[i] = j
    return ids, out


def product(rows: Sequence[list[arb]], m: arb_mat) -> list[list[arb]]:
    """[x, 1] m for every row x."""
    one = arb(1)
    return (arb_mat([list(r) + [one] for r in rows]) * m).tolist()


def _read(mats: Sequence[Matrix], cols: Sequence[Sequence[int]]) -> list[int]:
    """The residual columns that weights of these output columns read."""
    return sorted({i for m, keep in zip(mats, cols) for (i, j) in m.w if j in set(keep)})


def _written(m: Matrix) -> list[int]:
    """The residual columns a sublayer's output weights or bias reach (the others it leaves as they are)."""
    return sorted({j for (_, j) in m.w} | set(m.b))


def embed(model: TracrModel, tokens: Sequence[Sequence[Any]]) -> State:
    """x_t = token_embed[token_t] + pos_embed[t] for a batch of inputs of one length, BOS first."""
    row_of = {key(t): i for t, i in model.token_rows}
    codes = np.array([[row_of[key(model.bos)]] + [row_of[key(t)] for t in xs] for xs in tokens], dtype=np.int64)
    n_tok = len(model.token_rows)
    positions = np.arange(codes.shape[1], dtype=np.int64)
    pair = positions[None, :] * n_tok + codes
    distinct, inverse = np.unique(pair, return_inverse=True)
    tok, pos = model.token_embed.dense(), model.pos_embed.dense()
    rows = [[arb(a + b) for a, b in zip(tok[int(c % n_tok)], pos[int(c // n_tok)])] for c in distinct.tolist()]
    return State(inverse.reshape(codes.shape), rows)


def ball_id(x: arb) -> tuple[Any, ...]:
    """Bitwise identity of a ball: its exact midpoint and radius."""
    return (x.mid().man_exp(), x.rad().man_exp())


def attention(model: TracrModel, layer: dict[str, Matrix], state: State) -> State:
    """x + the heads' softmax attention, projected by W_O (see the module docstring). A head whose
    value weights or output weights are all zero adds exactly 0 and is skipped; only the columns
    W_O or its bias reach change."""
    ids, rows = state.ids, state.rows
    B, T = ids.shape
    k = model.key_size
    w_o = layer["linear"]
    written = _written(w_o)
    live = [
        h for h in range(model.heads)
        if any(h * k <= i < (h + 1) * k for (i, _) in w_o.w)
        and (any(h * k <= j < (h + 1) * k for (_, j) in layer["value"].w) or any(h * k <= j < (h + 1) * k for j in layer["value"].b))
    ]
    if not live or not written:
        return state
    scale = arb(model.scale)
    masked = np.triu(np.ones((T, T), dtype=bool), 1) if model.causal else np.zeros((T, T), dtype=bool)
    masked = np.broadcast_to(masked, (B, T, T))
    problems, projected = [], []
    for head in live:
        cols = list(range(head * k, (head + 1) * k))
        mats = [layer["query"], layer["key"], layer["value"]]
        read = _read(mats, [cols] * 3)
        rid, parts = distinct_rows(rows, read)
        qkv = product(parts, restricted(mats, read, [cols] * 3))
        qids, qrows = _intern([r[:k] for r in qkv])
        kids, krows = _intern([r[k : 2 * k] for r in qkv])
        vids, vrows = _intern([r[2 * k :] for r in qkv])
        qid = np.asarray(qids, dtype=np.int64)[rid][ids]
        kid = np.asarray(kids, dtype=np.int64)[rid][ids]
        vid = np.asarray(vids, dtype=np.int64)[rid][ids]
        pair = qid[:, :, None] * len(krows) + kid[:, None, :]
        used, where = np.unique(pair[~masked], return_inverse=True)
        logits = _logits(qrows, krows, used.tolist(), len(krows), scale)
        lids, lvals = _intern([[x] for x in logits])
        lvals = [x[0] for x in lvals] + [arb(model.mask_logit)]
        lid = np.full((B, T, T), len(lvals) - 1, dtype=np.int64)
        lid[~masked] = np.asarray(lids, dtype=np.int64)[where]
        cls = lid * len(vrows) + vid[:, None, :]
        cls = np.sort(cls.reshape(B * T, T), axis=1)
        distinct, inverse = np.unique(cls, axis=0, return_inverse=True)
        exps = [x.exp() for x in lvals]
        outs = [_softmax_mean(code_row, exps, vrows) for code_row in distinct.tolist()]
        problems.append(inverse.reshape(B, T))
        head_o = Matrix(k, w_o.cols, {(i - head * k, j): v for (i, j), v in w_o.w.items() if head * k <= i < (head + 1) * k}, {})
        at = {c: i for i, c in enumerate(written)}
        o = [[fmpq(0)] * len(written) for _ in range(k)]
        for (i, j), v in head_o.w.items():
            o[i][at[j]] = v
        projected.append((arb_mat(outs) * arb_mat(o)).tolist())
    combo = np.stack([ids] + problems, axis=-1).reshape(B * T, len(live) + 1)
    distinct, inverse = np.unique(combo, axis=0, return_inverse=True)
    bias = [arb(w_o.b.get(j, fmpq(0))) for j in written]
    new_rows = []
    for c in distinct.tolist():
        r = list(rows[c[0]])
        for n, col in enumerate(written):
            x = r[col]
            for h in range(len(live)):
                x = x + projected[h][c[h + 1]][n]
            r[col] = x + bias[n]
        new_rows.append(r)
    return State(inverse.reshape(B, T), new_rows)


def _softmax_mean(codes: list[int], exps: list[arb], vrows: list[list[arb]]) -> list[arb]:
    nv = len(vrows)
    num = [arb(0)] * len(vrows[0])
    den = arb(0)
    i = 0
    while i < len(codes):
        j = i
        while j < len(codes) and codes[j] == codes[i]:
            j += 1
        e = exps[codes[i] // nv] * (j - i)
        den += e
        num = [a + e * v for a, v in zip(num, vrows[codes[i] % nv])]
        i = j
    return [a / den for a in num]


def _logits(qs: list[list[arb]], ks: list[list[arb]], pairs: list[int], r: int, scale: arb) -> list[arb]:
    """q . k / s for each pair code q r + k: by one product when most of the r x r products are used."""
    if r * r <= 4 * len(pairs) + 4096:
        full = (arb_mat(qs) * arb_mat(ks).transpose()).tolist()
        return [full[c // r][c % r] / scale for c in pairs]
    return [_dot(qs[c // r], ks[c % r]) / scale for c in pairs]


def _dot(a: list[arb], b: list[arb]) -> arb:
    s = arb(0)
    for x, y in zip(a, b):
        s += x * y
    return s


def _intern(rows: list[list[arb]]) -> tuple[list[int], list[list[arb]]]:
    """Ids of bitwise-identical rows, and one row per id."""
    seen: dict[tuple[Any, ...], int] = {}
    ids, out = [], []
    for r in rows:
        kb = tuple(ball_id(x) for x in r)
        i = seen.get(kb)
        if i is None:
            i = seen[kb] = len(out)
            out.append(r)
        ids.append(i)
    return ids, out


def mlp(layer: dict[str, Matrix], state: State) -> State:
    """x + relu(x W_1 + b_1) W_2 + b_2, once per distinct restriction of the rows to the columns W_1 reads;
    only the columns W_2 or its bias reach change."""
    w1, w2 = layer[MLP[0]], layer[MLP[1]]
    written = _written(w2)
    if not written:
        return state
    read = sorted({i for (i, _) in w1.w})
    rid, parts = distinct_rows(state.rows, read)
    hidden = [[x.nonnegative_part() for x in r] for r in product(parts, restricted([w1], read, [list(range(w1.cols))]))]
    out = product(hidden, restricted([w2], list(range(w2.rows)), [written]))
    new_rows = []
    for r, u in zip(state.rows, rid.tolist()):
        r = list(r)
        for n, col in enumerate(written):
            r[col] = r[col] + out[u][n]
        new_rows.append(r)
    return State(state.ids, new_rows)


def forward(model: TracrModel, tokens: Sequence[Sequence[Any]], keep: bool = False) -> list[State]:
    """The residual stream after the embedding and after every sublayer (``keep``), or the final one
    alone, for a batch of inputs of one length; at the working precision in force (flint's ctx)."""
    states = [embed(model, tokens)]
    for layer in model.layers:
        states.append(attention(model, layer, states[-1]))
        states.append(mlp(layer, states[-1]))
        if not keep:
            states = states[-1:]
    return states
