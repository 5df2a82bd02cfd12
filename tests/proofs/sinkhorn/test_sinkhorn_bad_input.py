"""Issue 34's bad input, re-checked on the command line and the Python API (attncert.sinkhorn, sinkhorn2, emd): one line
and exit 2, or the documented exception; and what the re-check found and fixed.

- sinkhorn2 raised ValueError on a cost of "p/q" strings (sinkhorn read it; the loss took float() of each text);
- sinkhorn2's bound left out underflow: on costs of subnormal doubles its products flush (5e-324 / 4 is 0), and the
  loss was off by 2.5e-324 against a bound of 2.7e-339;
- a one-column b (POT's batch of one histogram, or a column vector) was "not a rational number: [0.5] (of type list)"
  in attncert.sinkhorn, and read as the vector by attncert.emd and the command line: now the vector in all three;
- a refusal of a cost's range over --reg named the default eps schedule, not the reg that runs.
"""

from __future__ import annotations

import re
from pathlib import Path

import mpmath
import numpy as np
import pytest
from flint import fmpq

import attncert
from attncert.constructions.sinkhorn.problem import SinkhornInputError
from attncert.constructions.transport.problem import TransportInputError
from attncert.exact.rationals import parse_rational
from attncert.proofs.cli import main
from attncert.proofs.sinkhorn.common import mp_sinkhorn

HALF = np.array([0.5, 0.5])


def exact_loss(M: list[list[fmpq]], a: list[fmpq], b: list[fmpq], eps: fmpq) -> mpmath.mpf:
    """<P*, M> at 60 digits, P* by plain Sinkhorn in mpmath (independent of the certified paths)."""
    P, _ = mp_sinkhorn(M, a, b, eps, 60, 5000)
    assert P is not None
    with mpmath.workdps(60):
        return mpmath.fsum(P[i][j] * mpmath.mpf(int(M[i][j].p)) / int(M[i][j].q) for i in range(len(a)) for j in range(len(b)))


def within(loss: float, bound, true: mpmath.mpf) -> bool:
    with mpmath.workdps(60):
        return abs(mpmath.mpf(loss) - true) <= mpmath.mpf(bound.numerator) / bound.denominator


def test_sinkhorn2_reads_a_cost_of_rational_strings_as_sinkhorn_does():
    M = [["0", "1/3"], ["1", "0"]]  # was: ValueError: could not convert string to float: '1/3'
    loss, bound = attncert.sinkhorn2(["1/2", "1/2"], ["1/2", "1/2"], M, "1/5", tol="1e-20")
    exact_M = [[parse_rational(x) for x in row] for row in M]
    assert within(loss, bound, exact_loss(exact_M, [fmpq(1, 2)] * 2, [fmpq(1, 2)] * 2, fmpq(1, 5)))


@pytest.mark.parametrize(
    "M",
    [[[5e-324, 5e-324], [5e-324, 1.5e-323]], [[5e-324, 1e-320], [1e-320, 5e-324]]],
    ids=["a product flushes to zero", "products below the normal range"],
)
def test_sinkhorn2_s_bound_holds_where_its_products_underflow(M):
    # At eps 1e-300 the plan is a quarter in every entry; a quarter of 5e-324 is no double. Before the fix the first
    # loss was 5e-324 against <P*, M> = 7.4e-324, and the bound 2.7e-339.
    loss, bound = attncert.sinkhorn2(HALF, HALF, np.array(M), 1e-300, tol="1e-20")
    exact_M = [[fmpq(*x.as_integer_ratio()) for x in row] for row in M]
    assert within(loss, bound, exact_loss(exact_M, [fmpq(1, 2)] * 2, [fmpq(1, 2)] * 2, fmpq(*(1e-300).as_integer_ratio())))
    assert bound < 1e-320  # still about the size of the underflow, not a vacuous bound


@pytest.mark.parametrize(
    "a, M, reg, said",
    [
        (HALF, [["1e400", "1e400"], ["1e400", "1e400"]], "1e399", "an entry of M is beyond float64's range"),
        (np.array([1e300, 1e300]), np.full((2, 2), 1e300), 1.0, "the loss <G, M> is beyond float64's range"),
    ],
    ids=["a cost of 1e400", "a loss of 4e600"],
)
def test_sinkhorn2_refuses_a_loss_no_double_holds_in_one_line(a, M, reg, said):
    with pytest.raises(SinkhornInputError, match=said) as e:
        attncert.sinkhorn2(a, a, M, reg, tol="1e-9")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("shape", [(2, 1), (1, 2)], ids=["a column", "a row"])
def test_one_row_or_column_is_the_marginal_in_sinkhorn_as_in_emd_and_the_files(shape):
    M = np.array([[0.0, 1.0], [1.0, 0.0]])
    G, bound = attncert.sinkhorn(HALF, HALF, M, 0.2, tol="1e-12")
    G2, bound2 = attncert.sinkhorn(HALF.reshape(shape), HALF.reshape(shape).tolist(), M, 0.2, tol="1e-12")
    assert np.array_equal(G, G2) and bound == bound2
    assert np.array_equal(attncert.emd(HALF.reshape(shape), HALF, M)[0], attncert.emd(HALF, HALF, M)[0])


@pytest.mark.parametrize(
    "f, error",
    [(attncert.sinkhorn, SinkhornInputError), (attncert.sinkhorn2, SinkhornInputError), (attncert.emd, TransportInputError), (attncert.emd2, TransportInputError)],
    ids=["sinkhorn", "sinkhorn2", "emd", "emd2"],
)
@pytest.mark.parametrize(
    "b, said",
    [
        (np.full((2, 3), 0.5), "b is a 2-D array of shape (2, 3) (POT's batch of histograms)"),
        ([[0.5, 0.25], [0.5, 0.75]], "b is a matrix of 2 rows (POT's batch of histograms)"),
        (np.full((2, 1, 1), 0.5), "marginal b must be a vector, got an array of shape (2, 1, 1)"),
    ],
    ids=["array", "lists", "3-D"],
)
def test_a_batch_of_histograms_is_one_line_in_every_api(f, error, b, said):
    args = (HALF, b, np.array([[0.0, 1.0], [1.0, 0.0]])) + ((0.2,) if f in (attncert.sinkhorn, attncert.sinkhorn2) else ())
    with pytest.raises(error) as e:
        f(*args)
    assert said in str(e.value) and "\n" not in str(e.value)


def test_negative_costs_are_accepted_as_documented():
    # A constant added to M changes no plan (it scales K by e^{-c/reg}, which u absorbs): M - 1 has M's plan.
    M = np.array([[0.0, 1.0], [1.0, 0.0]])
    G, bound = attncert.sinkhorn(HALF, HALF, M, 0.5, tol="1e-12")
    G_neg, bound_neg = attncert.sinkhorn(HALF, HALF, M - 1.0, 0.5, tol="1e-12")
    assert np.abs(G - G_neg).max() <= float(bound + bound_neg)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    np.save(tmp_path / "C.npy", np.array([[0.0, 1.0], [1.0, 0.0]]))
    np.save(tmp_path / "C_wide.npy", np.array([[0.0, 1e6], [1e6, 0.0]]))
    np.save(tmp_path / "a.npy", HALF)
    np.save(tmp_path / "b_batch.npy", np.full((2, 3), 0.5))
    return tmp_path


@pytest.mark.parametrize(
    "cost, b, extra, said",
    [
        ("C.npy", "b_batch.npy", ["--reg", "1/5"], r"b_batch.npy: a vector is one row or one column, this file holds a 2x3 matrix"),
        ("C.npy", "a.npy", ["--reg", "0"], "eps must be > 0, got 0"),
        ("C.npy", "a.npy", ["--reg", "-1/10"], "eps must be > 0, got -1/10"),
        ("C.npy", "a.npy", ["--reg", "nan"], "not a finite number"),
        # range 1e6 over reg 1/10: Delta <= 2e7, Krawczyk's ladder 2e7 / (2 ln 2) + 128 = 14,427,... bits
        ("C_wide.npy", "a.npy", ["--reg", "1/10"], r"on 2 x 2 cost \(the file C_wide.npy's\), eps 1/10\b.* needs about 14,42\d,\d{3} bits"),
        ("C_wide.npy", "a.npy", ["--reg", "1e-300"], r"eps ~1.00e-300\b.* needs more than 10\^18 bits of arb precision"),
    ],
    ids=["batched b", "reg 0", "reg < 0", "reg nan", "range over reg", "range over a tiny reg"],
)
def test_the_command_line_refuses_in_one_line(files, capsys, cost, b, extra, said):
    args = ["prove", "sinkhorn_convergence", "--cost", str(files / cost), "--a", str(files / "a.npy"), "--b", str(files / b)]
    assert main(args + ["--out", str(files / "out.json"), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert re.search(said, err) and len(err.splitlines()) == 1 and err.startswith("attncert: error: "), err
    assert not (files / "out.json").exists()


def test_a_range_over_reg_beyond_the_precision_limit_is_announced_then_not_certified(monkeypatch):
    # The documented exception in Python is NotCertified, with the figure; the line before the run said "about
    # 14,428,128 bits" and a time at them, where the ladder stops at the limit (65,536): it now says so.
    from attncert.constructions.sinkhorn import pot

    monkeypatch.setattr(pot, "SLOW_SECONDS", 0.0)  # announce even this 2 x 2 run
    with pytest.warns(pot.SlowPathWarning, match=r"about 14,42\d,\d{3} bits, over the precision limit of 65,536 \(max_precision\), where its ladder stops") as w:
        with pytest.raises(pot.NotCertified, match="over the precision limit") as e:
            attncert.sinkhorn(HALF, HALF, np.array([[0.0, 1e6], [1e6, 0.0]]), 0.1, tol="1e-9")
    assert "\n" not in str(w[0].message) and "\n" not in str(e.value)
