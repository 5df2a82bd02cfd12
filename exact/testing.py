"""Helpers for users' own regression tests: hypothesis strategies and exact assertions.

Requires hypothesis (``pip install 'attncert[test]'``). The strategies draw
small-height numbers on purpose: exact arithmetic is exercised through
cancellation and shared exponents, not through size. :func:`assert_exact_equal`
compares numbers, vectors or matrices exactly and reports the first differences.
"""

from __future__ import annotations

from typing import Any

import mpmath
from flint import arb, fmpq
from hypothesis import strategies as st

from attncert.exact.eenumber import EENumber
from attncert.exact.expsum import ExpSum


def rationals(max_num: int = 50, max_den: int = 12) -> st.SearchStrategy[fmpq]:
    """Rationals p/q with |p| <= max_num and 1 <= q <= max_den."""
    return st.builds(
        lambda p, q: fmpq(p, q),
        st.integers(-max_num, max_num),
        st.integers(1, max_den),
    )


def nonzero_rationals(max_num: int = 50, max_den: int = 12) -> st.SearchStrategy[fmpq]:
    return rationals(max_num, max_den).filter(bool)


def rational_matrices(
    rows: int, cols: int, max_num: int = 50, max_den: int = 12
) -> st.SearchStrategy[list[list[fmpq]]]:
    """rows x cols matrices (lists of rows) of small rationals."""
    return st.lists(
        st.lists(rationals(max_num, max_den), min_size=cols, max_size=cols), min_size=rows, max_size=rows
    )


def exp_sums(max_terms: int = 3, exponents: st.SearchStrategy[fmpq] | None = None) -> st.SearchStrategy[ExpSum]:
    """Sums  sum_q c_q e^q  with a few terms; exponents default to small rationals with
    denominators up to 3, so that products and sums share exponents and cancel."""
    exponents = exponents if exponents is not None else rationals(6, 3)
    pairs = st.lists(st.tuples(exponents, nonzero_rationals(9, 4)), min_size=0, max_size=max_terms)
    return pairs.map(ExpSum.from_pairs)


def ee_numbers(max_terms: int = 3) -> st.SearchStrategy[EENumber]:
    """Elements num/den of EE = Frac(Q[e^Q]) with small num and nonzero den."""
    dens = exp_sums(max_terms).filter(lambda s: not s.is_zero())
    return st.builds(EENumber, exp_sums(max_terms), dens)



def assert_exact_equal(actual: Any, expected: Any, max_shown: int = 5) -> None:
    """Assert that two numbers, vectors or matrices are exactly equal (QQ or EE).

    Entries are compared with exact equality (EE: Lindemann–Weierstrass, not
    precision); floats and balls are refused, since they cannot be equal exactly.
    On failure the message lists the first ``max_shown`` differing positions with
    both values and, for readability, 20-digit approximations of them.
    """
    diffs: list[str] = []
    _compare(actual, expected, (), diffs)
    if diffs:
        shown = "\n".join(diffs[:max_shown])
        more = f"\n... and {len(diffs) - max_shown} more" if len(diffs) > max_shown else ""
        raise AssertionError(f"not exactly equal ({len(diffs)} difference(s)):\n{shown}{more}")


def _compare(a: Any, b: Any, at: tuple, diffs: list[str]) -> None:
    where = "".join(f"[{i}]" for i in at) or "value"
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))):
            diffs.append(f"{where}: a sequence against a scalar ({_show(a)} vs {_show(b)})")
        elif len(a) != len(b):
            diffs.append(f"{where}: lengths differ, {len(a)} vs {len(b)}")
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                _compare(x, y, at + (i,), diffs)
        return
    for v in (a, b):
        if isinstance(v, (float, arb)):
            raise TypeError(f"{where}: {type(v).__name__} values cannot be compared exactly; use QQ or EE values")
    if not (EENumber.rational(a) if not isinstance(a, EENumber) else a) == b:
        diffs.append(f"{where}: {_show(a)} != {_show(b)}")


def _show(v: Any) -> str:
    if isinstance(v, EENumber) and v.rational_value() is None:
        return f"{v} (≈ {mpmath.nstr(v.to_mpmath(25), 20)})"
    return str(v)
