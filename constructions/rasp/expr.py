"""RASP expressions: a builder source-compatible with tracr's ``tracr.rasp.rasp``.

Names, argument order and semantics follow tracr (Lindner et al., "Tracr:
Compiled Transformers as a Laboratory for Interpretability", 2023), which in
turn follows RASP (Weiss, Goldberg, Yahav, "Thinking Like Transformers", ICML
2021). A program written for tracr runs here after changing its import to
``from attncert.constructions import rasp``.

Differences, all on the side of exactness or serialisability:

* Evaluation is exact: the mean in ``Aggregate`` is taken in the evaluation
  domain (QQ by default), so a mean of integers is a rational, not a float.
* Operator overloads (``sop + 1``, ``sop == "a"``, ``a * b``) build maps from the
  function registry (:mod:`constructions.rasp.functions`), so the resulting
  graphs serialise without pickling code. Lambdas still work in-process.
* ``selector_and`` / ``selector_or`` / ``selector_not`` never merge two Selects
  into one Select with a lambda predicate (tracr's ``simplify``); the result is
  the same selection matrix, and stays serialisable.

A program is turned into a ``networkx.MultiDiGraph`` by
:func:`constructions.rasp.graph.to_graph`; evaluation and size accounting work
on that graph.
"""

from __future__ import annotations

import copy
import enum
import itertools
from typing import Any, Callable, Sequence

from attncert.constructions.rasp.functions import NamedFn, fn

#: ``evaluate(expr, xs)``, installed by :func:`install_evaluator`.
_evaluator: Callable[[Any, Sequence[Any]], Any] | None = None


def install_evaluator(evaluate: Callable[[Any, Sequence[Any]], Any]) -> None:
    """Make ``expr(xs)`` evaluate with ``evaluate`` (called once, by :mod:`.evaluate`)."""
    global _evaluator
    _evaluator = evaluate


# Type names tracr exports, so that annotated tracr programs import unchanged.
Value = Any
NumericValue = Any
SelectorValue = list
Predicate = Callable[[Any, Any], bool]


class Encoding(enum.Enum):
    """How a SOp is encoded in a compiled transformer (tracr)."""

    CATEGORICAL = "categorical"
    NUMERICAL = "numerical"


class RASPExpr:
    """Base of SOps and selectors: carries annotations (``name``, ``encoding``)."""

    _ids = itertools.count(1)
    default_name = "expr"

    def __init__(self) -> None:
        self._annotations: dict[str, Any] = {}
        self.unique_id = next(RASPExpr._ids)

    @property
    def annotations(self) -> dict[str, Any]:
        defaults: dict[str, Any] = {"name": self.default_name}
        if isinstance(self, SOp):
            defaults["encoding"] = Encoding.CATEGORICAL
        return {**defaults, **self._annotations}

    @annotations.setter
    def annotations(self, value: dict[str, Any]) -> None:
        self._annotations = dict(value)

    @property
    def name(self) -> str:
        return self.annotations["name"]

    @property
    def label(self) -> str:
        return f"{self.name}_{self.unique_id}"

    @property
    def children(self) -> Sequence["RASPExpr"]:
        return []

    def copy(self) -> "RASPExpr":
        new = copy.copy(self)
        new.unique_id = next(RASPExpr._ids)
        return new

    def named(self, name: str) -> "RASPExpr":
        return annotate(self, name=name)

    def annotated(self, **annotations: Any) -> "RASPExpr":
        return annotate(self, **annotations)

    def __call__(self, xs: Sequence[Value]) -> Any:
        """tracr's ``program(xs)``: the value on input xs, by the evaluator that :mod:`.evaluate`
        installs when it loads (this module builds expressions and never imports the evaluator)."""
        if _evaluator is None:
            raise RuntimeError("no RASP evaluator is loaded: import attncert.constructions.rasp")
        return _evaluator(self, xs)


def annotate(expr: RASPExpr, **annotations: Any) -> RASPExpr:
    """A copy of expr with extra annotations (tracr semantics: the original is unchanged)."""
    new = expr.copy()
    new._annotations = {**expr._annotations, **annotations}
    return new


# --- SOps ----------------------------------------------------------------------------------


def _binary(name: str, fst: "SOp", snd: "SOp") -> "SequenceMap":
    return SequenceMap(fn(name), fst, snd)


class SOp(RASPExpr):
    """A sequence operation. Arithmetic and comparisons with constants or SOps build maps."""

    default_name = "sop"

    # Comparisons with a constant (tracr: elementwise, giving booleans).
    def __lt__(self, other: Value) -> "SOp":
        return Map(fn("compare_const", op="<", c=other), self)

    def __le__(self, other: Value) -> "SOp":
        return Map(fn("compare_const", op="<=", c=other), self)

    def __eq__(self, other: Value) -> "SOp":  # type: ignore[override]
        return Map(fn("compare_const", op="==", c=other), self)

    def __ne__(self, other: Value) -> "SOp":  # type: ignore[override]
        return Map(fn("compare_const", op="!=", c=other), self)

    def __gt__(self, other: Value) -> "SOp":
        return Map(fn("compare_const", op=">", c=other), self)

    def __ge__(self, other: Value) -> "SOp":
        return Map(fn("compare_const", op=">=", c=other), self)

    __hash__ = RASPExpr.__hash__  # identity hash, as __eq__ builds an SOp

    def __add__(self, other: Any) -> "SOp":
        return _binary("add", self, other) if isinstance(other, SOp) else Map(fn("add_const", c=other), self)

    def __radd__(self, other: Any) -> "SOp":
        return _binary("add", other, self) if isinstance(other, SOp) else Map(fn("add_const", c=other), self)

    def __sub__(self, other: Any) -> "SOp":
        return _binary("sub", self, other) if isinstance(other, SOp) else Map(fn("sub_const", c=other), self)

    def __rsub__(self, other: Any) -> "SOp":
        return _binary("sub", other, self) if isinstance(other, SOp) else Map(fn("rsub_const", c=other), self)

    def __mul__(self, other: Any) -> "SOp":
        return _binary("mul", self, other) if isinstance(other, SOp) else Map(fn("mul_const", c=other), self)

    def __rmul__(self, other: Any) -> "SOp":
        return _binary("mul", other, self) if isinstance(other, SOp) else Map(fn("mul_const", c=other), self)

    def __truediv__(self, other: Any) -> "SOp":
        return _binary("div", self, other) if isinstance(other, SOp) else Map(fn("div_const", c=other), self)

    def __rtruediv__(self, other: Any) -> "SOp":
        return _binary("div", other, self) if isinstance(other, SOp) else Map(fn("rdiv_const", c=other), self)

    def __invert__(self) -> "SOp":
        return Map(fn("not"), self)

    def __and__(self, other: Any) -> "SOp":
        return _binary("and", self, other) if isinstance(other, SOp) else Map(fn("and_const", c=other), self)

    def __rand__(self, other: Any) -> "SOp":
        return _binary("and", other, self) if isinstance(other, SOp) else Map(fn("and_const", c=other), self)

    def __or__(self, other: Any) -> "SOp":
        return _binary("or", self, other) if isinstance(other, SOp) else Map(fn("or_const", c=other), self)

    def __ror__(self, other: Any) -> "SOp":
        return _binary("or", other, self) if isinstance(other, SOp) else Map(fn("or_const", c=other), self)


class TokensType(SOp):
    """The input tokens."""

    default_name = "tokens"

    def __repr__(self) -> str:
        return "tokens"


class IndicesType(SOp):
    """The positions 0 .. n-1."""

    default_name = "indices"

    def __repr__(self) -> str:
        return "indices"


class LengthType(SOp):
    """The length n at every position."""

    default_name = "length"

    def __repr__(self) -> str:
        return "length"


tokens = TokensType()
indices = IndicesType()
length = LengthType()


def _check_sop(x: Any, role: str) -> None:
    if not isinstance(x, SOp):
        raise TypeError(f"{role} must be an SOp (a sequence), got {type(x).__name__}: {x!r:.60}")


def _check_selector(x: Any, role: str) -> None:
    if not isinstance(x, Selector):
        raise TypeError(f"{role} must be a Selector, got {type(x).__name__}: {x!r:.60}")


class Map(SOp):
    """f applied elementwise: an MLP sublayer. Map(f, Map(g, x)) is simplified to one map."""

    default_name = "map"

    def __init__(self, f: Callable[[Value], Value], inner: SOp, simplify: bool = True):
        super().__init__()
        _check_sop(inner, "Map input")
        if not callable(f) or isinstance(f, RASPExpr):
            raise TypeError(f"Map needs a function, got {f!r:.60}")
        if simplify and isinstance(inner, Map):
            f = _compose(inner.f, f)
            if "source" in inner._annotations:  # a RASP-language error in the fused map names both places
                self._annotations["fused_source"] = inner._annotations["source"]
            inner = inner.inner
        self.f, self.inner = f, inner

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.inner]


def _compose(g: Callable, f: Callable) -> Callable:
    """x -> f(g(x)); stays a registered function when both parts are."""
    if isinstance(g, NamedFn) and isinstance(f, NamedFn):
        parts = lambda h: h.params["fns"] if h.name == "compose" else (h,)  # noqa: E731
        return fn("compose", fns=tuple(parts(g)) + tuple(parts(f)))
    return lambda x: f(g(x))


class SequenceMap(SOp):
    """f applied elementwise to two sequences: an MLP sublayer."""

    default_name = "sequence_map"

    def __init__(self, f: Callable[[Value, Value], Value], fst: SOp, snd: SOp):
        super().__init__()
        _check_sop(fst, "SequenceMap first input")
        _check_sop(snd, "SequenceMap second input")
        if not callable(f) or isinstance(f, RASPExpr):
            raise TypeError(f"SequenceMap needs a function, got {f!r:.60}")
        self.f, self.fst, self.snd = f, fst, snd

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.fst, self.snd]


class LinearSequenceMap(SequenceMap):
    """fst_fac * x + snd_fac * y, elementwise."""

    default_name = "linear_sequence_map"

    def __init__(self, fst: SOp, snd: SOp, fst_fac: Value, snd_fac: Value):
        super().__init__(fn("linear", a=fst_fac, b=snd_fac), fst, snd)
        self.fst_fac, self.snd_fac = fst_fac, snd_fac


class Full(SOp):
    """The constant sequence [fill] * n."""

    default_name = "full"

    def __init__(self, fill: Value):
        super().__init__()
        self.fill = fill


class ConstantSOp(SOp):
    """A fixed sequence (its length must match the input when check_length)."""

    default_name = "constant_sop"

    def __init__(self, value: Sequence[Value], check_length: bool = True):
        super().__init__()
        self.value, self.check_length = list(value), check_length


def sop_not(sop: SOp) -> SOp:
    return Map(fn("not"), sop)


# --- selectors -----------------------------------------------------------------------------


class Comparison(enum.Enum):
    """Predicates for Select: M[q][k] = predicate(key_k, query_q)."""

    EQ = "=="
    LT = "<"
    LEQ = "<="
    GT = ">"
    GEQ = ">="
    NEQ = "!="
    TRUE = "True"
    FALSE = "False"

    def __call__(self, key: Value, query: Value) -> bool:
        if key is None:
            raise ValueError("key is None!")
        if query is None:
            raise ValueError("query is None!")
        if self is Comparison.TRUE:
            return True
        if self is Comparison.FALSE:
            return False
        return fn("compare", op=self.value)(key, query)


class Selector(RASPExpr):
    """A selection matrix; combine with & | ~."""

    default_name = "selector"

    def __and__(self, other: "Selector") -> "Selector":
        return selector_and(self, other)

    def __rand__(self, other: "Selector") -> "Selector":
        return selector_and(other, self)

    def __or__(self, other: "Selector") -> "Selector":
        return selector_or(self, other)

    def __ror__(self, other: "Selector") -> "Selector":
        return selector_or(other, self)

    def __invert__(self) -> "Selector":
        return selector_not(self)


class Select(Selector):
    """M[q][k] = predicate(keys[k], queries[q])."""

    default_name = "select"

    def __init__(self, keys: SOp, queries: SOp, predicate: Callable[[Value, Value], bool]):
        super().__init__()
        _check_sop(keys, "Select keys")
        _check_sop(queries, "Select queries")
        if not callable(predicate):
            raise TypeError(f"Select needs a Comparison or a callable predicate(key, query), got {predicate!r:.60}")
        self.keys, self.queries, self.predicate = keys, queries, predicate

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.keys, self.queries]


class ConstantSelector(Selector):
    default_name = "constant_selector"

    def __init__(self, value: Sequence[Sequence[bool]], check_length: bool = True):
        super().__init__()
        self.value, self.check_length = [list(map(bool, r)) for r in value], check_length


class SelectorAnd(Selector):
    default_name = "selector_and"

    def __init__(self, fst: Selector, snd: Selector):
        super().__init__()
        _check_selector(fst, "SelectorAnd first input")
        _check_selector(snd, "SelectorAnd second input")
        self.fst, self.snd = fst, snd

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.fst, self.snd]


class SelectorOr(Selector):
    default_name = "selector_or"

    def __init__(self, fst: Selector, snd: Selector):
        super().__init__()
        _check_selector(fst, "SelectorOr first input")
        _check_selector(snd, "SelectorOr second input")
        self.fst, self.snd = fst, snd

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.fst, self.snd]


class SelectorNot(Selector):
    default_name = "selector_not"

    def __init__(self, inner: Selector):
        super().__init__()
        _check_selector(inner, "SelectorNot input")
        self.inner = inner

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.inner]


def selector_not(inner: Selector, simplify: bool = True) -> Selector:
    """~inner. ``simplify`` is accepted for tracr compatibility; no lambda is built."""
    return SelectorNot(inner)


def selector_and(fst: Selector, snd: Selector, simplify: bool = True) -> Selector:
    return SelectorAnd(fst, snd)


def selector_or(fst: Selector, snd: Selector, simplify: bool = True) -> Selector:
    return SelectorOr(fst, snd)


class SelectorWidth(SOp):
    """The number of selected keys for each query: an attention sublayer."""

    default_name = "selector_width"

    def __init__(self, selector: Selector):
        super().__init__()
        _check_selector(selector, "SelectorWidth input")
        self.selector = selector

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.selector]


class Aggregate(SOp):
    """Average-hard attention: the exact mean of the selected values, or ``default``."""

    default_name = "aggregate"

    def __init__(self, selector: Selector, sop: SOp, default: Value = None):
        super().__init__()
        _check_selector(selector, "Aggregate selector")
        _check_sop(sop, "Aggregate values")
        self.selector, self.sop, self.default = selector, sop, default

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.selector, self.sop]


# --- encodings -----------------------------------------------------------------------------


def numerical(sop: SOp) -> SOp:
    return annotate(sop, encoding=Encoding.NUMERICAL)


def categorical(sop: SOp) -> SOp:
    return annotate(sop, encoding=Encoding.CATEGORICAL)


def get_encoding(sop: SOp) -> Encoding:
    return sop._annotations.get("encoding", Encoding.CATEGORICAL)


def is_numerical(sop: SOp) -> bool:
    return get_encoding(sop) == Encoding.NUMERICAL


def is_categorical(sop: SOp) -> bool:
    return get_encoding(sop) == Encoding.CATEGORICAL
