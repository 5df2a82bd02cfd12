"""The registry of named elementwise functions (the MLP sublayers of RASP).

A graph that is serialised or certified may only call functions from this
registry, by name and with JSON parameters, so that loading a graph never
executes code taken from a file. A :class:`NamedFn` is an ordinary callable as
well, so programs written with lambdas (as in tracr) and programs written with
named functions look the same.

Each implementation binds the evaluation domain and its parameters and returns
the elementwise function: ``impl(domain, **params)(x)``. Domain-aware operations
(exp, ReLU, max, division, comparisons) go through the domain, so they are exact
in QQ and EE, rigorous in Ball, and plain IEEE in Float. Every comparison, truth
test (``indicator``, ``choose``, and/or/not), floor and rounding goes through the
three-valued decision of :mod:`exact.decide`: on a ball it is decided from the
enclosure or raises UndecidedError, never answered by Python's operators on arb.

Register your own with::

    @register_function("triple", arity=1)
    def _triple(domain):
        return lambda x: 3 * x

    Map(fn("triple"), tokens)
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np
from flint import fmpq

from attncert.exact import Domain, ParseError, decide
from attncert.exact.domains import domain_of
from attncert.exact.errors import AttncertError, NotInFieldError
from attncert.constructions.rasp.values import decode_value, encode_value
from attncert.constructions.sizes.expr import concrete


@dataclass(frozen=True)
class Function:
    name: str
    arity: int
    impl: Callable[..., Any]
    params: tuple[str, ...] = ()
    #: Optional form on int64 arrays (sequences of integers, such as positions): returns
    #: the result array, or None when it cannot guarantee the exact result (overflow).
    on_ints: Callable[..., np.ndarray | None] | None = None


_REGISTRY: dict[str, Function] = {}


def register_function(name: str, arity: int, params: tuple[str, ...] = ()) -> Callable:
    """Decorator: register ``impl(domain, **params) -> f`` under ``name``.

    ``impl`` binds the domain and parameters (converting constants once) and returns
    the elementwise function f(x) (arity 1) or f(x, y) (arity 2).
    """

    def deco(impl: Callable[..., Any]) -> Callable[..., Any]:
        if name in _REGISTRY:
            raise ValueError(f"function {name!r} is already registered")
        _REGISTRY[name] = Function(name, arity, impl, params)
        return impl

    return deco


def integer_form(name: str) -> Callable:
    """Decorator: attach a vectorised int64 form ``f(*arrays, **params)`` to a registered function.

    It must agree exactly with the scalar form on integers, and return None rather
    than risk an overflow; the evaluator then uses the scalar form.
    """

    def deco(f: Callable[..., np.ndarray | None]) -> Callable[..., np.ndarray | None]:
        _REGISTRY[name] = replace(_REGISTRY[name], on_ints=f)
        return f

    return deco


#: Bound on intermediate magnitudes in integer forms (int64 holds 2^63 - 1).
SAFE_INT = 1 << 62


def _bound(a: np.ndarray) -> int:
    return int(np.abs(a).max(initial=0))


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

    def bind(self, domain: Domain) -> Callable[..., Any]:
        """The function on values of ``domain``, with parameters converted once."""
        return self._fn.impl(domain, **self.params)

    def apply(self, domain: Domain, *args: Any) -> Any:
        return self.bind(domain)(*args)

    def apply_ints(self, *arrays: np.ndarray) -> np.ndarray | None:
        """The vectorised integer form on int64 arrays, or None if there is none or it may overflow."""
        f = self._fn.on_ints
        return None if f is None else f(*arrays, **self.params)

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

_COMPARE = decide.OPERATORS


def _c(domain: Domain, v: Any) -> Any:
    """A stored constant in the evaluation domain (tokens such as strings stay as they are)."""
    return v if isinstance(v, (str, bool)) or v is None else domain.native(v)


def _compare(domain: Domain, op: str, x: Any, y: Any) -> bool:
    """x op y: numbers brought into the domain and decided (:func:`exact.decide.compare`), tokens as Python compares them."""
    if op not in _COMPARE:
        raise ParseError(f"unknown comparison {op!r}; expected one of {list(_COMPARE)}")
    if domain.exact and type(x) is fmpq and type(y) is fmpq:
        # two rationals are ordered exactly as they are; converting both for every element
        # made comparisons the larger part of a comparison map's time
        return _COMPARE[op](x, y)
    if _TOKEN_TYPES.isdisjoint((type(x), type(y))) and not isinstance(x, tuple) and not isinstance(y, tuple):
        x, y = domain.native(x), domain.native(y)
    return decide.compare(op, x, y)


#: Values that are never brought into a domain (a boolean is compared as 0 or 1 by the decision).
_TOKEN_TYPES = frozenset({str, bool, type(None)})


@register_function("identity", 1)
def _identity(domain):
    return lambda x: x


@register_function("neg", 1)
def _neg(domain):
    return operator.neg


@register_function("add_const", 1, ("c",))
def _add_const(domain, c):
    c = _c(domain, c)
    return lambda x: x + c


@register_function("sub_const", 1, ("c",))
def _sub_const(domain, c):
    c = _c(domain, c)
    return lambda x: x - c


@register_function("rsub_const", 1, ("c",))
def _rsub_const(domain, c):
    c = _c(domain, c)
    return lambda x: c - x


@register_function("mul_const", 1, ("c",))
def _mul_const(domain, c):
    c = _c(domain, c)
    return lambda x: x * c


@register_function("div_const", 1, ("c",))
def _div_const(domain, c):
    c = _c(domain, c)
    return lambda x: domain.div(domain.native(x), c)


@register_function("rdiv_const", 1, ("c",))
def _rdiv_const(domain, c):
    c = _c(domain, c)
    return lambda x: domain.div(c, domain.native(x))


@register_function("compare_const", 1, ("op", "c"))
def _compare_const(domain, op, c):
    c = _c(domain, c)
    return lambda x: _compare(domain, op, x, c)


@register_function("rcompare_const", 1, ("op", "c"))
def _rcompare_const(domain, op, c):
    c = _c(domain, c)
    return lambda x: _compare(domain, op, c, x)


@register_function("not", 1)
def _not(domain):
    return lambda x: not decide.truth(x)


@register_function("and_const", 1, ("c",))
def _and_const(domain, c):
    """x and c, as Python's ``and``: c where x is true, else x (truth decided)."""
    return lambda x: c if decide.truth(x) else x


@register_function("or_const", 1, ("c",))
def _or_const(domain, c):
    return lambda x: x if decide.truth(x) else c


@register_function("exp", 1)
def _exp(domain):
    return lambda x: domain.exp(domain.native(x))


@register_function("relu", 1)
def _relu(domain):
    return lambda x: domain.relu(domain.native(x))


@register_function("abs", 1)
def _abs(domain):
    def f(x):
        x = domain.native(x)
        return -x if domain.sign(x) < 0 else x

    return f


@register_function("floordiv_const", 1, ("k",))
def _floordiv_const(domain, k):
    k = domain.native(k)
    return lambda x: domain.native(decide.floor(domain.div(domain.native(x), k)))


@register_function("mod_const", 1, ("k",))
def _mod_const(domain, k):
    k = domain.native(k)

    def f(x):
        x = domain.native(x)
        return x - k * domain.native(decide.floor(domain.div(x, k)))

    return f


@register_function("compose", 1, ("fns",))
def _compose(domain, fns):
    """fns applied innermost first: compose(fns=(g, f))(x) = f(g(x))."""
    bound = [f.bind(domain) for f in fns]

    def f(x):
        for g in bound:
            x = g(x)
        return x

    return f


@register_function("add", 2)
def _add(domain):
    return operator.add


@register_function("sub", 2)
def _sub(domain):
    return operator.sub


@register_function("mul", 2)
def _mul(domain):
    return operator.mul


@register_function("div", 2)
def _div(domain):
    def div(x: Any, y: Any) -> Any:
        if type(x) is fmpq and type(y) is fmpq and y:  # two nonzero-divisor rationals: FLINT's exact quotient
            return x / y
        return domain.div(domain.native(x), domain.native(y))

    return div


@register_function("mul_scaled", 2, ("c",))
def _mul_scaled(domain, c):
    """c*x*y: a product whose scale is folded into the same MLP."""
    c = _c(domain, c)
    # c joins y first: in U's products y is the rational factor, so an exponential x is multiplied once.
    return lambda x, y: x * (c * y)


@register_function("norm_scale", 2, ("delta",))
def _norm_scale(domain, delta):
    """x / sqrt(v + delta): layer norm's scaling of a centred entry x by its row variance v (delta > 0).

    The square root leaves EE in general (:meth:`Domain.real_power` refuses it there),
    so a program using it is evaluated in Ball: an enclosure.
    """
    delta = _c(domain, delta)
    half = _c(domain, fmpq(-1, 2))
    return lambda x, v: domain.native(x) * domain.real_power(domain.native(v) + delta, half)


@register_function("masked_exp", 2, ("c",))
def _masked_exp(domain, c):
    """m * e^{c s} for (s, m); exactly 0 where m = 0 (e^{c s} is then never formed)."""
    c, zero = _c(domain, c), domain.zero()

    def masked_exp(s: Any, m: Any) -> Any:
        # A rational mask is tested by FLINT directly (exact); any other through the domain's sign.
        if (not m) if type(m) is fmpq else domain.sign(domain.native(m)) == 0:
            return zero
        return m * domain.exp(c * s)

    return masked_exp


@register_function("affine_relu", 2, ("c",))
def _affine_relu(domain, c):
    """ReLU(c*x + y), with the sign decided in the domain (exactly in QQ and EE)."""
    c = _c(domain, c)
    return lambda x, y: domain.relu(c * x + y)


@register_function("ramp", 1, ("a", "b"))
def _ramp(domain, a, b):
    """min(1, max(0, (x - a) / (b - a))) for a < b: 0 up to a, 1 from b on, exactly (two ReLUs)."""
    a, b = _c(domain, a), _c(domain, b)
    w = domain.div(domain.one(), b - a)
    return lambda x: domain.relu((domain.native(x) - a) * w) - domain.relu((domain.native(x) - b) * w)


@register_function("alternating_steps", 1, ("k",))
def _alternating_steps(domain, k):
    """sum_{t=1..k} (-1)^(t+1) ramp(t - 1, t)(x): on an integer count c in 0..k, the parity of c."""
    k = int(k)

    def f(x):
        x = domain.native(x)
        return domain.sum((-1) ** (t + 1) * (domain.relu(x - (t - 1)) - domain.relu(x - t)) for t in range(1, k + 1))

    return f


@register_function("mul_exp", 1, ("c",))
def _mul_exp(domain, c):
    """x e^c for a rational c (a constant exponential times x)."""
    e = domain.exp(_c(domain, c))
    return lambda x: domain.native(x) * e


@register_function("pow_const", 1, ("k",))
def _pow_const(domain, k):
    """x^k for a rational constant k (the RASP language's ``x ^ k``): exact for an integer k and for
    exact rational roots, otherwise it leaves the exact fields (:meth:`exact.domains.base.Domain.power`)."""
    k = domain.native(k)
    return lambda x: domain.power(x, k)


@register_function("pow_base", 1, ("b",))
def _pow_base(domain, b):
    """b^x for a rational constant base b (the RASP language's ``b ^ x`` with a sequence x)."""
    b = domain.native(b)
    return lambda x: domain.power(b, x)


@register_function("power", 2)
def _power(domain):
    """x^y of two sequences, elementwise."""
    return domain.power


@register_function("round_half_even", 1)
def _round_half_even(domain):
    """The nearest integer, ties to even (Python's and the RASP language's ``round``), decided exactly."""

    return lambda x: domain.native(decide.round_half_even(domain.native(x)))


@register_function("indicator", 1)
def _indicator(domain):
    """1 where the value is true, 0 elsewhere (the RASP language's ``indicator``)."""
    return lambda x: domain.one() if decide.truth(x) else domain.zero()


@register_function("choose", 2)
def _choose(domain):
    """For (flag, a) packed with ``pack``, and b: a where flag holds, else b (``a if flag else b``)."""
    return lambda packed, b: packed[1] if decide.truth(packed[0]) else b


@register_function("in_values", 1, ("values",))
def _in_values(domain, values):
    """Whether the value is one of ``values`` (the RASP language's ``seq in [list]``)."""
    vals = [_c(domain, v) for v in values]
    return lambda x: decide.contains(vals, x)


@register_function("token_value", 1)
def _token_value(domain):
    """The value of a token: x for a plain number, v for a tagged pair (v, tag)."""
    return lambda x: domain.native(x[0] if isinstance(x, tuple) else x)


@register_function("token_tag", 1)
def _token_tag(domain):
    """The tag of a token: tag for a pair (v, tag), 1 (data) for a plain number."""
    one = domain.native(1)
    return lambda x: domain.native(x[1]) if isinstance(x, tuple) else one


@register_function("linear", 2, ("a", "b"))
def _linear(domain, a, b):
    """a*x + b*y (tracr's LinearSequenceMap)."""
    a, b = _c(domain, a), _c(domain, b)
    return lambda x, y: a * x + b * y


@register_function("max", 2)
def _max(domain):
    return lambda x, y: domain.max(domain.native(x), domain.native(y))


@register_function("min", 2)
def _min(domain):
    return lambda x, y: domain.min(domain.native(x), domain.native(y))


@register_function("compare", 2, ("op",))
def _compare2(domain, op):
    return lambda x, y: _compare(domain, op, x, y)


@register_function("and", 2)
def _and(domain):
    return lambda x, y: y if decide.truth(x) else x


@register_function("or", 2)
def _or(domain):
    return lambda x, y: x if decide.truth(x) else y


@register_function("lookup", 1, ("table", "other"))
def _lookup(domain, table, other):
    """A finite table: the value paired with x in ``table`` (pairs (key, value)), else ``other``."""
    pairs = [(_c(domain, k), _c(domain, v)) for k, v in table]
    other = _c(domain, other)

    def f(x):
        for k, v in pairs:
            if _compare(domain, "==", x, k):
                return v
        return other

    return f


@register_function("select_if", 2, ("other",))
def _select_if(domain, other):
    """y where flag holds, else ``other``."""
    other = _c(domain, other)
    return lambda flag, y: y if decide.truth(flag) else other


@register_function("both_zero", 2)
def _both_zero(domain):
    """1 if x = 0 and y = 0, else 0 (decided exactly in the domain)."""
    return lambda x, y: domain.native(int(domain.sign(domain.native(x)) == 0 and domain.sign(domain.native(y)) == 0))


def _int_value(x: Any) -> int:
    """An integer-valued domain number as a Python int (positions and sizes are integers)."""
    v = decide.floor(x)
    if not decide.equal(v, x):
        raise NotInFieldError(f"expected an integer position, got {x}")
    return v


@register_function("radix_affine", 1, ("radices", "coeffs", "const", "bound", "other"))
def _radix_affine(domain, radices, coeffs, const, bound, other):
    """Index arithmetic for layouts: write t in mixed radix, then take an affine form of the digits.

    With radices (R_1, ..., R_m), t = ((d_1 R_2 + d_2) R_3 + ...) R_m + d_m, where
    d_m = t mod R_m, ..., and d_1 = t // (R_2 ... R_m) is unbounded (R_1 is ignored).
    The value is const + sum_i coeffs_i d_i, or ``other`` where t >= bound (if bound is
    not None). E.g. the source of entry (i, j) of a transposed r x c matrix at position
    t = i r + j is j c + i: radices (c, r), coeffs (1, c).
    """
    radices = [int(r) for r in radices[1:]]
    coeffs, const, other = [int(c) for c in coeffs], int(const), domain.native(other)
    limit = None if bound is None else int(bound)

    def f(t):
        t = t0 = _int_value(t)
        if limit is not None and t0 >= limit:
            return other
        digits = []
        for r in reversed(radices):
            t, d = divmod(t, r)
            digits.append(d)
        digits.append(t)
        digits.reverse()
        return domain.native(const + sum(c * d for c, d in zip(coeffs, digits)))

    return f


@register_function("pack", 2)
def _pack(domain):
    """The pair (x, y) as one categorical value: lets one MLP read three inputs."""
    return lambda x, y: (x, y)


@register_function("maxmin_pick", 2)
def _maxmin_pick(domain):
    """max(x, y) at even positions t and min(x, y) at odd ones, for packed = (x, t); exact."""

    def f(packed, y):
        x, t = packed
        return domain.max(x, y) if _int_value(t) % 2 == 0 else domain.min(x, y)

    return f


# --- integer forms (positions and sizes are integers: vectorise them) ------------------


def _int_param(v: Any) -> int | None:
    """The parameter as a Python int if it is an integer number (not a bool or token)."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, fmpq) and v.q == 1:
        return int(v.p)
    return None


def _const_form(op: Callable[[np.ndarray, int], np.ndarray], grow: Callable[[int, int], int]):
    def form(x: np.ndarray, c: Any) -> np.ndarray | None:
        ci = _int_param(c)
        if ci is None or grow(_bound(x), abs(ci)) >= SAFE_INT:
            return None
        return op(x, ci)

    return form


for _name, _op, _grow in [
    ("add_const", lambda x, c: x + c, lambda b, c: b + c),
    ("sub_const", lambda x, c: x - c, lambda b, c: b + c),
    ("rsub_const", lambda x, c: c - x, lambda b, c: b + c),
    ("mul_const", lambda x, c: x * c, lambda b, c: b * c),
]:
    integer_form(_name)(_const_form(_op, _grow))


def _binary_form(op: Callable[[np.ndarray, np.ndarray], np.ndarray], grow: Callable[[int, int], int]):
    def form(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
        return None if grow(_bound(x), _bound(y)) >= SAFE_INT else op(x, y)

    return form


for _name, _op, _grow in [
    ("add", np.add, lambda a, b: a + b),
    ("sub", np.subtract, lambda a, b: a + b),
    ("mul", np.multiply, lambda a, b: a * b),
]:
    integer_form(_name)(_binary_form(_op, _grow))


@integer_form("radix_affine")
def _radix_affine_ints(t, radices, coeffs, const, bound, other):
    ints = [_int_param(v) for v in (*radices, *coeffs, const, other)] + ([0] if bound is None else [_int_param(bound)])
    if any(v is None for v in ints):
        return None
    big = _bound(t)
    if big * (sum(abs(int(c)) for c in coeffs) + 1) + abs(int(const)) + abs(int(other)) >= SAFE_INT:
        return None
    rest, digits = t.copy(), []
    for r in reversed(radices[1:]):
        rest, d = np.divmod(rest, int(r))
        digits.append(d)
    digits.append(rest)
    digits.reverse()
    out = np.full(len(t), int(const), dtype=np.int64)
    for c, d in zip(coeffs, digits):
        out += int(c) * d
    if bound is not None:
        out[t >= int(bound)] = int(other)
    return out


@integer_form("lookup")
def _lookup_ints(x, table, other):
    pairs = [(_int_param(k), _int_param(v)) for k, v in table]
    o = _int_param(other)
    if o is None or any(k is None or v is None for k, v in pairs):
        return None
    out = np.full(len(x), o, dtype=np.int64)
    for k, v in reversed(pairs):  # the first matching pair wins, as in the scalar form
        out[x == k] = v
    return out


# --- templates: a function chosen by the sizes ----------------------------------------------------------


def _size_case(domain, when, then, otherwise):
    raise AttncertError(
        f"a template's size case (when {when!r}) is evaluated before the template is instantiated at given sizes "
        "(constructions.rasp.template.instantiate)"
    )


for _arity in (1, 2):
    register_function(f"size_case{_arity}", _arity, ("when", "then", "otherwise"))(_size_case)


def size_case(when: Any, then: NamedFn, otherwise: NamedFn) -> NamedFn:
    """``then`` where the size expression ``when`` is 0, ``otherwise`` elsewhere: a Python branch on sizes
    made explicit, so that a template (symbolic sizes) holds both functions and the condition, and an
    integer ``when`` (a builder called with integer sizes) picks one now. Both have the same arity."""
    if then.arity != otherwise.arity:
        raise ParseError("the two functions of a size case take the same number of arguments")
    k = concrete(when)
    if k is not None:
        return then if k == 0 else otherwise
    return NamedFn(f"size_case{then.arity}", when=when, then=then, otherwise=otherwise)
