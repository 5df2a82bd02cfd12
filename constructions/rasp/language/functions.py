"""The elementwise functions that the RASP language's operators need beyond tracr's registry.

In the language, ``and``/``or``/``not`` on sequences are logical: each operand counts by
its truth (``1 and True`` is True, never 1), as in the reference interpreter; ``%`` works
between two sequences; and a list, string or dict indexed by a sequence is a finite table
that fails, as an index error would, on a position whose value is not one of its keys.
They are registered like every other function (:mod:`constructions.rasp.functions`), so
graphs that use them serialise by name; ``constructions.rasp`` imports this module.
"""

from __future__ import annotations

import json
from typing import Any

from flint import fmpq

from attncert.constructions.rasp.functions import register_function, registered
from attncert.exact import QQ, Domain, decide


def _is_number(v: Any) -> bool:
    return not isinstance(v, (str, bool)) and v is not None


def _same(domain: Domain, x: Any, key: Any) -> bool:
    """x == key, numbers decided in the domain (so 2 and 4/2 are one key), tokens by equality."""
    if _is_number(x) and _is_number(key):
        return decide.equal(domain.native(x), domain.native(key))
    return type(x) is type(key) and decide.equal(x, key)


@register_function("logical_and", 2)
def _logical_and(domain):
    """True where both values are true (a value is true as in Python: nonzero, non-empty; decided)."""
    return lambda x, y: decide.truth(x) and decide.truth(y)


@register_function("logical_or", 2)
def _logical_or(domain):
    """True where either value is true."""
    return lambda x, y: decide.truth(x) or decide.truth(y)


@register_function("mod", 2)
def _mod(domain):
    """x mod y = x - y floor(x / y) (the sign of y, as Python's %), for two sequences; exact."""
    mod_by = registered("mod_const").impl  # the one definition of mod, with y as its constant
    return lambda x, y: mod_by(domain, y)(x)


@register_function("index_table", 1, ("entries",))
def _index_table(domain, entries):
    """The value paired with x among ``entries`` ((key, value) pairs): a list, string or dict indexed
    by a sequence. A value that is not a key fails, as indexing past the end or by a missing key does."""
    pairs = [(k if not _is_number(k) else domain.native(k), v if not _is_number(v) else domain.native(v)) for k, v in entries]

    def f(x):
        for k, v in pairs:
            if _same(domain, x, k):
                return v
        raise ValueError(f"index {x} is not in the indexed list, string or dict")

    return f


@register_function("token_as", 1, ("kind",))
def _token_as(domain, kind):
    """The reference's token variants: each input token converted as Python's ``str``, ``int``,
    ``float`` or ``bool`` would convert it, except that "float" is read exactly (the token "0.1"
    is 1/10) and ``str`` writes a terminating rational in decimals (3/2 as "1.5") and any other
    as "p/q". ``int`` truncates toward zero, as Python's does."""
    if kind not in ("str", "int", "float", "bool"):
        raise ValueError(f"unknown token conversion {kind!r}")

    def f(x):
        if kind == "bool":
            return decide.truth(x if not _is_number(x) else domain.native(x))
        if kind == "str":
            return x if isinstance(x, str) else str(x) if isinstance(x, bool) else _decimal_text(QQ.convert(x))
        if isinstance(x, str):  # the strings Python's int() or float() reads, read exactly
            try:
                if kind == "int":
                    return fmpq(int(x))
                float(x)  # refuses what float() refuses ("1/3", "a"); its rounded value is not used
            except ValueError:
                raise ValueError(f"the token {json.dumps(x, ensure_ascii=False)} is not {'an integer' if kind == 'int' else 'a number'} (tokens_{kind})") from None
            return QQ.convert(x.strip())
        q = QQ.convert(int(x) if isinstance(x, bool) else x)
        return q if kind == "float" else fmpq(int(q.p) // int(q.q) if q >= 0 else -(int(-q.p) // int(q.q)))

    return f


def _decimal_text(q: fmpq) -> str:
    """q in decimals if its expansion terminates (its denominator is 2^a 5^b), else "p/q"."""
    den, a, b = int(q.q), 0, 0
    while den % 2 == 0:
        den, a = den // 2, a + 1
    while den % 5 == 0:
        den, b = den // 5, b + 1
    if den != 1:
        return str(q)
    if q.q == 1:
        return str(q.p)
    digits = max(a, b)
    scaled = abs(int(q.p)) * 10**digits // int(q.q)
    sign = "-" if q < 0 else ""
    return f"{sign}{scaled // 10**digits}.{scaled % 10**digits:0{digits}d}"
