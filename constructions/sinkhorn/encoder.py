r"""In-context encoders: stacks of softmax attention, ReLU MLPs and layer norm on the tokens of one text.

A text mu = sum_i a_i delta_{x_i} (x_i in Q^p) is the token sequence
t_i = (x_i, a_i, 1); the encoder maps all tokens at once, so each point's
features depend on the whole text (Q(mu, x_i) in the Sinkhorn paper's notation):

* embedding  X = T E, with T the n x (p + 2) token matrix and E rational;
* attention  X <- X + [T_1(X), ..., T_h(X)] W_O,  T_m(X) = softmax(X A_m X^T)(X V_m),
  row-wise softmax, no 1/sqrt(d) (fold it into A_m): the semantics of
  :func:`proofs.checkers.references.attention` and ``multihead``, with a residual connection;
* MLP        X <- X + ReLU(X W_1 + b_1) W_2 + b_2 (b added to every row);
* layer norm X <- gamma * (X - mean) / sqrt(var + delta) + beta, row by row, with
  mean and var over the row's d entries and a rational delta > 0;
* readout    features = X R.

Every weight is rational. **Exactness** (docs/design.md, "The number tower"):
embedding, MLP, residuals and readout are rational maps and ReLU's sign is
decided exactly, so they stay in EE. Attention stays in EE when its scores
X A X^T are rational (e^q is in EE for rational q only): true for an attention
layer that reads rational values, such as the first one. Everything else leaves
EE: the softmax of non-rational scores (exp of an EE number that is not
rational, :class:`exact.errors.NotInFieldError`) and layer norm (a square root).
From the first such layer on, the forward pass runs in arb at the caller's
precision, on balls that contain the exact values, and the result says so
(``Features.exact`` False, ``Features.enclosed_from`` naming the layer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence, Union

from flint import arb, ctx, fmpq

from attncert.constructions.sinkhorn.rowforms import row_form, times_form
from attncert.exact.domains.ball import Ball
from attncert.exact.domains.ee import EE
from attncert.exact.eenumber import EENumber
from attncert.exact.layer_norm import layer_norm_rows
from attncert.exact.matrices import Rows, from_fmpq_mat, to_fmpq_mat
from attncert.exact.softmax import softmax_rows


@dataclass(frozen=True)
class Attention:
    """X + [T_1(X), ..., T_h(X)] W_O: heads (A_m: d x d, V_m: d x d_v), W_O: (h d_v) x d."""

    heads: tuple[tuple[Rows, Rows], ...]
    wo: Rows

    op = "attention"


@dataclass(frozen=True)
class MLP:
    """X + ReLU(X W_1 + b_1) W_2 + b_2: W_1 d x f, b_1 length f, W_2 f x d, b_2 length d."""

    w1: Rows
    b1: list[fmpq]
    w2: Rows
    b2: list[fmpq]

    op = "mlp"


@dataclass(frozen=True)
class LayerNorm:
    """gamma * (x - mean(x)) / sqrt(var(x) + delta) + beta on each row x (length d), delta > 0."""

    gamma: list[fmpq]
    beta: list[fmpq]
    delta: fmpq

    op = "layer_norm"


Layer = Union[Attention, MLP, LayerNorm]


@dataclass(frozen=True)
class Encoder:
    """Token embedding E ((p + 2) x d), residual layers, readout R (d x k)."""

    embed: Rows
    layers: tuple[Layer, ...]
    readout: Rows

    @property
    def width(self) -> int:
        """k, the number of features per point."""
        return len(self.readout[0])


@dataclass(frozen=True)
class Features:
    """The encoder's output rows, exactly (fmpq / EENumber) or as arb balls."""

    rows: Rows
    exact: bool
    enclosed_from: str | None = None  # the label of the first layer that left EE


def tokens(points: Rows, weights: Sequence[fmpq]) -> Rows:
    """The token matrix: row i is (x_i, a_i, 1)."""
    return [list(p) + [w, fmpq(1)] for p, w in zip(points, weights)]


def embed(points: Rows, weights: Sequence[fmpq], E: Rows) -> Features:
    """X = T E: the tokens (x_i, a_i, 1) embedded, exactly (QQ)."""
    return Features(from_fmpq_mat(to_fmpq_mat(tokens(points, weights)) * to_fmpq_mat(E)), True)


def apply_layer(layer: Layer, X: Features, prec: int, label: str) -> Features:
    """One residual layer: exact while the layer allows it (see the module docstring), then in arb at prec bits."""
    with ctx.workprec(prec):  # every arb operation below rounds at prec bits (exact values are unaffected)
        if X.exact and not _stays_exact(layer, X.rows):
            X = Features(to_balls(X.rows, prec), False, label)
        return Features(_apply(layer, X.rows, X.exact, prec), X.exact, X.enclosed_from)


def forward_balls(enc: Encoder, points: Rows, weights: Sequence[fmpq], prec: int) -> Rows:
    """The encoder run in arb only, at prec bits (balls containing the exact features): cheap, for estimates and fits."""
    X = Features(to_balls(embed(points, weights, enc.embed).rows, prec), False)
    for k, layer in enumerate(enc.layers):
        X = apply_layer(layer, X, prec, str(k))
    return times(X.rows, enc.readout, False, prec)


def to_balls(X: Rows, prec: int) -> Rows:
    """Balls containing exact values (fmpq, EENumber) at ``prec`` bits of relative accuracy."""
    with ctx.workprec(prec):
        return [[x.enclose(prec) if isinstance(x, EENumber) else arb(x) for x in row] for row in X]


def _stays_exact(layer: Layer, X: Rows) -> bool:
    if isinstance(layer, LayerNorm):
        return False
    if isinstance(layer, Attention):
        return all(_rational(x) for row in X for x in row)
    return True


def _rational(x: Any) -> bool:
    return type(x) is fmpq or (isinstance(x, EENumber) and x.rational_value() is not None)


def _apply(layer: Layer, X: Rows, exact: bool, prec: int) -> Rows:
    if isinstance(layer, Attention):
        return add(X, multihead(X, layer, exact, prec))
    if isinstance(layer, MLP):
        hidden = [[relu(v + b, exact) for v, b in zip(row, layer.b1)] for row in times(X, layer.w1, exact, prec)]
        out = times(hidden, layer.w2, exact, prec)
        return [[x + o + b for x, o, b in zip(xr, orow, layer.b2)] for xr, orow in zip(X, out)]
    return layer_norm(X, layer, prec)


def times(X: Rows, W: Rows, exact: bool, prec: int) -> Rows:
    """X W for a rational W: FLINT when X is rational, else sums of products (zero weights skipped), at prec bits in arb."""
    if exact and all(type(x) is fmpq for row in X for x in row):
        return from_fmpq_mat(to_fmpq_mat(X) * to_fmpq_mat(W))
    if exact:
        return [_times_row(row, W) for row in X]
    with ctx.workprec(prec):
        return [[sum((x * W[t][c] for t, x in enumerate(row) if W[t][c] != 0), arb(0)) for c in range(len(W[0]))] for row in X]


def _times_row(row: list, W: Rows) -> list:
    """One exact row times W: a FLINT product in the row's common-denominator form (:mod:`rowforms`)."""
    return times_form(row_form(row), W)


def add(X: Rows, Y: Rows) -> Rows:
    return [[x + y for x, y in zip(xr, yr)] for xr, yr in zip(X, Y)]


def relu(x: Any, exact: bool) -> Any:
    """max(x, 0): the sign decided exactly in EE; in arb, the ball of max over the ball (rigorous)."""
    if exact:
        return EE.relu(x)
    return x.max(arb(0))


def attention_head(X: Rows, A: Rows, V: Rows, exact: bool, prec: int) -> Rows:
    """softmax(X A X^T)(X V), row-wise: exact in EE for rational X (:mod:`exact.softmax`), else in arb."""
    if exact:
        S, domain = _scores(X, A), EE
    else:
        domain = Ball(prec)
        with ctx.workprec(prec):
            S = [[sum((u * v for u, v in zip(xa, xk)), arb(0)) for xk in X] for xa in times(X, A, exact, prec)]
    P = softmax_rows(S, domain)
    W = times(X, V, exact, prec)
    with domain.context():
        return [[domain.sum([p * w[c] for p, w in zip(row, W)]) for c in range(len(V[0]))] for row in P]


def _scores(X: Rows, A: Rows) -> Rows:
    """X A X^T for X of rational values, in QQ (FLINT)."""
    fx = to_fmpq_mat([[x if type(x) is fmpq else x.rational_value() for x in row] for row in X])
    return from_fmpq_mat(fx * to_fmpq_mat(A) * fx.transpose())


def multihead(X: Rows, layer: Attention, exact: bool, prec: int) -> Rows:
    """[T_1(X), ..., T_h(X)] W_O."""
    outs = [attention_head(X, A, V, exact, prec) for A, V in layer.heads]
    concat = [sum((o[i] for o in outs), []) for i in range(len(X))]
    return times(concat, layer.wo, exact, prec)


def layer_norm(X: Rows, layer: LayerNorm, prec: int) -> Rows:
    """The row-wise layer norm in arb (sqrt leaves EE): balls containing the exact values (:mod:`exact.layer_norm`)."""
    return layer_norm_rows(X, layer.gamma, layer.beta, layer.delta, prec)
