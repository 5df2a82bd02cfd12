r"""Rows of EE numbers over one common denominator, as rational coefficient matrices.

A row (r_1, ..., r_w) of EE numbers over one denominator D is
r_c = sum_k A_kc e^{e_k} / D for distinct rational exponents e_k and a rational
matrix A (rational entries r lifted as r D / D; entries over different
denominators lifted to their product). This is the shape of every row of an
attention output (one softmax denominator per query row and head; the product
of the heads' after W_O) and it survives rational linear maps, residual sums and
ReLU. In this form

* a rational map is a FLINT product:  (r W)_c = sum_k (A W)_kc e^{e_k} / D;
* an inner product of two such rows is one:
  <r, s> = sum_{k,l} (A B^T)_kl e^{e_k + e'_l} / (D D'),

so the Sinkhorn Transformer's cost needs no products of exponential sums
beyond D D'. Both are exact identities in EE = Frac(Q[e^Q]); the results are the
same EE numbers as the generic arithmetic's (tests compare them).
"""

from __future__ import annotations

from dataclasses import dataclass

from flint import fmpq, fmpq_mat

from attncert.exact.eenumber import EENumber
from attncert.exact.expsum import ONE, ExpSum, Exponent
from attncert.exact.matrices import Rows, to_fmpq_mat


@dataclass(frozen=True)
class RowForm:
    """row[c] = sum_k coef[k, c] e^{exps[k]} / den."""

    den: ExpSum
    exps: list[Exponent]
    coef: fmpq_mat


def row_form(row: list) -> RowForm:
    """The row over one denominator: the product D of its entries' distinct denominators (each entry's
    numerator times the other factors of D), so that rational maps and inner products of it are FLINT products."""
    dens: list[ExpSum] = []
    for x in row:
        if type(x) is EENumber and x.den is not ONE and not any(x.den is d or x.den == d for d in dens):
            dens.append(x.den)
    den = ONE
    for d in dens:
        den = den * d
    nums = [_over(x, den, dens) for x in row]
    exps = sorted({q for n in nums if n is not None for q in n.terms})
    at = {q: k for k, q in enumerate(exps)}
    coef = fmpq_mat(len(exps), len(row))
    for c, n in enumerate(nums):
        for q, v in (n.terms.items() if n is not None else ()):
            coef[at[q], c] = v
    return RowForm(den, exps, coef)


def _over(x: EENumber | fmpq, den: ExpSum, dens: list[ExpSum]) -> ExpSum | None:
    """The numerator of x over den = the product of dens (None for 0)."""
    if type(x) is not EENumber:
        return den.scaled(x) if x else None
    num = x.num
    for d in dens:
        if not (x.den is d or x.den == d):
            num = num * d
    return num


def _entry(exps: list[Exponent], column: list[fmpq], den: ExpSum) -> EENumber | fmpq:
    num = ExpSum({q: v for q, v in zip(exps, column) if v})
    if den is ONE:
        r = num.constant_value()
        if r is not None:
            return r
    value = EENumber(num, den)
    r = value.rational_value()
    return r if r is not None else value


def times_form(f: RowForm, W: Rows) -> list:
    """The row times a rational matrix W, exactly: (A W) over the same exponents and denominator."""
    if not f.exps:
        return [fmpq(0)] * len(W[0])
    P = (f.coef * to_fmpq_mat(W)).tolist()
    return [_entry(f.exps, [P[k][c] for k in range(len(f.exps))], f.den) for c in range(len(W[0]))]


def minus_inner(q: RowForm, k: RowForm) -> EENumber | fmpq:
    """-<q, k> = -(sum_{a,b} (A B^T)_ab e^{e_a + e'_b}) / (D D'), exactly."""
    G = q.coef * k.coef.transpose()
    acc: dict[Exponent, fmpq] = {}
    for a, ea in enumerate(q.exps):
        for b, eb in enumerate(k.exps):
            v = G[a, b]
            if v:
                e = Exponent(ea + eb)
                acc[e] = acc.get(e, fmpq(0)) - v
    return _entry(list(acc), list(acc.values()), q.den * k.den)
