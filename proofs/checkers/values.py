"""RASP values as plain Python values, as the exhaustive checks compare outputs: a recorded tagged value read, and
equality that keeps kinds apart (the compiled models' check and tracr's)."""

from __future__ import annotations

from typing import Any

from attncert.exact import ParseError
from attncert.exact.rationals import rational_from_json


def value(j: Any) -> Any:
    """A tagged RASP value: null, {"b": bool}, {"s": str}, {"q": "p/q"}."""
    if j is None:
        return None
    if isinstance(j, dict) and len(j) == 1:
        ((tag, body),) = j.items()
        if tag == "b" and isinstance(body, bool) or tag == "s" and isinstance(body, str):
            return body
        if tag == "q":
            return rational_from_json(body)
        if tag == "t" and isinstance(body, list):
            return tuple(value(x) for x in body)
    raise ParseError(f"malformed RASP value {str(j)[:60]}")


def same(a: Any, b: Any) -> bool:
    """Equality of RASP values that keeps kinds apart (True is not 1, "1" is not 1)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, (bool, str)) or isinstance(b, (bool, str)) or a is None or b is None:
        return type(a) is type(b) and a == b
    return a == b
