"""The one three-valued decision behind every comparison, sign, truth test, floor and choice.

A comparison of exact numbers (``int``, ``fmpq``, ``Fraction``, :class:`~exact.EENumber`)
is decided exactly (EE by Lindemann–Weierstrass, :mod:`exact.expsum`). A comparison
that involves an arb ball B, an enclosure of an unknown real x, has three outcomes:

* B lies entirely on one side (``B > 0``, ``B < 0``, or B is the exact point 0): every
  point of B, hence x, is on that side, and the answer is *decided from an enclosure*
  (unless B is a point, radius 0: then x is that dyadic number and the answer is exact);
* otherwise the ball does not decide it, and :class:`~exact.errors.UndecidedError` is
  raised. Nothing guesses: Python's operators on arb answer False when a ball does not
  decide (``r * r == 2`` is False for r a ball around √2), ``bool`` of any ball is True
  and ``int`` of one is an error, so none of them is used on a ball anywhere else.

Whoever needs to know whether an answer rests on enclosures opens a :func:`recording`:
every decision taken from a ball while it is open is counted in its
:class:`Decisions` (the RASP language labels a run's output from it). A caller that
meets an undecided comparison may compute again at a higher precision; the decision
itself never changes precision.

Structured values are compared as Python compares them (lists and tuples element by
element, dicts key by key, a number never equal to a string), with numbers decided as
above: an equality is False as soon as one pair of elements is decidedly different,
and undecided if none is but some pair is undecided.

:class:`DecidingBall` hands a ball to user code (a Python function mapped over a
sequence evaluated in Ball) so that that code's comparisons, ``bool``, ``int``,
``round`` and ``math.floor`` are these decisions too, and ``float`` is refused.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import operator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Iterator

import numpy as np
from flint import arb, ctx, fmpq, fmpz

from attncert.exact.eenumber import EENumber
from attncert.exact.errors import AttncertError, UndecidedError

#: The comparison operators, by the spelling the RASP language and the registry use.
OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
#: Types whose values are numbers (bool among them: True == 1, as in Python).
NUMBER_TYPES = (int, fmpz, fmpq, Fraction, float, EENumber, arb, np.integer, np.floating, np.bool_)
#: Numbers whose signs their own field decides, by type: the symbolic field's (:mod:`exact.symbolic`), where a
#: sign is a question about the unknown input. That field registers its numbers when it is loaded
#: (:func:`register_self_deciding`), so this module, which every domain loads, does not load it (the identity
#: checker, which loads the domains, must not: tests/proofs/core/test_independence.py).
_SELF_DECIDING: dict[type, Callable[[Any], int]] = {}


def register_self_deciding(number_type: type, sign_of: Callable[[Any], int]) -> None:
    """Decide the sign of a ``number_type`` value x, and of a difference with one, by ``sign_of(x)``."""
    _SELF_DECIDING[number_type] = sign_of


@dataclass
class Decisions:
    """What a computation decided from enclosures while this record was in force."""

    #: Comparisons, signs, truth tests and floors answered from an arb ball of positive radius.
    from_enclosures: int = 0

    @property
    def any(self) -> bool:
        return self.from_enclosures > 0


_RECORD: contextvars.ContextVar[Decisions | None] = contextvars.ContextVar("attncert_decisions", default=None)


@contextlib.contextmanager
def recording(record: Decisions) -> Iterator[Decisions]:
    """Count into ``record`` every decision taken from an enclosure inside the block."""
    token = _RECORD.set(record)
    try:
        yield record
    finally:
        _RECORD.reset(token)


def note_enclosure(count: int = 1) -> None:
    """Count answers that rest on an enclosure in the record in force (if any)."""
    record = _RECORD.get()
    if record is not None:
        record.from_enclosures += count


def is_number(x: Any) -> bool:
    return isinstance(x, NUMBER_TYPES) or type(x) is DecidingBall or type(x) in _SELF_DECIDING


# -- numbers ------------------------------------------------------------------------------


def sign(x: Any) -> int:
    """-1, 0 or 1: exact for exact numbers, from the ball for an arb (or UndecidedError)."""
    t = type(x)
    if t is fmpq or t is int or t is bool or t is fmpz:
        return (x > 0) - (x < 0)
    if t is arb:
        return _ball_sign(x, lambda: f"the sign of {show(x)}")
    if t is EENumber:
        return x.sign()
    if t is DecidingBall:
        return sign(x.ball)
    if t in _SELF_DECIDING:
        return _SELF_DECIDING[t](x)
    return _difference_sign(x, 0, "sign")


def _ball_sign(b: arb, what: Callable[[], str]) -> int:
    if b > 0:
        s = 1
    elif b < 0:
        s = -1
    elif b.is_zero():  # the exact point 0
        s = 0
    else:
        raise UndecidedError(f"{what()} is not decided by balls at {ctx.prec:,} bits")
    if not b.is_exact():  # a point ball is the exact dyadic value itself: its sign is an exact decision
        note_enclosure()
    return s


def _plain(x: Any) -> Any:
    """x as one of int, fmpq, float, EENumber, arb (numpy scalars and Fractions converted)."""
    if isinstance(x, (bool, np.bool_)):
        return int(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, Fraction):
        return fmpq(x.numerator, x.denominator)
    if isinstance(x, fmpz):
        return int(x)
    if isinstance(x, DecidingBall):
        return x.ball
    return x


def _difference_sign(a: Any, b: Any, op: str) -> int:
    """The sign of a - b, decided (``op`` names the comparison in an undecided message)."""
    a, b = _plain(a), _plain(b)
    if a is b:  # one value (one ball denotes one real number): a - a = 0 exactly, whatever its radius
        return 0
    ta, tb = type(a), type(b)
    if ta in _SELF_DECIDING or tb in _SELF_DECIDING:  # a question about the unknown input (exact.symbolic.ring)
        return sign(a - b)
    if ta is arb or tb is arb:
        x, y = _ball(a), _ball(b)
        what = (lambda: f"the sign of {show(a)}") if op == "sign" else (lambda: f"{show(a)} {op} {show(b)}")
        return _ball_sign(x - y, what)
    if ta is float or tb is float:
        if ta is float and tb is float:
            return (a > b) - (a < b)
        # one binary float against an exact number: compare the exact binary value
        x, y = (fmpq(*Fraction(v).as_integer_ratio()) if type(v) is float else v for v in (a, b))
        return _difference_sign(x, y, op)
    if ta is EENumber or tb is EENumber:
        return (a - b).sign() if ta is EENumber else -(b - a).sign()
    return (a > b) - (a < b)


def _ball(x: Any) -> arb:
    if type(x) is arb:
        return x
    if type(x) is EENumber:
        return x.enclose(ctx.prec)
    if type(x) is float:
        if not math.isfinite(x):
            raise UndecidedError(f"{x} is not a real number")
        return arb(x)  # a double is dyadic: its ball is the exact point
    return arb(x)


def floor(x: Any) -> int:
    """⌊x⌋ as a Python int: exact for exact numbers, decided from the ball for an arb."""
    x = _plain(x)
    t = type(x)
    if t is int:
        return x
    if t is fmpq:
        return int(x.floor())
    if t is float:
        if not math.isfinite(x):
            raise ValueError(f"floor of {x}")
        return math.floor(x)
    if t is EENumber:
        q = x.rational_value()
        if q is not None:
            return int(q.floor())
        k = int(x.enclose(64).mid().floor().unique_fmpz())
        while (x - k).sign() < 0:  # exact signs move k to the floor (it starts within one of it)
            k -= 1
        while (x - (k + 1)).sign() >= 0:
            k += 1
        return k
    if t is arb:
        if not x.is_finite():
            raise UndecidedError(f"floor({show(x)}) is not decided: the ball is not finite")
        # If the floor is decided, every point of the ball has it, the midpoint among them.
        k = int(x.mid().floor().unique_fmpz())
        what = lambda: f"floor({show(x)})"  # noqa: E731
        if _ball_sign(x - k, what) >= 0 and _ball_sign(x - (k + 1), what) < 0:
            return k
        raise UndecidedError(f"floor({show(x)}) is not decided by balls at {ctx.prec:,} bits")
    raise TypeError(f"floor of a value of type {t.__name__}")


def round_half_even(x: Any) -> int:
    """The nearest integer to x, ties to even (Python's ``round``), decided as :func:`floor` and :func:`sign`."""
    k = floor(x)
    s = _difference_sign(x, fmpq(2 * k + 1, 2), "==")  # x against the midpoint k + 1/2
    if s < 0 or (s == 0 and k % 2 == 0):
        return k
    return k + 1


def trunc(x: Any) -> int:
    """x rounded toward zero (Python's ``int``), decided."""
    return floor(x) if sign(x) >= 0 else -floor(-_plain(x))


# -- values -------------------------------------------------------------------------------


def compare(op: str, a: Any, b: Any) -> bool:
    """``a op b`` for op in == != < <= > >=, as Python answers it, with every number decided."""
    if op not in OPERATORS:
        raise ValueError(f"unknown comparison {op!r}; expected one of {list(OPERATORS)}")
    if is_number(a) and is_number(b):
        return OPERATORS[op](_difference_sign(a, b, op), 0)
    if op in ("==", "!="):
        return equal(a, b) == (op == "==")
    if isinstance(a, (list, tuple)) and type(a) is type(b):
        for x, y in zip(a, b):  # the first pair that differs decides, as in Python
            if not equal(x, y):
                return compare(op, x, y)
        return OPERATORS[op](len(a), len(b))
    if is_number(a) or is_number(b) or type(a) is not type(b):
        raise TypeError(f"'{op}' is not defined between {type(a).__name__} and {type(b).__name__}")
    return OPERATORS[op](a, b)


def equal(a: Any, b: Any) -> bool:
    """a == b, numbers decided; containers are unequal as soon as one pair is decidedly unequal."""
    t = type(a)
    if t is type(b) and t in _SELF_DECIDED:
        return a == b
    if a is b:  # one value (one ball denotes one real number): equal, whatever its radius
        return True
    if is_number(a) and is_number(b):
        return _difference_sign(a, b, "==") == 0
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if type(a) is not type(b) or len(a) != len(b):
            return False
        return not _some_pair(zip(a, b), False)
    if isinstance(a, dict) and isinstance(b, dict):
        if len(a) != len(b) or any(k not in b for k in a):  # keys are hashable, so exact
            return False
        return not _some_pair(((a[k], b[k]) for k in a), False)
    if is_number(a) or is_number(b) or isinstance(a, (list, tuple, dict)) or isinstance(b, (list, tuple, dict)):
        return False
    return bool(a == b)


#: Types whose own == is exact (the common case of tokens, checked first).
_SELF_DECIDED = frozenset({str, bool, type(None), fmpq, int})


def _some_pair(pairs: Iterator[tuple[Any, Any]], equality: bool) -> bool:
    """Whether some pair (x, y) has equal(x, y) == equality: True at the first pair that decidedly has it,
    False when every pair decidedly has not, UndecidedError when no pair has it but some are undecided."""
    undecided: UndecidedError | None = None
    for x, y in pairs:
        try:
            if equal(x, y) == equality:
                return True
        except UndecidedError as e:  # a later pair may still decide
            undecided = undecided or e
    if undecided is not None:
        raise undecided
    return False


def contains(container: Any, x: Any) -> bool:
    """``x in container``: substring for strings, else some element (a dict's keys) equal to x, decided."""
    if isinstance(container, str):
        if not isinstance(x, str):
            raise TypeError(f"'in <string>' requires a string, not {type(x).__name__}")
        return x in container
    return _some_pair(((x, y) for y in container), True)


def truth(x: Any) -> bool:
    """Whether x counts as true, as Python counts it (a number is true when it is not 0), decided."""
    if x is True or x is False:
        return x
    if x is None:
        return False
    if is_number(x):
        if type(x) is arb:
            return _ball_sign(x, lambda: f"whether {show(x)} is 0 (its truth)") != 0
        return sign(x) != 0
    if isinstance(x, (str, list, tuple, dict)):
        return len(x) > 0
    return bool(x)


def show(x: Any) -> str:
    """A short form of a value for a message (a ball with a few digits and its radius)."""
    if type(x) is arb:  # the midpoint to 12 digits and the radius itself (not widened by the printing)
        return f"[{x.mid().str(12, radius=False)} +/- {x.rad().str(3, radius=False)}]"
    return str(x)[:60]


# -- balls handed to user code ------------------------------------------------------------


class FloatOfBall(AttncertError, TypeError):
    """``float`` of a ball: a double is not an enclosure, so a ball is never rounded to one."""


def _unwrapped(x: Any) -> Any:
    return x.ball if type(x) is DecidingBall else x


def _wrapped(x: Any) -> Any:
    return DecidingBall(x) if type(x) is arb else x


def deciding(x: Any) -> Any:
    """x with every arb in it (tuples included) as a :class:`DecidingBall`, for user code."""
    if type(x) is arb:
        return DecidingBall(x)
    if type(x) is tuple:
        return tuple(deciding(v) for v in x)
    return x


def plain(x: Any) -> Any:
    """What user code returned, with every DecidingBall (tuples included) an arb again."""
    if type(x) is DecidingBall:
        return x.ball
    if type(x) is tuple:
        return tuple(plain(v) for v in x)
    return x


def _arithmetic(op: Callable[[Any, Any], Any], reflected: bool = False) -> Callable[["DecidingBall", Any], Any]:
    def f(self: "DecidingBall", other: Any) -> Any:
        o = _unwrapped(other)
        if not is_number(o):
            return NotImplemented
        if type(o) is EENumber:
            o = o.enclose(ctx.prec)
        return _wrapped(op(o, self.ball) if reflected else op(self.ball, o))

    return f


def _comparison(op: str) -> Callable[["DecidingBall", Any], bool]:
    return lambda self, other: compare(op, self.ball, _unwrapped(other))


class DecidingBall:
    """An arb ball whose comparisons, truth, ``int``, ``round``, ``math.floor``/``ceil``/``trunc``
    are the decisions of this module; arithmetic and arb's methods give DecidingBalls again."""

    __slots__ = ("ball",)

    def __init__(self, ball: arb):
        self.ball = ball

    __add__, __radd__ = _arithmetic(operator.add), _arithmetic(operator.add, reflected=True)
    __sub__, __rsub__ = _arithmetic(operator.sub), _arithmetic(operator.sub, reflected=True)
    __mul__, __rmul__ = _arithmetic(operator.mul), _arithmetic(operator.mul, reflected=True)
    __truediv__, __rtruediv__ = _arithmetic(operator.truediv), _arithmetic(operator.truediv, reflected=True)
    __pow__, __rpow__ = _arithmetic(operator.pow), _arithmetic(operator.pow, reflected=True)
    __eq__, __ne__ = _comparison("=="), _comparison("!=")
    __lt__, __le__, __gt__, __ge__ = _comparison("<"), _comparison("<="), _comparison(">"), _comparison(">=")

    def __floordiv__(self, other: Any) -> Any:
        return _wrapped(arb(floor(self.ball / _ball(_plain(other)))))

    def __mod__(self, other: Any) -> Any:
        o = _ball(_plain(other))
        return _wrapped(self.ball - o * floor(self.ball / o))

    def __neg__(self) -> "DecidingBall":
        return DecidingBall(-self.ball)

    def __pos__(self) -> "DecidingBall":
        return self

    def __abs__(self) -> "DecidingBall":
        return DecidingBall(abs(self.ball))

    def __bool__(self) -> bool:
        return truth(self.ball)

    def __int__(self) -> int:
        return trunc(self.ball)

    __trunc__ = __int__

    def __floor__(self) -> int:
        return floor(self.ball)

    def __ceil__(self) -> int:
        return -floor(-self.ball)

    def __round__(self, ndigits: int | None = None) -> int:
        if ndigits is not None:
            raise TypeError("round(ball, ndigits) is not supported; round(ball) rounds to an integer")
        return round_half_even(self.ball)

    def __float__(self) -> float:
        raise FloatOfBall(f"float() of the ball {show(self.ball)}: a double is not an enclosure; compute with the ball")

    def __hash__(self) -> int:
        return hash(self.ball)  # arb hashes exact balls only (and refuses the others)

    def __getattr__(self, name: str) -> Any:
        if name == "ball":  # not set yet (copy, pickle): not an arb attribute either
            raise AttributeError(name)
        attr = getattr(self.ball, name)
        if not callable(attr):
            return _wrapped(attr)
        return lambda *args, **kw: _wrapped(attr(*map(_unwrapped, args), **kw))

    def __repr__(self) -> str:
        return repr(self.ball)

    def __str__(self) -> str:
        return str(self.ball)
