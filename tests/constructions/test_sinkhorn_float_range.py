"""Numbers outside float64's range: attncert.sinkhorn raises only its documented errors (SinkhornInputError with
the figure, or NotCertified), and what the float paths can hold after all is certified (issue 30, section 3).

The root cause was float64 conversions of the user's numbers in the paths that start from float iterations:
Delta(K) for the Krawczyk ladder, -C/eps, the masses, eps and tol, and each plan entry's distance as a rational.
The expected plans below come from the mathematics (the entropic plan tends to the optimal transport plan, and is
the product coupling when the cost is negligible), never from the code under test.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
import pytest
from flint import fmpq

import attncert
from attncert.constructions.sinkhorn import SinkhornInputError, sinkhorn as operator_sinkhorn
from attncert.constructions.sinkhorn.continuation import continuation_start
from attncert.constructions.sinkhorn.hilbert import projective_diameter
from attncert.constructions.sinkhorn.pot import NotCertified
from attncert.constructions.sinkhorn.problem import read_problem
from attncert.exact import Ball, Float
from attncert.exact.limits import Limits, limits

HALF = ["1/2", "1/2"]


@pytest.mark.parametrize("M", [[["1e308", "0"], ["-1e308", "0"]], np.array([[1e308, 0.0], [-1e308, 0.0]])], ids=["lists", "numpy"])
def test_the_audits_cost_is_refused_with_its_figure(M):
    # Was: OverflowError from float(Delta) in the Krawczyk ladder (Delta = 2e308).
    with pytest.raises(SinkhornInputError, match=r"max \|C_ij\| / eps = 1\.00e\+308, over the limit of 2\^53"):
        attncert.sinkhorn(HALF, HALF, M, "1")


@pytest.mark.parametrize(
    "a, M, reg, match",
    [
        (HALF, [["1e400", "1e400"], ["1e400", "1e400"]], "1", r"= 1\.00e\+400"),  # a constant cost: -C/eps had no double
        (HALF, np.array([[1e308, 1e308], [-1e308, -1e308]]), "1", r"= 1\.00e\+308"),  # rows 2e308 apart: NaN start
        (HALF, [["1", "0"], ["0", "1"]], "1e-400", r"= 1\.00e\+400"),  # eps below the doubles
        (HALF, [["1", "0"], ["0", "1"]], "1e-300", r"= 1\.00e\+300"),  # ran for minutes
        (["1e-400", "1"], [["1", "0"], ["0", "1"]], "1", r"a\[0\] = 1\.00e-400 is outside float64's normal range"),
        (["1e400", "1"], [["1", "0"], ["0", "1"]], "1", r"a\[0\] = 1\.00e\+400 is outside float64's normal range"),
        (np.array([1e-320, 1.0]), np.array([[1.0, 0.0], [0.0, 1.0]]), "1", r"a\[0\] = 1\.00e-320"),
    ],
)
def test_numbers_beyond_the_doubles_are_one_input_error(a, M, reg, match):
    with pytest.raises(SinkhornInputError, match=match):
        attncert.sinkhorn(a, a, M, reg)


@pytest.mark.parametrize(
    "reg, M",
    [
        ("1e400", [["1", "0"], ["0", "1"]]),  # 1/eps below the doubles
        ("1", [["1/" + "1" + "0" * 400, "0"], ["0", "0"]]),  # a denominator of 10^400
        ("1", np.array([[5e-324, 0.0], [0.0, 0.0]])),  # a subnormal: the common denominator is 2^1074
    ],
    ids=["huge reg", "huge denominator", "subnormal cost"],
)
def test_a_negligible_cost_gives_the_product_coupling(reg, M):
    # |C_ij / eps| <= 1e-300: K is 1 to far below the bound, so P* = a b^T / sum(a) (Sinkhorn on the all-ones kernel).
    a, b = [Fraction(1, 3), Fraction(2, 3)], [Fraction(1, 4), Fraction(3, 4)]
    G, bound = attncert.sinkhorn([str(x) for x in a], [str(x) for x in b], M, reg)
    assert bound < Fraction(1, 10**15)
    for i, ai in enumerate(a):
        for j, bj in enumerate(b):
            assert abs(Fraction(G[i, j]) - ai * bj) <= bound + Fraction(1, 10**290)


def test_a_large_delta_gives_the_optimal_transport_plan():
    # Delta(K) = 2e12. On [[0, 1], [1, 0]] with a = (1/3, 2/3), b = (1/2, 1/2) the transport plan of least cost puts
    # min(a_1, b_1) on (1, 1) and all of b_2 on (2, 2); the entropic plan differs from it by about e^-(1e12). Was: FLINT
    # aborted the process converting an entry's distance e^-(2e12) to a rational.
    G, bound = attncert.sinkhorn(["1/3", "2/3"], HALF, [["0", "1"], ["1", "0"]], "1e-12")
    assert bound < Fraction(1, 10**16)
    optimal = [[Fraction(1, 3), Fraction(0)], [Fraction(1, 6), Fraction(1, 2)]]
    assert all(abs(Fraction(G[i, j]) - optimal[i][j]) <= bound + Fraction(1, 10**300) for i in range(2) for j in range(2))


def test_the_krawczyk_ladder_stops_at_the_precision_limit():
    # A permutation plan with uniform marginals (degenerate: its float start cannot see the relative potentials),
    # Delta = 1e5: the ladder wants Delta / (2 ln 2) + 128 bits; at a limit of 1,024 it stops there, not certified,
    # and says why.
    top = math.ceil(100_000 / (2 * math.log(2))) + 128
    t0 = time.monotonic()
    with limits(Limits(max_precision=1024)):
        r = operator_sinkhorn([["100000", "0"], ["0", "0"]], HALF, HALF, "1", Ball(128), method="krawczyk")
        with pytest.raises(NotCertified, match="over the precision limit"):
            attncert.sinkhorn(HALF, HALF, [["100000", "0"], ["0", "0"]], "1")
    assert not r.certified and r.details["prec"] == 1024 and f"{top:,} bits, is over the precision limit" in r.status
    assert time.monotonic() - t0 < 20


def test_hilbert_asked_for_at_a_large_delta_is_refused_in_one_line():
    with pytest.raises(SinkhornInputError, match="method 'hilbert' .* over the precision limit .* 'krawczyk'"):
        operator_sinkhorn([["1", "0"], ["0", "1"]], HALF, HALF, "1e-12", Ball(128), method="hilbert")


def test_a_tolerance_beyond_the_doubles_is_met():
    # tol = 1e400 was float(tol): OverflowError. Any certified bound is below it.
    C = [["0", "1"], ["1", "0"]]
    assert operator_sinkhorn(C, HALF, HALF, "1", Ball(128), tol="1e400", method="float-verified").certified
    r = operator_sinkhorn(C, HALF, HALF, "1", Float, tol="1e400")
    assert r.details["reached_tol"] and r.bound is None


def test_continuation_does_not_form_eps_or_the_cost_as_doubles():
    # The float start depends on C/eps only: scaling both by 10^400 (neither has a double then) changes nothing.
    C, a, b = [["0", "1", "3"], ["2", "0", "1"]], ["1/3", "2/3"], ["1/4", "1/4", "1/2"]
    s = fmpq(10) ** 400
    p = read_problem(C, a, b, "1/50")
    q = read_problem([[fmpq(int(x)) * s for x in row] for row in C], a, b, fmpq(1, 50) * s)
    assert projective_diameter(p) == projective_diameter(q) > 40
    x, y = continuation_start(p, projective_diameter(p)), continuation_start(q, projective_diameter(q))
    assert np.array_equal(x.x, y.x) and np.array_equal(x.y, y.y)


@pytest.mark.parametrize("kw", [{"reg": "abc"}, {"tol": "abc"}, {"prec": 1}, {"warmstart": "zz"}])
def test_every_bad_argument_is_the_documented_error(kw):
    # These were plain ParseErrors or ValueErrors; the API documents SinkhornInputError for bad input.
    args = {"reg": "1", "tol": "1e-9", **kw}
    reg = args.pop("reg")
    with pytest.raises(SinkhornInputError):
        attncert.sinkhorn(np.array([0.5, 0.5]), np.array([0.5, 0.5]), np.array([[0.0, 1.0], [1.0, 0.0]]), reg, **args)
