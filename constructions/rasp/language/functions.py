"""The elementwise functions that the RASP language's operators need beyond tracr's registry.

In the language, ``and``/``or``/``not`` on sequences are logical: each operand counts by
its truth (``1 and True`` is True, never 1), as in the reference interpreter; ``%`` works
between two sequences; and a list, string or dict indexed by a sequence is a finite table
that fails, as an index error would, on a position whose value is not one of its keys.
They are registered like every other function (:mod:`constructions.rasp.functions`), so
graphs that use them serialise by name; ``constructions.rasp`` imports this module.
"""

from __future__ import annotations

from typing import Any

from constructions.rasp.functions import register_function, registered
from exact import Domain


def _is_number(v: Any) -> bool:
    return not isinstance(v, (str, bool)) and v is not None


def _same(domain: Domain, x: Any, key: Any) -> bool:
    """x == key, numbers decided in the domain (so 2 and 4/2 are one key), tokens by equality."""
    if _is_number(x) and _is_number(key):
        return domain.sign(domain.native(x) - domain.native(key)) == 0
    return type(x) is type(key) and x == key


@register_function("logical_and", 2)
def _logical_and(domain):
    """True where both values are true (a value is true as in Python: nonzero, non-empty)."""
    return lambda x, y: bool(x) and bool(y)


@register_function("logical_or", 2)
def _logical_or(domain):
    """True where either value is true."""
    return lambda x, y: bool(x) or bool(y)


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
