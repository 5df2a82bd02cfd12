"""Float: IEEE binary64 numbers. For agreement checks and speed baselines only.

Nothing decided in this domain is called exact: a Float comparison is an
*agreement* with a tolerance, and certificates label it so. Python and numpy
floats are accepted (numpy floats become Python floats; float64 and narrower
convert exactly); exact inputs are rounded correctly to the nearest double.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from flint import arb, ctx

from attncert.exact.domains.base import Domain
from attncert.exact.eenumber import EENumber
from attncert.exact.errors import NotRealError, ParseError
from attncert.exact.rationals import dyadic_rational, parse_rational, rational_from_json, rational_to_json


class FloatField(Domain):
    name = "Float"
    exact = False
    relation = "agreement"

    def convert(self, x: object) -> float:
        if isinstance(x, (float, np.floating)):  # numpy floats become Python floats (exact up to float64)
            if not math.isfinite(x):
                raise ParseError(f"not a finite number: {x!r}")
            return x if type(x) is float else float(x)
        if isinstance(x, EENumber):
            return float(x)
        q = parse_rational(x)
        return int(q.p) / int(q.q)  # correctly rounded (Python's int true division)

    def exp(self, x: Any) -> float:
        return math.exp(x if type(x) is float else self.convert(x))

    def real_power(self, x: Any, y: Any) -> float:
        if x < 0:
            raise NotRealError(f"{x} ^ {y}: a negative number to a non-integer power is not a real number")
        return self.convert(x) ** self.convert(y)

    def sign(self, x: float) -> int:
        return (x > 0) - (x < 0)

    def lt(self, a: float, b: float) -> bool:
        return a < b

    def eq(self, a: float, b: float) -> bool:
        return a == b

    def to_json(self, x: float) -> str:
        # The exact dyadic value of the double, as a rational string: never a JSON float.
        return rational_to_json(dyadic_rational(x))

    def from_json(self, obj: Any) -> float:
        return self.convert(rational_from_json(obj))

    def enclose(self, x: float, prec: int = 128) -> arb:
        with ctx.workprec(max(prec, 53)):
            return arb(x)  # exact: a double is a dyadic rational


Float = FloatField()
