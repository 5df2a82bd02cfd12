"""Helpers for users' own regression tests: hypothesis strategies for exact values.

Requires hypothesis (``pip install 'attncert[test]'``). The strategies draw
small-height numbers on purpose: exact arithmetic is exercised through
cancellation and shared exponents, not through size.
"""

from __future__ import annotations

from flint import fmpq
from hypothesis import strategies as st

from exact.eenumber import EENumber
from exact.expsum import ExpSum


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

