"""The identity checker's own references, computed in its own field from the input variables.

Each is the textbook formula, written here apart from :mod:`proofs.references` (which the
prover evaluates) and from the constructions:

* transpose: (M^T)_ij = M_ji;
* product: (AB)_ij = Σ_l A_il B_lj;
* row softmax: softmax(S)_ik = e^{S_ik} / Σ_l e^{S_il} (one division per row, by the row sum);
* 3 x 3 inverse by cross products of the columns a, b, c of M: det M = a · (b × c) and the rows
  of M^{-1} are (b × c) / det M, (c × a) / det M, (a × b) / det M (each row is orthogonal to two
  columns and has product det M with the third); its hypothesis det M != 0;
* attention: T(X) = softmax((X A) X^T) (X V);
* multi-head attention: [T_1(X), ..., T_h(X)] W_O, T_m with (A_m, V_m).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from flint import fmpq

from proofs.checkers.identity_field import Field, Number

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
    #: The reference on the input matrices (as the field's variables), given the sizes.
    compute: Callable[..., Rows]
    #: The values the statement assumes nonzero (its hypotheses), on the input matrices.
    hypotheses: Callable[[Mapping[str, Rows], Field], list[Number]] = lambda m, F: []


CLAIMS: dict[str, Reference] = {
    "transpose": Reference(("r", "c"), lambda r, c: [("M", r, c)], lambda r, c: (c, r), lambda m, F, **s: transpose(m["M"])),
    "matmul": Reference(
        ("r", "k", "c"),
        lambda r, k, c: [("A", r, k), ("B", k, c)],
        lambda r, k, c: (r, c),
        lambda m, F, **s: product(m["A"], m["B"], F),
    ),
    "softmax": Reference(("r", "c"), lambda r, c: [("S", r, c)], lambda r, c: (r, c), lambda m, F, **s: softmax_rows(m["S"], F)),
    "inverse3": Reference(
        (), lambda: [("M", 3, 3)], lambda: (3, 3), lambda m, F, **s: inverse3(m["M"], F), lambda m, F: [determinant3(m["M"], F)]
    ),
    "universal": Reference(
        ("n", "d", "dv"),
        lambda n, d, dv: [("X", n, d), ("A", d, d), ("V", d, dv)],
        lambda n, d, dv: (n, dv),
        lambda m, F, **s: attention(m["X"], m["A"], m["V"], F),
    ),
    "multihead": Reference(
        ("n", "d", "dv", "h", "do"),
        lambda n, d, dv, h, do: [("X", n, d)] + [(f"A{i}", d, d) for i in range(1, h + 1)] + [(f"V{i}", d, dv) for i in range(1, h + 1)] + [("WO", h * dv, do)],
        lambda n, d, dv, h, do: (n, do),
        lambda m, F, **s: multihead(m["X"], _heads(m, s["h"]), m["WO"], F),
    ),
}
