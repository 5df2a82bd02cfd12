"""Registered functions on a whole batch at once (the MLP sublayers of a batched evaluation).

Each form takes the evaluation domain, the function's parameters and its
arguments as :class:`~.batch_values.Numbers`, and returns the Numbers that the
scalar function (:mod:`.functions`) gives entry by entry, values and types
alike, or None when it cannot promise that (a token, a float domain, an EE value
where a rational is needed): the batched evaluator then calls the scalar
function per input. A value the scalar function would refuse (a division by an
exact zero) raises, so that the caller reports the single-input evaluator's own
error.

Types follow Python's operators on the evaluator's values: an operation with an
EENumber operand gives an EENumber, one of fmpq operands an fmpq; the masked
exponential gives EENumbers throughout (``EE.zero()`` is an EENumber too).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from flint import fmpq

from attncert.constructions.rasp.batch_values import Numbers
from attncert.constructions.rasp.functions import _c
from attncert.exact import EE, Domain
from attncert.exact.errors import ExactZeroDivision
from attncert.exact.exparray import ExpArray
from attncert.exact.ratarray import RatArray

Form = Callable[..., "Numbers | None"]
FORMS: dict[str, Form] = {}


def form(name: str) -> Callable[[Form], Form]:
    """Decorator: ``f(domain, *args, **params)`` is the batched form of the registered function ``name``."""

    def deco(f: Form) -> Form:
        FORMS[name] = f
        return f

    return deco


def _const(domain: Domain, c: Any) -> Numbers | None:
    return Numbers.constant(_c(domain, c))


def _plain(*xs: Numbers | None) -> bool:
    return all(x is not None and x.plain for x in xs)


def add(x: Numbers, y: Numbers) -> Numbers:
    return Numbers((x.num + y.num).bounded(), x.ee | y.ee)


def sub(x: Numbers, y: Numbers) -> Numbers:
    return Numbers((x.num - y.num).bounded(), x.ee | y.ee)


def mul(x: Numbers, y: Numbers) -> Numbers:
    return Numbers((x.num * y.num).bounded(), x.ee | y.ee)


def div(domain: Domain, x: Numbers, y: Numbers) -> Numbers | None:
    """x / y: a rational divisor scales, an EE divisor (an EENumber) becomes the denominator.

    As ``domain.div``: EENumber(a.num * 1, 1 * b.num) for an EENumber b, a * (1/b) for an fmpq b.
    """
    if not _plain(x, y):
        return None
    if bool(y.num.is_zero().any()):
        raise ExactZeroDivision("division by an exact zero")
    shape = np.broadcast_shapes(x.shape, y.shape)
    y_ee = np.broadcast_to(y.ee, shape)
    if not y_ee.any():
        r = y.rational()
        if r is None:
            return None
        return Numbers(x.num.scale(r.reciprocal()), x.ee | y.ee)
    if domain is not EE:
        return None
    one = RatArray.constant(fmpq(1), (1, shape[-1]))
    r = one.where(y_ee, y.num.rational_part().broadcast(shape)).reciprocal()  # 1/y where y is an fmpq, 1 elsewhere
    den = y.num.where(y_ee, ExpArray.rational(one))
    return Numbers(x.num.scale(r), x.ee | y_ee, den=den)


@form("identity")
def _identity(domain, x):
    return x if x.plain else None


@form("neg")
def _neg(domain, x):
    return Numbers(-x.num, x.ee) if x.plain else None


def _with_const(op: Callable[[Numbers, Numbers], Numbers], swap: bool = False) -> Form:
    def f(domain, x, c):
        k = _const(domain, c)
        if not _plain(x, k):
            return None
        return op(k, x) if swap else op(x, k)

    return f


form("add_const")(_with_const(add))
form("sub_const")(_with_const(sub))
form("rsub_const")(_with_const(sub, swap=True))
form("mul_const")(_with_const(mul))


@form("div_const")
def _div_const(domain, x, c):
    k = _const(domain, c)
    return div(domain, x, k) if k is not None and not k.ee.any() else None


@form("rdiv_const")
def _rdiv_const(domain, x, c):
    k = _const(domain, c)
    return div(domain, k, x) if k is not None else None


@form("add")
def _add(domain, x, y):
    return add(x, y) if _plain(x, y) else None


@form("sub")
def _sub(domain, x, y):
    return sub(x, y) if _plain(x, y) else None


@form("mul")
def _mul(domain, x, y):
    return mul(x, y) if _plain(x, y) else None


@form("div")
def _div(domain, x, y):
    return div(domain, x, y)


@form("mul_scaled")
def _mul_scaled(domain, x, y, c):
    k = _const(domain, c)
    return mul(mul(k, x), y) if _plain(x, y, k) else None


@form("linear")
def _linear(domain, x, y, a, b):
    ka, kb = _const(domain, a), _const(domain, b)
    return add(mul(ka, x), mul(kb, y)) if _plain(x, y, ka, kb) else None


def _exp(x: Numbers, where: np.ndarray) -> ExpArray | None:
    """e^x at the entries ``where`` (1 elsewhere), for x rational there; None if it is not."""
    if not x.plain:
        return None
    shape = np.broadcast_shapes(x.shape, np.shape(where))
    if not bool(np.all(x.num.rational_entries() | ~where)):
        return None  # e^x of an irrational x leaves EE: the scalar function raises
    q = x.num.rational_part().broadcast(shape).where(where, RatArray.zeros(shape))
    return ExpArray.exp(q)


@form("exp")
def _exp_form(domain, x):
    if domain is not EE:
        return None
    e = _exp(x, np.ones(x.shape, dtype=bool))
    return None if e is None else Numbers(e, np.ones(x.shape, dtype=bool))


@form("masked_exp")
def _masked_exp(domain, s, m, c):
    """m e^{c s}, and EE.zero() where m = 0 (e^{c s} is then never formed)."""
    k = _const(domain, c)
    if domain is not EE or not _plain(s, m, k) or k.ee.any():
        return None
    shape = np.broadcast_shapes(s.shape, m.shape)
    nonzero = np.broadcast_to(~m.num.is_zero(), shape)
    e = _exp(mul(k, s), nonzero)
    return None if e is None else Numbers((m.num * e).bounded(), np.ones((1, 1), dtype=bool))


@form("compose")
def _compose(domain, x, fns):
    for f in fns:
        g = FORMS.get(f.name)
        if g is None or x is None:
            return None
        x = g(domain, x, **f.params)
    return x


def apply(domain: Domain, name: str, params: dict[str, Any], args: list[Numbers]) -> Numbers | None:
    """The batched form of a registered function, or None if it has none or cannot promise the scalar result."""
    f = FORMS.get(name)
    return None if f is None else f(domain, *args, **params)
