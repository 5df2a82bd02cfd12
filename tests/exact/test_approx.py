"""Exact values beside pytest.approx and math.isclose (issue 35): math.isclose compares an exact value's float;
pytest.approx never answers a silent False on an exact value: on EE it raises the float refusal whose message
gives the one-line alternative, float(x) == pytest.approx(y), which works for QQ and EE alike."""

import math
from fractions import Fraction

import pytest

from attncert.exact import EE, QQ
from attncert.exact.errors import FloatRefused


def test_math_isclose_compares_the_float_of_an_exact_value():
    third, e_over_3 = EE.convert("1/3"), EE.exp(1) / 3
    assert math.isclose(third, 1 / 3) and math.isclose(QQ.convert("1/3"), 1 / 3)
    assert math.isclose(e_over_3, math.e / 3) and not math.isclose(e_over_3, 0.9)


def test_the_one_line_alternative_works_for_both_exact_types():
    for x in (EE.convert("1/3"), QQ.convert("1/3"), EE.exp(1) / 3 - EE.exp(1) / 3 + Fraction(1, 3)):
        assert float(x) == pytest.approx(0.3333333, rel=1e-6)
        assert float(x) != pytest.approx(0.34)


@pytest.mark.parametrize("compare", [lambda x, y: pytest.approx(y) == x, lambda x, y: x == pytest.approx(y)], ids=["approx==x", "x==approx"])
def test_approx_on_an_ee_value_says_what_to_write(compare):
    with pytest.raises(FloatRefused, match=r"float\(value\) == pytest\.approx\(0\.3333333\)"):
        compare(EE.convert("1/3"), 0.3333333)


def test_approx_on_a_rational_raises_rather_than_answering():
    # FLINT's fmpq (a numbers.Rational) meets float - fmpq, which FLINT refuses: an error, never a silent False
    with pytest.raises(TypeError):
        assert pytest.approx(0.3333333) == QQ.convert("1/3")
