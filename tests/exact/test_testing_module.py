"""The public testing helpers: strategies give valid values, assert_exact_equal reports clearly."""

import pytest
from flint import fmpq
from hypothesis import given

from attncert.exact import EE
from attncert.exact.eenumber import EENumber
from attncert.exact.testing import assert_exact_equal, ee_numbers, rational_matrices


@given(rational_matrices(2, 3))
def test_rational_matrices_have_the_shape(m):
    assert len(m) == 2 and all(len(r) == 3 and all(isinstance(x, fmpq) for x in r) for r in m)


@given(ee_numbers())
def test_ee_numbers_are_elements(x):
    assert isinstance(x, EENumber)
    assert_exact_equal(x, x + 0)


def test_equal_values_written_differently_pass():
    e = EE.exp(1)
    assert_exact_equal([[(EE.exp(2) - 1) / (e - 1), fmpq(1, 2)]], [[e + 1, EE.convert("0.5")]])


def test_failure_names_the_first_differences():
    a = [[fmpq(1), fmpq(2)], [EE.exp(1), fmpq(4)]]
    b = [[fmpq(1), fmpq(3)], [EE.exp(fmpq(1, 2)) ** 2 + fmpq(1, 10**30), fmpq(4)]]
    with pytest.raises(AssertionError) as err:
        assert_exact_equal(a, b)
    msg = str(err.value)
    assert "2 difference(s)" in msg and "[0][1]: 2 != 3" in msg and "[1][0]" in msg and "≈ 2.718281828" in msg


def test_shape_mismatch_and_floats():
    with pytest.raises(AssertionError, match="lengths differ"):
        assert_exact_equal([1, 2], [1])
    with pytest.raises(TypeError, match="cannot be compared exactly"):
        assert_exact_equal([0.5], [fmpq(1, 2)])
