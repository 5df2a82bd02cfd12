"""Exact optimal transport (constructions/transport): the optimum against an exact LP reference (networkx's network
simplex on integers, which shares no code with ours), the certificate re-checked here in Python Fractions, every
pivoting route exercised, the filter's signs against exact arithmetic, POT issue #229, and bad input."""

from __future__ import annotations

import math
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from attncert.constructions.transport import TransportInputError, optimal_transport, read_transport
from attncert.constructions.transport.pot import certify_plan, emd, emd2
from attncert.constructions.transport.reduced import ReducedCosts
from attncert.constructions.transport.start import least_cost
from attncert.constructions.transport.problem import TransportProblem
from attncert.constructions.transport.tree import NotATree, flows, spanning_tree


def exact_ot(a, b, M) -> Fraction:
    """min <P, M> over the plans of (a, b), exactly: networkx's network simplex on integer-scaled data."""
    a, b = [Fraction(x) for x in a], [Fraction(x) for x in b]
    M = [[Fraction(x) for x in row] for row in M]
    if sum(b) != sum(a):
        b = [x * sum(a) / sum(b) for x in b]
    da = math.lcm(*(x.denominator for x in a + b))
    dm = math.lcm(*(x.denominator for row in M for x in row))
    G = nx.DiGraph()
    for i, x in enumerate(a):
        G.add_node(("r", i), demand=-int(x * da))
    for j, x in enumerate(b):
        G.add_node(("c", j), demand=int(x * da))
    for i, row in enumerate(M):
        for j, c in enumerate(row):
            G.add_edge(("r", i), ("c", j), weight=int(c * dm))
    cost, _ = nx.network_simplex(G)
    return Fraction(cost, da * dm)


def check_certificate(cert, a, b, M) -> None:
    """The optimality certificate, re-checked in Fractions: a plan of (a, b) on the tree, potentials tight on it,
    every reduced cost >= 0, and the cost equal to the dual value."""
    n, m = len(M), len(M[0])
    a, b = [Fraction(x) for x in a], [Fraction(x) for x in b]
    if sum(b) != sum(a):
        b = [x * sum(a) / sum(b) for x in b]
    M = [[Fraction(x) for x in row] for row in M]
    P = cert.exact_plan()
    f = [Fraction(int(x.p), int(x.q)) for x in cert.f]
    g = [Fraction(int(x.p), int(x.q)) for x in cert.g]
    assert all(x >= 0 for row in P for x in row)
    assert [sum(row) for row in P] == a and [sum(P[i][j] for i in range(n)) for j in range(m)] == b
    assert all(M[i][j] - f[i] - g[j] >= 0 for i in range(n) for j in range(m))
    assert all(M[i][j] == f[i] + g[j] for i, j, _ in cert.arcs)
    primal = sum(P[i][j] * M[i][j] for i in range(n) for j in range(m))
    assert primal == sum(x * y for x, y in zip(a, f)) + sum(x * y for x, y in zip(b, g)) == Fraction(int(cert.cost.p), int(cert.cost.q))


def random_problem(rng, n, m, den=None):
    M = rng.integers(0, den, (n, m)) if den else rng.random((n, m))
    a, b = rng.random(n) + 0.01, rng.random(m) + 0.01
    return a / a.sum(), b / b.sum(), M


@pytest.mark.parametrize("n, m", [(1, 1), (1, 4), (4, 1), (3, 5), (8, 8), (17, 9)])
def test_the_optimum_is_the_exact_lp_optimum_and_its_certificate_checks(n, m):
    a, b, M = random_problem(np.random.default_rng(n * 31 + m), n, m)
    G, cert = emd(a, b, M)
    assert Fraction(cert.cost.p, cert.cost.q) == exact_ot(a, b, M.tolist())
    check_certificate(cert, a.tolist(), b.tolist(), M.tolist())
    assert np.allclose(G.sum(axis=1), a, rtol=0, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(1, 6),
    st.integers(0, 2**32 - 1),
    st.sampled_from([2, 5, 1000]),
)
def test_ties_and_degenerate_problems_from_every_start(n, m, seed, den):
    """Integer costs in a small range (many ties), masses with zeros and equal partial sums (degenerate bases):
    from POT's basis, from the matrix-minimum basis in a random order, and from a random spanning tree."""
    rng = np.random.default_rng(seed)
    M = [[int(x) - den // 2 for x in row] for row in rng.integers(0, den, (n, m))]
    a = [Fraction(int(x), 6) for x in rng.integers(0, 3, n)]
    b = [Fraction(int(x), 6) for x in rng.integers(0, 3, m)]
    a[0] += 1
    b[-1] += sum(a) - sum(b) if sum(a) >= sum(b) else 0
    a[-1] += sum(b) - sum(a) if sum(b) > sum(a) else 0
    ref = exact_ot(a, b, M)
    problem = read_transport(a, b, M)
    starts = [None, least_cost(problem.a, problem.b, rng.permutation(n * m)), _random_tree(rng, n, m)]
    for start in starts:
        cert = optimal_transport(problem, start=start)
        assert Fraction(cert.cost.p, cert.cost.q) == ref
        check_certificate(cert, a, b, M)


def _random_tree(rng, n, m):
    """A uniformly shuffled spanning tree of the bipartite graph (neither primal nor dual feasible, in general)."""
    nodes = rng.permutation(n + m).tolist()
    rows, cols, placed = [], [], [nodes[0]]
    for v in nodes[1:]:
        others = [w for w in placed if (w < n) != (v < n)]
        if not others:  # v only has neighbours of its own kind so far: connect to any placed node of the other kind later
            continue
        w = others[rng.integers(len(others))]
        i, j = (v, w - n) if v < n else (w, v - n)
        rows.append(i)
        cols.append(j)
        placed.append(v)
    missing = [v for v in nodes if v not in placed]
    for v in missing:
        w = next(w for w in placed if (w < n) != (v < n))
        rows.append(v if v < n else w)
        cols.append(w - n if v < n else v - n)
        placed.append(v)
    return spanning_tree(n, m, rows, cols)


def test_each_pivot_kind_is_taken_and_ends_optimal():
    rng = np.random.default_rng(3)
    a, b, M = random_problem(rng, 12, 10)
    problem = read_transport(a, b, M)
    ref = exact_ot(a, b, M.tolist())
    worst = least_cost(problem.a, problem.b, np.argsort(-M, axis=None))  # feasible, far from optimal: primal pivots
    cert = optimal_transport(problem, start=worst)
    assert cert.pivots.primal > 0 and Fraction(cert.cost.p, cert.cost.q) == ref
    seen = {"dual": False, "restart": False}
    for seed in range(30):
        cert = optimal_transport(problem, start=_random_tree(np.random.default_rng(seed), 12, 10))
        assert Fraction(cert.cost.p, cert.cost.q) == ref
        seen["dual"] |= cert.pivots.dual > 0
        seen["restart"] |= cert.pivots.restarted
    assert seen["restart"]
    # dual pivots: the optimal tree stays dual feasible for other marginals; move mass between two columns until
    # its flows for them are negative somewhere, and solve from it
    opt = optimal_transport(problem)
    for j, k in [(j, k) for j in range(10) for k in range(10) if j != k]:
        moved_b = list(problem.b)
        moved_b[j], moved_b[k] = moved_b[j] + moved_b[k] * 9 / 10, moved_b[k] / 10
        if min(flows(opt.basis.tree, problem.a, moved_b)) < 0:
            break
    else:
        pytest.fail("no move of mass makes the optimal tree primal infeasible")
    moved = TransportProblem(problem.a, moved_b, problem.cost)
    cert = optimal_transport(moved, start=opt.basis.tree)
    assert cert.pivots.dual > 0 and cert.pivots.primal == 0 and not cert.pivots.restarted
    exact_b = [Fraction(int(x.p), int(x.q)) for x in moved_b]
    assert Fraction(cert.cost.p, cert.cost.q) == exact_ot([Fraction(x) for x in a], exact_b, M.tolist())
    check_certificate(cert, [Fraction(x) for x in a], exact_b, M.tolist())


def test_float_marginals_that_do_not_sum_exactly_are_scaled_and_the_plan_is_exact():
    n = 100  # 1/100 is no double: np.ones(n)/n sums to 1 only up to rounding
    rng = np.random.default_rng(7)
    x, y = rng.random((n, 2)), rng.random((n, 2))
    M = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    a = np.ones(n) / n
    b = rng.random(n)
    b /= b.sum()
    G, cert = emd(a, b, M)
    check_certificate(cert, a.tolist(), b.tolist(), M.tolist())
    assert float(emd2(a, b, M)) == pytest.approx(float(exact_ot(a.tolist(), b.tolist(), M.tolist())), rel=0, abs=0)


def test_pot_issue_229_the_plan_of_ot_emd_is_not_optimal_with_its_exact_gap():
    ot = pytest.importorskip("ot")
    M = np.array(
        [
            [2.50275352e02, 3.74653218e02, 2.41352736e03, 1.00000000e32, 1.51751540e-03],
            [2.13082030e02, 3.28812836e02, 2.29487946e03, 1.00000000e32, 1.37109800e-01],
            [1.97333083e02, 3.09175848e02, 2.24250550e03, 1.00000000e32, 2.46506283e00],
            [1.00000000e32, 1.00000000e32, 1.00000000e32, 5.26223432e00, 2.50000000e31],
            [3.84690152e01, 8.09465684e01, 3.33064175e02, 2.50000000e31, 0.00000000e00],
        ]
    )
    a = np.array([0.125, 0.125, 0.125, 0.125, 0.5])
    P = ot.emd(a, a, M, numItermax=2000000)
    v = certify_plan(a, a, M, P)
    W = exact_ot(a.tolist(), a.tolist(), M.tolist())
    cost_P = sum(Fraction(p) * Fraction(c) for p, c in zip(P.ravel().tolist(), M.ravel().tolist()))
    assert Fraction(v.optimum.cost.p, v.optimum.cost.q) == W
    assert Fraction(v.cost.p, v.cost.q) == cost_P
    if v.feasible and cost_P > W:  # POT's plan (in the reported versions) is feasible and not optimal
        assert not v.optimal and Fraction(v.gap.p, v.gap.q) == cost_P - W > 0
    Q = np.array([[0, 0, 0, 0, 1], [0, 0, 0, 0, 1], [0, 0, 0, 0, 1], [0, 0, 0, 1, 0], [1, 1, 1, 0, 1]]) / 8
    good = certify_plan(a, a, M, Q)  # the issue's optimal plan
    assert good.feasible and good.optimal and good.gap == 0 and good.complementary
    check_certificate(good.optimum, a.tolist(), a.tolist(), M.tolist())


def test_a_plan_is_judged_exactly_feasible_optimal_or_not():
    rng = np.random.default_rng(11)
    a, b, M = random_problem(rng, 6, 5, den=4)
    G, cert = emd(a, b, M)
    exact = [[Fraction(x) for x in row] for row in cert.exact_plan()]
    v = certify_plan(a, b, M, exact)
    assert v.feasible and v.optimal and v.gap == 0 and v.complementary
    indep = np.outer(a, b)  # a plan of (a, b) up to rounding: not optimal on this cost
    w = certify_plan(a, b, M, indep)
    assert w.nonnegative and w.cost > cert.cost and not w.optimal and not w.complementary
    bad = np.array(G)
    bad[0, 0] -= 1.0
    assert not certify_plan(a, b, M, bad).nonnegative


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1e-300, 1e-5, 1.0, 1e20, 1e300]), st.booleans())
def test_the_filter_never_mislabels_a_sign(seed, scale, ties):
    """Every sign the float filter proves agrees with exact arithmetic, and undecided entries are decided exactly."""
    rng = np.random.default_rng(seed)
    n, m = 7, 6
    M = rng.random((n, m)) * scale
    problem = read_transport([], [], M)
    f, g = rng.random(n) * scale, rng.random(m) * scale
    if ties:  # potentials tight on some entries, so that r is exactly 0 there (or within rounding of it)
        g[: min(n, m)] = M[np.arange(min(n, m)), np.arange(min(n, m))] - f[: min(n, m)]
    from flint import fmpq

    fq = [fmpq(*float(x).as_integer_ratio()) for x in f]
    gq = [fmpq(*float(x).as_integer_ratio()) for x in g]
    R = ReducedCosts(problem.cost, fq, gq)
    rows, cols = np.nonzero(np.ones((n, m), dtype=bool))
    exact = R.exact(rows, cols)
    for i, j, r in zip(rows, cols, exact):
        if R.s[i, j] > R.bound[i, j]:
            assert r > 0
        if R.s[i, j] < -R.bound[i, j]:
            assert r < 0
    neg = R.negative()
    assert (neg is None) == all(r >= 0 for r in exact)
    if neg is not None:
        assert exact[neg[0] * m + neg[1]] < 0
    first = R.first_negative()
    assert first == next(((int(i), int(j)) for i, j, r in zip(rows, cols, exact) if r < 0), None)
    lo = R.minimum(np.ones(n, dtype=bool), np.ones(m, dtype=bool))
    assert lo[2] == min(exact)


def test_exact_rational_costs_and_huge_or_tiny_entries():
    M = [["1/3", "10^400", 0], ["2/7", "-5", "1e-400"]]
    M = [[Fraction(1, 3), 10**400, 0], [Fraction(2, 7), -5, Fraction(1, 10**400)]]
    a, b = [Fraction(1, 2), Fraction(1, 2)], [Fraction(1, 3), Fraction(1, 3), Fraction(1, 3)]
    G, cert = emd(a, b, M)
    assert Fraction(cert.cost.p, cert.cost.q) == exact_ot(a, b, M)
    check_certificate(cert, a, b, M)


@pytest.mark.parametrize(
    "args, message",
    [
        (([1, 2], [4], [[1], [2]]), "different totals"),
        (([1, -1, 2], [2], [[1], [2], [3]]), ">= 0"),
        (([1], [1], np.array([[np.nan]])), "NaN"),
        (([1], [1], [[float("inf")]]), "not a finite number"),
        (([1, 1], [2], [[1, 2]]), "shapes disagree"),
        (([1], [1], np.ones((1, 1, 1))), "non-empty n x m"),
        (([1], np.ones((1, 3)) / 3, np.ones((1, 1))), "shapes disagree"),
        ((np.ones(2) / 2, np.ones((2, 3)) / 2, np.ones((2, 2))), "batch"),
        (([0, 0], [0], [[1], [2]]), "no mass"),
        (([1], [1], [1, 2]), "cost matrix"),
        (([1], [1], [["x"]]), "M:"),
    ],
)
def test_bad_input_is_one_line(args, message):
    with pytest.raises(TransportInputError, match=message) as e:
        emd(*args)
    assert "\n" not in str(e.value)


def test_pot_options_and_log():
    with pytest.raises(TransportInputError, match="log=True"):
        emd([1], [1], [[1]], log=True)
    with pytest.raises(TypeError, match="reg"):
        emd([1], [1], [[1]], reg=1)
    G, cert = emd([1], [1], [[1]], numItermax=5)
    assert G.tolist() == [[1.0]] and cert.cost == 1


def test_not_a_tree_is_refused():
    with pytest.raises(NotATree):
        spanning_tree(2, 2, [0, 1, 0], [0, 1, 1][:2] + [0])  # (0,0), (1,1), (0,0): a repeated arc, not connected


@pytest.mark.parametrize("kind", ["permutation", "issue 229"])
def test_a_plan_without_duals_starts_from_its_support_with_bellman_ford_duals(kind):
    """certify_plan's route without POT: G's support, completed by duals of its own; the optimum is exact either way."""
    ot = pytest.importorskip("ot")
    if kind == "permutation":
        rng = np.random.default_rng(4)
        n = 40
        M = ot.dist(rng.random((n, 2)), rng.random((n, 2)))
        a = b = np.ones(n) / n
    else:
        M = np.array([[1.0, 1e32, 2.0], [3.0, 1.0, 1e32], [1e-3, 2.0, 1.0]])
        a = b = np.array([0.25, 0.25, 0.5])
    P = ot.emd(a, b, M)
    problem = read_transport(a, b, M)
    cert = optimal_transport(problem, G=P)  # no duals: start.plan_duals
    assert cert.start == "the given plan's basis"
    assert Fraction(cert.cost.p, cert.cost.q) == exact_ot(a.tolist(), b.tolist(), M.tolist())
    check_certificate(cert, a.tolist(), b.tolist(), M.tolist())
    if kind == "permutation":
        assert cert.pivots.primal + cert.pivots.dual == 0  # the duals completed POT's basis
