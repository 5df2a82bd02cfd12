r"""One Sinkhorn Transformer per width, fitted once to a family of texts; certified W1 errors pair by pair.

The approximation theorem for Sinkhorn Transformers is uniform over a compact
set of texts: for a continuous coupling system F (:mod:`constructions.sinkhorn.systems`)
one network T approximates F(mu, nu) in W1 for all (mu, nu) at once. We
demonstrate it on a family of text pairs (:class:`~constructions.sinkhorn.texts.Family`):
one network of width w is fitted to the *fit* pairs, its weights are fixed as
rationals, and W1(F(mu, nu), T(mu, nu)) is bounded rigorously on every fit pair
and on *held-out* pairs it never saw.

The width-w network (:func:`feature_encoder`): tokens (x, a, 1) on a residual
stream [x, a, 1, c, r_1, ..., r_{w-2}]; one attention head with score BETA x_i x_k
and value a_k writes c = sum_k softmax_k(BETA x_i x_k) a_k, the text's mass as
seen from x_i (an in-context feature: it depends on every token); a ReLU MLP
writes r_k = ReLU(x - t_k) at knots t_k = -1 + 2k/(w - 1); the readout keeps
phi(mu, x) = (x, c, r_1, ..., r_{w-2}) (width 1: x alone; width 2: x and c).
The query encoder's readout is followed by a rational w x w matrix M, the key
encoder's is not: C_ij = -phi(mu, x_i) M phi(nu, y_j)^T.

The fit: by Sinkhorn's fixed-point theorem (:mod:`constructions.sinkhorn.fixed_point`)
F is reproduced exactly by any cost equal to -eps log F up to f(x) + g(y). So M
minimises, over all fit pairs at once, a weighted squared distance between
phi M phi^T + f + g and eps log F (:func:`fit_weights`): a linear least-squares
problem in float64 (the only floats), whose solution is rounded to multiples of
2^-FIT_BITS. Everything after the fit is exact or certified: the cost is exact
in EE, the coupling a certified Ball enclosure, and W1 is enclosed by
:func:`constructions.sinkhorn.wasserstein.w1_enclosure` (exact W1 of rational
representatives, LP duality, and the rigorous slack (diam/2)(||P - P~||_1 + ||F - F~||_1)).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from flint import fmpq

from attncert.constructions.sinkhorn.encoder import MLP, Attention, Encoder, forward_balls
from attncert.constructions.sinkhorn.graph import SinkhornLayer
from attncert.constructions.sinkhorn.systems import TargetPlan
from attncert.constructions.sinkhorn.texts import Text
from attncert.constructions.sinkhorn.transformer import ModelRun, SinkhornTransformer
from attncert.constructions.sinkhorn.wasserstein import W1Enclosure, w1_enclosure
from attncert.exact.errors import UndecidedError
from attncert.exact.matrices import Rows, from_fmpq_mat, to_fmpq_mat

#: Fitted weights are rounded to multiples of 2^-FIT_BITS.
FIT_BITS = 24
#: The attention head's score is BETA x_i x_k.
BETA = fmpq(1)
#: Precision (bits) of the float features the fit uses (midpoints of arb balls).
FIT_PREC = 64
#: The fit weighs the squared error of cell (i, j) by F_ij^FIT_WEIGHT_POWER.
FIT_WEIGHT_POWER = 0.5


def knots(count: int) -> list[fmpq]:
    """t_k = -1 + 2k / (count + 1), k = 1..count: equally spaced inside (-1, 1)."""
    return [fmpq(-1) + fmpq(2 * k, count + 1) for k in range(1, count + 1)]


def _zeros(r: int, c: int) -> Rows:
    return [[fmpq(0)] * c for _ in range(r)]


def _unit(r: int, c: int, ones: Sequence[tuple[int, int]], value: fmpq = fmpq(1)) -> Rows:
    M = _zeros(r, c)
    for i, j in ones:
        M[i][j] = value
    return M


def feature_encoder(width: int, readout: Rows | None = None) -> Encoder:
    """The width-w in-context feature map phi(mu, .) (module docstring), its readout followed by ``readout`` if given."""
    f = max(width - 2, 0)
    d = 4 + f  # x, a, 1, c, r_1..r_f
    E = _unit(3, d, [(0, 0), (1, 1), (2, 2)])
    layers: list = []
    if width >= 2:
        layers.append(Attention(((_unit(d, d, [(0, 0)], BETA), _unit(d, 1, [(1, 0)])),), _unit(1, d, [(0, 3)])))
    if width >= 3:
        w1 = _unit(d, f, [(0, k) for k in range(f)])
        layers.append(MLP(w1, [-t for t in knots(f)], _unit(f, d, [(k, 4 + k) for k in range(f)]), [fmpq(0)] * d))
    S = _unit(d, width, [(0, 0)] + ([(3, 1)] if width >= 2 else []) + [(4 + k, 2 + k) for k in range(f)])
    if readout is not None:
        S = from_fmpq_mat(to_fmpq_mat(S) * to_fmpq_mat(readout))
    return Encoder(E, tuple(layers), S)


def network(width: int, M: Rows, layer: SinkhornLayer) -> SinkhornTransformer:
    """C_ij = -phi(mu, x_i) M phi(nu, y_j)^T, then the Sinkhorn layer."""
    return SinkhornTransformer.build(feature_encoder(width, M), feature_encoder(width), layer)


def float_features(enc: Encoder, text: Text) -> np.ndarray:
    """phi(mu, .) in float64, for the fit only: the layers run in arb at FIT_PREC bits, midpoints taken."""
    return np.array([[float(v.mid()) for v in row] for row in forward_balls(enc, text.points, text.weights, FIT_PREC)])


def fit_weights(width: int, pairs: Sequence[tuple[Text, Text]], targets: Sequence[TargetPlan], eps: fmpq) -> Rows:
    """M (and per-pair f, g) minimising the weighted least-squares error over all fit pairs at once, rounded to 2^-FIT_BITS:

        sum_pairs sum_ij F_ij^(1/2) (phi(mu, x_i) M phi(nu, y_j)^T + f_i + g_j - eps log F_ij)^2.

    -C/eps = phi M phi^T / eps must be log F up to f_i + g_j for the plan to be F
    (the scalings absorb f and g, so they are unknowns of the fit, not of the
    network). The weight F_ij^(1/2) makes heavy cells count more, as they do in W1
    (a first-order change of the plan is F_ij times the change of log F_ij); on the
    families we measured it gave lower and more regular W1 maxima than weights 1 or
    F_ij (docs/sinkhorn.md). vec(Phi M Psi^T) = (Psi kron Phi) vec(M) (column-major). Each pair's f, g are
    eliminated by projecting its equations onto the complement of their columns (the same minimiser, and a
    system in the w^2 entries of M only).
    """
    enc = feature_encoder(width)
    rows, rhs = [], []
    for (mu, nu), F in zip(pairs, targets):
        Fm = np.array([[float(x.mid()) for x in r] for r in F.plan])
        root = (Fm ** (FIT_WEIGHT_POWER / 2)).ravel(order="F")[:, None]  # sqrt of the weight, per equation
        n, m = Fm.shape
        A = root * np.kron(float_features(enc, nu), float_features(enc, mu))
        t = root * float(eps) * np.log(Fm).ravel(order="F")[:, None]
        B = root * np.hstack([np.kron(np.ones((m, 1)), np.eye(n)), np.kron(np.eye(m), np.ones((n, 1)))])
        # The pair's own f, g eliminated: project A and t onto the orthogonal complement of B's columns.
        At = np.hstack([A, t])
        At = At - B @ np.linalg.lstsq(B, At, rcond=None)[0]
        rows.append(At[:, :-1])
        rhs.append(At[:, -1])
    M = np.linalg.lstsq(np.vstack(rows), np.concatenate(rhs), rcond=None)[0].reshape(width, width, order="F")
    scale = 2**FIT_BITS
    return [[fmpq(int(round(v * scale)), scale) for v in row] for row in M]


@dataclass(frozen=True)
class PairBound:
    """One pair of texts: the network's certified run and the enclosure of W1(T(mu, nu), F(mu, nu))."""

    run: ModelRun
    w1: W1Enclosure


def certify_pair(model: SinkhornTransformer, mu: Text, nu: Text, F: TargetPlan) -> PairBound:
    """The network's coupling (certified; UndecidedError, an ArithmeticError, if not) and certified bounds on its W1 error."""
    run = model(mu, nu)
    if not run.result.certified:  # one line for the user (tol below what the run reaches): not a bug
        raise UndecidedError(f"the network's coupling is not certified: {run.result.status}")
    return PairBound(run, w1_enclosure(run.result.plan, F.plan, fmpq(1), mu.points, nu.points))


@dataclass(frozen=True)
class WidthRow:
    """One width: the fitted model and the certified bounds on the fit pairs and the held-out pairs."""

    width: int
    model: SinkhornTransformer
    fit: list[PairBound]
    held_out: list[PairBound]

    @property
    def fit_max(self) -> fmpq:
        return max(p.w1.hi for p in self.fit)

    @property
    def held_out_max(self) -> fmpq | None:
        return max((p.w1.hi for p in self.held_out), default=None)


def width_row(
    width: int,
    M: Rows,
    layer: SinkhornLayer,
    fit: Sequence[tuple[tuple[Text, Text], TargetPlan]],
    held_out: Sequence[tuple[tuple[Text, Text], TargetPlan]],
    tick: Callable[[], None] = lambda: None,
) -> WidthRow:
    """The network with readout M, certified on every pair (``tick`` after each)."""
    model = network(width, M, layer)

    def bound(item: tuple[tuple[Text, Text], TargetPlan]) -> PairBound:
        (mu, nu), F = item
        b = certify_pair(model, mu, nu, F)
        tick()
        return b

    return WidthRow(width, model, [bound(x) for x in fit], [bound(x) for x in held_out])
