"""A tracr RASP program, recorded without code: lambdas tabulated on the values they receive.

tracr's programs are trees of ``tracr.rasp.rasp`` objects whose ``Map``, ``SequenceMap`` and
some ``Select`` predicates are Python callables. attncert's RASP (:mod:`constructions.rasp`) is
source-compatible, so the tree is rebuilt node for node as an attncert program with the same
callables and tracr's labels as names (``map_5`` stays ``map_5``: the model's residual space is
labelled by them), and evaluated exactly by attncert's evaluator.

**Tabulation.** Over a finite input set (every sequence over the vocabulary of every length up
to N), each callable is only ever applied to finitely many arguments: the values its argument
SOps take at some position of some input (pairs of them for a SequenceMap and a predicate). The
exhaustive evaluation traces every node, collects those arguments and calls the callable on each
once; the record keeps the table, never the code. The tabulated program equals the program on
every input of the set, since at every argument its evaluation visits, both give the same value
(tracr's compiler tabulates its MLPs the same way, on value sets it infers: tracr's basis
inference). A certificate's verifier rebuilds the program from the tables
(:func:`program_from_json`), where a callable is a dictionary lookup, and executes nothing from
the document.

Values in tables, defaults and fills are the tagged JSON constants of RASP graphs
(:mod:`constructions.rasp.values`): ``{"s": "a"}`` a token, ``{"q": "1/2"}`` a number,
``{"b": true}``, ``null``.
"""

from __future__ import annotations

import functools
import itertools
from fractions import Fraction
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import networkx as nx
from flint import fmpq

from attncert.constructions import rasp
from attncert.constructions.rasp.graph import arguments, decode_params
from attncert.constructions.rasp.values import decode_value, encode_value
from attncert.exact import QQ, ParseError
from attncert.exact.errors import AttncertError

#: Ops of a recorded program and their argument kinds (S: a SOp, L: a selector).
OPS: dict[str, str] = {
    "tokens": "", "indices": "", "length": "", "full": "", "constant_sop": "", "constant_selector": "",
    "map": "S", "sequence_map": "SS", "select": "SS", "aggregate": "LS", "selector_width": "L",
    "selector_and": "LL", "selector_or": "LL", "selector_not": "L",
}
#: Ops whose callable is tabulated (a Select only when its predicate is not a Comparison).
TABULATED = ("map", "sequence_map", "select")
#: tracr's class names, the op each one is.
_CLASSES = {
    "TokensType": "tokens", "IndicesType": "indices", "LengthType": "length", "Full": "full",
    "ConstantSOp": "constant_sop", "ConstantSelector": "constant_selector", "Map": "map",
    "SequenceMap": "sequence_map", "LinearSequenceMap": "sequence_map", "Select": "select",
    "Aggregate": "aggregate", "SelectorWidth": "selector_width", "SelectorAnd": "selector_and",
    "SelectorOr": "selector_or", "SelectorNot": "selector_not",
}


class ProgramError(AttncertError):
    """A tracr program that cannot be recorded (an unknown node, a value with no exact JSON form)."""


@dataclass
class Node:
    """One node of a recorded program: tracr's label, op, argument labels and encoding (SOps), the
    constants of its op (``fill``, ``value``, ``default``, ``predicate``), and for a tabulated node its
    callable (while proving) and its table: argument tuple (keys of :func:`key`) -> value."""

    label: str
    op: str
    args: tuple[str, ...] = ()
    encoding: str | None = None
    consts: dict[str, Any] = field(default_factory=dict)
    fn: Callable[..., Any] | None = None
    table: dict[tuple[Any, ...], Any] | None = None


@dataclass
class Program:
    """A recorded program: its nodes in an order where arguments come first, and the output's label;
    ``tracr_labels`` maps the labels tracr gave the nodes to the ones recorded (:func:`from_tracr`)."""

    nodes: list[Node]
    output: str
    tracr_labels: dict[str, str] = field(default_factory=dict)

    def node(self, label: str) -> Node:
        return next(n for n in self.nodes if n.label == label)

    def sops(self) -> list[Node]:
        return [n for n in self.nodes if n.encoding is not None]


def key(v: Any) -> tuple[Any, ...]:
    """A dictionary key for a RASP value that keeps kinds apart (True is not 1, "1" is not 1)."""
    if v is None:
        return ("n",)
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, str):
        return ("s", v)
    if isinstance(v, tuple):
        return ("t", tuple(key(x) for x in v))
    # Plain integers, not the fmpq: hashing an fmpq as Python's numbers hash a Fraction takes microseconds.
    q = v if type(v) is fmpq else QQ.convert(v)
    return ("q", int(q.p), int(q.q))


#: The name each RASP class gives an expression the user did not name (tracr's ``default_name``; attncert's
#: classes have the same names and defaults).
_DEFAULT_NAMES = {
    "TokensType": "tokens", "IndicesType": "indices", "LengthType": "length", "Full": "full",
    "ConstantSOp": "constant_sop", "ConstantSelector": "constant_selector", "Map": "map",
    "SequenceMap": "sequence_map", "LinearSequenceMap": "linear_sequence_map", "Select": "select",
    "Aggregate": "aggregate", "SelectorWidth": "selector_width", "SelectorAnd": "selector_and",
    "SelectorOr": "selector_or", "SelectorNot": "selector_not",
}


def from_tracr(program: Any) -> Program:
    """The nodes of a tracr program (or of a source-compatible attncert one), arguments first; the
    callables are kept for tabulation. ProgramError names a node of an unknown kind.

    **Labels.** tracr labels a node ``{name}_{id}`` with a counter global to the process (the same
    program is ``length_1`` in one compile and ``length_3`` in the next). The recorded label is the
    name a user gave with ``.named()`` when no other node has it (``make_length``'s ``length``), and
    otherwise ``{name}_{k}``, k the node's place in the order below: the same every time the program is
    built, and the same in ``compile``, ``prove compiled`` and ``prove tracr_model``. Should a renumbered
    label meet a user's name, tracr's labels are kept. ``tracr_labels`` maps tracr's labels to these."""
    names: dict[str, tuple[str, bool]] = {}  # tracr's label -> (name, whether the user gave it)
    seen: dict[str, Node] = {}
    order: list[Node] = []
    stack: list[tuple[Any, bool]] = [(program, False)]
    while stack:  # iterative post-order: programs may be deep
        x, done = stack.pop()
        label = str(x.label)
        if label in seen:
            continue
        children = list(x.children)
        if not done:
            stack.append((x, True))
            stack.extend((c, False) for c in reversed(children) if str(c.label) not in seen)
            continue
        op = _CLASSES.get(type(x).__name__)
        if op is None:
            raise ProgramError(f"node {label!r} is a {type(x).__name__}, not a RASP operation attncert records")
        node = Node(label, op, tuple(str(c.label) for c in children), _encoding(x))
        if op == "full":
            node.consts["fill"] = x.fill
        elif op in ("constant_sop", "constant_selector"):
            node.consts["value"] = x.value
        elif op == "aggregate":
            node.consts["default"] = x.default
        elif op == "select" and type(x.predicate).__name__ == "Comparison":
            node.consts["predicate"] = x.predicate.name
        if op in ("map", "sequence_map") or (op == "select" and "predicate" not in node.consts):
            f = x.f if op != "select" else x.predicate
            node.fn = _as_python(f) if type(x).__module__.startswith("tracr") else f
        seen[label] = node
        order.append(node)
        names[label] = (str(x.name), str(x.name) != _DEFAULT_NAMES.get(type(x).__name__, str(x.name)) or op in ("tokens", "indices"))
    return _renamed(Program(order, str(program.label)), names)


def _as_python(f: Callable[..., Any]) -> Callable[..., Any]:
    """A tracr callable as attncert's exact evaluator calls it: numbers reach it as Python Fractions, not FLINT's fmpq,
    and its numbers come back as fmpq. tracr calls its lambdas on Python numbers, and fmpq has neither ``%`` with an
    int nor comparisons with a float (``lambda x: x % 2`` and ``lambda x: x > 0.5`` raised TypeError); a Fraction has
    both, and its quotients stay exact (an int would make ``x / 4`` a float)."""

    @functools.wraps(f)
    def call(*args: Any) -> Any:
        v = f(*(Fraction(int(a.p), int(a.q)) if type(a) is fmpq else a for a in args))
        if isinstance(v, Fraction) or (isinstance(v, int) and not isinstance(v, bool)):
            return QQ.convert(v)
        return v

    return call


def _renamed(prog: Program, names: dict[str, tuple[str, bool]]) -> Program:
    """The program with the labels of :func:`from_tracr`'s docstring."""
    given = [name for name, own in names.values() if own]
    new = {}
    for k, n in enumerate(prog.nodes):
        name, own = names[n.label]
        new[n.label] = name if own and given.count(name) == 1 else f"{name}_{k}"
    if len(set(new.values())) != len(new):
        return prog  # a user's own name looks like a renumbered one: keep tracr's labels
    for n in prog.nodes:
        n.label = new[n.label]
        n.args = tuple(new[a] for a in n.args)
    return Program(prog.nodes, new[prog.output], new)


def from_graph(g: nx.MultiDiGraph) -> Program:
    """An attncert program's graph as a program to record: the same nodes, labels, encodings and
    constants; a map's registered function (applied in QQ, as the compiler tabulates it) or Python
    callable, and a Select's callable predicate, kept for tabulation. ProgramError for an op it lacks."""
    nodes = []
    for v in nx.lexicographical_topological_sort(g):
        d = g.nodes[v]
        op = d["op"]
        if op not in OPS:
            raise ProgramError(f"node {d['label']!r} is a {op}, which a recorded program does not hold")
        params = {} if "callable" in d else decode_params(op, d.get("params", {}))
        selector = op in ("select", "constant_selector", "selector_and", "selector_or", "selector_not")
        node = Node(d["label"], op, tuple(g.nodes[u]["label"] for u in arguments(g, v)), None if selector else d.get("encoding", "categorical"))
        if op == "aggregate":
            node.consts["default"] = params.get("default")
        elif op in ("full", "constant_sop", "constant_selector"):
            node.consts.update({k: params[k] for k in ("fill", "value") if k in params})
        elif op == "select" and "callable" not in d:
            node.consts["predicate"] = params["predicate"].name
        if op in ("map", "sequence_map") or op == "select" and "predicate" not in node.consts:
            node.fn = d["callable"] if "callable" in d else functools.partial(params["fn"].apply, QQ)
        nodes.append(node)
    return Program(nodes, g.nodes[g.graph["outputs"]["output"]]["label"])


def _encoding(x: Any) -> str | None:
    enc = x.annotations.get("encoding") if type(x).__name__ not in ("Select", "ConstantSelector", "SelectorAnd", "SelectorOr", "SelectorNot") else None
    return None if enc is None else str(enc.value)


def to_rasp(prog: Program, causal: bool = False) -> Any:
    """The attncert program: the same nodes, tracr's labels as names; a tabulated node calls its
    callable while proving (``fn``) or looks its table up (a recorded program).

    ``causal``: tracr's causal semantics (``tracr.rasp.causal_eval``, what a causal model computes),
    every selector's value masked to the keys k <= q, by a conjunction with Select(indices, indices,
    LEQ) at every selector node (masking after a ``not`` too, as causal_eval masks every selector)."""
    built: dict[str, Any] = {}
    # Its own positions, named apart: a graph's labels are its names, and the program's may hold "indices".
    positions = rasp.indices.named("causal_mask_indices")
    prefix = rasp.Select(positions, positions, rasp.Comparison.LEQ).named("causal_mask")
    for n in prog.nodes:
        a = [built[u] for u in n.args]
        f = n.fn if n.fn is not None else (_lookup(n) if n.table is not None else None)
        if n.op == "tokens":
            x = rasp.tokens
        elif n.op == "indices":
            x = rasp.indices
        elif n.op == "length":
            x = rasp.length
        elif n.op == "full":
            x = rasp.Full(n.consts["fill"])
        elif n.op == "constant_sop":
            x = rasp.ConstantSOp(list(n.consts["value"]))
        elif n.op == "constant_selector":
            x = rasp.ConstantSelector([list(r) for r in n.consts["value"]])
        elif n.op == "map":
            x = rasp.Map(f, a[0], simplify=False)
        elif n.op == "sequence_map":
            x = rasp.SequenceMap(f, a[0], a[1])
        elif n.op == "select":
            x = rasp.Select(a[0], a[1], rasp.Comparison[n.consts["predicate"]] if "predicate" in n.consts else f)
        elif n.op == "aggregate":
            x = rasp.Aggregate(a[0], a[1], default=n.consts["default"])
        elif n.op == "selector_width":
            x = rasp.SelectorWidth(a[0])
        elif n.op == "selector_and":
            x = rasp.selector_and(a[0], a[1])
        elif n.op == "selector_or":
            x = rasp.selector_or(a[0], a[1])
        else:
            x = rasp.selector_not(a[0])
        if n.encoding is not None:
            x = rasp.numerical(x) if n.encoding == "numerical" else rasp.categorical(x)
        elif causal:
            x = rasp.selector_and(x, prefix)
        built[n.label] = x.named(n.label)
    return built[prog.output]


def _lookup(n: Node) -> Callable[..., Any]:
    table = n.table

    def f(*args: Any) -> Any:
        try:
            return table[tuple(key(v) for v in args)]
        except KeyError:
            raise ProgramError(f"the table of {n.label!r} has no entry for {list(args)!r:.80}") from None

    return f


def inputs(vocab: Sequence[Any], max_seq_len: int) -> Iterator[tuple[int, list[tuple[Any, ...]]]]:
    """(length, every sequence over ``vocab`` of that length in lexicographic order of the vocabulary's
    order), for lengths 1..max_seq_len: the exhaustive input set, in the order certificates count it."""
    for n in range(1, max_seq_len + 1):
        yield n, list(itertools.product(vocab, repeat=n))


def input_count(vocab_size: int, max_seq_len: int, every: bool = True) -> int:
    """How many sequences the exhaustive input set holds: sum_{n=1..N} V^n over every length (the
    sequences :func:`inputs` gives), or V^N at length N alone."""
    return sum(vocab_size**n for n in range(1, max_seq_len + 1)) if every else vocab_size**max_seq_len


def intern(seen: dict[Any, int], values: list[Any], v: Any) -> int:
    """The index of the RASP value ``v`` in a recorded list of values (``values``, JSON), its JSON
    appended at first sight; ``seen`` maps each value's :func:`key` to its index."""
    k = key(v)
    i = seen.get(k)
    if i is None:
        i = seen[k] = len(values)
        values.append(value_json(v))
    return i


def record_calls(prog: Program) -> Program:
    """Every callable of the program wrapped so that each call it receives adds (arguments, value) to
    its node's table: the tables of a proof are then every call the proof made (the compiler's value
    sets included, which no input need reach). :func:`.certify.recorded` drops the callables after."""
    for n in prog.nodes:
        if n.fn is None:
            continue
        f, table = n.fn, n.table if n.table is not None else {}
        n.table = table

        def call(*args: Any, f: Callable[..., Any] = f, table: dict[Any, Any] = table) -> Any:
            v = f(*args)
            table[tuple(key(a) for a in args)] = v
            return v

        n.fn = call
    return prog


def tabulate(prog: Program, traces: Sequence[dict[str, Any]]) -> None:
    """Add to the table of every node with a callable from traced evaluations (label -> the node's values
    on one input): each callable is called once on each argument tuple some position presents."""
    for n in prog.nodes:
        if n.fn is None:
            continue
        table = n.table = {} if n.table is None else n.table
        for tr in traces:
            if n.op == "select":
                pairs = ((k, q) for k in tr[n.args[0]] for q in tr[n.args[1]])
            else:
                pairs = zip(*(tr[u] for u in n.args))
            for args in pairs:
                if n.op != "select" and any(v is None for v in args):
                    continue  # None passes through maps without a call (tracr's rule and attncert's); a predicate is called on it
                k = tuple(key(v) for v in args)
                if k not in table:
                    table[k] = n.fn(*args)


def tabulate_sets(prog: Program, vocab: Sequence[Any], max_seq_len: int, limit: int = 1 << 16) -> None:
    """Tabulate every callable on the product of its arguments' value sets over every input of every length
    1..max_seq_len (tokens: the vocabulary; indices: 0..N-1; a map: its values on its arguments' sets, None
    passing through; a predicate: on every pair, None included; a categorical Aggregate: its values' set and
    the default; a numerical one: every mean of w = 1..N of its values and the default; a SelectorWidth:
    0..N): what the compositional proofs read. ProgramError past ``limit`` values of one SOp."""
    sets: dict[str, list[Any]] = {}
    for n in prog.nodes:
        # numbers as attncert's exact evaluator holds them (rationals), so a callable computes on them as it does there
        if n.op == "tokens":
            out = [t if isinstance(t, (str, bool)) or t is None else QQ.convert(t) for t in vocab]
        elif n.op == "indices":
            out = [fmpq(i) for i in range(max_seq_len)]
        elif n.op == "length":
            out = [fmpq(i) for i in range(1, max_seq_len + 1)]
        elif n.op == "selector_width":
            out = [fmpq(i) for i in range(max_seq_len + 1)]
        elif n.op in ("full", "constant_sop"):
            out = [n.consts["fill"]] if n.op == "full" else list(n.consts["value"])
        elif n.op == "aggregate":
            vals, default = sets[n.args[1]], n.consts["default"]
            out = (vals + [default]) if n.encoding == "categorical" else _means_of(vals, max_seq_len, default, limit, n.label)
        elif n.op in ("map", "sequence_map"):
            args = [sets[a] for a in n.args]
            out = [None if any(v is None for v in combo) else _called(n, combo) for combo in itertools.product(*args)]
        elif n.op == "select" and n.fn is not None:
            for k, q in itertools.product(sets[n.args[0]], sets[n.args[1]]):
                _called(n, (k, q))
            continue
        else:
            continue
        uniq: dict[Any, Any] = {}
        for v in out:
            try:
                uniq.setdefault(key(v), v)
            except (ParseError, TypeError):
                raise ProgramError(f"{n.label!r} takes the value {v!r:.30}, which has no exact form") from None
        if len(uniq) > limit:
            raise ProgramError(f"{n.label!r} takes over {limit:,} values on the inputs up to length {max_seq_len}")
        sets[n.label] = list(uniq.values())


def _called(n: Node, args: tuple[Any, ...]) -> Any:
    """The node's callable on a combination of its arguments' value sets, or ProgramError in one line where it raises
    (the value sets may hold combinations no input presents, so an error there is not RASP's undefined)."""
    try:
        return n.fn(*args)
    except Exception as e:  # a user's function, any error
        shown = ", ".join(f"{a!r:.20}" for a in args)
        raise ProgramError(f"{n.label!r}'s function raised {type(e).__name__} on ({shown}) from its arguments' value sets: {e!s:.80} (--method exhaustive runs it on the inputs only)") from None


def _means_of(vals: list[Any], N: int, default: Any, limit: int, label: str) -> list[Any]:
    """Every mean of w = 1..N values of a set of numbers (booleans as 0 and 1), and the default."""
    nums = [QQ.convert(int(v) if isinstance(v, bool) else v) for v in vals if v is not None and not isinstance(v, str)]
    sums, out = {fmpq(0)}, set()
    for w in range(1, N + 1):
        sums = {a + x for a in sums for x in nums}
        if len(sums) > limit:
            raise ProgramError(f"{label!r}: its means take over {limit:,} values")
        out |= {a / w for a in sums}
    return sorted(out) + [default]


def program_to_json(prog: Program) -> dict[str, Any]:
    """The recorded program: nodes (label, op, args, encoding, constants, tables) and the output."""
    nodes = []
    for n in prog.nodes:
        obj: dict[str, Any] = {"label": n.label, "op": n.op, "args": list(n.args)}
        if n.encoding is not None:
            obj["encoding"] = n.encoding
        for name, v in n.consts.items():
            if name == "predicate":
                obj[name] = v
            elif name == "value":
                obj[name] = [[bool(b) for b in row] for row in v] if n.op == "constant_selector" else [_value_json(u, n) for u in v]
            else:
                obj[name] = _value_json(v, n)
        if n.table is not None:
            obj["table"] = sorted(([[_value_json(_unkey(k), n) for k in args], _value_json(v, n)] for args, v in n.table.items()), key=repr)
        nodes.append(obj)
    return {"nodes": nodes, "output": prog.output}


def _value_json(v: Any, n: Node) -> Any:
    try:
        return value_json(v)
    except ParseError as e:
        raise ProgramError(f"node {n.label!r}: {e}") from None


def _unkey(k: tuple[Any, ...]) -> Any:
    if k[0] == "t":
        return tuple(_unkey(x) for x in k[1])
    return None if k[0] == "n" else fmpq(k[1], k[2]) if k[0] == "q" else k[1]


#: A RASP value's tagged JSON (:mod:`constructions.rasp.values`; a tuple, as a SequenceMap may pair values,
#: is ``{"t": [its values]}``), and back.
value_json = encode_value
value_from_json = decode_value


def program_from_json(obj: Any) -> Program:
    """A recorded program read back (ParseError if malformed); its tabulated nodes look tables up."""
    if not isinstance(obj, dict) or not isinstance(obj.get("nodes"), list) or not isinstance(obj.get("output"), str):
        raise ParseError("the recorded program must be an object with a list of nodes and an output label")
    nodes: list[Node] = []
    labels: dict[str, str] = {}
    for d in obj["nodes"]:
        if not isinstance(d, dict) or d.get("op") not in OPS or not isinstance(d.get("label"), str) or d["label"] in labels:
            raise ParseError(f"malformed program node {str(d)[:80]}")
        op, args = d["op"], d.get("args")
        kinds = OPS[op]
        if not isinstance(args, list) or len(args) != len(kinds) or any(a not in labels for a in args):
            raise ParseError(f"node {d['label']!r}: its arguments must be {len(kinds)} earlier nodes")
        for a, kind in zip(args, kinds):
            if (labels[a] in ("select", "constant_selector", "selector_and", "selector_or", "selector_not")) != (kind == "L"):
                raise ParseError(f"node {d['label']!r}: argument {a!r} is of the wrong kind")
        n = Node(d["label"], op, tuple(args), d.get("encoding"))
        if (n.encoding is None) != (op in ("select", "constant_selector", "selector_and", "selector_or", "selector_not")) or n.encoding not in (None, "categorical", "numerical"):
            raise ParseError(f"node {d['label']!r}: a SOp has an encoding (categorical or numerical), a selector none")
        if op == "full":
            n.consts["fill"] = value_from_json(d.get("fill"))
        elif op == "constant_sop":
            n.consts["value"] = [value_from_json(v) for v in _list(d.get("value"), n)]
        elif op == "constant_selector":
            n.consts["value"] = [[_bool(b, n) for b in _list(row, n)] for row in _list(d.get("value"), n)]
        elif op == "aggregate":
            n.consts["default"] = value_from_json(d.get("default"))
        elif op == "select" and "predicate" in d:
            if d["predicate"] not in rasp.Comparison.__members__:
                raise ParseError(f"node {n.label!r}: unknown predicate {d['predicate']!r:.20}")
            n.consts["predicate"] = d["predicate"]
        if op in ("map", "sequence_map") or (op == "select" and "predicate" not in n.consts):
            arity = 2 if op != "map" else 1
            n.table = {}
            for entry in _list(d.get("table"), n):
                if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[0], list) or len(entry[0]) != arity:
                    raise ParseError(f"node {n.label!r}: a table entry is [[{arity} arguments], value]")
                k = tuple(key(value_from_json(v)) for v in entry[0])
                if k in n.table:
                    raise ParseError(f"node {n.label!r}: two table entries for the same arguments")
                n.table[k] = value_from_json(entry[1])
        nodes.append(n)
        labels[n.label] = op
    if obj["output"] not in labels or nodes[[m.label for m in nodes].index(obj["output"])].encoding is None:
        raise ParseError("the program's output must be one of its SOps")
    return Program(nodes, obj["output"])


def _list(v: Any, n: Node) -> list[Any]:
    if not isinstance(v, list):
        raise ParseError(f"node {n.label!r}: expected a list")
    return v


def _bool(v: Any, n: Node) -> bool:
    if not isinstance(v, bool):
        raise ParseError(f"node {n.label!r}: a constant selector holds booleans")
    return v
