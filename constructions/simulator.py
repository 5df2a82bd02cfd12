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

Schedule (7 layers; heads per layer 0, 6, 2, 2, 1, 2, 1; each node sits at the
earliest sublayer its arguments allow, see :mod:`constructions.rasp.size`)
-----------------------------------------------------------------------------
L0 MLP   split tokens into value and tag; all index arithmetic (one map each).
L1 attn  gather X[i][l] and A[l][j] to position (i d + j) d + l; X[i][l] and V[l][v]
         to (i d_v + v) d + l; X[k][j] to (i n + k) d + j; the tag of X[k][0] to i n + k.
L1 MLP   products X[i][l] A[l][j] and X[i][l] V[l][v].
L2 attn  group means over l: (XA)[i][j] / d at i d + j, (XV)[i][v] / d at i d_v + v.
L3 attn  gather (XA)[i][j] / d to (i n + k) d + j, and (XV)[k][v] / d to (i d_v + v) n + k.
L3 MLP   d (XA/d)[i][j] X[k][j].
L4 attn  group mean over j: S[i][k] / d at i n + k, with S = X A X^T.
L4 MLP   E[i][k] = tag_k e^{S[i][k]}  (exact in EE: S is rational).
L5 attn  row mean of E to output position i d_v + v (D_i / n); gather E[i][k] to
         (i d_v + v) n + k.
L5 MLP   d E[i][k] (XV/d)[k][v].
L6 attn  group mean over k: (1/n) sum_k E[i][k] (XV)[k][v] at i d_v + v.
L6 MLP   divide by D_i / n: T(X)[i][v].

Sequence length N = max(n d + d^2 + d d_v, n d^2, n d d_v, n^2 d, n^2 d_v): the
width grows with the sizes, the depth does not.
"""

from __future__ import annotations

from typing import Any, Sequence

from attncert.constructions import rasp
from attncert.constructions.layout import Construction, Layout
from attncert.constructions.linalg import _check_sizes, gather, index_map
from attncert.constructions.rasp import Comparison as Cmp
from attncert.constructions.sizes.expr import SizeLike, smax
from attncert.exact import Domain
from attncert.exact.matrices import Rows


def _mean_over_groups(group_key: rasp.SOp, values: rasp.SOp) -> rasp.SOp:
    """out[p] = mean of values[t] over t with group_key[t] = p (0 where there are none)."""
    return rasp.numerical(rasp.Aggregate(rasp.Select(group_key, rasp.indices, Cmp.EQ), values, default=0))


def _mul(a: rasp.SOp, b: rasp.SOp, scale: SizeLike = 1) -> rasp.SOp:
    """scale a b: one product, scaled in the same MLP unless the scale is 1 (a case of a template)."""
    f = rasp.size_case(scale - 1, rasp.fn("mul"), rasp.fn("mul_scaled", c=scale))
    return rasp.numerical(rasp.SequenceMap(f, a, b))


def _tokens() -> tuple[rasp.SOp, rasp.SOp]:
    value = rasp.numerical(rasp.Map(rasp.fn("token_value"), rasp.tokens)).named("value")
    tag = rasp.numerical(rasp.Map(rasp.fn("token_tag"), rasp.tokens)).named("tag")
    return value, tag


def _attention_heads(value: rasp.SOp, tag: rasp.SOp, n: int, d: int, dv: int, h: int, oA: int, oV: int) -> rasp.SOp:
    """The h heads T_m(X) = softmax(X A_m X^T)(X V_m), concatenated: T_m(X)[i][v] at i h d_v + m d_v + v.

    X is at position 0, A_m at oA + m d^2, V_m at oV + m d d_v (all row-major). The
    schedule is the one in the module docstring, with a head digit m in every layout.
    """
    # (X A_m)/d at (m n + i) d + j; products at ((m n + i) d + j) d + l.
    r = (h, n, d, d)
    xa = _mean_over_groups(
        index_map((0, d), (1, 0), bound=h * n * d * d),
        _mul(gather(index_map(r, (0, d, 0, 1)), value), gather(index_map(r, (d * d, 0, 1, d), const=oA), value)),
    ).named("XA_over_d")
    # (X V_m)/d at (m n + i) d_v + v; products at ((m n + i) d_v + v) d + l.
    r = (h, n, dv, d)
    xv = _mean_over_groups(
        index_map((0, d), (1, 0), bound=h * n * dv * d),
        _mul(gather(index_map(r, (0, d, 0, 1)), value), gather(index_map(r, (d * dv, 0, 1, dv), const=oV), value)),
    ).named("XV_over_d")
    # S_m / d at (m n + i) n + k; products at ((m n + i) n + k) d + j.
    r = (h, n, n, d)
    s_over_d = _mean_over_groups(
        index_map((0, d), (1, 0), bound=h * n * n * d),
        _mul(gather(index_map(r, (n * d, d, 0, 1)), xa), gather(index_map(r, (0, 0, d, 1)), value), d),
    ).named("S_over_d")
    # Softmax numerators, masked by the tag of row k of X.
    mask = gather(index_map((h, n, n), (0, 0, d), bound=h * n * n), tag).named("row_tag")
    e = rasp.numerical(rasp.SequenceMap(rasp.fn("masked_exp", c=d), s_over_d, mask)).named("E")
    # Row sums of E_m read at the output positions i h d_v + m d_v + v (digits i, m, v).
    key_row = index_map((0, n), (1, 0), bound=h * n * n, other=-1)
    out_row = index_map((n, h, dv), (1, n, 0), bound=n * h * dv, other=-2)
    denom = rasp.numerical(rasp.Aggregate(rasp.Select(key_row, out_row, Cmp.EQ), e, default=1)).named("D_over_n")
    # sum_k E_m[i][k] (X V_m)[k][v] / n; products at ((i h + m) d_v + v) n + k (digits i, m, v, k).
    r = (n, h, dv, n)
    num = _mean_over_groups(
        index_map((0, n), (1, 0), bound=n * h * dv * n),
        _mul(gather(index_map(r, (n, n * n, 0, 1)), e), gather(index_map(r, (0, n * dv, 1, dv)), xv), d),
    ).named("numerator_over_n")
    return rasp.numerical(rasp.SequenceMap(rasp.fn("div"), num, denom)).named("heads")


def _times_matrix(left: rasp.SOp, value: rasp.SOp, n: int, c: int, co: int, oW: int) -> rasp.SOp:
    """(L W) / c at i co + o, for L (n x c) laid out row-major at 0 in ``left`` and W (c x co) at oW."""
    r = (n, co, c)  # products at (i co + o) c + u
    return _mean_over_groups(
        index_map((0, c), (1, 0), bound=n * co * c),
        _mul(gather(index_map(r, (c, 0, 1)), left), gather(index_map(r, (0, 1, co), const=oW), value)),
    )


def sequence_length(n: SizeLike, d: SizeLike, dv: SizeLike, h: SizeLike = 1, do: SizeLike = 0, f: SizeLike = 0, inputs: SizeLike = 0) -> SizeLike:
    """The positions the stages need (see each builder), and at least the input length."""
    return smax(inputs, h * n * d * d, h * n * dv * d, h * n * n * d, h * n * n * dv, n * do * h * dv, n * f * d, 1)


def universal(n: SizeLike, d: SizeLike, dv: SizeLike) -> Construction:
    """U(n, d, d_v) as one RASP program (see the module docstring for the schedule)."""
    _check_sizes(n=n, d=d, dv=dv)
    value, tag = _tokens()
    out = _attention_heads(value, tag, n, d, dv, 1, n * d, n * d + d * d).named("T")
    inputs = (("X", n, d), ("A", d, d), ("V", d, dv))
    length = sequence_length(n, d, dv, inputs=_total(inputs))
    return Construction("universal", out, Layout(inputs, (n, dv), length))


def multihead(n: SizeLike, d: SizeLike, dv: SizeLike, h: int, do: SizeLike) -> Construction:
    """MHA(X) = [T_1(X), ..., T_h(X)] W_O with T_m(X) = softmax(X A_m X^T)(X V_m), as one program.

    Input vec(X) ++ vec(A_1) ++ ... ++ vec(A_h) ++ vec(V_1) ++ ... ++ vec(V_h) ++ vec(W_O),
    W_O of shape (h d_v) x d_o. Output MHA(X) (n x d_o) at positions 0 .. n d_o - 1,
    zeros after. 9 layers: U's 7, then one product stage with W_O.
    """
    _check_sizes(n=n, d=d, dv=dv, h=h, do=do)
    inputs = _multihead_inputs(n, d, dv, h, do)
    oA, oV, oW = _offsets(inputs, *_first_heads(inputs), "WO")
    value, tag = _tokens()
    heads = _attention_heads(value, tag, n, d, dv, h, oA, oV)
    mha = rasp.numerical(rasp.Map(rasp.fn("mul_const", c=h * dv), _times_matrix(heads, value, n, h * dv, do, oW))).named("MHA")
    length = sequence_length(n, d, dv, h, do, inputs=_total(inputs))
    return Construction("multihead", mha, Layout(inputs, (n, do), length))


def encoder_layer(n: SizeLike, d: SizeLike, dv: SizeLike, h: int, f: SizeLike) -> Construction:
    """One encoder layer: Y = X + MHA(X), Z = Y + ReLU(Y W_1 + b_1) W_2 + b_2, as one program.

    Input: the multi-head input (with d_o = d), then vec(W_1) (d x f), b_1 (1 x f),
    vec(W_2) (f x d), b_2 (1 x d). Output Z (n x d) at positions 0 .. n d - 1, zeros
    after. No layer norm (it needs a square root, which leaves EE; see
    :func:`encoder_layer_norm`). 13 layers; ReLU is exact in EE because signs are
    decided exactly.
    """
    inputs = _encoder_inputs(n, d, dv, h, f)
    z, _ = _encoder_z(inputs, n, d, dv, h, f)
    return Construction("encoder_layer", z, Layout(inputs, (n, d), sequence_length(n, d, dv, h, d, f, inputs=_total(inputs))))


def encoder_layer_norm(n: int, d: int, dv: int, h: int, f: int, delta: Any) -> Construction:
    """The encoder layer followed by layer norm: LN(Z)[i][j] = gamma_j (Z[i][j] - mu_i) / sqrt(sigma_i^2 + delta) + beta_j.

    mu_i and sigma_i^2 are the mean and the biased variance of row i of Z (as in
    :mod:`exact.layer_norm`); delta > 0 is a rational constant of the program.
    Input: the encoder layer's, then gamma (1 x d) and beta (1 x d). The program is
    :func:`encoder_layer`'s, node for node, then: the row means (one head) gathered
    back to the row's positions (one head); the centred entries; the row variances
    (a head over their squares) gathered back; then one MLP x / sqrt(v + delta)
    (``norm_scale``), times gamma_j plus beta_j. Everything up to the variances is
    exact in EE; the square root is not, so the program is evaluated in Ball.
    """
    inputs = _encoder_inputs(n, d, dv, h, f) + (("gamma", 1, d), ("beta", 1, d))
    og, ob = _offsets(inputs, "gamma", "beta")
    z, value = _encoder_z(inputs, n, d, dv, h, f)
    row = index_map((0, d), (1, 0), bound=n * d)  # i d + j -> i (and -1 past Z)
    mean = gather(row, _mean_over_groups(row, z)).named("row_mean")
    centred = rasp.numerical(rasp.SequenceMap(rasp.fn("sub"), z, mean)).named("centred")
    var = gather(row, _mean_over_groups(row, _mul(centred, centred))).named("row_variance")
    scaled = rasp.numerical(rasp.SequenceMap(rasp.fn("norm_scale", delta=delta), centred, var)).named("normalised")
    gamma = gather(index_map((n, d), (0, 1), const=og, bound=n * d), value).named("gamma_rows")
    beta = gather(index_map((n, d), (0, 1), const=ob, bound=n * d), value).named("beta_rows")
    out = rasp.numerical(rasp.SequenceMap(rasp.fn("add"), _mul(gamma, scaled), beta)).named("LN")
    return Construction("encoder_layer_norm", out, Layout(inputs, (n, d), sequence_length(n, d, dv, h, d, f, inputs=_total(inputs))))


def _encoder_inputs(n: int, d: int, dv: int, h: int, f: int) -> tuple[tuple[str, int, int], ...]:
    _check_sizes(n=n, d=d, dv=dv, h=h, f=f)
    return _multihead_inputs(n, d, dv, h, d) + (("W1", d, f), ("b1", 1, f), ("W2", f, d), ("b2", 1, d))


def _encoder_z(inputs: tuple[tuple[str, int, int], ...], n: int, d: int, dv: int, h: int, f: int) -> tuple[rasp.SOp, rasp.SOp]:
    """Z = Y + ReLU(Y W_1 + b_1) W_2 + b_2 at positions 0 .. n d - 1 (zeros after), and the token values."""
    oA, oV, oW, oW1, ob1, oW2, ob2 = _offsets(inputs, *_first_heads(inputs), "WO", "W1", "b1", "W2", "b2")
    value, tag = _tokens()
    heads = _attention_heads(value, tag, n, d, dv, h, oA, oV)
    mha_over = _times_matrix(heads, value, n, h * dv, d, oW)
    x_only = gather(index_map((0,), (1,), bound=n * d), value).named("X")  # X, and 0 after it
    y = rasp.numerical(rasp.SequenceMap(rasp.fn("linear", a=1, b=h * dv), x_only, mha_over)).named("Y")
    b1 = gather(index_map((n, f), (0, 1), const=ob1, bound=n * f), value).named("b1_rows")
    hidden = rasp.numerical(rasp.SequenceMap(rasp.fn("affine_relu", c=d), _times_matrix(y, value, n, d, f, oW1), b1)).named("H")
    b2 = gather(index_map((n, d), (0, 1), const=ob2, bound=n * d), value).named("b2_rows")
    y_b2 = rasp.numerical(rasp.SequenceMap(rasp.fn("add"), y, b2))
    z = rasp.numerical(rasp.SequenceMap(rasp.fn("linear", a=1, b=f), y_b2, _times_matrix(hidden, value, n, f, d, oW2))).named("Z")
    return z, value


def _multihead_inputs(n: SizeLike, d: SizeLike, dv: SizeLike, h: SizeLike, do: SizeLike) -> tuple[tuple[str, SizeLike, SizeLike], ...]:
    """X, the heads' A_1 .. A_h and V_1 .. V_h, W_O. A symbolic number of heads (a template for every h) cannot name
    its blocks one by one: they are the stacked A = [A_1; ...; A_h] (h d x d) and V = [V_1; ...; V_h] (h d x d_v),
    which occupy exactly the positions of A_1 .. A_h and V_1 .. V_h (row-major, A_m's rows m d .. m d + d - 1)."""
    if isinstance(h, int):
        heads = tuple((f"A{m + 1}", d, d) for m in range(h)) + tuple((f"V{m + 1}", d, dv) for m in range(h))
    else:
        heads = (("A", h * d, d), ("V", h * d, dv))
    return (("X", n, d),) + heads + (("WO", h * dv, do),)


def _first_heads(inputs: tuple[tuple[str, SizeLike, SizeLike], ...]) -> tuple[str, str]:
    """The blocks where A_1 and V_1 begin: A1 and V1, or the stacked A and V."""
    return ("A1", "V1") if any(name == "A1" for name, _, _ in inputs) else ("A", "V")


def _total(inputs: tuple[tuple[str, int, int], ...]) -> int:
    return sum(r * c for _, r, c in inputs)


def _offsets(inputs: tuple[tuple[str, int, int], ...], *names: str) -> list[int]:
    pos, at = 0, {}
    for name, r, c in inputs:
        at[name] = pos
        pos += r * c
    return [at[name] for name in names]


def pad_for(
    big: tuple[int, int, int], X: Rows, A: Rows, V: Rows, domain: Domain
) -> list[Any]:
    """The token sequence on which U(N, D, D_v) simulates T for the smaller X, A, V.

    X, A, V are padded with zeros to N x D, D x D, D x D_v; every token is a pair
    (value, tag) with tag 0 on the padded rows of X and 1 elsewhere.
    """
    N, D, Dv = big
    n, d, dv = len(X), len(A), len(V[0])
    length = universal(N, D, Dv).layout.length
    if not (n <= N and d <= D and dv <= Dv):
        raise ValueError(f"({n}, {d}, {dv}) does not fit in U({N}, {D}, {Dv})")

    def padded(m: Rows, r: int, c: int) -> list[list[Any]]:
        zero = domain.native(0)
        return [[m[i][j] if i < len(m) and j < len(m[0]) else zero for j in range(c)] for i in range(r)]

    seq: list[Any] = []
    for i, row in enumerate(padded(X, N, D)):
        seq += [(x, int(i < n)) for x in row]
    seq += [(x, 1) for row in padded(A, D, D) for x in row]
    seq += [(x, 1) for row in padded(V, D, Dv) for x in row]
    return seq + [(domain.native(0), 0)] * (length - len(seq))


def read_output(seq: Sequence[Any], n: int, dv: int, Dv: int) -> Rows:
    """T(X) (n x d_v) from the output of U(N, D, D_v), whose rows have D_v entries."""
    return [list(seq[i * Dv : i * Dv + dv]) for i in range(n)]
