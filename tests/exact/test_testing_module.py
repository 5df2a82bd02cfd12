"""The public testing helpers: strategies give valid values, assert_exact_equal reports clearly.

assert_exact_equal takes what the public API returns (numbers, tokens, lists, numpy object
arrays), hides its own frame from pytest's traceback, and imports without hypothesis.
"""

import subprocess
import sys
import textwrap
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, fmpq
from hypothesis import given

from attncert.constructions import rasp
from attncert.exact import EE
from attncert.exact.eenumber import EENumber
from attncert.exact.testing import assert_exact_equal, ee_numbers, rational_matrices, why_unequal

pytest_plugins = ["pytester"]


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
    assert why_unequal([[(EE.exp(2) - 1) / (e - 1)]], [[e + 1]]) is None


def test_failure_names_the_first_differences():
    a = [[fmpq(1), fmpq(2)], [EE.exp(1), fmpq(4)]]
    b = [[fmpq(1), fmpq(3)], [EE.exp(fmpq(1, 2)) ** 2 + fmpq(1, 10**30), fmpq(4)]]
    with pytest.raises(AssertionError) as err:
        assert_exact_equal(a, b)
    msg = str(err.value)
    assert "2 difference(s)" in msg and "[0][1]: 2 != 3" in msg and "[1][0]" in msg and "≈ 2.718281828" in msg
    assert why_unequal(a, b) == msg


def test_shape_mismatch():
    with pytest.raises(AssertionError, match="lengths differ, 2 vs 1"):
        assert_exact_equal([1, 2], [1])
    with pytest.raises(AssertionError, match="a sequence against a single value"):
        assert_exact_equal([1], 1)


def test_a_float_or_a_ball_is_a_difference_with_its_reason():
    with pytest.raises(AssertionError) as err:
        assert_exact_equal([0.5], [fmpq(1, 2)])
    assert "[0]: 0.5 vs 1/2: an exact value is never equal to a float" in str(err.value)
    assert "Fraction(1, 2)" in str(err.value)  # what to compare with instead
    assert "not an exact value" in why_unequal(0.5, 0.5)  # two floats are not an exact equality either
    assert "a ball is an enclosure" in why_unequal(arb(1), 1)
    assert "never equal to a float" in why_unequal(EE.exp(1), 2.718)


def test_tokens_bools_and_none():
    assert_exact_equal(["a", True, None, fmpq(1, 2), 3], ["a", True, None, Fraction(1, 2), Fraction(3)])
    cases = [
        ("1/3", fmpq(1, 3), "the string '1/3' vs the number 1/3 (a string is a token, not a number)"),
        (True, 1, "the bool True vs the number 1"),  # Python's True == 1; an exact assertion tells them apart
        (None, 0, "None vs the number 0"),
        ("a", "b", "'a' != 'b'"),
        (False, True, "False != True"),
    ]
    for got, want, line in cases:
        assert why_unequal([got], [want]) == f"not exactly equal (1 difference(s)):\n[0]: {line}"


def test_rasp_token_outputs():
    flip = rasp.Aggregate(rasp.Select(rasp.indices, rasp.length - rasp.indices - 1, rasp.Comparison.EQ), rasp.tokens)
    assert_exact_equal(rasp.evaluate(flip, list("abc")), ["c", "b", "a"])
    assert_exact_equal(rasp.evaluate(rasp.tokens == "a", list("aba")), [True, False, True])
    assert_exact_equal(rasp.evaluate(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT), rasp.tokens), [4, 4]), [None, 4])
    with pytest.raises(AssertionError, match=r"\[1\]: 'b' != 'x'"):
        assert_exact_equal(rasp.evaluate(flip, list("abc")), ["c", "x", "a"])


def test_numpy_arrays_of_any_dtype():
    e = EE.exp(1)
    got = np.array([[e, fmpq(1, 2)], ["a", None]], dtype=object)
    assert_exact_equal(got, [[e, Fraction(1, 2)], ["a", None]])
    assert_exact_equal(got, np.array([[EE.exp("1/2") ** 2, EE.convert("0.5")], ["a", None]], dtype=object))
    assert_exact_equal(np.array([1, 2], dtype=np.int64), [1, Fraction(2)])
    assert_exact_equal(np.array([True, False]), [True, False])
    with pytest.raises(AssertionError, match=r"\[1\]\[0\]: 'a' != 'b'"):
        assert_exact_equal(got, [[e, Fraction(1, 2)], ["b", None]])
    with pytest.raises(AssertionError, match="lengths differ, 2 vs 3"):
        assert_exact_equal(got, [[e, 1, 2], ["a", None]])
    with pytest.raises(AssertionError, match=r"\[0\]: 0.5 vs 1/2: an exact value is never equal to a float"):
        assert_exact_equal(np.array([0.5]), [fmpq(1, 2)])


FAILING_TESTS = '''
from attncert.exact import EE
from attncert.exact.testing import assert_exact_equal

def test_helper():
    assert_exact_equal([EE.exp(1), "a"], [EE.exp(1), "b"])

def test_plain_assert():
    assert EE.exp(1) == 2.718
'''


def test_pytest_shows_the_test_line_not_the_helper_and_explains_plain_asserts(pytester):
    pytester.makeconftest('pytest_plugins = ["attncert.exact.testing"]')
    pytester.makepyfile(test_user=FAILING_TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    # The traceback of test_helper ends at the test's own call: the helper's frame is hidden.
    result.stdout.fnmatch_lines(["*def test_helper():", ">*assert_exact_equal([[]EE.exp(1), \"a\"], [[]EE.exp(1), \"b\"])", "E*AssertionError: not exactly equal (1 difference(s)):", "E*[[]1]: 'a' != 'b'"])
    assert "def assert_exact_equal" not in out and "raise AssertionError(why)" not in out and "testing.py" not in out
    # A plain assert on an exact value and a float is False, not an error, and the plugin says why.
    result.stdout.fnmatch_lines(["*assert EE.exp(1) == 2.718", "E*an exact value is never equal to a float, so == 2.718 is False*"])
    assert "FloatRefused" not in out


def test_imports_and_asserts_without_hypothesis():
    """With hypothesis unimportable, the module and its assertion work and only the strategies say what they need."""
    program = textwrap.dedent(
        """
        import sys

        class NoHypothesis:
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] == "hypothesis":
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, NoHypothesis())
        from attncert.exact import EE
        from attncert.exact.testing import assert_exact_equal, rationals

        assert_exact_equal([EE.exp(1), "a", None], [EE.exp(1), "a", None])
        try:
            assert_exact_equal([1], [2])
        except AssertionError as e:
            print("assertion:", str(e).splitlines()[1])
        try:
            rationals()
        except ImportError as e:
            print("strategies:", e)
        print("hypothesis loaded:", any(m.partition(".")[0] == "hypothesis" for m in sys.modules))
        """
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "assertion: [0]: 1 != 2",
        "strategies: the strategies of attncert.exact.testing need hypothesis: pip install '.[test]' in attncert's folder",
        "hypothesis loaded: False",
    ]
