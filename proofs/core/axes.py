"""What the certificate plots share: exact numbers on their axes, and the PNG with what it states.

A certificate's bounds and temperatures are rationals of any magnitude (a bound of
10^-1200 at 4096 bits, an eps of 10^-400), past what a float holds. A plot draws
log10 of them, computed by mpmath from the exact rational (floats only for
drawing), on a linear axis labelled 10^k. Nothing here decides anything. A PNG
carries its statement (the certified bounds it shows, rounded up by
:func:`proofs.core.figures.upper` as the terminal shows them) as its Title text, for a
reader who cannot see the picture.
"""

from __future__ import annotations

import io
import math
from typing import Any, Sequence

import mpmath
from flint import fmpq

from attncert.exact import QQ
from attncert.exact.expressions.enclose import display


def rational(value: str | fmpq) -> fmpq:
    """A certificate's rational string (or a rational) as an fmpq."""
    return value if isinstance(value, fmpq) else QQ.from_json(value)


def log10(value: str | fmpq) -> float:
    """log10 of a positive rational as a float for drawing (mpmath: no underflow at 10^-400); nan at 0."""
    q = rational(value)
    if q <= 0:
        return float("nan")
    return float(mpmath.log10(mpmath.mpf(int(q.p)) / int(q.q)))


def shown(value: str | fmpq, digits: int = 3) -> str:
    """A rational to ``digits`` significant digits, for a title or a label."""
    return display(rational(value), digits)


def powers_of_ten(ax: Any, which: str, values: Sequence[float]) -> None:
    """Label the x or y axis of ``ax``, which carries log10 values, as 10^k at multiples k of a round step
    (1, 2, 5, 10, 20, ...: at most 8 ticks), its limits the whole powers of ten around ``values`` (nan left
    out) with a margin, so that one point still has a scale and the outermost points their labels."""
    finite = [v for v in values if v == v]
    lo, hi = math.floor(min(finite)), math.ceil(max(finite))
    lo, hi = (lo - 1, hi + 1) if lo == hi else (lo, hi)
    step = next(s * 10**k for k in range(len(str(hi - lo)) + 1) for s in (1, 2, 5) if s * 10**k * 8 >= hi - lo)
    margin = 0.3 + (hi - lo) / 12  # room for the labels of the outermost points
    (ax.set_xlim if which == "x" else ax.set_ylim)(lo - margin, hi + margin)
    ticks = range(-(-lo // step) * step, hi + 1, step)
    (ax.xaxis if which == "x" else ax.yaxis).set_ticks(ticks, [f"$10^{{{k}}}$" for k in ticks])


def png_bytes(fig: Any, title: str) -> bytes:
    """The figure as PNG bytes, ``title`` its Title text; the figure is closed."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Title": title})
    plt.close(fig)
    return buf.getvalue()
