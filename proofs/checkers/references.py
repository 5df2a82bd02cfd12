"""Independent references: each result computed straight from the inputs.

Nothing here imports :mod:`constructions`; the verifier recomputes references
with these functions. Rational linear algebra uses FLINT's fmpq_mat; exponentials
use the exact field EE.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from flint import fmpq, fmpq_mat

from attncert.exact import EE, QQ, AttncertError, Domain, parse_rational
from attncert.exact.matrices import Rows, from_fmpq_mat, shape, to_fmpq_mat
from attncert.exact.layer_norm import layer_norm_rows
from attncert.exact.softmax import softmax_rows


class SingularMatrix(AttncertError):
    """The matrix to invert has determinant exactly zero."""


def transpose(m: Rows) -> Rows:
    r, c = shape(m)
    return [[m[i][j] for i in range(r)] for j in range(c)]


def matmul(a: Rows, b: Rows, domain: Domain) -> Rows:
    """AB; in QQ by FLINT's fmpq_mat product, elsewhere by the schoolbook sum in the domain."""
    if domain is QQ:
        return from_fmpq_mat(to_fmpq_mat(a) * to_fmpq_mat(b))
    (r, k), (_, c) = shape(a), shape(b)
    return [[domain.sum(a[i][l] * b[l][j] for l in range(k)) for j in range(c)] for i in range(r)]


def softmax(s: Rows, domain: Domain) -> Rows:
    return softmax_rows(s, domain)


def relu(x: Rows, domain: Domain) -> Rows:
    return [[v if domain.sign(v) > 0 else domain.zero() for v in row] for row in x]


def maxmin(x: Rows, domain: Domain) -> Rows:
    """Each adjacent pair sorted in descending order; an odd last element unchanged."""
    out: list[Any] = []
    row = x[0]
    for m in range(0, len(row) - 1, 2):
        a, b = row[m], row[m + 1]
        out += [a, b] if domain.sign(a - b) >= 0 else [b, a]
    if len(row) % 2:
        out.append(row[-1])
    return [out]


def inverse(m: Rows) -> Rows:
    """M^{-1} over QQ (FLINT); SingularMatrix if det(M) = 0 exactly."""
    f: fmpq_mat = to_fmpq_mat(m)
    if f.det() == 0:
        raise SingularMatrix("the matrix is singular: its determinant is exactly 0")
    return from_fmpq_mat(f.inv())


def attention(x: Rows, a: Rows, v: Rows) -> Rows:
    """T(X) = softmax(X A X^T) (X V), row-wise softmax, exactly in EE (X, A, V rational).

    S = X A X^T and X V are FLINT products over QQ; the softmax rows share one
    denominator each, so each output entry is one sum over that denominator.
    """
    fx = to_fmpq_mat(x)
    s = from_fmpq_mat(fx * to_fmpq_mat(a) * fx.transpose())
    w = from_fmpq_mat(fx * to_fmpq_mat(v))
    p = softmax_rows(s, EE)
    n, dv = len(x), len(v[0])
    return [[EE.sum(p[i][k] * w[k][j] for k in range(n)) for j in range(dv)] for i in range(n)]


def add(a: Rows, b: Rows) -> Rows:
    return [[x + y for x, y in zip(ra, rb)] for ra, rb in zip(a, b)]


def multihead(x: Rows, heads: list[tuple[Rows, Rows]], wo: Rows) -> Rows:
    """[T_1(X), ..., T_h(X)] W_O with T_m(X) = softmax(X A_m X^T)(X V_m), in EE."""
    outs = [attention(x, a, v) for a, v in heads]
    concat = [sum((o[i] for o in outs), []) for i in range(len(x))]
    return matmul(concat, [[EE.convert(q) for q in row] for row in wo], EE)


def encoder_layer(x: Rows, heads: list[tuple[Rows, Rows]], wo: Rows, w1: Rows, b1: Rows, w2: Rows, b2: Rows) -> Rows:
    """Y = X + MHA(X), Z = Y + ReLU(Y W_1 + b_1) W_2 + b_2 (b as a row added to every row), in EE."""
    lift = lambda m: [[EE.convert(q) for q in row] for row in m]  # noqa: E731
    y = add(lift(x), multihead(x, heads, wo))
    pre = matmul(y, lift(w1), EE)
    hidden = [[EE.relu(p + b) for p, b in zip(row, b1[0])] for row in pre]
    out = matmul(hidden, lift(w2), EE)
    return [[yv + o + b for yv, o, b in zip(yr, orow, b2[0])] for yr, orow in zip(y, out)]


def encoder_layer_norm(m: Mapping[str, Rows], delta: fmpq, prec: int) -> tuple[Rows, list[list[Any]]]:
    """Z = encoder_layer(...) exactly in EE, and LN(Z) = gamma (Z - mu) / sqrt(sigma^2 + delta) + beta row by row,
    enclosed in arb at prec bits (:mod:`exact.layer_norm`: the square root leaves EE)."""
    z = encoder_layer(m["X"], _heads(m), m["WO"], m["W1"], m["b1"], m["W2"], m["b2"])
    return z, layer_norm_rows(z, m["gamma"][0], m["beta"][0], delta, prec)


def match2_language(word: list[int], M: int) -> list[int]:
    """Match2(x)_i = 1 iff some j (j = i included) has x_i + x_j = 0 mod M."""
    return [int(any((x + y) % M == 0 for y in word)) for x in word]


def parity_language(word: list[int], S: list[int]) -> list[int]:
    """The parity of the bits at S, at every position."""
    return [sum(word[i] for i in S) % 2] * len(word)


def _heads(m: Mapping[str, Rows]) -> list[tuple[Rows, Rows]]:
    """(A_1, V_1), ..., (A_h, V_h) from matrices named A1.., V1.."""
    return [(m[f"A{i}"], m[f"V{i}"]) for i in range(1, 1 + sum(1 for k in m if k.startswith("A")))]


# -- over any exact field: the references of the for-all-inputs claims (docs/identity.md) ------------
# Their inputs are variables of the symbolic field; they compute with the field's own operations and
# never branch on a value (there is no value to branch on).


def attention_over(x: Rows, a: Rows, v: Rows, domain: Domain) -> Rows:
    """T(X) = softmax(X A X^T)(X V) with the field's arithmetic: S_ik = sum_{j,l} X_ij A_jl X_kl."""
    n, d, dv = len(x), len(a), len(v[0])
    s = [[domain.sum(x[i][j] * a[j][l] * x[k][l] for j in range(d) for l in range(d)) for k in range(n)] for i in range(n)]
    w = matmul(x, v, domain)
    p = softmax_rows(s, domain)
    return [[domain.sum(p[i][k] * w[k][c] for k in range(n)) for c in range(dv)] for i in range(n)]


def multihead_over(x: Rows, heads: list[tuple[Rows, Rows]], wo: Rows, domain: Domain) -> Rows:
    outs = [attention_over(x, a, v, domain) for a, v in heads]
    return matmul([sum((o[i] for o in outs), []) for i in range(len(x))], wo, domain)


def encoder_layer_over(x: Rows, heads: list[tuple[Rows, Rows]], wo: Rows, w1: Rows, b1: Rows, w2: Rows, b2: Rows, domain: Domain) -> Rows:
    """Y = X + MHA(X), Z = Y + ReLU(Y W_1 + b_1) W_2 + b_2, with the field's ReLU."""
    y = add(x, multihead_over(x, heads, wo, domain))
    pre = matmul(y, w1, domain)
    hidden = [[domain.relu(p + b) for p, b in zip(row, b1[0])] for row in pre]
    out = matmul(hidden, w2, domain)
    return [[yv + o + b for yv, o, b in zip(yr, orow, b2[0])] for yr, orow in zip(y, out)]


def layer_norm_over(z: Rows, gamma: Rows, beta: Rows, delta: fmpq, domain: Domain) -> Rows:
    """LN(Z)_ij = gamma_j (Z_ij - mu_i) (sigma_i^2 + delta)^(-1/2) + beta_j (biased variance), with the
    field's power (uninterpreted in the symbolic field)."""
    out = []
    for row in z:
        d = len(row)
        mean = domain.div(domain.sum(row), domain.native(d))
        centred = [x - mean for x in row]
        var = domain.div(domain.sum(c * c for c in centred), domain.native(d))
        scale = domain.power(var + domain.native(delta), fmpq(-1, 2))
        out.append([g * c * scale + b for g, c, b in zip(gamma[0], centred, beta[0])])
    return out


def inverse_over(m: Rows, domain: Domain) -> Rows:
    """M^{-1} = adj(M) / det(M) for 3 x 3 M: det by Leibniz's formula, adj(M)_ij = (-1)^{i+j} times the
    minor of M without row j and column i (the textbook cofactors, not the construction's cyclic form)."""
    from itertools import permutations

    def sign(p: tuple[int, ...]) -> int:
        return (-1) ** sum(p[i] > p[j] for i in range(3) for j in range(i + 1, 3))

    det = domain.sum(sign(p) * m[0][p[0]] * m[1][p[1]] * m[2][p[2]] for p in permutations(range(3)))

    def minor(r: int, c: int) -> Any:
        rows = [i for i in range(3) if i != r]
        cols = [j for j in range(3) if j != c]
        return m[rows[0]][cols[0]] * m[rows[1]][cols[1]] - m[rows[0]][cols[1]] * m[rows[1]][cols[0]]

    return [[domain.div((-1) ** (i + j) * minor(j, i), det) for j in range(3)] for i in range(3)]


#: The reference of each matrix claim, on its named input matrices: one home for prover, verifier and compiler checks.
BY_CLAIM: dict[str, Callable[[Mapping[str, Rows], Domain], Rows]] = {
    "transpose": lambda m, dom: transpose(m["M"]),
    "matmul": lambda m, dom: matmul(m["A"], m["B"], dom),
    "softmax": lambda m, dom: softmax(m["S"], dom),
    "relu": lambda m, dom: relu(m["x"], dom),
    "maxmin": lambda m, dom: maxmin(m["x"], dom),
    "inverse3": lambda m, dom: inverse(m["M"]),
    "universal": lambda m, dom: attention(m["X"], m["A"], m["V"]),
    "multihead": lambda m, dom: multihead(m["X"], _heads(m), m["WO"]),
    "encoder_layer": lambda m, dom: encoder_layer(m["X"], _heads(m), m["WO"], m["W1"], m["b1"], m["W2"], m["b2"]),
}


def _encoder_layer_over(m: Mapping[str, Rows], domain: Domain) -> Rows:
    return encoder_layer_over(m["X"], _heads(m), m["WO"], m["W1"], m["b1"], m["W2"], m["b2"], domain)


#: The reference of each matrix claim over any exact field (the for-all-inputs claims): BY_CLAIM's where it
#: computes with the field's own operations, the field-generic forms where BY_CLAIM's work in QQ or EE.
OVER_ANY_FIELD: dict[str, Callable[..., Rows]] = {
    **{name: BY_CLAIM[name] for name in ("transpose", "matmul", "softmax", "relu", "maxmin")},
    "inverse3": lambda m, dom: inverse_over(m["M"], dom),
    "universal": lambda m, dom: attention_over(m["X"], m["A"], m["V"], dom),
    "multihead": lambda m, dom: multihead_over(m["X"], _heads(m), m["WO"], dom),
    "encoder_layer": _encoder_layer_over,
    "encoder_layer_norm": lambda m, dom, delta: layer_norm_over(_encoder_layer_over(m, dom), m["gamma"], m["beta"], parse_rational(delta), dom),
}


def parity_positions(n: int, k: int) -> list[int]:
    """S = {floor(j n / k) : j < k}, the index set the k-PARITY claims use."""
    return sorted({j * n // k for j in range(k)})


def language_instance(of: str, sizes: Mapping[str, int], word: list[int]) -> tuple[dict[str, Rows], list[int]]:
    """The matrices X, A, V that encode ``word`` for the language's attention layer, and the language's bits.

    Restated from the definitions (docs/simulator.md), apart from the constructions:
    Match2 over M residues for length n: X_i = one-hot(x_i), A = beta Pi with Pi[a][b] = [a + b = 0 mod M]
    and beta the least positive integer with e^beta > n (decided in EE), V = I_M.
    k-PARITY at S = parity_positions(n, k): X_j = (1, s_j, s_j b_j), A = E_12 (beta = 1), V = e_3.
    """
    if of == "match2":
        M, n = sizes["M"], sizes["n"]
        beta = 1
        while not EE.exp(beta) > n:
            beta += 1
        X = [[QQ.convert(int(x == c)) for c in range(M)] for x in word]
        A = [[QQ.convert(beta * int((a + b) % M == 0)) for b in range(M)] for a in range(M)]
        V = [[QQ.convert(int(a == b)) for b in range(M)] for a in range(M)]
        return {"X": X, "A": A, "V": V}, match2_language(word, M)
    if of == "parity":
        n, k = sizes["n"], sizes["k"]
        S = parity_positions(n, k)
        X = [[QQ.convert(1), QQ.convert(int(j in S)), QQ.convert(int(j in S) * b)] for j, b in enumerate(word)]
        A = [[QQ.convert(int((r, c) == (0, 1))) for c in range(3)] for r in range(3)]
        V = [[QQ.convert(0)], [QQ.convert(0)], [QQ.convert(1)]]
        return {"X": X, "A": A, "V": V}, parity_language(word, S)
    raise AttncertError(f"no language {of!r}")
