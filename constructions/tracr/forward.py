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

The checker (:mod:`proofs.checkers.tracr_model`) computes the same pass with its own code, one
(B T) x D matrix per length and no interning: the independent route.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from flint import arb, arb_mat, fmpq

from attncert.constructions.tracr.model import ATTENTION, MLP, Matrix, TracrModel
from attncert.constructions.tracr.program import key


@dataclass
class State:
    """The residual stream of a batch: row ids (B, T) into ``rows``, each a list of D balls."""

    ids: np.ndarray
    rows: list[list[arb]]

    def row(self, b: int, t: int) -> list[arb]:
        return self.rows[int(self.ids[b, t])]


def augmented(m: Matrix) -> arb_mat:
    """[W; b]: the weights with the bias as a last row, so that [x, 1] [W; b] = x W + b in one product."""
    dense = m.dense() + [[m.b.get(j, fmpq(0)) for j in range(m.cols)]]
    return arb_mat(dense)


def product(rows: Sequence[list[arb]], m: arb_mat) -> list[list[arb]]:
    """[x, 1] [W; b] for every row x."""
    one = arb(1)
    return (arb_mat([list(r) + [one] for r in rows]) * m).tolist()


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
    """x + the heads' softmax attention, projected by W_O (see the module docstring)."""
    ids, rows = state.ids, state.rows
    B, T = ids.shape
    h, k = model.heads, model.key_size
    q_all, k_all, v_all = (product(rows, augmented(layer[p])) for p in ATTENTION[:3])
    w_o = layer["linear"]
    scale = arb(model.scale)
    masked = np.triu(np.ones((T, T), dtype=bool), 1) if model.causal else np.zeros((T, T), dtype=bool)
    masked = np.broadcast_to(masked, (B, T, T))
    problems, projected = [], []
    for head in range(h):
        cols = slice(head * k, (head + 1) * k)
        qs = [r[cols] for r in q_all]
        ks = [r[cols] for r in k_all]
        vids, vrows = _intern([v[cols] for v in v_all])
        pair = ids[:, :, None] * len(rows) + ids[:, None, :]
        used, where = np.unique(pair[~masked], return_inverse=True)
        logits = _logits(qs, ks, used.tolist(), len(rows), scale)
        lids, lvals = _intern([[x] for x in logits])
        lvals = [x[0] for x in lvals] + [arb(model.mask_logit)]
        lid = np.full((B, T, T), len(lvals) - 1, dtype=np.int64)
        lid[~masked] = np.asarray(lids, dtype=np.int64)[where]
        cls = lid * len(vrows) + np.asarray(vids, dtype=np.int64)[ids][:, None, :]
        cls = np.sort(cls.reshape(B * T, T), axis=1)
        distinct, inverse = np.unique(cls, axis=0, return_inverse=True)
        exps = [x.exp() for x in lvals]
        outs = [_softmax_mean(code_row, exps, vrows) for code_row in distinct.tolist()]
        problems.append(inverse.reshape(B, T))
        head_o = Matrix(k, w_o.cols, {(i - head * k, j): v for (i, j), v in w_o.w.items() if head * k <= i < (head + 1) * k}, {})
        projected.append((arb_mat(outs) * arb_mat(head_o.dense())).tolist())
    combo = np.stack([ids] + problems, axis=-1).reshape(B * T, h + 1)
    distinct, inverse = np.unique(combo, axis=0, return_inverse=True)
    bias = [arb(w_o.b.get(j, fmpq(0))) for j in range(w_o.cols)]
    new_rows = []
    for c in distinct.tolist():
        r = list(rows[c[0]])
        for head in range(h):
            p = projected[head][c[head + 1]]
            r = [a + b for a, b in zip(r, p)]
        new_rows.append([a + b for a, b in zip(r, bias)])
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
    """x + relu(x W_1 + b_1) W_2 + b_2, once per distinct row."""
    hidden = [[x.nonnegative_part() for x in r] for r in product(state.rows, augmented(layer[MLP[0]]))]
    out = product(hidden, augmented(layer[MLP[1]]))
    return State(state.ids, [[a + b for a, b in zip(r, o)] for r, o in zip(state.rows, out)])


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
