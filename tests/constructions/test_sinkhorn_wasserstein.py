"""Exact W1 on the product support: POT agreement, a checkable certificate, enclosures."""

import random

import numpy as np
import pytest
from flint import arb, ctx, fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions.sinkhorn.problem import random_marginal, random_plan
from attncert.constructions.sinkhorn.wasserstein import W1Certificate, check, ground_distance, product_support, w1_enclosure, w1_exact


def _problem(seed, n, m):
    rng = random.Random(seed)
    xs = [[fmpq(rng.randint(-50, 50), 25), fmpq(rng.randint(0, 9), 7)] for _ in range(n)]
    ys = [[fmpq(rng.randint(-50, 50), 25)] for _ in range(m)]
    a, b = random_marginal(n, seed + 1), random_marginal(m, seed + 2)
    return xs, ys, random_plan(a, b, seed + 3), random_plan(a, b, seed + 4, swaps=3)


@settings(deadline=None, max_examples=15)
@given(st.integers(0, 10_000), st.integers(1, 4), st.integers(1, 4))
def test_w1_agrees_with_pot_and_its_certificate_checks(seed, n, m):
    ot = pytest.importorskip("ot")
    xs, ys, p, q = _problem(seed, n, m)
    c = w1_exact(p, q, xs, ys)
    assert check(c, p, q, xs, ys)
    cells = product_support(xs, ys)
    M = np.array([[float(ground_distance(u, v)) for v in cells] for u in cells])
    flat = lambda P: np.array([float(x) for r in P for x in r])  # noqa: E731
    assert abs(ot.emd2(flat(p), flat(q), M) - float(c.value)) < 1e-9


def test_a_tampered_certificate_fails():
    xs, ys, p, q = _problem(5, 3, 3)
    c = w1_exact(p, q, xs, ys)
    assert c.value > 0 and check(c, p, q, xs, ys)
    assert not check(W1Certificate(c.value * 2, c.flow, c.phi, c.psi), p, q, xs, ys)
    s = next(iter(c.phi))
    assert not check(W1Certificate(c.value, c.flow, {**c.phi, s: c.phi[s] + 1}, c.psi), p, q, xs, ys)
    assert not check(W1Certificate(c.value, c.flow[1:], c.phi, c.psi), p, q, xs, ys)


def test_w1_is_zero_for_equal_couplings_and_refuses_unequal_mass():
    xs, ys, p, _ = _problem(1, 2, 2)
    assert w1_exact(p, p, xs, ys).value == 0
    with pytest.raises(Exception, match="equal total mass"):
        w1_exact(p, [[x * 2 for x in r] for r in p], xs, ys)


def test_enclosure_contains_the_exact_value():
    xs, ys, p, q = _problem(9, 3, 4)
    exact = w1_exact(p, q, xs, ys).value
    with ctx.workprec(128):
        P = [[arb(x) * (1 + arb(0, fmpq(1, 10**20))) for x in r] for r in p]
        Q = [[arb(x) for x in r] for r in q]
    enc = w1_enclosure(P, Q, fmpq(1), xs, ys)
    lo, hi = enc.lo, enc.hi
    assert lo <= exact <= hi and hi - lo < fmpq(1, 10**15)
