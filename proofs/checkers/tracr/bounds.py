"""The arithmetic of the induction's bounds (:mod:`.every_input`): exact rationals from arb balls, rounded outward.

Balls are arb's at the working precision; a bound leaves them as a rational: an endpoint of the ball, exact
(arb's ``lower()`` and ``upper()``, dyadics of at most the precision's bits), then kept to BITS significant
bits rounded outward (:func:`up`, :func:`down`), so that the recorded numbers stay short. Here too: the
leaked share r/(1 + r) of a softmax (:func:`share`), the projections of many configurations' rows as one
arb_mat product, and a ReLU block mapped exactly on a box (:func:`relu_box`: affine where every unit's sign is
decided, |J| r with J = W_2^T diag(active) W_1^T; bisected where not).
"""

from __future__ import annotations

from typing import Any

from flint import arb, arb_mat, fmpq

from attncert.proofs.checkers.programs import Unsupported
from attncert.proofs.checkers.tracr.model import GRID

#: Significant bits a recorded radius or margin keeps (rounded outward).
BITS = 32

Row = dict[int, fmpq]


def up(q: fmpq) -> fmpq:
    """q rounded up to BITS significant bits (a bound stays a bound, and the record stays short)."""
    if q <= 0:
        return -down(-q) if q < 0 else q
    p, d = int(q.p), int(q.q)
    shift = BITS - (p.bit_length() - d.bit_length())
    num = (p << shift) if shift >= 0 else p
    den = d if shift >= 0 else d << -shift
    return fmpq(-(-num // den), 1 << shift) if shift >= 0 else fmpq(-(-num // den) << -shift)


def down(q: fmpq) -> fmpq:
    """q rounded down to BITS significant bits."""
    if q <= 0:
        return -up(-q)
    p, d = int(q.p), int(q.q)
    shift = BITS - (p.bit_length() - d.bit_length())
    if shift >= 0:
        return fmpq((p << shift) // d, 1 << shift)
    return fmpq((p // (d << -shift)) << -shift)


def dyadic(x: arb, upward: bool) -> fmpq:
    """The exact value of an exact ball (an endpoint arb gives), moved outward to 2^-GRID when it is below
    it in magnitude (a causal model's masked keys weigh about e^{-10^30})."""
    if not x.is_finite():
        raise Unsupported("a bound of the induction is not finite")
    m, e = x.man_exp()
    m, e = int(m), int(e)
    if m.bit_length() + e > GRID:
        raise Unsupported(f"a bound of the induction is over 2^{GRID}")
    if e >= 0:
        return fmpq(m << e)
    if m.bit_length() + e < -GRID:
        return fmpq(1 if upward and m > 0 else -1 if not upward and m < 0 else 0, 1 << GRID) if m else fmpq(0)
    return fmpq(m, 1 << -e)


def hi(x: arb) -> fmpq:
    """An upper bound of the ball: its upper endpoint at the working precision, rounded upward (arb's
    upper(); a dyadic of at most PRECISION bits, so that the rationals built from it stay short)."""
    return dyadic(x.upper(), True)


def lo(x: arb) -> fmpq:
    """A lower bound of the ball (arb's lower(), rounded downward)."""
    return dyadic(x.lower(), False)


def ends(x: arb) -> tuple[fmpq, fmpq]:
    return lo(x), hi(x)


def ball(c: fmpq, r: fmpq) -> arb:
    """A ball holding [c - r, c + r]."""
    return arb(c) if r == 0 else arb(c - r).union(arb(c + r))


def dev(x: arb, c: fmpq) -> fmpq:
    """An upper bound of |y - c| over the ball x."""
    a, b = ends(x)
    return max(abs(a - c), abs(b - c))


def as_q(x: arb) -> tuple[int, int]:
    """The exact rational value of an arb's midpoint (a dyadic), as (p, q)."""
    m, e = x.man_exp() if hasattr(x, "man_exp") else x.mid().man_exp()
    m, e = int(m), int(e)
    return (m << e, 1) if e >= 0 else (m, 1 << -e)


def share(x: arb, k: int) -> arb:
    """The leaked share: with the selected weights summing to at least k e^{m_lo} and the others' to at most
    x e^{m_lo}, the others hold lambda = A_O / (A_S + A_O) <= r / (1 + r) = 1 - 1/(1 + r), r = x / k (increasing
    in A_O / A_S), and at most 1: a ball whose upper end bounds it (x may be past any rational we keep)."""
    lam = 1 - 1 / (1 + (x / k).upper())
    return lam if lam < 1 else arb(1)


def top(xs: list[arb]) -> arb | None:
    if not xs:
        return None
    return arb(max(hi(x) for x in xs))


def dot(a: list[arb], b: list[arb]) -> arb:
    s = arb(0)
    for x, y in zip(a, b):
        s += x * y
    return s


def project(cfgs: list[Any], m: Any, block: list[int], centre: bool = False) -> list[list[arb]]:
    """(x W + b)[block] for each configuration's row, balls (its centre alone with ``centre``): one product
    [x[read], 1] [W[read, block]; b[block]], ``read`` the rows of W reaching the block."""
    _, _, w, b = m
    at = {j: n for n, j in enumerate(block)}
    read = sorted({i for (i, j) in w if j in at})
    if not cfgs or not block:
        return [[] for _ in cfgs] if not block else []
    row = {i: n for n, i in enumerate(read)}
    dense = [[fmpq(0)] * len(block) for _ in range(len(read) + 1)]
    for (i, j), a in w.items():
        if j in at:
            dense[row[i]][at[j]] = a
    for j, a in b.items():
        if j in at:
            dense[len(read)][at[j]] = a
    one = arb(1)
    xs = arb_mat([[ball(c.centre.get(i, fmpq(0)), fmpq(0) if centre else c.radius.get(i, fmpq(0))) for i in read] + [one] for c in cfgs])
    return (xs * arb_mat(dense)).tolist()


def project_ball(row: list[arb], m: Any, block: list[int]) -> list[arb]:
    _, _, w, b = m
    out = [arb(b.get(j, fmpq(0))) for j in block]
    at = {j: n for n, j in enumerate(block)}
    for (i, j), a in w.items():
        if j in at:
            out[at[j]] += row[i] * arb(a)
    return out


def value_out(vs: list[list[arb]], wo: Any, block: list[int], writes: list[int]) -> list[list[arb]]:
    """Each head value through W_O, in the columns it writes."""
    if not vs:
        return []
    at = {j: n for n, j in enumerate(block)}
    to = {c: n for n, c in enumerate(writes)}
    dense = [[fmpq(0)] * len(writes) for _ in block]
    for (i, c), a in wo[2].items():
        if i in at and c in to:
            dense[at[i]][to[c]] = a
    return (arb_mat(vs) * arb_mat(dense)).tolist()


def relu_box(x0: Row, r0: Row, W1: dict[int, Row], B1: dict[int, fmpq], W2: dict[int, Row], cols: list[int], depth: int) -> tuple[dict[int, tuple[fmpq, fmpq]], int]:
    """[lo, hi] of each output column of relu(x W_1 + b_1) W_2 over the box x0 +- r0, exactly (module
    docstring: affine where every unit's sign is decided, bisected where not); and the pieces used."""
    pre = {u: B1[u] + sum((x0[i] * a for i, a in W1[u].items() if x0.get(i, 0) != 0), fmpq(0)) for u in W1}
    spread = {u: sum((r0[i] * abs(a) for i, a in W1[u].items() if r0.get(i, 0) != 0), fmpq(0)) for u in W1}
    unstable = [u for u in W1 if pre[u] - spread[u] < 0 < pre[u] + spread[u]]
    if unstable and depth > 0:
        weight = {i: sum(abs(W1[u].get(i, 0)) for u in unstable) * r for i, r in r0.items() if r != 0}
        i = max(sorted(weight), key=lambda j: weight[j])
        half = r0[i] / 2
        a, ka = relu_box({**x0, i: x0[i] - half}, {**r0, i: half}, W1, B1, W2, cols, depth - 1)
        b, kb = relu_box({**x0, i: x0[i] + half}, {**r0, i: half}, W1, B1, W2, cols, depth - 1)
        return {c: (min(a[c][0], b[c][0]), max(a[c][1], b[c][1])) for c in cols}, ka + kb
    want = set(cols)
    centre = {c: fmpq(0) for c in cols}
    radius = {c: fmpq(0) for c in cols}
    J: dict[int, dict[int, fmpq]] = {c: {} for c in cols}
    for u in W1:
        if pre[u] - spread[u] >= 0:  # active: affine
            moving = [(i, a) for i, a in W1[u].items() if r0.get(i, 0) != 0]
            for c, w in W2[u].items():
                if c in want:
                    centre[c] += w * pre[u]
                    for i, a in moving:
                        J[c][i] = J[c].get(i, fmpq(0)) + w * a
        elif pre[u] + spread[u] > 0:  # undecided: relu(z) in [0, z_hi]
            top = pre[u] + spread[u]
            for c, w in W2[u].items():
                if c in want:
                    centre[c] += w * top / 2
                    radius[c] += abs(w) * top / 2
    out = {}
    for c in cols:
        rc = radius[c] + sum((abs(j) * r0[i] for i, j in J[c].items()), fmpq(0))
        out[c] = (centre[c] - rc, centre[c] + rc)
    return out, 1
