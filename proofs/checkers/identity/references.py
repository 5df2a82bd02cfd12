"""The identity checker's own references, computed in its own field from the input variables.

Each is the textbook formula, written here apart from :mod:`proofs.checkers.references` (which the
prover evaluates) and from the constructions:

* transpose: (M^T)_ij = M_ji;
* product: (AB)_ij = Σ_l A_il B_lj;
* row softmax: softmax(S)_ik = e^{S_ik} / Σ_l e^{S_il} (one division per row, by the row sum);
* 3 x 3 inverse by cross products of the columns a, b, c of M: det M = a · (b × c) and the rows
  of M^{-1} are (b × c) / det M, (c × a) / det M, (a × b) / det M (each row is orthogonal to two
  columns and has product det M with the third); its hypothesis det M != 0;
* attention: T(X) = softmax((X A) X^T) (X V);
* multi-head attention: [T_1(X), ..., T_h(X)] W_O, T_m with (A_m, V_m);
* ReLU: max(x, 0) = x where x > 0, else 0, entrywise;
* MaxMin: each pair (x_2q, x_2q+1) as (max, min) = (x_2q, x_2q+1) where x_2q - x_2q+1 >= 0, else
  swapped; an odd last entry unchanged;
* encoder layer: Y = X + MHA(X), then Y + ReLU(Y W_1 + b_1) W_2 + b_2 (a bias row added to every row);
* layer norm of the encoder layer's Z, row by row: μ_i = (1/d) Σ_j Z_ij, σ_i² = (1/d) Σ_j (Z_ij - μ_i)²
  (the biased variance), LN(Z)_ij = γ_j (Z_ij - μ_i) (σ_i² + δ)^(-1/2) + β_j. The power is the field's
  uninterpreted ``power(-1/2)`` (:meth:`Field.power`), its argument shown positive: a mean of squares
  plus δ, and δ > 0 is the statement's hypothesis, checked from the certificate's parameters.

The piecewise references ask signs of a :class:`SignOracle`; each states, per entry, the input
variables it reads (``reads``): the region check compares an entry only on the leaves of the
one group holding them (:mod:`proofs.checkers.identity.regions`). A reference without ``reads``
asks no sign of an input-dependent value (its ReLU is uninterpreted there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from flint import fmpq

from attncert.proofs.checkers.identity.field import Field, Number
from attncert.proofs.checkers.identity.graph import SignOracle

Rows = list[list[Any]]


def transpose(m: Rows) -> Rows:
    return [[m[i][j] for i in range(len(m))] for j in range(len(m[0]))]


def product(a: Rows, b: Rows, F: Field) -> Rows:
    return [[F.total(F.mul(a[i][l], b[l][j]) for l in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def softmax_rows(s: Rows, F: Field) -> Rows:
    out = []
    for row in s:
        exps = [F.exp(x) for x in row]
        inverse = F.div(fmpq(1), F.total(exps))  # one divisor per row, shared by its entries
        out.append([F.mul(e, inverse) for e in exps])
    return out


def _cross(u: list[Number], v: list[Number], F: Field) -> list[Number]:
    return [F.add(F.mul(u[(i + 1) % 3], v[(i + 2) % 3]), F.neg(F.mul(u[(i + 2) % 3], v[(i + 1) % 3]))) for i in range(3)]


def _columns_and_cofactors(m: Rows, F: Field) -> tuple[list[list[Number]], list[list[Number]]]:
    a, b, c = ([m[i][j] for i in range(3)] for j in range(3))
    return [a, b, c], [_cross(b, c, F), _cross(c, a, F), _cross(a, b, F)]


def determinant3(m: Rows, F: Field) -> Number:
    """det M = a · (b × c) for the columns a, b, c of M."""
    (a, _, _), rows = _columns_and_cofactors(m, F)
    return F.total(F.mul(x, y) for x, y in zip(a, rows[0]))


def inverse3(m: Rows, F: Field) -> Rows:
    _, rows = _columns_and_cofactors(m, F)
    inverse = F.div(fmpq(1), determinant3(m, F))
    return [[F.mul(x, inverse) for x in row] for row in rows]


def attention(x: Rows, a: Rows, v: Rows, F: Field) -> Rows:
    return product(softmax_rows(product(product(x, a, F), transpose(x), F), F), product(x, v, F), F)


def multihead(x: Rows, heads: list[tuple[Rows, Rows]], wo: Rows, F: Field) -> Rows:
    outs = [attention(x, a, v, F) for a, v in heads]
    return product([[e for o in outs for e in o[i]] for i in range(len(x))], wo, F)


def add_rows(a: Rows, b: Rows, F: Field) -> Rows:
    return [[F.add(x, y) for x, y in zip(ra, rb)] for ra, rb in zip(a, b)]


def plus_bias(a: Rows, bias: Rows, F: Field) -> Rows:
    """a with the row ``bias[0]`` added to every row."""
    return [[F.add(x, b) for x, b in zip(row, bias[0])] for row in a]


def relu_rows(x: Rows, F: Field, S: SignOracle) -> Rows:
    return [[S.relu(F, v) for v in row] for row in x]


def maxmin_row(x: Rows, F: Field, S: SignOracle) -> Rows:
    row, out = x[0], []
    for q in range(0, len(row) - 1, 2):
        a, b = row[q], row[q + 1]
        out += [a, b] if S.sign(F.add(a, F.neg(b))) >= 0 else [b, a]
    if len(row) % 2:
        out.append(row[-1])
    return [out]


def maxmin_reads(n: int) -> list[frozenset[int]]:
    """Entry j of maxmin(n) reads its pair (x_2q, x_2q+1), or x_j alone for an odd last j."""
    return [frozenset({j - j % 2, j - j % 2 + 1} & set(range(n))) for j in range(n)]


def encoder_layer(x: Rows, heads: list[tuple[Rows, Rows]], wo: Rows, w1: Rows, b1: Rows, w2: Rows, b2: Rows, F: Field, S: SignOracle) -> Rows:
    y = add_rows(x, multihead(x, heads, wo, F), F)
    hidden = relu_rows(plus_bias(product(y, w1, F), b1, F), F, S)
    return plus_bias(add_rows(y, product(hidden, w2, F), F), b2, F)


def layer_norm(z: Rows, gamma: Rows, beta: Rows, delta: fmpq, F: Field) -> Rows:
    """LN(Z) row by row (module docstring); delta > 0, so σ_i² + δ > 0 at every input."""
    out = []
    for row in z:
        share = fmpq(1, len(row))
        mu = F.mul(F.total(row), share)
        centred = [F.add(x, F.neg(mu)) for x in row]
        variance = F.mul(F.total(F.mul(c, c) for c in centred), share)
        scale = F.power(F.add(variance, delta), fmpq(-1, 2), positive=True)
        out.append([F.add(F.mul(F.mul(g, c), scale), b) for g, c, b in zip(gamma[0], centred, beta[0])])
    return out


def _encoder_inputs(n: int, d: int, dv: int, h: int, f: int) -> list[tuple[str, int, int]]:
    """The encoder layer's matrices, in the layout's order."""
    return (
        [("X", n, d)]
        + [(f"A{i}", d, d) for i in range(1, h + 1)]
        + [(f"V{i}", d, dv) for i in range(1, h + 1)]
        + [("WO", h * dv, d), ("W1", d, f), ("b1", 1, f), ("W2", f, d), ("b2", 1, d)]
    )


def _encoder(m: Mapping[str, Rows], F: Field, S: SignOracle, h: int) -> Rows:
    return encoder_layer(m["X"], _heads(m, h), m["WO"], m["W1"], m["b1"], m["W2"], m["b2"], F, S)


def _heads(m: Mapping[str, Rows], h: int) -> list[tuple[Rows, Rows]]:
    return [(m[f"A{i}"], m[f"V{i}"]) for i in range(1, h + 1)]


@dataclass(frozen=True)
class Reference:
    """What an identity claim states, restated from its sizes."""

    #: The claim's size parameters.
    sizes: tuple[str, ...]
    #: The input matrices (name, rows, cols) at the sizes, in the layout's order.
    inputs: Callable[..., list[tuple[str, int, int]]]
    #: The output's (rows, cols) at the sizes.
    output: Callable[..., tuple[int, int]]
    #: The reference on the input matrices (as the field's variables), given the sign oracle and the sizes.
    compute: Callable[..., Rows]
    #: The values the statement assumes nonzero (its hypotheses), on the input matrices.
    hypotheses: Callable[[Mapping[str, Rows], Field], list[Number]] = lambda m, F: []
    #: For a reference that asks signs of the inputs: per entry (row-major), the variables it reads.
    reads: Callable[..., list[frozenset[int]]] | None = None
    #: The claim's parameters that are rationals > 0 (hypotheses of the statement), passed to ``compute``.
    rationals: tuple[str, ...] = ()


CLAIMS: dict[str, Reference] = {
    "transpose": Reference(("r", "c"), lambda r, c: [("M", r, c)], lambda r, c: (c, r), lambda m, F, S, **s: transpose(m["M"])),
    "matmul": Reference(
        ("r", "k", "c"),
        lambda r, k, c: [("A", r, k), ("B", k, c)],
        lambda r, k, c: (r, c),
        lambda m, F, S, **s: product(m["A"], m["B"], F),
    ),
    "softmax": Reference(("r", "c"), lambda r, c: [("S", r, c)], lambda r, c: (r, c), lambda m, F, S, **s: softmax_rows(m["S"], F)),
    "inverse3": Reference(
        (), lambda: [("M", 3, 3)], lambda: (3, 3), lambda m, F, S, **s: inverse3(m["M"], F), lambda m, F: [determinant3(m["M"], F)]
    ),
    "universal": Reference(
        ("n", "d", "dv"),
        lambda n, d, dv: [("X", n, d), ("A", d, d), ("V", d, dv)],
        lambda n, d, dv: (n, dv),
        lambda m, F, S, **s: attention(m["X"], m["A"], m["V"], F),
    ),
    "multihead": Reference(
        ("n", "d", "dv", "h", "do"),
        lambda n, d, dv, h, do: [("X", n, d)] + [(f"A{i}", d, d) for i in range(1, h + 1)] + [(f"V{i}", d, dv) for i in range(1, h + 1)] + [("WO", h * dv, do)],
        lambda n, d, dv, h, do: (n, do),
        lambda m, F, S, **s: multihead(m["X"], _heads(m, s["h"]), m["WO"], F),
    ),
    "relu": Reference(
        ("n",), lambda n: [("x", 1, n)], lambda n: (1, n), lambda m, F, S, **s: relu_rows(m["x"], F, S), reads=lambda n: [frozenset({j}) for j in range(n)]
    ),
    "maxmin": Reference(("n",), lambda n: [("x", 1, n)], lambda n: (1, n), lambda m, F, S, **s: maxmin_row(m["x"], F, S), reads=maxmin_reads),
    "encoder_layer": Reference(
        ("n", "d", "dv", "h", "f"),
        _encoder_inputs,
        lambda n, d, dv, h, f: (n, d),
        lambda m, F, S, **s: _encoder(m, F, S, s["h"]),
    ),
    "encoder_layer_norm": Reference(
        ("n", "d", "dv", "h", "f"),
        lambda n, d, dv, h, f: _encoder_inputs(n, d, dv, h, f) + [("gamma", 1, d), ("beta", 1, d)],
        lambda n, d, dv, h, f: (n, d),
        lambda m, F, S, **s: layer_norm(_encoder(m, F, S, s["h"]), m["gamma"], m["beta"], s["delta"], F),
        rationals=("delta",),
    ),
}
