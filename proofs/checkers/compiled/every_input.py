r"""Every input of every length, compositionally: a compiled model computes a recorded RASP program.

The check reads two recorded objects only: the model's JSON (docs/compiler.md, ``attncert-model/1``
or ``/2``) and the program, as :mod:`constructions.tracr.program` records it (nodes with their op,
arguments, encoding, default, predicate name, and the table of every callable). It never imports
the compiler, and nothing in the document is executed.

**The statement.** Categorical tokens over the vocabulary V, lengths n in L (every n = 1..N for a
model of every length, n = N for a fixed one). For every input sequence over V of every length in L
on which the RASP evaluation of the program (tracr's causal semantics for a causal model) is
defined, the model's output at every position decodes to the program's output there.

**The domain.** RASP's evaluation is undefined (it raises) on an input where a Comparison other
than TRUE and FALSE meets None, an ordered Comparison (LT, LEQ, GT, GEQ) meets keys and queries of
two kinds (numbers, booleans, strings, tuples: True < 2 raises, while EQ and NEQ compare as Python
does, True == 1), or a mean of values that are not all numbers meets two different ones. The proof
also decides, on the value sets, whether any can happen, and records where
(``result.may_be_undefined``): empty, the statement covers every input of the lengths in L; not
empty, only those on which the evaluation is defined, and the certificate says so. None is not
outside the domain of everything: TRUE, FALSE and a callable predicate (tabulated, None included
where a key or query can hold it) are evaluated on it, and so is every pair they decide.

**The invariant.** Let an *owner* be a dynamic SOp (tokens, and every SOp with a path from them or
computed by the network) or the auxiliary column a SelectorWidth's head writes, 1/(w + 1). After
every sublayer, for every input and every token position p, the residual row is

    x_p = P[p] + sum over the owners o written so far of enc_o(value of o at p),

P[p] the positional row (the same at every length: rows 0..n of one table), enc_o the one-hot
indicator of the value (all zeros for None), or the number in the owner's one column; and the BOS
row is one fixed vector b, the same for every input. The owners' columns are disjoint and the
positional table is zero on them (both checked), so at the end the output's columns hold its
encoding alone. Each step below is checked on *every
configuration*: a position p in 1..N and any values of the owners the step reads, each from the
owner's value set (tokens: V; a map: its table on the product of its arguments' sets, None passing
through; a categorical Aggregate: its values' set and the default; a numerical one: every mean of
w = 1..N values of its values' set, and the default; a SelectorWidth: 0..N). Those
sets contain every value the owner takes on any input of any length, and the rows of a
configuration are those of the invariant, so a step proven on every configuration holds on every
input. It is sound, not complete: unreachable combinations are checked too.

* **A head** computing Aggregate(Select(K, Q, pred), W) or SelectorWidth(Select(K, Q, pred)). For
  every query configuration q (p_q and the owners W_QK reads on the query side, and Q), with
  beta = s(q, BOS) and s(q, k) over the key configurations k (p_k <= p_q for a causal model):
  the selected keys (pred(K(k), Q(q)) true, None a value like any other: a callable predicate's
  table must hold every pair the configurations present, None included, or the proof is refused;
  only a Comparison other than TRUE and FALSE on None, where RASP raises, leaves a pair outside the
  domain) all score one value m; beta < m (a SelectorWidth: beta = m); every unselected key scores below
  beta. Then at every input the keys of maximal score are exactly the selected live keys, or BOS
  alone when none is selected (a SelectorWidth: the selected keys and BOS). The BOS query scores
  BOS above every key configuration, so BOS attends to itself alone and b stays one vector. The
  value read from a key: W_OV^T x_k = enc_A(W(k)) on every key configuration (all columns; for a
  numerical Aggregate the number, so the mean of the encodings is the encoding of the mean), and
  W_OV^T b = enc_A(default): the mean over a selection of equal values (the only case where a
  categorical mean of symbols is defined) and the empty case are enc_A of RASP's value. RASP
  averages *numbers* even in a categorical Aggregate, which a one-hot move cannot: where W's value
  set holds two numbers, the selected keys must be shown to hold one value. The proof accepts a
  selection Select(K, Q, EQ) (its selected keys share K, when no two values of K's set compare
  equal as Python's == does: True == 1) with W, or the position, *determined by*
  K within an input: W is K; W is a map of SOps determined by K; K is a map whose table, on the
  product of its arguments' sets, gives equal values only for equal k-th arguments, and its k-th
  argument determines W; or K is SelectorWidth(Select(X, X, LT or GT)) without a causal mask and
  X determines W (if X_j < X_j' then {k : X_k < X_j} is a proper subset of {k : X_k < X_j'},
  which holds j, so equal widths mean equal X; X's values totally ordered: all numbers or all
  strings). If K determines the position (``indices``), a query selects one key at most; so it does
  under a causal mask for Select(K, indices, EQ) with K = SelectorWidth(Select(X, X, pred)), pred(x, x)
  false on X's values: K counts earlier keys only, K_k <= k, and a query t selects keys k <= t with
  K_k = t, so k = t. A static selection (keys and queries functions of the position) that selects one
  key at most for every query position 1..N, whatever its predicate, is accepted too (a static value is
  the same at every length). Otherwise it refuses. Where the values are not all numbers, RASP's mean is
  a value only when the selected values are equal: without one of these arguments the input may be
  outside the domain, and the proof records so. A SelectorWidth's
  head reads the same vector u from every key, and its output is (W_OV^T b + w u) / (w + 1), a
  function of the width w alone: the auxiliary owner's encoding.
* **An MLP** computing maps f (and decoding SelectorWidths): on every configuration of the owners
  it reads and of the maps' arguments, its output (every column) equals the sum of enc_f(f(args)),
  and of enc_s(w) for a decoded width (w read from its auxiliary owner). Exact rational arithmetic;
  a division by zero on a configuration refuses the proof. b becomes b + MLP(b).
* **The output**: its SOp has been written, and its columns and values are the model's outputs.

Static SOps (functions of the position: ``indices``, maps and selections of them) are read from
the position p through their tables; the primitive ``length`` is read as SelectorWidth(Select(tokens,
tokens, TRUE)), as the compiler computes it without a causal mask. Anything else (selector
combinations, constant SOps, ``length`` under a causal mask, an Aggregate or width held in the
positional table, exp units, numerical tokens, a categorical Aggregate held as one number whose
values may be booleans: RASP gives the selected boolean, the head the mean of 0 and 1) is outside
this proof: :class:`Unsupported`, one line. So is a proof past its budget: each step's configurations
are counted from the value sets' sizes before any is built (MAX_CONFIGURATIONS in all, MAX_ROWS on a
head's side), so that a hostile record costs seconds, not the memory of its product.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Iterator

from flint import fmpq

from attncert.exact import LimitExceeded, ParseError
from attncert.exact.limits import current as current_limits
from attncert.exact.rationals import rational_from_json
from attncert.proofs.checkers.forward import model_mode
from attncert.proofs.checkers.programs import KIND, NONE, ORDERED, Program, Unsupported, Value, eq_key, means, number, orderable, value
from attncert.proofs.checkers.reading import items, obj, whole
from attncert.proofs.checkers.result import conclude

#: Configurations (query-key pairs of a head, inputs of an MLP, argument tuples a separation test runs) the
#: whole proof enumerates at most (or the pair limit in force, --max-pairs, if lower): each step's count is the
#: product of the value sets' sizes, charged before anything of the step is built. Measured: about 8 us a
#: head's query-key configuration (4,194,304 in about 35 s on a busy 2-core machine), so a proof and its check
#: take seconds whatever the recorded program; tracr's library programs need under 7,000 (make_sort_unique over
#: five tokens to length 8: 4,552).
MAX_CONFIGURATIONS = 1 << 20
#: The configurations of one side of a head (its keys, or its queries) held at once at most (about 800 bytes each).
MAX_ROWS = 1 << 16

Row = dict[int, fmpq]


class _Model:
    """The parts of the model JSON the proof reads."""

    def __init__(self, model: dict[str, Any]):
        self.every, self.causal, self.N = model_mode(model)
        if model.get("tokens") != "categorical":
            raise Unsupported("the compositional proof covers categorical tokens")
        self.width = len(items(model, "basis"))
        self.vocab = [value(t) for t in model.get("vocab") or []]
        self.token_columns = [self.col(c) for c in model.get("token_columns", [])]
        if self.token_columns and len(self.token_columns) != len(self.vocab):
            raise ParseError("a categorical model has one token column per symbol")
        self.positional: dict[int, dict[int, fmpq]] = {}
        for c, entries in obj(model, "positional").items():
            col = self.positional.setdefault(self.col(int(c)), {})
            for p, x in entries:
                if not whole(p) or not 0 <= p <= self.N:
                    raise ParseError("a positional entry lies outside the positions")
                col[p] = rational_from_json(x)
        self.layers = model.get("layers")
        self.nodes = obj(model, "nodes")
        self.outputs, self.output_values = obj(model, "outputs"), model.get("output_values") or {}

    def col(self, c: Any) -> int:
        if not whole(c) or not 0 <= c < self.width:
            raise ParseError(f"column {c!r:.20} is outside the basis")
        return c

    def row(self, p: int) -> Row:
        return {c: vals[p] for c, vals in self.positional.items() if vals.get(p, 0) != 0}


def _affine(a: dict[str, Any], inputs: Row | list[fmpq], size: int) -> fmpq:
    total = rational_from_json(a["bias"])
    for i, w in a["terms"]:
        if not whole(i) or not 0 <= i < size:
            raise ParseError("an affine form reads outside its inputs")
        x = inputs.get(i, 0) if isinstance(inputs, dict) else inputs[i]
        if x != 0:
            total += rational_from_json(w) * x
    return total


def _mlp(mlp: dict[str, Any], x: Row, width: int) -> Row:
    """The MLP's output on one row, exactly; Unsupported for exp units and divisions by zero."""
    inputs: Row | list[fmpq] = x
    size = width
    for stage in mlp["stages"]:
        units = []
        for u in stage:
            z = [_affine(a, inputs, size) for a in u["args"]]
            if u["unit"] == "relu" and len(z) == 1:
                units.append(max(z[0], fmpq(0)))
            elif u["unit"] == "product" and len(z) == 2:
                units.append(z[0] * z[1])
            elif u["unit"] == "reciprocal" and len(z) == 1:
                if z[0] == 0:
                    raise Unsupported("an MLP divides by zero on a configuration")
                units.append(1 / z[0])
            else:
                raise Unsupported(f"a unit {u['unit']!r:.20} is outside the compositional proof (relu, product, reciprocal)")
        inputs, size = units, len(units)
    out: Row = {}
    for c, a in mlp["out"]:
        out[c] = out.get(c, fmpq(0)) + _affine(a, inputs, size)
    return _nonzero(out)


def _nonzero(r: Row) -> Row:
    return {c: x for c, x in r.items() if x != 0}


def _add(a: Row, b: Row, scale: fmpq = fmpq(1)) -> Row:
    out = dict(a)
    for c, x in b.items():
        out[c] = out.get(c, fmpq(0)) + scale * x
    return _nonzero(out)


class _Proof:
    """The induction over the sublayers (module docstring), recording each step's configurations."""

    def __init__(self, model: _Model, prog: Program):
        self.m, self.prog = model, prog
        self.problems: list[str] = []
        #: where RASP's evaluation may raise on some input (then outside the statement's domain): empty when
        #: the proof also shows the program defined on every input of the lengths it serves
        self.undefined: list[str] = []
        self.steps: list[dict[str, Any]] = []
        self.spent, self.budget = 0, min(MAX_CONFIGURATIONS, current_limits().max_pairs)
        self.columns: dict[str, list[int]] = {}  # owner -> its columns (an owner without columns adds nothing)
        self.values: dict[str, list[Value]] = {}  # one-hot owner -> the value of each column
        self.aux: dict[str, list[Row]] = {}  # SelectorWidth -> its head's output for each width 0..N
        self.decoded: set[str] = set()  # SelectorWidths whose own columns the MLP after their head has written
        self.computed: set[str] = set()  # the SOps a head has computed
        for label, n in prog.nodes.items():
            if label in prog.static or n["op"] == "select":
                continue
            node = model.nodes.get(label)
            if n["op"] == "tokens":
                self.columns[label], self.values[label] = model.token_columns, model.vocab
            elif isinstance(node, dict):
                self.columns[label] = [model.col(c) for c in node.get("columns", [])]
                if "values" in node:
                    self.values[label] = [value(v) for v in node["values"]]
        self.enumerated = 0  # the value sets' steps so far (:meth:`_enumerate`)
        self.sets = self._value_sets()
        self.owner = {c: o for o, cs in self.columns.items() for c in cs}
        if len(self.owner) != sum(map(len, self.columns.values())):
            raise Unsupported("two SOps share a column")
        for c in self.owner:
            if any(x != 0 for x in model.positional.get(c, {}).values()):
                raise Unsupported(f"the positional table writes column {c}, which belongs to {self.owner[c]!r}")
        self.ready = {label for label, n in prog.nodes.items() if n["op"] == "tokens"}
        self.bos = model.row(0)

    def _value_sets(self) -> dict[str, list[Value] | None]:
        """Every value each SOp can take at a token position on any input of any length 1..N (module
        docstring); None for a numerical mean (not enumerated)."""
        prog, N = self.prog, self.m.N
        sets: dict[str, list[Value] | None] = {}
        for label, n in prog.nodes.items():
            if n["op"] == "select":
                continue
            if label in prog.static:
                # arguments first (the recorded order), each read once per position (Program.at's memo)
                if not self._enumerate(N):
                    raise Unsupported(f"the values of {label!r}: {self.enumerated + N:,} value-set steps, over MAX_CONFIGURATIONS")
                out = [prog.at(label, p) for p in range(1, N + 1)]
            elif n["op"] == "tokens":
                out = list(self.m.vocab)
            elif n["op"] == "selector_width":
                out = [("q", w, 1) for w in range(N + 1)]
            elif n["op"] == "aggregate":
                vals = sets[n["args"][1]]
                if self._moves(label):
                    out = None if vals is None else vals + [n["default"]]
                elif n["encoding"] == "categorical" and any(v[0] == "b" for v in vals or []):
                    # the evaluator's rule (constructions/rasp/evaluate.py, op_aggregate): booleans are tokens to a
                    # categorical Aggregate, which gives the selected boolean itself, not the mean of 0 and 1
                    raise Unsupported(
                        f"Aggregate {label!r}: a categorical Aggregate held as one number whose values may be booleans (RASP's "
                        "evaluation gives the selected boolean, the head the mean of 0 and 1)"
                    )
                else:
                    out = means(vals, N, n["default"], self._enumerate)
            else:
                args = [sets[a] for a in n["args"]]
                known = all(a is not None for a in args) and self._enumerate(math.prod(map(len, args)))
                out = [prog.apply(label, combo) for combo in itertools.product(*args)] if known else None
            sets[label] = None if out is None else sorted(set(out), key=repr)
        return sets

    def _moves(self, label: str) -> bool:
        """Whether an Aggregate moves one-hot columns (a categorical one held one-hot); otherwise its one
        column holds the mean of the numbers, whatever its encoding (RASP averages numbers)."""
        return self.prog.nodes[label]["encoding"] == "categorical" and label in self.values

    def _set(self, owner: str) -> list[Any]:
        s = self.sets.get(owner)
        if s is None:
            raise Unsupported(f"the value set of {owner!r} is not finite here (a numerical mean of more than MAX_VALUES values), or not enumerated within MAX_CONFIGURATIONS steps")
        return s

    def enc(self, owner: str, v: Value) -> Row:
        """The owner's part of a row when it holds v: a SelectorWidth's head output for w = v, plus its
        own columns once decoded; a SOp's one-hot indicator (zeros for None) or its number."""
        if owner in self.aux:
            head = self.aux[owner][v[1]]
            return _add(head, self._columns_enc(owner, v)) if owner in self.decoded else head
        return self._columns_enc(owner, v)

    def _columns_enc(self, owner: str, v: Value) -> Row:
        cols = self.columns.get(owner, [])
        if not cols:
            return {}
        if owner in self.values:
            if v == NONE:
                return {}
            if v not in self.values[owner]:
                raise Unsupported(f"{owner!r} takes {v!r:.30}, which has no column")
            return {cols[self.values[owner].index(v)]: fmpq(1)}
        x = number(v)
        if x is None or len(cols) != 1:
            raise Unsupported(f"{owner!r}: a numerical column cannot hold {v!r:.30}")
        return {cols[0]: x} if x != 0 else {}

    def owners(self, cols: set[int], where: str) -> set[str]:
        """The owners of the columns a step reads (positional columns: the position); each must be written."""
        out = set()
        for c in cols:
            o = self.owner.get(c)
            if o is None and c in self.written_columns:
                raise Unsupported(f"{where} reads column {c}, which a layer writes for no SOp")
            if o is not None:
                out.add(o)
        for o in out:
            if o not in self.ready:
                raise Unsupported(f"{where} reads {o!r} before it is computed")
        return out

    def charge(self, where: str, count: int, what: str) -> None:
        """Count a step's configurations against the proof's budget (MAX_CONFIGURATIONS, or --max-pairs if
        lower) before the step builds any, one line past it: Unsupported past MAX_CONFIGURATIONS (the proof's
        own bound, the same wherever it runs), LimitExceeded past a lower --max-pairs (a limit refusal: nothing
        was decided, so verify says BAD of a genuine certificate checked under a stricter limit, never REJECTED)."""
        self.spent += count
        if self.spent > MAX_CONFIGURATIONS:
            raise Unsupported(f"{where}: {count:,} {what}, {self.spent:,} in the proof so far, over its budget of {MAX_CONFIGURATIONS:,} configurations")
        if self.spent > self.budget:
            raise LimitExceeded(f"{where}: {count:,} {what}, {self.spent:,} in the proof so far, over the pair limit of {self.budget:,} (--max-pairs)")

    def _enumerate(self, count: int) -> bool:
        """Count ``count`` steps of the value sets' enumeration (a table lookup or a sum each) before they are
        taken, if MAX_CONFIGURATIONS in all still holds them; otherwise count nothing and say so (the set is
        then left unknown, None: a step that needs it refuses the proof). A budget of its own, the proof's
        bound wherever it runs: the configurations (and --max-pairs) are the steps' own."""
        if self.enumerated + count > MAX_CONFIGURATIONS:
            return False
        self.enumerated += count
        return True

    def count(self, owners: list[str]) -> int:
        """How many configurations :meth:`configurations` gives: N times the product of the value sets' sizes."""
        return self.m.N * math.prod(len(self._set(o)) for o in owners)

    def configurations(self, owners: list[str]) -> Iterator[tuple[int, dict[str, Any], Row]]:
        """(p, values of the owners, the row of the invariant) for every position and combination."""
        for p in range(1, self.m.N + 1):
            base = self.m.row(p)
            for combo in itertools.product(*(self._set(o) for o in owners)):
                row = base
                for o, v in zip(owners, combo):
                    row = _add(row, self.enc(o, v))
                yield p, dict(zip(owners, combo)), row

    def arg(self, label: str, p: int, values: dict[str, Any]) -> Value:
        return self.prog.at(label, p) if label in self.prog.static else values[label]

    def run(self) -> None:
        layers = self.m.layers
        if not isinstance(layers, list):
            raise ParseError("the model's layers must be a list")
        self.written_columns = {c for layer in layers for h in layer["heads"] for _, c, _ in h["ov"]}
        self.written_columns |= {c for layer in layers if layer["mlp"] for c, _ in layer["mlp"]["out"]}
        for l, layer in enumerate(layers):
            done, bos_add = [], {}
            for h in layer["heads"]:
                label = self._head(h)
                bos_add = _add(bos_add, self._ov(h, self.bos))
                done.append(label)
            self.bos = _add(self.bos, bos_add)
            self.ready |= set(done)
            if layer["mlp"] is not None:
                self._mlp_step(l, layer["mlp"])
        out = self.prog.output
        if out not in self.ready:
            raise Unsupported(f"the output {out!r} is not computed by the model's layers")
        if self.m.outputs.get("output") != self.columns.get(out):
            self.problems.append("the model's output columns are not those of the program's output SOp")
        recorded = self.m.output_values.get("output")
        if (recorded is None) != (out not in self.values) or recorded is not None and [value(v) for v in recorded] != self.values[out]:
            self.problems.append("the model's output values are not those of the program's output SOp")

    def _ov(self, h: dict[str, Any], x: Row) -> Row:
        out: Row = {}
        for a, b, w in h["ov"]:
            if x.get(self.m.col(a), 0) != 0:
                out[self.m.col(b)] = out.get(b, fmpq(0)) + rational_from_json(w) * x[a]
        return _nonzero(out)

    def _head(self, h: dict[str, Any]) -> str:
        label = h.get("aggregate")
        node = self.prog.nodes.get(label)
        if node is None or node["op"] not in ("aggregate", "selector_width"):
            raise Unsupported(f"a head computes {label!r:.30}, which is no Aggregate or SelectorWidth of the program")
        if label in self.ready or label in self.aux or label in self.computed:
            raise Unsupported(f"{label!r} is computed twice")  # the invariant adds each owner's encoding once
        self.computed.add(label)
        sel = node["args"][0]
        K, Q = self.prog.nodes[sel]["args"]
        qk = [(self.m.col(a), self.m.col(b), rational_from_json(w)) for a, b, w in h["qk"]]
        dyn = lambda *ls: {x for x in ls if x not in self.prog.static}  # noqa: E731
        where = f"head {label!r}"
        q_owners = sorted(self.owners({a for a, _, _ in qk}, where) | dyn(Q))
        width = node["op"] == "selector_width"
        V = None if width else node["args"][1]
        k_owners = sorted(self.owners({b for _, b, _ in qk} | {a for a, _, _ in h["ov"]}, where) | dyn(K) | (dyn(V) if V else set()))
        for o in set(q_owners) | set(k_owners):
            if o not in self.ready:
                raise Unsupported(f"{where} reads {o!r} before it is computed")
        # counted from the value sets' sizes before any configuration is built
        nk, nq = self.count(k_owners), self.count(q_owners)
        if max(nk, nq) > MAX_ROWS:
            raise Unsupported(f"{where}: {nk:,} key and {nq:,} query configurations, over {MAX_ROWS:,} on one side")
        self.charge(where, nk * nq, "query-key configurations")
        keys = list(self.configurations(k_owners))
        queries = list(self.configurations(q_owners))

        def score(x: Row, y: Row) -> fmpq:
            return sum((w * x[a] * y[b] for a, b, w in qk if a in x and b in y), fmpq(0))

        bad = []
        pred = self.prog.nodes[sel]["predicate"]
        if pred not in (None, "TRUE", "FALSE") and (NONE in self._set(K) or NONE in self._set(Q)):
            self.undefined.append(f"Select {sel!r} may apply {pred} to None, on which RASP's evaluation raises")
        kinds = sorted({KIND[v[0]] for v in self._set(K) + self._set(Q) if v != NONE})
        if pred in ORDERED and len(kinds) > 1:
            self.undefined.append(f"Select {sel!r} may order {kinds[0]} against {kinds[1]} values ({pred}), on which RASP's evaluation raises")
        elif pred in ORDERED and not orderable([v for v in self._set(K) + self._set(Q) if v != NONE]):
            # the evaluator sorts every key and query of an input together: one pair without an order makes it raise
            self.undefined.append(f"Select {sel!r} may order tuples whose first different elements have no order ({pred}), on which RASP's evaluation raises")
        top = score(self.bos, self.bos)
        if any(score(self.bos, y) >= top for _, _, y in keys):
            bad.append("the BOS query does not attend to BOS alone")
        # the value each key gives, and at BOS
        reads = [self._ov(h, y) for _, _, y in keys]
        at_bos = self._ov(h, self.bos)
        if width:
            if len({tuple(sorted(r.items())) for r in reads}) > 1:
                bad.append("the width head does not read the same vector from every key")
            u = reads[0] if reads else {}
            self.aux[label] = [_nonzero({c: (at_bos.get(c, 0) + w * u.get(c, 0)) / (w + 1) for c in set(at_bos) | set(u)}) for w in range(self.m.N + 1)]
            for c in {c for r in self.aux[label] for c in r}:
                if c in self.owner or any(x != 0 for x in self.m.positional.get(c, {}).values()):
                    raise Unsupported(f"{where} writes column {c}, which another SOp or the positional table holds")
                self.owner[c] = label
        else:
            numeric = not self._moves(label)
            if numeric and (node["default"] == NONE or any(number(v) is None for v in self._set(V))):
                raise Unsupported(f"{where}: an Aggregate held as one number needs numbers and a numeric default")
            numbers = {v for v in self._set(V) if v[0] == "q"}
            positions = [i for i, m in self.prog.nodes.items() if m["op"] == "indices"]
            # EQ compares as Python does (True == 1): the selected keys share K's value only if no two values of K's set compare equal
            k_values = self.sets.get(K) or []
            distinct = len({eq_key(x) for x in k_values}) == len(k_values)
            one_value = distinct and (self._determines(K, V) or any(self._determines(K, i) for i in positions))
            one_value = one_value or self.m.causal and Q in positions and self._before_itself(K)
            one_value = pred == "EQ" and one_value or self._one_key(sel)
            if not numeric and len(numbers) > 1 and not one_value:
                raise Unsupported(
                    f"{where}: its selected keys may hold different numbers, which RASP averages and a one-hot move cannot; "
                    "the proof needs Select(K, Q, EQ) with the values determined by K"
                )
            if not numeric and len(self._set(V)) > 1 and not one_value:
                # RASP's mean of values that are not all numbers is defined only where they are equal
                self.undefined.append(f"Aggregate {label!r} may select keys holding different values, whose mean RASP's evaluation does not define")
            for (p, vals, _), r in zip(keys, reads):
                v = self.arg(V, p, vals)
                if r != self.enc(label, v if not numeric else ("q", int(number(v).p), int(number(v).q))):
                    bad.append(f"a key holding {v!r:.30} at position {p} does not give the encoding of its value")
                    break
            try:
                default = self.enc(label, node["default"])
            except Unsupported:
                raise Unsupported(f"{where}: its default {node['default']!r:.30} has no encoding in its columns (a query that selects nothing reads it)") from None
            if at_bos != default:
                bad.append("BOS does not give the encoding of the default")
        for p_q, qv, x in queries:
            beta = score(x, self.bos)
            chosen, others = set(), []
            for p_k, kv, y in keys:
                if self.m.causal and p_k > p_q:
                    continue
                picked = self.prog.selects(sel, self.arg(K, p_k, kv), self.arg(Q, p_q, qv))
                if picked is None:
                    continue  # RASP raises on this pair: no input presenting it is in the domain (recorded above)
                s = score(x, y)
                (chosen.add(s) if picked else others.append(s))
            worst = max(others, default=None)
            fine = len(chosen) <= 1 and (worst is None or worst < beta)
            if len(chosen) == 1:
                m = next(iter(chosen))
                fine = fine and (beta == m if width else beta < m)
            if not fine:
                bad.append(f"the scores of a query at position {p_q} ({_shown(qv)}) do not separate its selected keys")
                break
        self.problems += [f"{where}: {b}" for b in bad]
        self.steps.append({"sublayer": f"head {label}", "query_configurations": len(queries), "key_configurations": len(keys)})
        return label

    def _determines(self, a: str, v: str) -> bool:
        """Whether, within any one input, positions where SOp a holds equal values hold equal values of v
        (the rules of the module docstring)."""
        if a == v:
            return True
        n = self.prog.nodes[v]
        if n["op"] in ("map", "sequence_map") and all(w not in self.prog.static and self._determines(a, w) for w in n["args"]):
            return True
        na = self.prog.nodes[a]
        if na["op"] in ("map", "sequence_map") and any(self._separates(a, k) and self._determines(w, v) for k, w in enumerate(na["args"])):
            return True
        if na["op"] == "selector_width" and not self.m.causal:
            sel = self.prog.nodes[na["args"][0]]
            X = sel["args"][0]
            kinds = {x[0] for x in self.sets.get(X) or [("?",)]}
            if sel["args"][1] == X and sel["predicate"] in ("LT", "GT") and kinds in ({"q"}, {"s"}):
                return self._determines(X, v)
        return False

    def _one_key(self, sel: str) -> bool:
        """Whether a static selection (keys and queries functions of the position) selects one key at most
        for every query: decided on every pair of positions 1..N (under a causal mask, keys k <= q), which
        covers every length, since a static SOp's value at a position is the same at every length."""
        if sel not in self.prog.static:
            return False
        K, Q = self.prog.nodes[sel]["args"]
        N = self.m.N
        return all(
            sum(1 for k in range(1, (q if self.m.causal else N) + 1) if self.prog.selects(sel, self.prog.at(K, k), self.prog.at(Q, q))) <= 1
            for q in range(1, N + 1)
        )

    def _before_itself(self, a: str) -> bool:
        """Whether SOp a is, under the causal mask, SelectorWidth(Select(X, X, pred)) with pred(x, x) false
        on X's values: at token t it counts keys k <= t other than t, so a <= t. Then Select(a, indices, EQ)
        selects one key at most: query t selects keys k <= t with a_k = t, and a_k <= k <= t forces k = t."""
        n = self.prog.nodes[a]
        if n["op"] != "selector_width":
            return False
        sel = self.prog.nodes[n["args"][0]]
        X = sel["args"][0]
        values = self.sets.get(X)
        # a pair on which RASP raises (None) is in no input of the domain
        return sel["args"][1] == X and values is not None and not any(self.prog.selects(n["args"][0], x, x) for x in values)

    def _separates(self, a: str, k: int) -> bool:
        """Whether map a's table, on the product of its arguments' value sets, gives equal values only for
        equal k-th arguments (so equal values of a mean equal values of its k-th argument)."""
        args = self.prog.nodes[a]["args"]
        sets = [self.sets.get(w) for w in args]
        size = None if any(x is None for x in sets) else math.prod(map(len, sets))
        # past the proof's own bound, not --max-pairs: the proof takes the same steps under any limit (a lower
        # one refuses in charge)
        if size is None or self.spent + size > MAX_CONFIGURATIONS:
            return False  # unknown, or past what the proof may still enumerate: not shown (the proof may refuse)
        self.charge(f"the separation test of {a!r}", size, "argument tuples")
        seen: dict[Value, Value] = {}
        for combo in itertools.product(*sets):
            if seen.setdefault(self.prog.apply(a, combo), combo[k]) != combo[k]:
                return False
        return True

    def _mlp_step(self, l: int, mlp: dict[str, Any]) -> None:
        targets = [label for label, node in self.m.nodes.items() if isinstance(node, dict) and node.get("slot") == 2 * l + 1 and label in self.prog.nodes]
        where = f"the MLP of layer {l}"
        read = {self.m.col(i) for stage in mlp["stages"][:1] for u in stage for a in u["args"] for i, _ in a["terms"]}
        owners = self.owners(read, where)
        for t in targets:
            n = self.prog.nodes[t]
            if t in self.ready and t not in self.aux or t in self.decoded:
                raise Unsupported(f"{where} computes {t!r}, which is computed already")
            if n["op"] == "selector_width":
                if t not in self.aux:
                    raise Unsupported(f"{where} decodes {t!r} before its head")
            elif n["op"] not in ("map", "sequence_map"):
                raise Unsupported(f"{where} computes {t!r}, a {n['op']}")
            else:
                owners |= {a for a in n["args"] if a not in self.prog.static}
        for o in owners:
            if o not in self.ready:
                raise Unsupported(f"{where} reads {o!r} before it is computed")
        order = sorted(owners)
        count = self.count(order)
        self.charge(where, count, "configurations")
        for p, vals, x in self.configurations(order):
            want: Row = {}
            for t in targets:
                n = self.prog.nodes[t]
                if n["op"] == "selector_width":  # the MLP adds the width's own columns to its head's output
                    want = _add(want, self._columns_enc(t, vals[t]))
                else:
                    want = _add(want, self.enc(t, self.prog.apply(t, tuple(self.arg(a, p, vals) for a in n["args"]))))
            if _mlp(mlp, x, self.m.width) != want:
                self.problems.append(f"{where}: at position {p} ({_shown(vals)}) its output is not the encoding of its maps' values")
                break
        self.bos = _add(self.bos, _mlp(mlp, self.bos, self.m.width))
        self.ready |= set(targets)
        self.decoded |= {t for t in targets if t in self.aux}
        self.steps.append({"sublayer": f"mlp {l}", "configurations": count})


def _shown(vals: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {v!r:.20}" for k, v in list(vals.items())[:3])


def prove_every_input(model: dict[str, Any], program: Any) -> tuple[list[str], list[dict[str, Any]], list[str]]:
    """(problems, steps, undefined): the compositional proof of the module docstring for the recorded
    model and program; no problem means the model computes the program on every input of every length
    it serves on which RASP's evaluation is defined, which is every such input if ``undefined`` (where
    the evaluation may raise) is empty. Unsupported (a ParseError) for a program or model outside the
    class it covers."""
    m = _Model(model)
    proof = _Proof(m, Program(program, m.causal))
    proof.run()
    return proof.problems, proof.steps, sorted(set(proof.undefined))


#: What a compositional ``compiled_program`` certificate states (``result.statement``).
STATEMENT = (
    "for every input sequence over the vocabulary of every length in result.lengths on which the RASP evaluation of the recorded "
    "program is defined (tracr's causal semantics for a causal model: every selector masked to the keys k <= q; every one of the "
    "result.inputs sequences when result.may_be_undefined is empty, which the proof then shows), the compiled "
    "model's output at every position equals the program's output; proven compositionally (proofs/checkers/compiled/every_input.py): every "
    "head's selection on every pair of query and key configurations, every sublayer's output on every configuration of the finite "
    "value sets it reads"
)


def result_of(model: dict[str, Any], program: Any, vocab: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(outputs, result) of a compositional certificate for the recorded model and program over a
    vocabulary of ``vocab`` tokens: the proof's steps, the lengths served, the inputs they hold."""
    every, _, N = model_mode(model)
    problems, steps, undefined = prove_every_input(model, program)
    lengths = list(range(1, N + 1)) if every else [N]
    outputs = {"proof": {"method": "compositional", "steps": steps}}
    result = {
        "relation": "exact_equal",
        "domain": "QQ",
        "holds": not problems,
        "statement": STATEMENT,
        "lengths": lengths,
        "inputs": sum(vocab**n for n in lengths),
        "may_be_undefined": undefined,
        "problems": problems,
    }
    return outputs, result


def check_compositional(doc: dict[str, Any], model: dict[str, Any], vocab: int) -> list[str]:
    """Problems with a compositional certificate whose hypotheses (the model's sha256, vocabulary, mode
    and causality) the caller has checked: the proof is run again on the recorded model and program
    (a program or model outside its class is a problem, not a proof), and the recorded outputs and
    result must be what it gives."""
    cons = obj(doc, "construction")
    program = obj(cons, "program")
    # a tracr program is recorded as its tables; the others carry them beside their record (the rebuild tabulates again)
    tables = program.get("program") if program.get("kind") == "tables" else cons.get("tables")
    try:
        outputs, result = result_of(model, tables, vocab)
    except Unsupported as e:
        return [f"the compositional proof does not apply: {e}"]
    problems = []
    if doc.get("outputs") != outputs:
        problems.append("the recorded proof steps are not the ones the proof takes")
    res = obj(doc, "result")
    for k, v in result.items():
        if k not in ("holds", "relation") and res.get(k) != v:
            problems.append(f'"result.{k}" must be {str(v)[:60]}')
    # what the proof could not establish, recorded as result.problems (compared above): the proof is sound but not
    # complete (a value set holding values no input reaches), so this leaves the claim not proven, never disproven
    return conclude(doc, result["relation"], problems, undecided=result["problems"])
