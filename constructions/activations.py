"""Activation lemmas as uniform RASP constructions: row softmax, ReLU, MaxMin.

All are exact: ReLU and MaxMin decide signs exactly in QQ and EE (Lindemann–
Weierstrass zero test plus arb refinement, see :mod:`exact.expsum`); softmax of
rational scores is exact in EE because e^q is an element of EE.
"""

from __future__ import annotations

from attncert.constructions import rasp
from attncert.constructions.layout import Construction, Layout
from attncert.constructions.linalg import _check_sizes, gather, index_map
from attncert.constructions.rasp import Comparison as Cmp
from attncert.constructions.sizes.expr import SizeLike


def softmax_rows(r: SizeLike, c: SizeLike) -> Construction:
    """Row-wise softmax of an r x c score matrix S: out[i][j] = e^{S_ij} / sum_l e^{S_il}.

    Input vec(S), length rc. Layer 0 MLP: e = exp(S) and e/c; layer 1: one head averages
    e over the row (giving D_i / c), the MLP divides: (e/c) / (D_i/c). 2 layers, 1 head.
    """
    _check_sizes(r=r, c=c)
    e = rasp.numerical(rasp.Map(rasp.fn("exp"), rasp.tokens)).named("exp")
    e_over_c = rasp.numerical(rasp.Map(rasp.fn("compose", fns=(rasp.fn("exp"), rasp.fn("div_const", c=c))), rasp.tokens))
    row = index_map((0, c), (1, 0)).named("row")
    row_mean = rasp.numerical(rasp.Aggregate(rasp.Select(row, row, Cmp.EQ), e, default=0)).named("row_mean_exp")
    out = rasp.numerical(rasp.SequenceMap(rasp.fn("div"), e_over_c.named("exp_over_c"), row_mean)).named("softmax")
    return Construction("softmax", out, Layout((("S", r, c),), (r, c), r * c))


def relu(n: SizeLike) -> Construction:
    """ReLU(x) = max(x, 0) elementwise on a 1 x n row: one MLP map, 1 layer, exact sign."""
    _check_sizes(n=n)
    return Construction("relu", rasp.numerical(rasp.Map(rasp.fn("relu"), rasp.tokens)).named("relu"), Layout((("x", 1, n),), (1, n), n))


def maxmin(n: SizeLike) -> Construction:
    """MaxMin = GroupSort with groups of 2 on a 1 x n row (Anil, Lucas, Grosse, ICML 2019).

    Each adjacent pair (x_{2m}, x_{2m+1}) is sorted in descending order:
    out[2m] = max, out[2m+1] = min. For odd n the last element has no partner and is
    passed through unchanged. Layer 0 MLP: the partner position and the packed pair
    (x_t, t); layer 1: one gather head brings the partner's value, and one map picks
    max (t even) or min (t odd). 2 layers, 1 head.
    """
    _check_sizes(n=n)
    # partner of t = 2q + s is 2q + 1 - s; for odd n the last position is its own partner.
    partner = index_map((0, 2), (2, -1), const=1, bound=n - (n % 2), other=n - 1).named("partner")
    y = gather(partner).named("partner_value")
    packed = rasp.SequenceMap(rasp.fn("pack"), rasp.tokens, rasp.indices).named("value_and_position")
    out = rasp.numerical(rasp.SequenceMap(rasp.fn("maxmin_pick"), packed, y)).named("maxmin")
    return Construction("maxmin", out, Layout((("x", 1, n),), (1, n), n))
