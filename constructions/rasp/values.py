"""JSON encoding of the constant values a RASP graph may carry.

Constants appear as function parameters, ``Full`` fills, ``ConstantSOp`` entries
and aggregate defaults. Numbers are stored exactly and tagged so that the number
1/2 and the token string "1/2" stay different:

=============  ==========================================
Python value   JSON
=============  ==========================================
None           ``null``
bool           ``{"b": true}``
str            ``{"s": "..."}``
number         ``{"q": "p/q"}`` (floats are refused: write Fraction(1, 10), not 0.1)
EENumber       ``{"ee": {"num": [...], "den": [...]}}``
tuple          ``{"t": [its values]}`` (a SequenceMap may pair values)
SizeExpr       ``{"size": "h*n*d^2"}``: a template's size expression (:mod:`constructions.sizes.expr`)
=============  ==========================================

A size expression without symbols is stored as the number it is, so a template instantiated
at given sizes (:mod:`constructions.rasp.template`) holds what the integers give.
"""

from __future__ import annotations

from typing import Any

from attncert.constructions.sizes.expr import SizeExpr, parse
from attncert.exact import EE, EENumber, ParseError, parse_rational
from attncert.exact.rationals import is_float, rational_from_json, rational_to_json, refuse_float


def encode_value(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, bool):
        return {"b": v}
    if isinstance(v, str):
        return {"s": v}
    if isinstance(v, EENumber):
        return {"ee": EE.to_json(v)}
    if isinstance(v, tuple):
        return {"t": [encode_value(x) for x in v]}
    if isinstance(v, SizeExpr):
        return {"size": v.text()} if v.constant() is None else encode_value(v.constant())
    if is_float(v):  # a graph is evaluated exactly too: a float constant would enter QQ and EE
        refuse_float(v, "a RASP graph constant", strings=False)
    try:
        return {"q": rational_to_json(parse_rational(v))}
    except ParseError:
        raise ParseError(f"constant {v!r:.60} of type {type(v).__name__} cannot be stored in a graph") from None


def decode_value(obj: Any) -> Any:
    if obj is None:
        return None
    if not isinstance(obj, dict) or len(obj) != 1:
        raise ParseError(f"malformed graph constant {obj!r:.60}: expected null or a one-key object")
    ((tag, body),) = obj.items()
    if tag == "b" and isinstance(body, bool):
        return body
    if tag == "s" and isinstance(body, str):
        return body
    if tag == "q":
        return rational_from_json(body)
    if tag == "ee":
        return EE.from_json(body)
    if tag == "t" and isinstance(body, list):
        return tuple(decode_value(x) for x in body)
    if tag == "size":
        v = parse(body)
        if v.constant() is not None or v.text() != body:
            raise ParseError(f"a size expression is recorded in its canonical text: {body!r:.60}")
        return v
    raise ParseError(f"malformed graph constant {obj!r:.60}: unknown tag or wrong type")

