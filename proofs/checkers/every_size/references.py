r"""The checker's references: each theorem's inputs, output and entry formula, from the definitions alone.

For each claim ``BASE_every_size``: its size symbols, its input blocks (name, rows, cols) in the
order the input sequence holds them, the shape of its output, and the entry (i, j) of the output
matrix as a quotient of forms (:class:`~.evaluate.Real`), i and j polynomials in the region's
digits, the sizes polynomials too (symbols, or integers where fixed):

* transpose: (M^T)[i][j] = M[j][i];  matmul: (AB)[i][j] = Σ_{l<k} A[i][l] B[l][j];
* softmax: softmax(S)[i][j] = e^{S[i][j]} / Σ_{l<c} e^{S[i][l]};  relu: max(x[0][j], 0);
* maxmin: out[j] = max(x[j], x[j+1]) for even j with j + 1 < n, x[j] for even j = n - 1, and
  min(x[j-1], x[j]) for odd j (each branch decided by a recorded ``reference`` step);
* attention: T(X)[i][v] = Σ_{k<n} e^{S[i][k]} (XV)[k][v] / Σ_{k<n} e^{S[i][k]}, S = X A X^T
  (S[i][k] = Σ_{j<d} Σ_{l<d} X[i][l] A[l][j] X[k][j], (XV)[k][v] = Σ_{l<d} X[k][l] V[l][v]);
  on tagged tokens, each k weighted by its row's tag tau_k = tag(X)[k][0] (attention over the rows
  tagged 1); the size hierarchy: T(X) of the small layer (sizes n, d, dv) in the entries i < n,
  v < dv of U(N, D, Dv)'s output, its inputs zero-padded into U's blocks;
* multihead: MHA(X)[i][o] = Σ_{m<h} Σ_{v<dv} T_m(X)[i][v] W_O[m dv + v][o] (T_m with A_{m+1},
  V_{m+1}), the heads added as quotients (a / b + c / e = (a e + c b) / (b e)) for a fixed h, and for a
  symbolic h (A, V stacked) Σ_m of num_m inv(den_m);
* encoder layer: Z[i][j] = Y[i][j] + Σ_{u<f} ReLU(Σ_{c<d} Y[i][c] W1[c][u] + b1[0][u]) W2[u][j]
  + b2[0][j], Y = X + MHA(X).

A sum of quotients keeps one denominator where both are the same form and cross-multiplies otherwise; a sum
over a binder of quotients whose denominator does not read it is the sum of the numerators over
that denominator. These are the quotients the certificate's reference forms record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from attncert.proofs.checkers.every_size import forms
from attncert.proofs.checkers.every_size.evaluate import Real, add, mul, quotient
from attncert.proofs.checkers.every_size.forms import Coefficients, Form
from attncert.proofs.checkers.every_size.record import Refusal
from attncert.proofs.checkers.every_size.sizes import Poly, Rel

Sizes = Mapping[str, Poly]
Decide = Callable[[Rel], bool]
ZERO = Poly.const(0)


@dataclass(frozen=True)
class Definition:
    """A claim's sizes, input blocks, output shape and entry formula."""

    symbols: tuple[str, ...]
    inputs: Callable[[Sizes], list[tuple[str, Poly, Poly]]]
    output: Callable[[Sizes], tuple[Poly, Poly]]
    entry: Callable[[Coefficients, Sizes, Poly, Poly, Decide], Real]
    #: Tokens are pairs (value, tag), the tag of M[r][c] read as tag(M)[r][c] and the padding (0, 0), under the
    #: hypothesis that the tags tag(M)[k][0], k < R, are 0 or 1 and some is 1: (M, the size R); None: plain numbers.
    data_rows: tuple[str, str] | None = None
    #: Zero-padded inputs: block -> (the sizes of its matrix's rows and columns, whether a row's tag says it is one
    #: of the matrix's rows); a token is then (M[r][c] inside the matrix, else 0; its row's tag 1 or 0, or 1).
    padded: Mapping[str, tuple[str, str, bool]] | None = None
    #: The output entries compared, (rows, cols) sizes, instead of the whole output block and the rest.
    entries: tuple[str, str] | None = None
    #: The relations a <= b of the sizes the theorem assumes.
    at_most: tuple[tuple[str, str], ...] = ()

    def hypotheses(self, quantified: tuple[str, ...]) -> list[str]:
        """The statement's hypotheses: each quantified size >= 1, the relations assumed, the tags'."""
        tags = [f"tag({self.data_rows[0]})[k][0] in {{0, 1}} for k < {self.data_rows[1]}, and some is 1"] if self.data_rows else []
        return [f"{s} >= 1" for s in quantified] + [f"{a} <= {b}" for a, b in self.at_most] + tags


def _sigma(K: Coefficients, body: Callable[[Poly], Form], bound: Poly) -> Form:
    """Σ_{b < bound} body(b), b a fresh binder."""
    b = forms.fresh()
    return body(Poly.symbol(b)).summed(b, bound)


def _summed(body: Callable[[Poly], Real], bound: Poly) -> Real:
    """Σ_{b < bound} of quotients over one denominator that does not read b."""
    b = forms.fresh()
    x = body(Poly.symbol(b))
    if b in x.den.free:
        raise Refusal("a reference sums quotients whose denominator reads the binder")
    return Real(x.num.summed(b, bound), x.den)


def _one(K: Coefficients) -> Form:
    return Form.coeff(K, K.one)


def _entry(K: Coefficients, block: str, row: Poly, col: Poly) -> Real:
    return Real(forms.read(K, block, row, col), _one(K))


def _attention(K: Coefficients, s: Sizes, i: Poly, v: Poly, A: str, V: str, top: Poly = ZERO) -> Real:
    """T(X)[i][v] with A and V the d rows from ``top`` of their blocks."""

    def score(k: Poly) -> Form:
        return _sigma(K, lambda j: _sigma(K, lambda l: forms.read(K, "X", i, l) * forms.read(K, A, top + l, j) * forms.read(K, "X", k, j), s["d"]), s["d"])

    def xv(k: Poly) -> Form:
        return _sigma(K, lambda l: forms.read(K, "X", k, l) * forms.read(K, V, top + l, v), s["d"])

    num = _sigma(K, lambda k: forms.exp(K, score(k)) * xv(k), s["n"])
    den = _sigma(K, lambda k: forms.exp(K, score(k)), s["n"])
    return quotient(num, den)


def _tagged_attention(K: Coefficients, s: Sizes, i: Poly, v: Poly) -> Real:
    """T_tau(X)[i][v] = Σ_{k<n} tau_k e^{S[i][k]} (XV)[k][v] / Σ_{k<n} tau_k e^{S[i][k]}, tau_k = tag(X)[k][0]."""

    def weight(k: Poly) -> Form:
        score = _sigma(K, lambda j: _sigma(K, lambda l: forms.read(K, "X", i, l) * forms.read(K, "A", l, j) * forms.read(K, "X", k, j), s["d"]), s["d"])
        return forms.read(K, "tag(X)", k, ZERO) * forms.exp(K, score)

    def xv(k: Poly) -> Form:
        return _sigma(K, lambda l: forms.read(K, "X", k, l) * forms.read(K, "V", l, v), s["d"])

    return quotient(_sigma(K, lambda k: weight(k) * xv(k), s["n"]), _sigma(K, weight, s["n"]))


def _heads(s: Sizes) -> int | None:
    """The number of heads, or None where it is a symbol."""
    h = s["h"].constant()
    if h is not None and h < 1:
        raise Refusal("the number of heads is at least 1")
    return h


def _mha(K: Coefficients, s: Sizes, i: Poly, o: Poly) -> Real:
    """MHA(X)[i][o] = Σ_{m<h} Σ_{v<dv} T_m(X)[i][v] W_O[m dv + v][o]: h quotients added for a fixed h; for a symbolic h,
    T_m = num_m / den_m with A_{m+1}, V_{m+1} the rows m d .. m d + d - 1 of the stacked A, V, and the sum
    Σ_m Σ_v num_m[i][v] W_O[m dv + v][o] inv(den_m[i]), each den_m shown positive."""
    h = _heads(s)
    if h is None:
        m = forms.fresh()
        M = Poly.symbol(m)

        def head(v: Poly) -> Form:
            t = _attention(K, s, i, v, "A", "V", s["d"] * M)
            return t.num * forms.read(K, "WO", s["dv"] * M + v, o) * forms.reciprocal(t.den)

        return Real(_sigma(K, head, s["dv"]).summed(m, s["h"]), _one(K))
    out = None
    for m in range(h):
        head = _summed(lambda v: mul(_attention(K, s, i, v, f"A{m + 1}", f"V{m + 1}"), _entry(K, "WO", s["dv"] * m + v, o)), s["dv"])
        out = head if out is None else add(out, head)
    assert out is not None
    return out


def _maxmin(K: Coefficients, s: Sizes, i: Poly, j: Poly, decide: Decide) -> Real:
    def x(c: Poly) -> Form:
        return forms.read(K, "x", ZERO, c)

    if decide(Rel("=", j.mod(2), ZERO)):
        if decide(Rel("<", j + 1, s["n"])):
            return Real(forms.extremum(K, "max", x(j), x(j + 1)), _one(K))
        return Real(x(j), _one(K))
    return Real(forms.extremum(K, "min", x(j - 1), x(j)), _one(K))


def _encoder(K: Coefficients, s: Sizes, i: Poly, j: Poly, decide: Decide) -> Real:
    def y(col: Poly) -> Real:
        return add(_entry(K, "X", i, col), _mha(K, s, i, col))

    def hidden(u: Poly) -> Real:
        pre = _summed(lambda c: mul(y(c), _entry(K, "W1", c, u)), s["d"])
        x = add(pre, _entry(K, "b1", ZERO, u))
        if not forms.positive(x.den):
            raise Refusal("ReLU of a quotient whose denominator is not shown positive")
        return Real(forms.relu(K, x.num), x.den)

    ff = _summed(lambda u: mul(hidden(u), _entry(K, "W2", u, j)), s["f"])
    return add(add(y(j), ff), _entry(K, "b2", ZERO, j))


def _heads_inputs(s: Sizes, out: Poly) -> list[tuple[str, Poly, Poly]]:
    """X, A_1 .. A_h, V_1 .. V_h, W_O; for a symbolic h, A and V stacked (h d x d, h d x d_v)."""
    h = _heads(s)
    if h is None:
        heads = [("A", s["h"] * s["d"], s["d"]), ("V", s["h"] * s["d"], s["dv"])]
    else:
        heads = [(f"A{m + 1}", s["d"], s["d"]) for m in range(h)] + [(f"V{m + 1}", s["d"], s["dv"]) for m in range(h)]
    return [("X", s["n"], s["d"])] + heads + [("WO", s["dv"] * s["h"], out)]


ONE = Poly.const(1)

DEFINITIONS: dict[str, Definition] = {
    "transpose": Definition(("r", "c"), lambda s: [("M", s["r"], s["c"])], lambda s: (s["c"], s["r"]), lambda K, s, i, j, d: _entry(K, "M", j, i)),
    "matmul": Definition(
        ("r", "k", "c"),
        lambda s: [("A", s["r"], s["k"]), ("B", s["k"], s["c"])],
        lambda s: (s["r"], s["c"]),
        lambda K, s, i, j, d: Real(_sigma(K, lambda l: forms.read(K, "A", i, l) * forms.read(K, "B", l, j), s["k"]), _one(K)),
    ),
    "softmax": Definition(
        ("r", "c"),
        lambda s: [("S", s["r"], s["c"])],
        lambda s: (s["r"], s["c"]),
        lambda K, s, i, j, d: quotient(forms.exp(K, forms.read(K, "S", i, j)), _sigma(K, lambda l: forms.exp(K, forms.read(K, "S", i, l)), s["c"])),
    ),
    "relu": Definition(("n",), lambda s: [("x", ONE, s["n"])], lambda s: (ONE, s["n"]), lambda K, s, i, j, d: Real(forms.relu(K, forms.read(K, "x", i, j)), _one(K))),
    "maxmin": Definition(("n",), lambda s: [("x", ONE, s["n"])], lambda s: (ONE, s["n"]), _maxmin),
    "universal": Definition(
        ("n", "d", "dv"),
        lambda s: [("X", s["n"], s["d"]), ("A", s["d"], s["d"]), ("V", s["d"], s["dv"])],
        lambda s: (s["n"], s["dv"]),
        lambda K, s, i, j, d: _attention(K, s, i, j, "A", "V"),
    ),
    "universal_tagged": Definition(
        ("n", "d", "dv"),
        lambda s: [("X", s["n"], s["d"]), ("A", s["d"], s["d"]), ("V", s["d"], s["dv"])],
        lambda s: (s["n"], s["dv"]),
        lambda K, s, i, j, d: _tagged_attention(K, s, i, j),
        data_rows=("X", "n"),
    ),
    "hierarchy": Definition(
        ("N", "D", "Dv", "n", "d", "dv"),
        lambda s: [("X", s["N"], s["D"]), ("A", s["D"], s["D"]), ("V", s["D"], s["Dv"])],
        lambda s: (s["N"], s["Dv"]),
        lambda K, s, i, j, d: _attention(K, s, i, j, "A", "V"),
        padded={"X": ("n", "d", True), "A": ("d", "d", False), "V": ("d", "dv", False)},
        entries=("n", "dv"),
        at_most=(("n", "N"), ("d", "D"), ("dv", "Dv")),
    ),
    "multihead": Definition(("n", "d", "dv", "h", "do"), lambda s: _heads_inputs(s, s["do"]), lambda s: (s["n"], s["do"]), lambda K, s, i, j, d: _mha(K, s, i, j)),
    "encoder_layer": Definition(
        ("n", "d", "dv", "h", "f"),
        lambda s: _heads_inputs(s, s["d"]) + [("W1", s["d"], s["f"]), ("b1", ONE, s["f"]), ("W2", s["f"], s["d"]), ("b2", ONE, s["d"])],
        lambda s: (s["n"], s["d"]),
        _encoder,
    ),
}
