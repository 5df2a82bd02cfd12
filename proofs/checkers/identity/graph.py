"""The identity checker's own reader and evaluator of a recorded RASP graph (format attncert-rasp/1).

Nothing here comes from :mod:`constructions`: the format, the static-selection rule, the
semantics of every op and of every registered function the constructions use are restated
below and implemented over the checker's field (:mod:`proofs.checkers.identity.field`).
Nothing in a graph is executed: a function is a name looked up in :data:`RULES`, and a name
without a rule is refused in one line.

**The format.** ``{"format": "attncert-rasp/1", "outputs": {name: node}, "nodes": [...],
"edges": [...]}``; a node is ``{"id", "op", "label", "name", "params"}`` plus ``encoding``
(``categorical`` or ``numerical``) for a sequence op; an edge ``{"source", "target", "arg"}``
makes node ``source`` argument ``arg`` of ``target`` (keys/queries, selector/values, fst/snd).
Constants are ``null``, ``{"q": "p/q"}``, ``{"b": bool}`` or ``{"s": str}``; a function is
``{"name", "params"}``, a parameter a constant, ``{"list": [...]}`` or ``{"fn": function}``.

**Static selections.** A select whose predicate is not TRUE or FALSE is static when neither
its keys nor its queries are computed from ``tokens`` (their *ancestry*, the node and every
node it is computed from, contains no ``tokens`` node). Its pattern is then a function of the
length alone, so one evaluation on variables covers every input (docs/identity.md).

**Semantics** (RASP, Weiss et al. 2021, as attncert evaluates it). At length N: ``tokens``
is the input, ``indices`` is 0, ..., N-1, ``length`` is N everywhere, ``full`` its fill,
``constant_sop`` its values. ``map`` and ``sequence_map`` apply a function positionwise
(None stays None). ``select(keys, queries, p)`` selects key k for query q when
p(key_k, query_q); ``aggregate(s, v)`` gives query q the mean of v over its selected keys
(booleans count 0/1 in a numerical aggregate), or the aggregate's default where it selects
none; a sequence holding non-numbers gives the selected value, which must then be the same
at every selected key. ``selector_width`` counts the selected keys; ``selector_and``,
``selector_or``, ``selector_not`` combine selections; ``constant_selector`` is its matrix.

**Signs.** Branching maps (relu, affine_relu, maxmin_pick, lookup on a computed value) ask a
:class:`SignOracle`, which answers for rational constants; the region oracle of
:mod:`proofs.checkers.identity.regions` answers for affine forms of the inputs too, following a
certificate's recorded sign trees. ReLU of a value that depends on the inputs and is not an
affine form of them is the uninterpreted value R_k (:meth:`Field.uninterpreted`), and so is
``norm_scale``'s (v + delta)^(-1/2) of a value of the inputs (:meth:`Field.power`).

**Data flow** (:func:`influences`). With every selection static, the input positions that a
value at (node, position) can depend on are read from the graph: ``tokens`` at p on p; a map at
p on its arguments at p; an aggregate at query q on its values at the keys q selects; every
other node on nothing. Whatever a sign decision inside a map selects, the value stays a function
of those positions, so the sign questions asked on its way are about them too.
"""

from __future__ import annotations

import heapq
import json
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from flint import fmpq

from attncert.exact.canonical import json_equal
from attncert.exact.errors import ParseError
from attncert.exact.limits import current as current_limits
from attncert.exact.rationals import rational_from_json
from attncert.proofs.checkers.identity.field import Field, IdentityFailure, Quotient

GRAPH_FORMAT = "attncert-rasp/1"

#: op -> (number of arguments, whether the node is a selector).
OPS: dict[str, tuple[int, bool]] = {
    "tokens": (0, False),
    "indices": (0, False),
    "length": (0, False),
    "full": (0, False),
    "constant_sop": (0, False),
    "map": (1, False),
    "sequence_map": (2, False),
    "aggregate": (2, False),
    "selector_width": (1, False),
    "select": (2, True),
    "constant_selector": (0, True),
    "selector_and": (2, True),
    "selector_or": (2, True),
    "selector_not": (1, True),
}

PREDICATES = ("EQ", "LT", "LEQ", "GT", "GEQ", "NEQ", "TRUE", "FALSE")


def _selector_argument(op: str, pos: int) -> bool:
    return op in ("selector_and", "selector_or", "selector_not", "selector_width") or (op == "aggregate" and pos == 0)


@dataclass(frozen=True)
class Node:
    id: int
    op: str
    label: str
    params: dict[str, Any]
    encoding: str | None
    args: tuple[int, ...]


@dataclass(frozen=True)
class Graph:
    nodes: dict[int, Node]
    #: A topological order (arguments first; among the ready nodes, the smallest id).
    order: tuple[int, ...]
    outputs: dict[str, int]


def read_graph(obj: Any) -> Graph:
    """The recorded graph, validated: ops, arities, argument kinds, acyclicity, outputs."""
    if not isinstance(obj, dict) or obj.get("format") != GRAPH_FORMAT:
        raise ParseError(f"the recorded graph is not of format {GRAPH_FORMAT!r}")
    nodes, edges, outputs = obj.get("nodes"), obj.get("edges"), obj.get("outputs")
    if not isinstance(nodes, list) or not isinstance(edges, list) or not isinstance(outputs, dict) or not outputs:
        raise ParseError('the recorded graph needs lists "nodes", "edges" and a non-empty object "outputs"')
    if len(nodes) > current_limits().max_nodes:
        raise ParseError(f"the recorded graph has {len(nodes):,} nodes, over the limit of {current_limits().max_nodes:,}")
    raw: dict[int, dict[str, Any]] = {}
    for n in nodes:
        if not isinstance(n, dict) or not _is_int(n.get("id")) or n.get("op") not in OPS:
            raise ParseError(f"malformed graph node {str(n)[:80]}")
        if n["id"] in raw:
            raise ParseError(f"duplicate graph node id {n['id']}")
        if not isinstance(n.get("params"), dict) or not isinstance(n.get("label"), str) or not isinstance(n.get("name"), str):
            raise ParseError(f"graph node {n['id']} lacks params, label or name")
        if not OPS[n["op"]][1] and n.get("encoding") not in ("categorical", "numerical"):
            raise ParseError(f"graph node {n['id']} needs an encoding, categorical or numerical")
        raw[n["id"]] = n
    args: dict[int, dict[int, int]] = {v: {} for v in raw}
    for e in edges:
        if not isinstance(e, dict) or set(e) != {"source", "target", "arg"}:
            raise ParseError(f"malformed graph edge {str(e)[:80]}")
        u, v, a = e["source"], e["target"], e["arg"]
        if not _is_int(u) or not _is_int(v) or u not in raw or v not in raw:
            raise ParseError(f"graph edge {str(e)[:80]} names an unknown node")
        if not _is_int(a) or not 0 <= a < OPS[raw[v]["op"]][0] or a in args[v]:
            raise ParseError(f"graph edge {u} -> {v} has a bad or repeated argument position")
        args[v][a] = u
    graph_nodes: dict[int, Node] = {}
    for v, n in raw.items():
        arity = OPS[n["op"]][0]
        if len(args[v]) != arity:
            raise ParseError(f"graph node {v} ({n['op']}) needs {arity} argument(s), the graph gives {len(args[v])}")
        ordered = tuple(args[v][a] for a in range(arity))
        for pos, u in enumerate(ordered):
            if OPS[raw[u]["op"]][1] != _selector_argument(n["op"], pos):
                raise ParseError(f"argument {pos} of graph node {v} ({n['op']}) has the wrong kind (selector or sequence)")
        graph_nodes[v] = Node(v, n["op"], n["label"], n["params"], n.get("encoding"), ordered)
    for name, v in outputs.items():
        if not _is_int(v) or v not in graph_nodes:
            raise ParseError(f"graph output {str(name)[:40]!r} names an unknown node")
    return Graph(graph_nodes, _topological(graph_nodes), dict(outputs))


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _topological(nodes: dict[int, Node]) -> tuple[int, ...]:
    """Kahn's algorithm with the smallest ready id first; ParseError on a cycle."""
    waiting = {v: len(set(n.args)) for v, n in nodes.items()}
    users: dict[int, list[int]] = {v: [] for v in nodes}
    for v, n in nodes.items():
        for u in set(n.args):
            users[u].append(v)
    ready = [v for v, k in waiting.items() if k == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        v = heapq.heappop(ready)
        order.append(v)
        for w in users[v]:
            waiting[w] -= 1
            if waiting[w] == 0:
                heapq.heappush(ready, w)
    if len(order) != len(nodes):
        raise ParseError("the recorded graph has a cycle")
    return tuple(order)


def ancestors(graph: Graph, targets: list[int]) -> set[int]:
    """The nodes ``targets`` and every node they are computed from (one traversal for all of them)."""
    seen, stack = set(targets), list(targets)
    while stack:
        for u in graph.nodes[stack.pop()].args:
            if u not in seen:
                seen.add(u)
                stack.append(u)
    return seen


def ancestry(graph: Graph, v: int) -> list[int]:
    """v and every node it is computed from, sorted."""
    return sorted(ancestors(graph, [v]))


def first_tokens(graph: Graph) -> dict[int, int | None]:
    """For every node, the least ``tokens`` node in its ancestry (None: it reads no tokens), in one
    topological pass: a node's is its own id if it is a ``tokens`` node, else the least of its arguments'."""
    out: dict[int, int | None] = {}
    for v in graph.order:
        node = graph.nodes[v]
        found = [w for w in (out[u] for u in node.args) if w is not None]
        out[v] = v if node.op == "tokens" else min(found, default=None)
    return out


def _selects(graph: Graph) -> list[int]:
    """The selects, by id, once every predicate is known and no select but a TRUE or FALSE one has keys or
    queries computed from ``tokens`` (IdentityFailure naming the first that does): one pass over the graph."""
    reads = first_tokens(graph)
    selects = [v for v in sorted(graph.nodes) if graph.nodes[v].op == "select"]
    for v in selects:
        node = graph.nodes[v]
        predicate = node.params.get("predicate")
        if predicate not in PREDICATES:
            raise IdentityFailure(f"select node {v} has the unknown predicate {str(predicate)[:20]!r}")
        if predicate in ("TRUE", "FALSE"):
            continue
        for role, u in (("keys", node.args[0]), ("queries", node.args[1])):
            if reads[u] is not None:
                raise IdentityFailure(
                    f"select node {v} ({node.label!r}) is value-dependent: its {role} are computed from tokens "
                    f"(node {reads[u]}), so its pattern changes with the input"
                )
    return selects


def _static_entries(graph: Graph, selects: list[int]) -> Iterator[dict[str, Any]]:
    """The entries of :func:`static_selections` for ``selects``, each ancestry formed when its entry is asked for."""
    for v in selects:
        node = graph.nodes[v]
        entry: dict[str, Any] = {"select": v, "predicate": node.params["predicate"]}
        if entry["predicate"] not in ("TRUE", "FALSE"):
            entry["keys"], entry["queries"] = ancestry(graph, node.args[0]), ancestry(graph, node.args[1])
        yield entry


def static_selections(graph: Graph) -> list[dict[str, Any]]:
    """For every select (by id): its id, predicate and, unless TRUE or FALSE, the ancestry of its keys and
    queries. IdentityFailure names a select whose keys or queries are computed from ``tokens``."""
    return list(_static_entries(graph, _selects(graph)))


def is_static_selection_proof(graph: Graph, recorded: Any) -> bool:
    """Whether ``recorded`` is :func:`static_selections` of the graph (IdentityFailure as that refuses it).

    The proof of S selects over a chain of K maps holds S K node ids: it is formed only as far as the
    document records it. A recorded list of another length than the graph's selects is refused before
    any ancestry is formed, and the entries are compared as they are derived, the first that differs
    ending it, so the work is bounded by the document's size and one entry (at most the graph) more."""
    selects = _selects(graph)
    if not isinstance(recorded, list) or len(recorded) != len(selects):
        return False
    return all(json_equal(r, entry) for r, entry in zip(recorded, _static_entries(graph, selects)))


# -- values ------------------------------------------------------------------------------------

_NUMBERS = (fmpq, Quotient)


def constant(obj: Any) -> Any:
    """A graph constant: None, a rational (``fmpq``), a boolean or a string."""
    if obj is None:
        return None
    if not isinstance(obj, dict) or len(obj) != 1:
        raise ParseError(f"malformed graph constant {str(obj)[:60]}")
    ((tag, body),) = obj.items()
    if tag == "q":
        return rational_from_json(body)
    if tag == "b" and isinstance(body, bool):
        return body
    if tag == "s" and isinstance(body, str):
        return body
    if tag == "ee":
        raise IdentityFailure("a graph constant with exponentials ({\"ee\": ...}) has no rule in the identity checker")
    raise ParseError(f"malformed graph constant {str(obj)[:60]}")


class SignOracle:
    """Decides the sign of a value where the checker has a rule for it: rational constants, and (in
    the region oracle, a subclass) affine forms of the inputs.

    Anything else (a value that depends on the inputs and is not affine in them, or a constant with
    exponentials) is refused with one line.
    """

    def sign(self, x: Any) -> int:
        if type(x) is fmpq:
            return (x > 0) - (x < 0)
        if type(x) is Quotient:
            F = x.field
            if F.is_zero(x):
                return 0
            form = F.affine(x)
            if form is not None:
                return self.affine_sign(form)
            raise IdentityFailure(
                f"the sign of {_brief(x)} is needed, a value with exponentials, a denominator or a term of degree > 1: "
                "the identity checker decides the signs of rational constants and of affine forms of the inputs only"
            )
        raise IdentityFailure(f"the sign of a non-number {_brief(x)} is needed")

    def affine_sign(self, form: tuple[dict[int, fmpq], fmpq]) -> int:
        """The sign of a non-constant affine form of the inputs: here, refused (no regions are recorded)."""
        raise IdentityFailure("the sign of an affine form of the inputs is needed, and the certificate records no regions (outputs.regions)")

    def relu(self, F: Field, x: Any) -> Any:
        """max(x, 0): by the sign of x, unless x depends on the inputs and is not an affine form of them;
        then the uninterpreted value relu(x) (:meth:`Field.uninterpreted`)."""
        if type(x) is Quotient and F.value_depends_on_inputs(x) and F.affine(x) is None:
            return F.uninterpreted("relu", x)
        return x if self.sign(x) > 0 else fmpq(0)


def _position_only(graph: Graph) -> set[int]:
    """The nodes with no ``tokens`` node in their ancestry."""
    out: set[int] = set()
    for v in graph.order:
        node = graph.nodes[v]
        if node.op != "tokens" and all(u in out for u in node.args):
            out.add(v)
    return out


def _plain(x: Any) -> bool:
    """Whether x is a value of no field: a rational, boolean, string, None, or a tuple of them (or of ints, a selection's row)."""
    t = type(x)
    return t is fmpq or t is bool or t is str or t is int or x is None or (t is tuple and all(map(_plain, x)))


def _hashable(q: fmpq) -> tuple[int, int]:
    """A rational as (numerator, denominator): hashing an fmpq goes through Python's Fraction (6 us)."""
    return int(q.p), int(q.q)


def _brief(x: Any) -> str:
    s = repr(x)
    return s if len(s) <= 60 else s[:57] + "..."


# -- registered functions ------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """A registered function restated: its arity, parameter names, and ``build(field, oracle, **params)``."""

    arity: int
    params: tuple[str, ...]
    build: Callable[..., Callable[..., Any]]
    #: What it computes, restated from its documentation (named when its rule refuses a value).
    meaning: str


def _number(x: Any, what: str) -> Any:
    if type(x) in _NUMBERS:
        return x
    raise IdentityFailure(f"{what} must be a number, the graph gives {_brief(x)}")


def _integer(x: Any, what: str) -> int:
    if type(x) is fmpq and x.q == 1:
        return int(x.p)
    raise IdentityFailure(f"{what} must be an integer, the graph gives {_brief(x)}")


def _equal(F: Field, S: SignOracle, x: Any, y: Any) -> bool:
    """x == y: numbers by the sign of x - y, tuples entrywise, other tokens as Python compares them."""
    if type(x) is bool or type(y) is bool:
        x, y = (fmpq(int(v)) if type(v) is bool else v for v in (x, y))
    if type(x) in _NUMBERS and type(y) in _NUMBERS:
        return S.sign(F.add(x, F.neg(y))) == 0
    if type(x) is tuple and type(y) is tuple:
        return len(x) == len(y) and all(_equal(F, S, a, b) for a, b in zip(x, y))
    if type(x) in _NUMBERS or type(y) in _NUMBERS or type(x) is tuple or type(y) is tuple:
        return False
    return x == y


def _relu(F: Field, S: SignOracle, x: Any) -> Any:
    return S.relu(F, _number(x, "relu's argument"))


def _compose(F: Field, S: SignOracle, fns: Any) -> Callable[[Any], Any]:
    if not isinstance(fns, tuple) or not all(isinstance(f, FunctionSpec) for f in fns):
        raise IdentityFailure("compose's fns must be a list of functions")
    if any(f.arity != 1 for f in fns):
        raise IdentityFailure("compose takes functions of one argument")
    bound = [f.bind(F, S) for f in fns]

    def composed(x: Any) -> Any:
        for g in bound:
            x = g(x)
        return x

    return composed


def _lookup(F: Field, S: SignOracle, table: Any, other: Any) -> Callable[[Any], Any]:
    if not isinstance(table, tuple) or not all(isinstance(p, tuple) and len(p) == 2 for p in table):
        raise IdentityFailure("lookup's table must be a list of (key, value) pairs")

    def look(x: Any) -> Any:
        for k, v in table:
            if _equal(F, S, x, k):
                return v
        return other

    return look


def _radix_affine(F: Field, S: SignOracle, radices: Any, coeffs: Any, const: Any, bound: Any, other: Any) -> Callable[[Any], Any]:
    if not isinstance(radices, tuple) or not isinstance(coeffs, tuple) or not radices:
        raise IdentityFailure("radix_affine's radices and coeffs must be lists")
    rs = [_integer(r, "a radix") for r in radices[1:]]
    if any(r <= 0 for r in rs):
        raise IdentityFailure("radix_affine's radices after the first must be positive")
    cs = [_integer(c, "a radix_affine coefficient") for c in coeffs]
    c0 = _integer(const, "radix_affine's const")
    limit = None if bound is None else _integer(bound, "radix_affine's bound")
    out_of_range = _number(other, "radix_affine's other")

    def f(t: Any) -> Any:
        t = t0 = _integer(t, "radix_affine's argument")
        if limit is not None and t0 >= limit:
            return out_of_range
        digits = []
        for r in reversed(rs):
            t, d = divmod(t, r)
            digits.append(d)
        digits.append(t)
        digits.reverse()
        return fmpq(c0 + sum(c * d for c, d in zip(cs, digits)))

    return f


def _maxmin_pick(F: Field, S: SignOracle) -> Callable[[Any, Any], Any]:
    def f(packed: Any, y: Any) -> Any:
        if not isinstance(packed, tuple) or len(packed) != 2:
            raise IdentityFailure("maxmin_pick's first argument must be a packed pair (x, t)")
        x, t = packed
        first = S.sign(F.add(_number(x, "maxmin_pick's x"), F.neg(_number(y, "maxmin_pick's y")))) >= 0
        return (x if first else y) if _integer(t, "maxmin_pick's position") % 2 == 0 else (y if first else x)

    return f


def _masked_exp(F: Field, S: SignOracle, c: Any) -> Callable[[Any, Any], Any]:
    c = _number(c, "masked_exp's c")

    def f(s: Any, m: Any) -> Any:
        m = _number(m, "masked_exp's mask")
        if F.is_zero(m):
            return fmpq(0)  # e^{c s} is not formed where the mask is zero
        return F.mul(m, F.exp(F.mul(c, _number(s, "masked_exp's s"))))

    return f


#: Layer norm's exponent: x (v + delta)^(-1/2).
NORM_POWER = fmpq(-1, 2)


def _norm_scale(F: Field, S: SignOracle, delta: Any) -> Callable[[Any, Any], Any]:
    """x (v + delta)^(-1/2): the power of a value of the inputs uninterpreted and not shown positive
    here (the check requires it to be the reference's, :meth:`Field.power`); of a rational constant,
    its rational value if it has one."""
    delta = _number(delta, "norm_scale's delta")

    def f(x: Any, v: Any) -> Any:
        scale = F.power(F.add(_number(v, "norm_scale's v"), delta), NORM_POWER)
        return F.mul(_number(x, "norm_scale's x"), scale)

    return f


def _arith(name: str, op: Callable[..., Any], params: tuple[str, ...] = ()) -> Callable[..., Callable[..., Any]]:
    """A rule whose function is ``op(F, *consts, *args)`` on numbers, its constants checked to be numbers."""

    def build(F: Field, S: SignOracle, **kw: Any) -> Callable[..., Any]:
        consts = [_number(kw[p], f"{name}'s {p}") for p in params]
        return lambda *args: op(F, *consts, *(_number(a, f"an argument of {name}") for a in args))

    return build


RULES: dict[str, Rule] = {
    "add": Rule(2, (), _arith("add", lambda F, x, y: F.add(x, y)), "x + y"),
    "sub": Rule(2, (), _arith("sub", lambda F, x, y: F.add(x, F.neg(y))), "x - y"),
    "mul": Rule(2, (), _arith("mul", lambda F, x, y: F.mul(x, y)), "x y"),
    "div": Rule(2, (), _arith("div", lambda F, x, y: F.div(x, y)), "x / y (y recorded as a divisor if it depends on the inputs)"),
    "mul_const": Rule(1, ("c",), _arith("mul_const", lambda F, c, x: F.mul(x, c), ("c",)), "c x"),
    "div_const": Rule(1, ("c",), _arith("div_const", lambda F, c, x: F.div(x, c), ("c",)), "x / c"),
    "mul_scaled": Rule(2, ("c",), _arith("mul_scaled", lambda F, c, x, y: F.mul(x, F.mul(c, y)), ("c",)), "c x y"),
    "linear": Rule(2, ("a", "b"), _arith("linear", lambda F, a, b, x, y: F.add(F.mul(a, x), F.mul(b, y)), ("a", "b")), "a x + b y"),
    "exp": Rule(1, (), _arith("exp", lambda F, x: F.exp(x)), "e^x"),
    "masked_exp": Rule(2, ("c",), _masked_exp, "m e^{c s} for (s, m), and 0 where m = 0 (e^{c s} not formed)"),
    "relu": Rule(1, (), lambda F, S: lambda x: _relu(F, S, x), "max(x, 0), the sign decided by the oracle (uninterpreted where x is not affine in the inputs)"),
    "affine_relu": Rule(
        2,
        ("c",),
        lambda F, S, c: lambda x, y: _relu(F, S, F.add(F.mul(_number(c, "affine_relu's c"), _number(x, "x")), _number(y, "y"))),
        "max(c x + y, 0)",
    ),
    "norm_scale": Rule(
        2,
        ("delta",),
        _norm_scale,
        "x (v + delta)^(-1/2), layer norm's scaling of a centred entry x by its row variance v (uninterpreted power of a value of the inputs)",
    ),
    "maxmin_pick": Rule(2, (), _maxmin_pick, "for (x, t) and y: max(x, y) at even t, min(x, y) at odd t"),
    "pack": Rule(2, (), lambda F, S: lambda x, y: (x, y), "the pair (x, y)"),
    "compose": Rule(1, ("fns",), _compose, "fns applied in order, the first innermost"),
    "lookup": Rule(1, ("table", "other"), _lookup, "the value of the first pair whose key equals x, else other"),
    "radix_affine": Rule(
        1,
        ("radices", "coeffs", "const", "bound", "other"),
        _radix_affine,
        "t = ((d_1 R_2 + d_2) R_3 + ...) R_m + d_m with 0 <= d_i < R_i (i > 1); const + Σ coeffs_i d_i, or other where t >= bound",
    ),
    "token_value": Rule(1, (), lambda F, S: lambda x: x[0] if isinstance(x, tuple) else x, "v for a token (v, tag), x for a plain x"),
    "token_tag": Rule(1, (), lambda F, S: lambda x: x[1] if isinstance(x, tuple) else fmpq(1), "tag for a token (v, tag), 1 for a plain x"),
}


@dataclass(frozen=True)
class FunctionSpec:
    """A recorded function: a name with a rule, and its decoded parameters."""

    name: str
    params: tuple[tuple[str, Any], ...]

    @property
    def arity(self) -> int:
        return RULES[self.name].arity

    def bind(self, F: Field, S: SignOracle) -> Callable[..., Any]:
        return RULES[self.name].build(F, S, **dict(self.params))


def function_spec(obj: Any) -> FunctionSpec:
    """A recorded ``{"name", "params"}``; IdentityFailure for a name without a rule here."""
    if not isinstance(obj, dict) or set(obj) != {"name", "params"} or not isinstance(obj["params"], dict) or not isinstance(obj["name"], str):
        raise ParseError(f"malformed graph function {str(obj)[:80]}")
    rule = RULES.get(obj["name"])
    if rule is None:
        raise IdentityFailure(f"the function {obj['name'][:40]!r} has no rule in the identity checker (rules: {', '.join(sorted(RULES))})")
    if set(obj["params"]) != set(rule.params):
        raise ParseError(f"function {obj['name']!r} takes parameters {list(rule.params)}, the graph gives {sorted(obj['params'])}")
    return FunctionSpec(obj["name"], tuple(sorted((k, _parameter(v)) for k, v in obj["params"].items())))


def _parameter(obj: Any) -> Any:
    if isinstance(obj, dict) and set(obj) == {"fn"}:
        return function_spec(obj["fn"])
    if isinstance(obj, dict) and set(obj) == {"list"} and isinstance(obj["list"], list):
        return tuple(_parameter(x) for x in obj["list"])
    return constant(obj)


# -- evaluation --------------------------------------------------------------------------------

#: A selection: for each query, the sorted tuple of the keys it selects.
Selection = list[tuple[int, ...]]


class Evaluator:
    """Evaluates a recorded graph at one length over the checker's field.

    ``static_cache``, shared by evaluators of one graph (over other fields: the sizes of a
    hierarchy), keeps the value of each node computed from positions alone (no ``tokens`` in its
    ancestry) whose value, and its arguments', are plain (rationals, booleans, strings, None,
    tuples of them, selections): such a value is the same over every field, and computing it
    records nothing in the field, so reusing it changes nothing but the time.
    """

    def __init__(self, graph: Graph, field: Field, oracle: SignOracle, static_cache: dict[tuple[int, int], Any] | None = None):
        self.graph, self.F, self.S = graph, field, oracle
        self._cache = static_cache
        self._static = _position_only(graph)
        self.start(0)
        self._functions: dict[int, tuple[FunctionSpec, Callable[..., Any]]] = {}
        for v, node in graph.nodes.items():  # every function has a rule before anything is evaluated
            if node.op in ("map", "sequence_map"):
                spec = function_spec(node.params.get("fn"))
                if spec.arity != OPS[node.op][0]:
                    raise IdentityFailure(f"node {v}: the function {spec.name!r} takes {spec.arity} argument(s), {node.op} gives {OPS[node.op][0]}")
                self._functions[v] = spec, spec.bind(field, oracle)

    def start(self, n: int) -> None:
        """Begin an evaluation at length n: every op reads the length, and the selections' count of pairs
        (which the limit on pairs bounds) starts at 0. :meth:`values` and :func:`influences` call it."""
        self.n, self.pairs = n, 0

    def run(self, tokens: list[Any], output: str = "output") -> list[Any]:
        """The value of the graph's output ``output`` on the token sequence."""
        if output not in self.graph.outputs:
            raise ParseError(f"the recorded graph has no output {output!r}")
        target = self.graph.outputs[output]
        return self.values(tokens, [target])[target]

    def values(self, tokens: list[Any], targets: list[int]) -> dict[int, Any]:
        """The values of the nodes ``targets`` on the token sequence (only their ancestry is evaluated).

        A node that repeats an earlier one (the same op, encoding and parameters on the same
        arguments) has its value: every op and function here is pure.
        """
        needed = ancestors(self.graph, targets)
        same: dict[int, int] = {}
        first: dict[tuple[Any, ...], int] = {}
        steps: list[tuple[Node, tuple[int, ...]]] = []
        for v in self.graph.order:
            if v not in needed:
                continue
            node = self.graph.nodes[v]
            args = tuple(same.get(u, u) for u in node.args)
            key = (node.op, node.encoding, json.dumps(node.params, sort_keys=True), args)
            if first.setdefault(key, v) != v:
                same[v] = first[key]
            else:
                steps.append((node, args))
        kept = {same.get(t, t) for t in targets}
        uses: dict[int, int] = {}
        for _, args in steps:
            for u in args:
                uses[u] = uses.get(u, 0) + 1
        self.start(len(tokens))
        values: dict[int, Any] = {}
        cache = self._cache if self._cache is not None else {}
        plain: set[int] = set()  # nodes whose value is in the cache
        for node, args in steps:
            self.F.charge(self.n)  # every op reads or writes its n positions
            key = (node.id, self.n)
            if key in cache:
                values[node.id] = cache[key]
                plain.add(node.id)
            else:
                try:
                    values[node.id] = value = getattr(self, f"op_{node.op}")(node, tokens, *(values[u] for u in args))
                except IdentityFailure as e:
                    raise IdentityFailure(f"at node {node.id} ({node.label!r}): {e}") from None
                if self._cache is not None and node.id in self._static and all(u in plain for u in args) and all(map(_plain, value)):
                    cache[key] = value
                    plain.add(node.id)
            for u in args:
                uses[u] -= 1
                if uses[u] == 0 and u not in kept:
                    del values[u]
        return {t: values[same.get(t, t)] for t in targets}

    # -- sequences --------------------------------------------------------------------------
    def op_tokens(self, node: Node, tokens: list[Any]) -> list[Any]:
        return tokens

    def op_indices(self, node: Node, tokens: list[Any]) -> list[Any]:
        return [fmpq(i) for i in range(self.n)]

    def op_length(self, node: Node, tokens: list[Any]) -> list[Any]:
        return [fmpq(self.n)] * self.n

    def op_full(self, node: Node, tokens: list[Any]) -> list[Any]:
        return [constant(node.params.get("fill"))] * self.n

    def op_constant_sop(self, node: Node, tokens: list[Any]) -> list[Any]:
        vals = node.params.get("value")
        if not isinstance(vals, list):
            raise ParseError(f"constant_sop node {node.id} needs a list value")
        if node.params.get("check_length", True) and len(vals) != self.n:
            raise IdentityFailure(f"a constant sequence of length {len(vals)} at length {self.n}")
        return [constant(x) for x in vals]

    def op_map(self, node: Node, tokens: list[Any], xs: list[Any]) -> list[Any]:
        return self._apply(*self._functions[node.id], xs)

    def op_sequence_map(self, node: Node, tokens: list[Any], xs: list[Any], ys: list[Any]) -> list[Any]:
        return self._apply(*self._functions[node.id], xs, ys)

    def _apply(self, spec: FunctionSpec, f: Callable[..., Any], *seqs: list[Any]) -> list[Any]:
        """f at every position (None where an argument is None). Functions are pure, so f runs once per
        distinct tuple of argument objects (a default or a shared mean fills many positions)."""
        memo: dict[tuple[int, ...], Any] = {}
        out = []
        for args in zip(*seqs):
            key = tuple(map(id, args))  # the arguments stay alive in seqs while memo is used
            value = memo.get(key, memo)
            if value is memo:
                try:
                    value = memo[key] = None if any(a is None for a in args) else f(*args)
                except IdentityFailure as e:
                    raise IdentityFailure(f"{spec.name} ({RULES[spec.name].meaning}): {e}") from None
            out.append(value)
        return out

    # -- selections ---------------------------------------------------------------------------
    def op_select(self, node: Node, tokens: list[Any], keys: list[Any], queries: list[Any]) -> Selection:
        predicate = node.params.get("predicate")
        if predicate not in PREDICATES:
            raise IdentityFailure(f"the unknown predicate {str(predicate)[:20]!r}")
        nk = len(keys)
        if predicate == "TRUE":
            everything = tuple(range(nk))
            return self._count([everything] * len(queries))
        if predicate == "FALSE":
            return [()] * len(queries)
        for x in keys + queries:
            if type(x) is not fmpq:
                raise IdentityFailure(f"a static select compares {_brief(x)}; its keys and queries must be rational positions")
        if predicate in ("EQ", "NEQ"):
            groups: dict[tuple[int, int], list[int]] = {}
            for k, x in enumerate(keys):
                groups.setdefault(_hashable(x), []).append(k)
            eq = {x: tuple(ks) for x, ks in groups.items()}
            qs = [_hashable(q) for q in queries]
            if predicate == "EQ":
                return self._count([eq.get(q, ()) for q in qs])
            rows: dict[tuple[int, int], tuple[int, ...]] = {}
            for q in set(qs):
                hit = set(eq.get(q, ()))
                rows[q] = tuple(k for k in range(nk) if k not in hit)
            return self._count([rows[q] for q in qs])
        order = sorted(range(nk), key=lambda k: keys[k])
        sk = [keys[k] for k in order]
        cache: dict[tuple[int, int], tuple[int, ...]] = {}
        out = []
        for q in queries:
            row = cache.get(_hashable(q))
            if row is None:
                lo, hi = bisect_left(sk, q), bisect_right(sk, q)
                start, stop = {"LT": (0, lo), "LEQ": (0, hi), "GT": (hi, nk), "GEQ": (lo, nk)}[predicate]
                row = cache[_hashable(q)] = tuple(sorted(order[start:stop]))
            out.append(row)
        return self._count(out)

    def _count(self, rows: Selection) -> Selection:
        """The selection, after adding its pairs to the run's count, which the limit on pairs bounds."""
        pairs = sum(map(len, rows))
        self.F.charge(pairs)
        self.pairs += pairs
        if self.pairs > current_limits().max_pairs:
            raise IdentityFailure(f"the selections hold over {current_limits().max_pairs:,} pairs (the limit)")
        return rows

    def op_constant_selector(self, node: Node, tokens: list[Any]) -> Selection:
        m = node.params.get("value")
        if not isinstance(m, list) or not all(isinstance(r, list) and all(isinstance(b, bool) for b in r) for r in m):
            raise ParseError(f"constant_selector node {node.id} needs a list of lists of booleans")
        if node.params.get("check_length", True) and (len(m) != self.n or any(len(r) != self.n for r in m)):
            raise IdentityFailure(f"a constant selector of another shape than {self.n} x {self.n}")
        return self._count([tuple(k for k, b in enumerate(r) if b) for r in m])

    def op_selector_and(self, node: Node, tokens: list[Any], a: Selection, b: Selection) -> Selection:
        self.F.charge(sum(map(len, a)) + sum(map(len, b)))
        return self._count([tuple(sorted(set(x) & set(y))) for x, y in zip(a, b)])

    def op_selector_or(self, node: Node, tokens: list[Any], a: Selection, b: Selection) -> Selection:
        self.F.charge(sum(map(len, a)) + sum(map(len, b)))
        return self._count([tuple(sorted(set(x) | set(y))) for x, y in zip(a, b)])

    def op_selector_not(self, node: Node, tokens: list[Any], a: Selection) -> Selection:
        self.F.charge(len(a) * self.n)
        out = []
        for x in a:
            hit = set(x)
            out.append(tuple(k for k in range(self.n) if k not in hit))
        return self._count(out)

    # -- attention ----------------------------------------------------------------------------
    def op_selector_width(self, node: Node, tokens: list[Any], sel: Selection) -> list[Any]:
        return [fmpq(len(row)) for row in sel]

    def op_aggregate(self, node: Node, tokens: list[Any], sel: Selection, values: list[Any]) -> list[Any]:
        default = constant(node.params.get("default"))
        numerical = node.encoding == "numerical"
        numeric = all(type(v) in _NUMBERS or (numerical and type(v) is bool) for v in values)
        if numeric and numerical:
            values = [fmpq(int(v)) if type(v) is bool else v for v in values]
        means: dict[int, Any] = {}  # by the row object: equal rows are often one tuple
        out = []
        for row in sel:
            if not row:
                out.append(default)
                continue
            mean = means.get(id(row))
            if mean is None:
                self.F.charge(len(row))
                mean = means[id(row)] = self._mean([values[k] for k in row]) if numeric else self._same([values[k] for k in row])
            out.append(mean)
        return out

    def _mean(self, selected: list[Any]) -> Any:
        if len(selected) == 1:
            return selected[0]
        return self.F.mul(self.F.total(selected), fmpq(1, len(selected)))

    def _same(self, selected: list[Any]) -> Any:
        first = selected[0]
        if not all(_equal(self.F, self.S, v, first) for v in selected[1:]):
            raise IdentityFailure("an aggregate of non-numbers selects different values")
        return first


def influences(evaluator: Evaluator, n: int, output: str = "output") -> list[frozenset[int]]:
    """For each position of the graph's output at length n, the input positions its value can depend
    on (module docstring, "Data flow"). The selections it follows are static
    (:func:`static_selections`, which the caller has checked): each is computed once, from positions
    only (a TRUE or FALSE select from its predicate alone)."""
    graph = evaluator.graph
    target = graph.outputs[output]
    needed = ancestors(graph, [target])
    order = [v for v in graph.order if v in needed]
    data: set[int] = set()
    for v in order:
        node = graph.nodes[v]
        if node.op == "tokens" or any(u in data for u in node.args):
            data.add(v)
    dummy = [fmpq(0)] * n

    # the static selects and constant selectors the aggregates read (through and, or, not), evaluated together
    # from positions only, in one pass over their common ancestry
    leaves, stack = set(), [graph.nodes[v].args[0] for v in order if v in data and graph.nodes[v].op == "aggregate"]
    while stack:
        node = graph.nodes[stack.pop()]
        if node.op in ("selector_and", "selector_or", "selector_not"):
            stack += node.args
        elif not (node.op == "select" and node.params.get("predicate") in ("TRUE", "FALSE")):
            leaves.add(node.id)
    patterns: dict[int, Selection] = evaluator.values(dummy, sorted(leaves)) if leaves else {}

    def pattern(v: int) -> Selection:
        if v not in patterns:
            node = graph.nodes[v]
            if node.op == "select":  # TRUE or FALSE: from its predicate alone
                patterns[v] = evaluator.op_select(node, dummy, [None] * n, [None] * n)
            else:
                patterns[v] = getattr(evaluator, f"op_{node.op}")(node, dummy, *(pattern(u) for u in node.args))
        return patterns[v]

    evaluator.start(n)  # the ops below read the length and count their pairs, as in an evaluation

    none: list[frozenset[int]] = [frozenset()] * n
    dep: dict[int, list[frozenset[int]]] = {}
    for v in order:
        node = graph.nodes[v]
        if v not in data or OPS[node.op][1]:
            dep[v] = none
        elif node.op == "tokens":
            dep[v] = [frozenset((p,)) for p in range(n)]
        elif node.op in ("map", "sequence_map"):
            evaluator.F.charge(sum(len(dep[u][p]) for u in node.args for p in range(n)))
            dep[v] = [frozenset().union(*(dep[u][p] for u in node.args)) for p in range(n)]
        elif node.op == "aggregate":
            values, unions = dep[node.args[1]], {}  # by the row object: equal rows are often one tuple
            rows = pattern(node.args[0])
            for row in rows:
                if id(row) not in unions:
                    evaluator.F.charge(len(row) + sum(len(values[k]) for k in row))
                    unions[id(row)] = frozenset().union(*(values[k] for k in row))
            dep[v] = [unions[id(row)] for row in rows]
        else:  # selector_width of a static selection
            dep[v] = none
    return dep[target]


__all__ = [
    "influences",
    "Graph",
    "Node",
    "read_graph",
    "ancestry",
    "static_selections",
    "is_static_selection_proof",
    "Evaluator",
    "SignOracle",
    "RULES",
    "Rule",
    "constant",
]
