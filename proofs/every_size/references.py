"""The references of the every-size theorems, as Σ normal forms, from their definitions alone.

Each gives the entry (i, j) of the output matrix as a :class:`~proofs.every_size.evaluate.Real`,
for symbolic i, j and sizes (size expressions: symbols, or integers where a size is fixed or a case
fixed it). A reference defined piecewise (MaxMin: by the parity of j) asks ``decide`` for each
relation it branches on, which the prover proves in the region (or splits the region by). Nothing here
reads a construction: these are the formulas of the lemmas.
"""

from __future__ import annotations

from typing import Callable, Mapping

from attncert.constructions.sizes.expr import SizeExpr
from attncert.proofs.every_size.evaluate import Real, _add, _mul, quotient
from attncert.proofs.every_size.evaluate import relu as relu_of
from attncert.proofs.every_size.facts import Rel
from attncert.proofs.every_size.forms import Factor, Form, Sizes, extremum, fresh, read, reciprocal

Decide = Callable[[Rel], bool]
ZERO = SizeExpr.const(0)
Reference = Callable[[Sizes, Mapping[str, SizeExpr], SizeExpr, SizeExpr, Decide], Real]


def _sum(body: Callable[[SizeExpr], Form], bound: SizeExpr) -> Form:
    """Σ_{b < bound} body(b)."""
    b = fresh()
    return body(SizeExpr.symbol(b)).summed(b, bound)


def _one(sz: Sizes) -> Form:
    return Form.const(sz, 1)


def _exp(sz: Sizes, f: Form) -> Form:
    return Form.factor(sz, Factor("exp", (f,)))


def transpose(sz: Sizes, s: Mapping[str, SizeExpr], i: SizeExpr, j: SizeExpr, decide: Decide) -> Real:
    """(M^T)[i][j] = M[j][i]."""
    return Real(read(sz, "M", j, i), _one(sz))


def matmul(sz: Sizes, s: Mapping[str, SizeExpr], i: SizeExpr, j: SizeExpr, decide: Decide) -> Real:
    """(AB)[i][j] = Σ_{l<k} A[i][l] B[l][j]."""
    return Real(_sum(lambda l: read(sz, "A", i, l) * read(sz, "B", l, j), s["k"]), _one(sz))


def softmax(sz: Sizes, s: Mapping[str, SizeExpr], i: SizeExpr, j: SizeExpr, decide: Decide) -> Real:
    """softmax(S)[i][j] = e^{S[i][j]} / Σ_{l<c} e^{S[i][l]}."""
    return quotient(_exp(sz, read(sz, "S", i, j)), _sum(lambda l: _exp(sz, read(sz, "S", i, l)), s["c"]))


def relu(sz: Sizes, s: Mapping[str, SizeExpr], i: SizeExpr, j: SizeExpr, decide: Decide) -> Real:
    """ReLU(x)[0][j] = max(x[0][j], 0)."""
    return Real(Form.factor(sz, Factor("relu", (read(sz, "x", i, j),))), _one(sz))


def _scores(sz: Sizes, s: Mapping[str, SizeExpr], A: str, i: SizeExpr, k: SizeExpr, top: SizeExpr = ZERO) -> Form:
    """S[i][k] = (X A X^T)[i][k] = Σ_{j<d} Σ_{l<d} X[i][l] A[l][j] X[k][j], A the rows top .. top + d - 1 of the block."""
    return _sum(lambda j: _sum(lambda l: read(sz, "X", i, l) * read(sz, A, top + l, j) * read(sz, "X", k, j), s["d"]), s["d"])


def _xv(sz: Sizes, s: Mapping[str, SizeExpr], V: str, k: SizeExpr, v: SizeExpr, top: SizeExpr = ZERO) -> Form:
    """(X V)[k][v] = Σ_{l<d} X[k][l] V[l][v], V the rows top .. top + d - 1 of the block."""
    return _sum(lambda l: read(sz, "X", k, l) * read(sz, V, top + l, v), s["d"])


def attention(sz: Sizes, s: Mapping[str, SizeExpr], i: SizeExpr, v: SizeExpr, A: str = "A", V: str = "V", top: SizeExpr = ZERO) -> Real:
    """T(X)[i][v] = Σ_{k<n} e^{S[i][k]} (XV)[k][v] / Σ_{k<n} e^{S[i][k]}, S = X A X^T (no 1/sqrt(d)); A and V the
    d rows from ``top`` of their blocks."""
    num = _sum(lambda k: _exp(sz, _scores(sz, s, A, i, k, top)) * _xv(sz, s, V, k, v, top), s["n"])
    den = _sum(lambda k: _exp(sz, _scores(sz, s, A, i, k, top)), s["n"])
    return quotient(num, den)


def universal(sz: Sizes, s: Mapping[str, SizeExpr], i: SizeExpr, v: SizeExpr, decide: Decide) -> Real:
    return attention(sz, s, i, v)


def universal_tagged(sz: Sizes, s: Mapping[str, SizeExpr], i: SizeExpr, v: SizeExpr, decide: Decide) -> Real:
    """T_tau(X)[i][v] = Σ_{k<n} tau_k e^{S[i][k]} (XV)[k][v] / Σ_{k<n} tau_k e^{S[i][k]}, tau_k = tag(X)[k][0] in
    {0, 1}: attention over the rows tagged as data (U(N, D, D_v) simulates smaller layers so)."""
    tag = lambda k: read(sz, "tag(X)", k, SizeExpr.const(0))  # noqa: E731
    num = _sum(lambda k: tag(k) * _exp(sz, _scores(sz, s, "A", i, k)) * _xv(sz, s, "V", k, v), s["n"])
    den = _sum(lambda k: tag(k) * _exp(sz, _scores(sz, s, "A", i, k)), s["n"])
    return quotient(num, den)


def _mha(sz: Sizes, s: Mapping[str, SizeExpr], i: SizeExpr, o: SizeExpr) -> Real:
    """MHA(X)[i][o] = Σ_{m<h} Σ_{v<dv} T_m(X)[i][v] W_O[m dv + v][o], T_m with A_{m+1}, V_{m+1}: a sum of h quotients
    for a fixed h; for a symbolic h, with A_{m+1}, V_{m+1} the rows m d .. m d + d - 1 of the stacked A and V,
    Σ_{m<h} Σ_{v<dv} num_m[i][v] W_O[m dv + v][o] inv(den_m[i]) (T_m = num_m / den_m, den_m > 0)."""
    h = s["h"].constant()
    if h is None:
        m = SizeExpr.symbol(fresh())
        t = attention(sz, s, i, SizeExpr.symbol("v"), "A", "V", s["d"] * m)
        v = fresh()
        w = read(sz, "WO", s["dv"] * m + SizeExpr.symbol("v"), o)
        num = (t.num * w * reciprocal(t.den)).rename({"v": SizeExpr.symbol(v)}).summed(v, s["dv"])
        return Real(num.summed(m.text(), s["h"]), _one(sz))
    out = None
    for m in range(h):
        t = attention(sz, s, i, SizeExpr.symbol("v"), f"A{m + 1}", f"V{m + 1}")  # v is summed just below
        w = read(sz, "WO", s["dv"] * m + SizeExpr.symbol("v"), o)
        v = fresh()
        num = (t.num * w).rename({"v": SizeExpr.symbol(v)}).summed(v, s["dv"])
        head = Real(num, t.den)  # the denominator does not read v
        out = head if out is None else _add(out, head)
    assert out is not None
    return out


def multihead(sz: Sizes, s: Mapping[str, SizeExpr], i: SizeExpr, o: SizeExpr, decide: Decide) -> Real:
    return _mha(sz, s, i, o)


def encoder_layer(sz: Sizes, s: Mapping[str, SizeExpr], i: SizeExpr, j: SizeExpr, decide: Decide) -> Real:
    """Z[i][j] = Y[i][j] + Σ_{u<f} ReLU(Σ_{c<d} Y[i][c] W1[c][u] + b1[0][u]) W2[u][j] + b2[0][j], Y = X + MHA(X)."""
    zero = SizeExpr.const(0)

    def y(col: SizeExpr) -> Real:
        return _add(Real(read(sz, "X", i, col), _one(sz)), _mha(sz, s, i, col))

    def summed(body: Callable[[SizeExpr], Real], bound: SizeExpr) -> Real:
        b = fresh()
        x = body(SizeExpr.symbol(b))
        return Real(x.num.summed(b, bound), x.den)  # the denominators here do not read the binder

    def hidden(u: SizeExpr) -> Real:
        pre = summed(lambda c: _mul(y(c), Real(read(sz, "W1", c, u), _one(sz))), s["d"])
        return relu_of(_add(pre, Real(read(sz, "b1", zero, u), _one(sz))))

    ff = summed(lambda u: _mul(hidden(u), Real(read(sz, "W2", u, j), _one(sz))), s["f"])
    return _add(_add(y(j), ff), Real(read(sz, "b2", zero, j), _one(sz)))


def maxmin(sz: Sizes, s: Mapping[str, SizeExpr], i: SizeExpr, j: SizeExpr, decide: Decide) -> Real:
    """MaxMin (GroupSort in pairs) of a 1 x n row: out[j] = max(x[j], x[j+1]) for even j with j + 1 < n,
    min(x[j-1], x[j]) for odd j, x[j] for the last position of an odd n."""
    x = lambda c: read(sz, "x", SizeExpr.const(0), c)  # noqa: E731
    zero = SizeExpr.const(0)
    if decide(Rel("=", j % 2, zero)):
        if decide(Rel("<", j + 1, s["n"])):
            return Real(extremum(sz, "max", x(j), x(j + 1)), _one(sz))
        return Real(x(j), _one(sz))
    return Real(extremum(sz, "min", x(j - 1), x(j)), _one(sz))


REFERENCES: dict[str, Reference] = {
    "hierarchy": universal,  # T(X) of the small layer: its sizes n, d, dv
    "universal_tagged": universal_tagged,
    "multihead": multihead,
    "encoder_layer": encoder_layer,
    "maxmin": maxmin,
    "transpose": transpose,
    "matmul": matmul,
    "softmax": softmax,
    "relu": relu,
    "universal": universal,
}
