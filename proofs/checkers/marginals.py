"""The one rule for float marginals, as the checks of Sinkhorn and of exact transport re-derive it: masses read from a
.npy file of floats whose exact totals differ by rounding (a relative 1e-12 at most) have b scaled to sum(a), and
the certificate records both."""

from __future__ import annotations

from typing import Any

from flint import fmpq

from attncert.exact import ParseError


#: Float masses whose exact totals differ by at most this relative amount differ by rounding: b is scaled to sum(a).
FLOAT_TOTAL_RTOL = fmpq(1, 10**12)


def scaled_marginal(params: dict[str, Any], a: list[fmpq], b: list[fmpq], scaled: list[fmpq]) -> list[fmpq]:
    """The recorded b scaled to sum(a) (the one rule for float marginals), checked: only for masses read from a .npy
    file of floats whose exact totals differ by a relative 1e-12 at most, and exactly b sum(a) / sum(b)."""
    sa, sb = sum(a, fmpq(0)), sum(b, fmpq(0))
    if "npy-float" not in (params.get("a"), params.get("b")) or sa == sb or not abs(sa - sb) <= FLOAT_TOTAL_RTOL * sa:
        raise ParseError("b is recorded scaled, but the masses are not floats whose totals differ by rounding (a relative 1e-12)")
    if scaled != [x * sa / sb for x in b]:
        raise ParseError("the recorded scaled b is not b sum(a) / sum(b)")
    return scaled
