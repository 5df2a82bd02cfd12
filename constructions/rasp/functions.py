"""The registry of named elementwise functions (the MLP sublayers of RASP).

A graph that is serialised or certified may only call functions from this
registry, by name and with JSON parameters, so that loading a graph never
executes code taken from a file. A :class:`NamedFn` is an ordinary callable as
well, so programs written with lambdas (as in tracr) and programs written with
named functions look the same.

Each implementation receives the evaluation domain first, then its arguments,
then its parameters: ``impl(domain, x, **params)``. Domain-aware operations
(exp, ReLU, max, division, comparisons) go through the domain, so they are exact
in QQ and EE, rigorous in Ball, and plain IEEE in Float.

Register your own with::

    @register_function("triple", arity=1)
    def _triple(domain, x):
        return 3 * x

    Map(fn("triple"), tokens)
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Callable

from exact import Domain, ParseError
from exact.domains import domain_of
from exact.errors import NotInFieldError
from constructions.rasp.values import decode_value, encode_value


@dataclass(frozen=True)
class Function:
    name: str
    arity: int
    impl: Callable[..., Any]
    params: tuple[str, ...] = ()


_REGISTRY: dict[str, Function] = {}


def register_function(name: str, arity: int, params: tuple[str, ...] = ()) -> Callable:
    """Decorator: register ``impl(domain, *args, **params)`` under ``name``."""

    def deco(impl: Callable[..., Any]) -> Callable[..., Any]:
        if name in _REGISTRY:
            raise ValueError(f"function {name!r} is already registered")
        _REGISTRY[name] = Function(name, arity, impl, params)
        return impl

    return deco


def registered(name: str) -> Function:
    f = _REGISTRY.get(name)
    if f is None:
        raise ParseError(f"unknown function {name!r}: not in the registry (known: {', '.join(sorted(_REGISTRY))})")
    return f


class NamedFn:
    """A registered function with bound parameters; callable on plain values."""

    __slots__ = ("name", "params", "_fn")

    def __init__(self, name: str, **params: Any):
        f = registered(name)
        if set(params) != set(f.params):
            raise ParseError(f"function {name!r} takes parameters {list(f.params)}, got {sorted(params)}")
        self.name, self.params, self._fn = name, params, f

    @property
    def arity(self) -> int:
        return self._fn.arity

    def apply(self, domain: Domain, *args: Any) -> Any:
        return self._fn.impl(domain, *args, **self.params)

    def __call__(self, *args: Any) -> Any:
        return self.apply(domain_of(args[0]), *args)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "params": {k: _encode_param(v) for k, v in sorted(self.params.items())}}

    @classmethod
    def from_json(cls, obj: Any) -> "NamedFn":
        if not isinstance(obj, dict) or set(obj) != {"name", "params"} or not isinstance(obj["params"], dict):
            raise ParseError(f"malformed function {obj!r:.80}: expected {{name, params}}")
        if not isinstance(obj["name"], str):
            raise ParseError("function name must be a string")
        f = registered(obj["name"])
        return cls(f.name, **{k: _decode_param(v) for k, v in obj["params"].items()})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NamedFn) and self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash(repr(self.to_json()))

    def __repr__(self) -> str:
        ps = ", ".join(f"{k}={v!r}" for k, v in sorted(self.params.items()))
        return f"fn({self.name!r}{', ' + ps if ps else ''})"


def fn(name: str, **params: Any) -> NamedFn:
    """The registered function ``name`` with parameters bound, e.g. ``fn("add_const", c=1)``."""
    return NamedFn(name, **params)


def _encode_param(v: Any) -> Any:
    if isinstance(v, NamedFn):
        return {"fn": v.to_json()}
    if isinstance(v, (list, tuple)):
        return {"list": [_encode_param(x) for x in v]}
    return encode_value(v)


def _decode_param(obj: Any) -> Any:
    if isinstance(obj, dict) and set(obj) == {"fn"}:
        return NamedFn.from_json(obj["fn"])
    if isinstance(obj, dict) and set(obj) == {"list"} and isinstance(obj["list"], list):
        return tuple(_decode_param(x) for x in obj["list"])
    return decode_value(obj)


# --- the registry ------------------------------------------------------------------------

_COMPARE = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _c(domain: Domain, v: Any) -> Any:
    """A stored constant in the evaluation domain (tokens such as strings stay as they are)."""
    return v if isinstance(v, (str, bool)) or v is None else domain.convert(v)


def _compare(domain: Domain, op: str, x: Any, y: Any) -> bool:
    if op not in _COMPARE:
        raise ParseError(f"unknown comparison {op!r}; expected one of {list(_COMPARE)}")
    if isinstance(x, (str, bool)) or isinstance(y, (str, bool)) or x is None or y is None:
        return _COMPARE[op](x, y)
    d = domain.sign(domain.convert(x) - domain.convert(y))
    return _COMPARE[op](d, 0)


@register_function("identity", 1)
def _identity(domain, x):
    return x


@register_function("neg", 1)
def _neg(domain, x):
    return -x


@register_function("add_const", 1, ("c",))
def _add_const(domain, x, c):
    return x + _c(domain, c)


@register_function("sub_const", 1, ("c",))
def _sub_const(domain, x, c):
    return x - _c(domain, c)


@register_function("rsub_const", 1, ("c",))
def _rsub_const(domain, x, c):
    return _c(domain, c) - x


@register_function("mul_const", 1, ("c",))
def _mul_const(domain, x, c):
    return x * _c(domain, c)


@register_function("div_const", 1, ("c",))
def _div_const(domain, x, c):
    return domain.div(domain.convert(x), _c(domain, c))


@register_function("rdiv_const", 1, ("c",))
def _rdiv_const(domain, x, c):
    return domain.div(_c(domain, c), domain.convert(x))


@register_function("compare_const", 1, ("op", "c"))
def _compare_const(domain, x, op, c):
    return _compare(domain, op, x, _c(domain, c))


@register_function("rcompare_const", 1, ("op", "c"))
def _rcompare_const(domain, x, op, c):
    return _compare(domain, op, _c(domain, c), x)


@register_function("not", 1)
def _not(domain, x):
    return not x


@register_function("and_const", 1, ("c",))
def _and_const(domain, x, c):
    return x and c


@register_function("or_const", 1, ("c",))
def _or_const(domain, x, c):
    return x or c


@register_function("exp", 1)
def _exp(domain, x):
    return domain.exp(domain.convert(x))


@register_function("relu", 1)
def _relu(domain, x):
    return domain.relu(domain.convert(x))


@register_function("abs", 1)
def _abs(domain, x):
    x = domain.convert(x)
    return -x if domain.sign(x) < 0 else x


def _floor(x: Any) -> int:
    from flint import fmpq

    if isinstance(x, int) and not isinstance(x, bool):
        return x
    if isinstance(x, float) and x.is_integer():  # positions in the Float domain
        return int(x)
    if isinstance(x, fmpq):
        return int(x.floor())
    q = getattr(x, "rational_value", lambda: None)()
    if q is not None:
        return int(q.floor())
    raise NotInFieldError(f"floor is defined here for rational values only, got {x}")


@register_function("floordiv_const", 1, ("k",))
def _floordiv_const(domain, x, k):
    return domain.convert(_floor(domain.div(domain.convert(x), domain.convert(k))))


@register_function("mod_const", 1, ("k",))
def _mod_const(domain, x, k):
    x, k = domain.convert(x), domain.convert(k)
    return x - k * domain.convert(_floor(domain.div(x, k)))


@register_function("compose", 1, ("fns",))
def _compose(domain, x, fns):
    """fns applied innermost first: compose(fns=(g, f))(x) = f(g(x))."""
    for f in fns:
        x = f.apply(domain, x)
    return x


@register_function("add", 2)
def _add(domain, x, y):
    return x + y


@register_function("sub", 2)
def _sub(domain, x, y):
    return x - y


@register_function("mul", 2)
def _mul(domain, x, y):
    return x * y


@register_function("div", 2)
def _div(domain, x, y):
    return domain.div(domain.convert(x), domain.convert(y))


@register_function("linear", 2, ("a", "b"))
def _linear(domain, x, y, a, b):
    """a*x + b*y (tracr's LinearSequenceMap)."""
    return _c(domain, a) * x + _c(domain, b) * y


@register_function("max", 2)
def _max(domain, x, y):
    return domain.max(domain.convert(x), domain.convert(y))


@register_function("min", 2)
def _min(domain, x, y):
    return domain.min(domain.convert(x), domain.convert(y))


@register_function("compare", 2, ("op",))
def _compare2(domain, x, y, op):
    return _compare(domain, op, x, y)


@register_function("and", 2)
def _and(domain, x, y):
    return x and y


@register_function("or", 2)
def _or(domain, x, y):
    return x or y



@register_function("lookup", 1, ("table", "other"))
def _lookup(domain, x, table, other):
    """A finite table: the value paired with x in ``table`` (pairs (key, value)), else ``other``."""
    for k, v in table:
        if _compare(domain, "==", x, _c(domain, k)):
            return _c(domain, v)
    return _c(domain, other)


@register_function("select_if", 2, ("other",))
def _select_if(domain, flag, y, other):
    """y where flag holds, else ``other``."""
    return y if flag else _c(domain, other)


@register_function("both_zero", 2)
def _both_zero(domain, x, y):
    """1 if x = 0 and y = 0, else 0 (decided exactly in the domain)."""
    return domain.convert(int(domain.sign(domain.convert(x)) == 0 and domain.sign(domain.convert(y)) == 0))


def _int_value(x: Any) -> int:
    """An integer-valued domain number as a Python int (positions and sizes are integers)."""
    v = _floor(x)
    if v != x:
        raise NotInFieldError(f"expected an integer position, got {x}")
    return v


@register_function("radix_affine", 1, ("radices", "coeffs", "const", "bound", "other"))
def _radix_affine(domain, t, radices, coeffs, const, bound, other):
    """Index arithmetic for layouts: write t in mixed radix, then take an affine form of the digits.

    With radices (R_1, ..., R_m), t = ((d_1 R_2 + d_2) R_3 + ...) R_m + d_m, where
    d_m = t mod R_m, ..., and d_1 = t // (R_2 ... R_m) is unbounded (R_1 is ignored).
    The value is const + sum_i coeffs_i d_i, or ``other`` where t >= bound (if bound is
    not None). E.g. the source of entry (i, j) of a transposed r x c matrix at position
    t = i r + j is j c + i: radices (c, r), coeffs (1, c).
    """
    t0 = t = _int_value(t)
    if bound is not None and t0 >= int(bound):
        return domain.convert(other)
    digits = []
    for r in reversed(radices[1:]):
        t, d = divmod(t, int(r))
        digits.append(d)
    digits.append(t)
    digits.reverse()
    return domain.convert(int(const) + sum(int(c) * d for c, d in zip(coeffs, digits)))


@register_function("pack", 2)
def _pack(domain, x, y):
    """The pair (x, y) as one categorical value: lets one MLP read three inputs."""
    return (x, y)


@register_function("maxmin_pick", 2)
def _maxmin_pick(domain, packed, y):
    """max(x, y) at even positions t and min(x, y) at odd ones, for packed = (x, t); exact."""
    x, t = packed
    return domain.max(x, y) if _int_value(t) % 2 == 0 else domain.min(x, y)
