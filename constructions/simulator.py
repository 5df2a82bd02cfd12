"""The universal simulator U(n, d, d_v): one RASP program that runs any attention layer.

Given one token sequence vec(X) ++ vec(A) ++ vec(V) (X: n x d, A: d x d, V: d x d_v,
row-major), U outputs T(X) = softmax(X A X^T) (X V) (row-wise softmax, no 1/sqrt(d)
scaling: fold any scaling into A) in positions 0 .. n d_v - 1, row-major. All other
positions hold 0. Everything, including every re-layout of data, happens inside the
graph; there is no Python glue between steps.

Tokens
------
A token is a number, or a pair ``(value, tag)`` with tag 1 for data and 0 for
padding. A plain number counts as data. Padding matters only for rows of X: a row
k whose first entry is tagged 0 is left out of every softmax (its weight is
multiplied by exactly 0), which is how U(N, D, D_v) simulates every smaller
(n, d, d_v): pad X, A, V with zeros to N x D, D x D, D x D_v and tag the padded
rows of X with 0 (:func:`pad_for`). Zero columns change nothing, and zero-tagged
rows get weight 0.

Schedule (7 layers; heads per layer 0, 5, 2, 2, 1, 3, 1)
---------------------------------------------------------
L0 MLP   split tokens into value and tag; all index arithmetic (one map each).
L1 attn  gather X[i][l] and A[l][j] to position (i d + j) d + l, X[i][l] and V[l][v]
         to (i d_v + v) d + l, and the tag of X[k][0] to position i n + k.
L1 MLP   products X[i][l] A[l][j] and X[i][l] V[l][v].
L2 attn  group means over l: (XA)[i][j] / d at i d + j, (XV)[i][v] / d at i d_v + v.
L3 attn  gather (XA)[i][j] / d and X[k][j] to position (i n + k) d + j.
L3 MLP   d (XA/d)[i][j] X[k][j].
L4 attn  group mean over j: S[i][k] / d at i n + k, with S = X A X^T.
L4 MLP   E[i][k] = tag_k e^{S[i][k]}  (exact in EE: S is rational).
L5 attn  row mean of E to output position i d_v + v (D_i / n); gather E[i][k] and
         (XV)[k][v] / d to position (i d_v + v) n + k.
L5 MLP   d E[i][k] (XV/d)[k][v].
L6 attn  group mean over k: (1/n) sum_k E[i][k] (XV)[k][v] at i d_v + v.
L6 MLP   divide by D_i / n: T(X)[i][v].

Sequence length N = max(n d + d^2 + d d_v, n d^2, n d d_v, n^2 d, n^2 d_v): the
width grows with the sizes, the depth does not.
"""

from __future__ import annotations

from typing import Any, Sequence

from constructions import rasp
from constructions.layout import Construction, Layout
from constructions.linalg import _check_sizes, gather, index_map
from constructions.rasp import Comparison as Cmp
from exact import Domain
from exact.matrices import Rows


def _mean_over_groups(group_key: rasp.SOp, values: rasp.SOp) -> rasp.SOp:
    """out[p] = mean of values[t] over t with group_key[t] = p (0 where there are none)."""
    return rasp.numerical(rasp.Aggregate(rasp.Select(group_key, rasp.indices, Cmp.EQ), values, default=0))


def _mul(a: rasp.SOp, b: rasp.SOp, scale: int = 1) -> rasp.SOp:
    f = rasp.fn("mul") if scale == 1 else rasp.fn("mul_scaled", c=scale)
    return rasp.numerical(rasp.SequenceMap(f, a, b))


def sequence_length(n: int, d: int, dv: int) -> int:
    return max(n * d + d * d + d * dv, n * d * d, n * d * dv, n * n * d, n * n * dv)


def universal(n: int, d: int, dv: int) -> Construction:
    """U(n, d, d_v) as one RASP program (see the module docstring for the schedule)."""
    _check_sizes(n=n, d=d, dv=dv)
    oA, oV = n * d, n * d + d * d
    value = rasp.numerical(rasp.Map(rasp.fn("token_value"), rasp.tokens)).named("value")
    tag = rasp.numerical(rasp.Map(rasp.fn("token_tag"), rasp.tokens)).named("tag")

    # Y = XA / d at i d + j.  Products at t = (i d + j) d + l, digits (i, j, l).
    x_il = gather(index_map((n, d, d), (d, 0, 1)), value).named("X_il_for_XA")
    a_lj = gather(index_map((n, d, d), (0, 1, d), const=oA), value).named("A_lj")
    xa_over_d = _mean_over_groups(index_map((0, d), (1, 0), bound=n * d * d), _mul(x_il, a_lj)).named("XA_over_d")

    # W = XV / d at i d_v + v.  Products at t = (i d_v + v) d + l, digits (i, v, l).
    x_il2 = gather(index_map((n, dv, d), (d, 0, 1)), value).named("X_il_for_XV")
    v_lv = gather(index_map((n, dv, d), (0, 1, dv), const=oV), value).named("V_lv")
    xv_over_d = _mean_over_groups(index_map((0, d), (1, 0), bound=n * dv * d), _mul(x_il2, v_lv)).named("XV_over_d")

    # S / d at i n + k.  Products at t = (i n + k) d + j, digits (i, k, j).
    y_ij = gather(index_map((n, n, d), (d, 0, 1)), xa_over_d).named("XA_ij")
    x_kj = gather(index_map((n, n, d), (0, d, 1)), value).named("X_kj")
    s_over_d = _mean_over_groups(index_map((0, d), (1, 0), bound=n * n * d), _mul(y_ij, x_kj, d)).named("S_over_d")

    # Softmax numerators, masked by the tag of row k of X.
    mask = gather(index_map((n, n), (0, d), bound=n * n), tag).named("row_tag")
    e = rasp.numerical(rasp.SequenceMap(rasp.fn("masked_exp", c=d), s_over_d, mask)).named("E")

    # Row sums of E, read at the output positions i d_v + v.
    key_row = index_map((0, n), (1, 0), bound=n * n, other=-1)
    out_row = index_map((0, dv), (1, 0), bound=n * dv, other=-2)
    denom = rasp.numerical(rasp.Aggregate(rasp.Select(key_row, out_row, Cmp.EQ), e, default=1)).named("D_over_n")

    # Numerators sum_k E[i][k] W[k][v].  Products at t = (i d_v + v) n + k, digits (i, v, k).
    e_ik = gather(index_map((n, dv, n), (n, 0, 1)), e).named("E_ik")
    w_kv = gather(index_map((n, dv, n), (0, 1, dv)), xv_over_d).named("XV_kv")
    num = _mean_over_groups(index_map((0, n), (1, 0), bound=n * dv * n), _mul(e_ik, w_kv, d)).named("numerator_over_n")

    out = rasp.numerical(rasp.SequenceMap(rasp.fn("div"), num, denom)).named("T")
    layout = Layout((("X", n, d), ("A", d, d), ("V", d, dv)), (n, dv), sequence_length(n, d, dv))
    return Construction("universal", out, layout)


def pad_for(
    big: tuple[int, int, int], X: Rows, A: Rows, V: Rows, domain: Domain
) -> list[Any]:
    """The token sequence on which U(N, D, D_v) simulates T for the smaller X, A, V.

    X, A, V are padded with zeros to N x D, D x D, D x D_v; every token is a pair
    (value, tag) with tag 0 on the padded rows of X and 1 elsewhere.
    """
    N, D, Dv = big
    n, d, dv = len(X), len(A), len(V[0])
    if not (n <= N and d <= D and dv <= Dv):
        raise ValueError(f"({n}, {d}, {dv}) does not fit in U({N}, {D}, {Dv})")

    def padded(m: Rows, r: int, c: int) -> list[list[Any]]:
        zero = domain.zero()
        return [[m[i][j] if i < len(m) and j < len(m[0]) else zero for j in range(c)] for i in range(r)]

    seq: list[Any] = []
    for i, row in enumerate(padded(X, N, D)):
        seq += [(x, int(i < n)) for x in row]
    seq += [(x, 1) for row in padded(A, D, D) for x in row]
    seq += [(x, 1) for row in padded(V, D, Dv) for x in row]
    return seq + [(domain.zero(), 0)] * (sequence_length(N, D, Dv) - len(seq))


def read_output(seq: Sequence[Any], n: int, dv: int, Dv: int) -> Rows:
    """T(X) (n x d_v) from the output of U(N, D, D_v), whose rows have D_v entries."""
    return [list(seq[i * Dv : i * Dv + dv]) for i in range(n)]
