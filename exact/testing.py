"""Helpers for users' own tests: an exact assertion, the reason two values differ, hypothesis strategies.

:func:`assert_exact_equal` compares two values exactly and, on failure, lists the first
differing positions; :func:`why_unequal` gives the same report as a string (None when the
values are equal), for instance why an exact value is not ``==`` a float. Values are
compared leaf by leaf:

* numbers (``int``, ``fmpz``, ``fmpq``, ``Fraction``, numpy integers, :class:`EENumber`)
  exactly, EE values by Lindemann–Weierstrass (never by precision);
* a float or an arb ball on either side is a difference, with its reason: neither is an
  exact value (``EE.exp(1) == 2.718`` is False, not an error);
* tokens as values of their own kind: strings, bools and None. A bool is not the number
  0 or 1 and a string is not a number (in a RASP program ``"1/3"`` is a token);
* lists, tuples and numpy arrays of any dtype (object arrays of exact values among them)
  entry by entry, lengths first.

The assertion hides its own frame from pytest's tracebacks (``__tracebackhide__``), so a
failure points at the test's line. With ``pytest_plugins = ["attncert.exact.testing"]`` in
a ``conftest.py``, a failing plain ``assert x == y`` on exact values also shows this report
(:func:`pytest_assertrepr_compare`).

Only the strategies need hypothesis (``pip install '.[test]'`` in attncert's folder); the module imports
without it. They draw small-height numbers on purpose: exact arithmetic is exercised
through cancellation and shared exponents, not through size.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
from flint import arb, fmpq, fmpz

from attncert.exact import decide
from attncert.exact.eenumber import EENumber
from attncert.exact.expsum import ExpSum
from attncert.exact.rationals import float_equality_message, is_float

if TYPE_CHECKING:
    from hypothesis import strategies as st


def assert_exact_equal(actual: Any, expected: Any, max_shown: int = 5) -> None:
    """Assert that two numbers, tokens, vectors or matrices are exactly equal (the rules above).

    On failure the message lists the first ``max_shown`` differing positions with both
    values and, for EE values that are not rational, 20-digit approximations of them.
    """
    __tracebackhide__ = True
    why = why_unequal(actual, expected, max_shown)
    if why is not None:
        raise AssertionError(why)


def why_unequal(actual: Any, expected: Any, max_shown: int = 5) -> str | None:
    """None if the two values are exactly equal (the rules above); else why not, the first differences first."""
    diffs: list[str] = []
    _compare(actual, expected, (), diffs)
    if not diffs:
        return None
    shown = "\n".join(diffs[:max_shown])
    more = f"\n... and {len(diffs) - max_shown} more" if len(diffs) > max_shown else ""
    return f"not exactly equal ({len(diffs)} difference(s)):\n{shown}{more}"


def pytest_assertrepr_compare(config: Any, op: str, left: Any, right: Any) -> list[str] | None:
    """pytest's hook: a failing ``assert left == right`` where a side holds an exact value says why.

    Active where a ``conftest.py`` names this module in ``pytest_plugins``; other
    comparisons keep pytest's own report.
    """
    if op != "==" or not (_holds_exact(left) or _holds_exact(right)):
        return None
    why = why_unequal(left, right)
    return None if why is None else [f"{_show(left)} == {_show(right)}", *why.splitlines()]


# -- comparing -------------------------------------------------------------------------------

_SEQUENCES = (list, tuple, np.ndarray)
_NUMBERS = (int, fmpz, fmpq, Fraction, EENumber)


def _compare(a: Any, b: Any, at: tuple, diffs: list[str]) -> None:
    where = "".join(f"[{i}]" for i in at) or "value"
    a, b = _plain(a), _plain(b)
    if isinstance(a, _SEQUENCES) or isinstance(b, _SEQUENCES):
        if not (isinstance(a, _SEQUENCES) and isinstance(b, _SEQUENCES)):
            diffs.append(f"{where}: a sequence against a single value ({_show(a)} vs {_show(b)})")
        elif len(a) != len(b):
            diffs.append(f"{where}: lengths differ, {len(a)} vs {len(b)}")
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                _compare(x, y, at + (i,), diffs)
        return
    ka, kb = _kind(a), _kind(b)
    if "float" in (ka, kb) or "ball" in (ka, kb):
        diffs.append(f"{where}: {_show(a)} vs {_show(b)}: {_inexact_reason(a, b, ka, kb)}")
    elif ka != kb:
        hint = " (a string is a token, not a number)" if {ka, kb} == {"number", "string"} else ""
        diffs.append(f"{where}: {_describe(a, ka)} vs {_describe(b, kb)}{hint}")
    elif not a == b:  # exact for numbers: Fraction compares with fmpq (exact.rationals), EE by Lindemann–Weierstrass
        diffs.append(f"{where}: {_show(a)} != {_show(b)}")


def _plain(v: Any) -> Any:
    """numpy arrays as nested lists (an object array's entries as they are), numpy integers, bools
    and strings as Python's; a numpy float stays, so that a message names it as the user wrote it."""
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic) and not is_float(v):
        return v.item()
    return v


def _kind(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, _NUMBERS):
        return "number"
    if is_float(v):
        return "float"
    if isinstance(v, arb):
        return "ball"
    if isinstance(v, str):
        return "string"
    return type(v).__name__


def _inexact_reason(a: Any, b: Any, ka: str, kb: str) -> str:
    if "ball" in (ka, kb):
        return "a ball is an enclosure of an unknown real, not an exact value"
    f, other = (a, kb) if ka == "float" else (b, ka)
    if other == "number":
        return float_equality_message(f)
    return "a float is not an exact value"


def _describe(v: Any, kind: str) -> str:
    if kind in ("number", "bool", "string"):
        return f"the {kind} {_show(v)}"
    return "None" if kind == "none" else f"a {kind} {_show(v)}"


def _show(v: Any) -> str:
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, arb):
        return decide.show(v)
    if isinstance(v, EENumber) and v.rational_value() is None:
        import mpmath  # for display only

        return f"{v} (≈ {mpmath.nstr(v.to_mpmath(25), 20)})"
    return str(v)


def _holds_exact(v: Any) -> bool:
    v = _plain(v)
    if isinstance(v, (list, tuple)):
        return any(_holds_exact(x) for x in v)
    return isinstance(v, (fmpq, fmpz, EENumber))


# -- hypothesis strategies (these need hypothesis) --------------------------------------------


def _strategies() -> Any:
    try:
        from hypothesis import strategies
    except ImportError as e:
        raise ImportError("the strategies of attncert.exact.testing need hypothesis: pip install '.[test]' in attncert's folder") from e
    return strategies


def rationals(max_num: int = 50, max_den: int = 12) -> st.SearchStrategy[fmpq]:
    """Rationals p/q with |p| <= max_num and 1 <= q <= max_den."""
    s = _strategies()
    return s.builds(lambda p, q: fmpq(p, q), s.integers(-max_num, max_num), s.integers(1, max_den))


def nonzero_rationals(max_num: int = 50, max_den: int = 12) -> st.SearchStrategy[fmpq]:
    return rationals(max_num, max_den).filter(bool)


def rational_matrices(
    rows: int, cols: int, max_num: int = 50, max_den: int = 12
) -> st.SearchStrategy[list[list[fmpq]]]:
    """rows x cols matrices (lists of rows) of small rationals."""
    s = _strategies()
    return s.lists(s.lists(rationals(max_num, max_den), min_size=cols, max_size=cols), min_size=rows, max_size=rows)


def exp_sums(max_terms: int = 3, exponents: st.SearchStrategy[fmpq] | None = None) -> st.SearchStrategy[ExpSum]:
    """Sums  sum_q c_q e^q  with a few terms; exponents default to small rationals with
    denominators up to 3, so that products and sums share exponents and cancel."""
    s = _strategies()
    exponents = exponents if exponents is not None else rationals(6, 3)
    pairs = s.lists(s.tuples(exponents, nonzero_rationals(9, 4)), min_size=0, max_size=max_terms)
    return pairs.map(ExpSum.from_pairs)


def ee_numbers(max_terms: int = 3) -> st.SearchStrategy[EENumber]:
    """Elements num/den of EE = Frac(Q[e^Q]) with small num and nonzero den."""
    dens = exp_sums(max_terms).filter(lambda s: not s.is_zero())
    return _strategies().builds(EENumber, exp_sums(max_terms), dens)
