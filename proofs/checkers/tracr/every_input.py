r"""Every input of every length up to n, compositionally, through the float32 model tracr compiled.

The prover (:mod:`proofs.tracr.compositional`) and the checker run this same induction on the recorded
model (its JSON, read by :class:`proofs.checkers.tracr.model.Model`, which checks its hypotheses) and the
recorded program (its tables, read by :class:`proofs.checkers.compiled.every_input.Program`); it imports
neither the prover nor the constructions, and executes nothing from the document.

**The invariant.** After every sublayer, for every input of every length n' <= n and every token
position p, the residual row is x_p = c_p + e_p, where the *centre* c_p is exact:

    c_p = C + P[p] + sum over the owners o written so far of enc_o(value of o at p),

C the columns every token's embedding shares (``one``), P[p] the position's embedding, enc_o the
encoding tracr's basis gives the value (tokens: the token's embedding row less C; a categorical SOp: a 1
in the column ``o:value``, none for None; a numerical SOp: the value in the column ``o``; a
SelectorWidth also the centre T_o(w) its head writes in ``o_selector_width_attn_output``); and the
error is bounded column by column, |e_p[c]| <= r_o(v)[c], by a radius that depends on the owner and
its value only (the *radius per SOp value*). The BOS row is one ball vector b for every input. Value
sets are those the induction produces (tokens: the vocabulary; a map: its table on its arguments'
sets; an Aggregate: the values some query can receive; a SelectorWidth: the widths below), so a configuration (a
position and a value of each owner a step reads) that no input presents is checked too: sound, not
complete.

**A head** computing Aggregate(Select(K, Q, pred), W) (or SelectorWidth(Select(K, Q, pred))). Scores
s(q, k) = (x_q W_Q + b_Q)(x_k W_K + b_K)^T / s are arb balls over every query configuration q and
key configuration k (centre and radius as balls); keys past the query in a causal model score tracr's
masked logit. For a query whose selected keys (RASP's pred on K and Q; a categorical Aggregate's keys
grouped by W's value, since a defined input selects one value) score in [m_lo, m_hi] (spread
Delta = m_hi - m_lo), BOS at most s_B and the unselected keys at most u: the softmax gives the
selected keys together a weight A_S >= w e^{m_lo} (w >= 1 of them) and BOS and the unselected keys
A_O <= e^{s_B} + (n - 1) e^{u}, so the leaked share lambda = A_O / (A_S + A_O), increasing in A_O / A_S,
is at most r / (1 + r) with r = e^{s_B - m_lo} + (n - 1) e^{u - m_lo}. Writing the output as the convex
combination out = (1 - lambda) S + lambda O (S the selected keys' weighted mean, O the others'), with
the selected weights among themselves |beta_j - 1/w| <= (e^Delta - 1)/w:

    |out - enc_A(RASP's value)| <= (1 - lambda) A + lambda B <= A + (r / (1 + r)) max(0, B - A),
    A = E + (e^Delta - 1) h + R,

E the largest distance of a selected key's exact value centre from its RASP encoding, h the half range
of those centres, R the largest radius of a selected key's value, B the largest distance of BOS's or an
unselected key's value from the encoding. BOS's share and the unselected keys' are also bounded apart
(lambda_B <= r_B/(1 + r_B), r_B = e^{s_B - m_lo}; lambda_U likewise), so that with O split into BOS's value
and the unselected keys' mean the bound is A + lambda_B (B_B - A) + lambda_U (B_U - A) at its largest over
lambda_B + lambda_U <= r/(1 + r) (the larger excess takes its share first): BOS's value, often 0, is then
not charged at the unselected keys' distance. **Distinct keys:** when K takes distinct values at distinct
positions (``indices``, an injective map of them, or a rank below), an input holds at most one key of
each value of K, so (n - 1) e^{u - m_lo} becomes the sum of the n - 1 largest e^{u_v - m_lo} over K's
values v, u_v the highest unselected score of a key holding v.

**The query's own key** (lemma). The query's position is one of the keys (never masked), and its key
configuration agrees with the query's on the position and on every SOp both read (the same residual
row). So, from the predicate's table on these configurations: if every key configuration agreeing with
the query's is selected, the query selects at least one key; if none is, its own key is never selected
and a SelectorWidth's width is at most n' - 1 (n' the keys it sees: the length, or its position under a
causal mask), e.g. Select(X, X, LT), where pred(v, v) is false for every v. The **rank rule** also
gives a selected key: Select(SelectorWidth(Select(X, X, LT or GT)), indices, EQ) with X unique within an
input and totally ordered, non-causal: K is then a permutation of 0..n-1 (X_j's rank). A query that may
select no key reads the default: out = (1 - lambda_0) v_B + lambda_0 O with lambda_0 <= r_0 / (1 + r_0),
r_0 = n e^{u - s_B}, so |out - enc(default)| <= A_0 + lambda_0 max(0, B - A_0), A_0 = |v_B - enc(default)|.

**A SelectorWidth** counts BOS among the selected (its score is theirs): its w + 1 selected keys'
centres average to T(w) = (v_B + w m_K)/(w + 1), and r = (n' - w) e^{u - m_lo}/(w + 1), the radius
depending on w, the owner's value, w ranging over 0..n' (1.. when the own key is always selected, ..n' - 1
when never). n enters only through the leak, linearly, and through the value sets. The BOS query's
output is v_B within lambda max |v_k - v_B| (r = n e^{max_k s(B, k) - s(B, B)}), and within the hull of
every value.

**An MLP** is split into the blocks of hidden units that write one SOp (tracr's MLPs are
block-diagonal; :func:`.bounds.relu_box` maps one). On each configuration of the owners a block reads, the box centre +- radius is
mapped exactly: where every hidden unit's sign is decided on the box, the block is affine there, its
centre's output exact and its radius |J| r with J = W_2^T diag(active) W_1^T (steep discretising ramps
cancel in J, not in |W_2||W_1|); a box where some unit's sign is undecided is bisected along the input
column that most decides it (depth <= SPLITS), and a unit still undecided contributes
W_2 [0, max(0, z_hi)]. The new radius is the distance of the output box from enc_f(f(args)).

**The output** is decided on every value v of the output SOp with its radius: categorical, the class
of v is the only argmax (1 - r[own] > r[c] for every other class); None, or a value with no class,
fails (argmax cannot give it); numerical, r <= tol.

**Means taken together.** Two numerical Aggregates of one selection (the same Select, or the same
arguments and Comparison) average the same keys, so the pair of their values at a query is a mean of
w = 1..n pairs (W_a, W_b) one position holds together (found by evaluating the maps above them on every
value of what they read), or the pair of defaults: configurations holding both outside that set are no
input's (make_pair_balance: no token is both "(" and ")", so opens and closes are never both 1).

**Positions.** A SOp computed from the position alone (static: ``indices``, ``1 - indices``) is read at
its value there: every configuration with a position carries its encoding and radius. A key position
every input presents (any position of an exact length, below; one up to the query's otherwise) whose
every configuration the query selects is a selected key, whatever its values (Select(indices, length - 1,
EQ)). A column is the SOp's value as tracr spells it: exactly, else as tracr computed it in floats
(``-0.19999999999999996`` for -1/5) or printed a tuple; which column stands for a value is the
induction's own choice, checked against the weights at every step (a wrong one leaves a radius of 1).

The proof at n covers every input of every length 1..n at once; with ``exact`` (a program counting every
key, :func:`by_length`: tracr's ``length``, a SelectorWidth of a TRUE Select) every input of the length n
alone, where every position 1..n is present and a SelectorWidth selecting every key is n, so that
``length - indices`` takes one value per position; its prover and checker run every length 1..N* so.
:func:`prove_every_input` runs it.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any, Iterator

from flint import arb, arb_mat, ctx, fmpq

from attncert.exact import ParseError
from attncert.exact.rationals import rational_to_json
from attncert.proofs.checkers.programs import NONE, Program, Unsupported, Value, eq_key, means, number
from attncert.proofs.checkers.tracr.bounds import Row, as_q, ball, dev, dot, down, ends, hi, lo, project, project_ball, relu_box, share, top, up, value_out
from attncert.proofs.checkers.tracr.model import Model, _Double, _spells
from attncert.proofs.checkers.values import value

#: Working precision of the balls (bits).
PRECISION = 128
#: Bisections of an MLP block's input box where a hidden unit's sign is undecided.
SPLITS = 8
#: Pairs of means (and joint assignments) listed at most to prune configurations no input presents.
MAX_JOINT = 1 << 14
#: A bound past 2^HUGE fails the run (a radius that large decides nothing).
HUGE = 64
#: Query-key configuration pairs of one head, at most.
MAX_PAIRS = 1 << 22
#: Query-key configuration pairs of all the inductions one proof or check runs (:func:`charge`), at most: a length-
#: by-length proof runs one induction a length, each bounded by MAX_PAIRS a head, so a model of many positions
#: could otherwise hold a check for hours (about 8 us a pair). tracr's library needs a few thousand a run.
MAX_TOTAL_PAIRS = 1 << 24
#: Additions the enumeration of numerical means may take in one induction, at most (a hostile value set of
#: thousands of numbers at a long length would otherwise cost |values| x MAX_VALUES x n per query).
MAX_SUMS = 1 << 20


def _plain(v: Value) -> Any:
    """A tagged value as the checker's model holds values (str, bool, fmpq, None)."""
    if v == NONE:
        return None
    if v[0] == "q":
        return fmpq(v[1], v[2])
    return v[1] if v[0] in ("s", "b") else v


class Layout:
    """The residual columns' owners and the exact encodings of the invariant."""

    def __init__(self, model: Model, prog: Program):
        self.m, self.prog = model, prog
        sops = sorted((s for s, n in prog.nodes.items() if n["op"] != "select"), key=len, reverse=True)
        self.owner: dict[int, str] = {}
        self.aux: dict[str, int] = {}  # SelectorWidth -> its attention output column
        self._spelt: dict[tuple[str, Value], int] = {}
        self.columns: dict[str, list[int]] = {}
        bos, pad = f"tokens:{model.bos}", f"tokens:{model.pad}"
        for c, label in enumerate(model.labels):
            if label in ("one", bos, pad):
                continue
            if label.startswith("tokens:"):
                o = "tokens"
            elif label.startswith("indices:"):
                o = "indices"
            else:
                o = next((s for s in sops if label == s or label.startswith(s + ":") or label == f"{s}_selector_width_attn_output"), None)
                if o is None:
                    raise Unsupported(f"the residual column {label!r:.40} belongs to no SOp of the program")
                if label == f"{o}_selector_width_attn_output":
                    self.aux[o] = c
                    self.owner[c] = o
                    continue
            self.owner[c] = o
            self.columns.setdefault(o, []).append(c)
        rows = dict(model.row_of)
        tok = _dense(model.token_embed)
        self.vocab = [t for t, _ in model.row_of if not _same(t, model.bos) and not _same(t, model.pad)]
        embs = [tok[r] for t, r in model.row_of]
        self.const: Row = {c: x for c, x in embs[0].items() if all(e.get(c, 0) == x for e in embs)}
        self.token_rows = {_key(t): tok[r] for t, r in model.row_of}
        self.bos_row = _add(tok[rows_of(model, model.bos)], _dense(model.pos_embed)[0])
        self.pos = _dense(model.pos_embed)
        for c in self.const:
            if c in self.owner:
                raise Unsupported(f"column {model.labels[c]!r:.40} is both an owner's and every token's")
        for o, cols in self.columns.items():
            if o not in ("tokens", "indices") and any(x != 0 for p in self.pos for c, x in p.items() if c in cols):
                raise Unsupported(f"the positional embedding writes the columns of {o!r:.40}")
        # A configuration's centre holds the position's row only when the step reads the position (an ``indices``
        # column), and a token's row (less the shared columns) only when it reads a ``tokens`` column: so a
        # position may write the ``indices`` columns alone, and a token, beyond the shared columns, its own
        # alone; else a step reading that column (``one``, BOS's, another owner's) would miss the entry.
        for p, row in enumerate(self.pos[1:], start=1):
            stray = next((c for c, x in row.items() if x != 0 and self.owner.get(c) != "indices"), None)
            if stray is not None:
                raise Unsupported(f"the positional embedding of position {p} writes column {model.labels[stray]!r:.40}, which is no indices column")
        for t in self.vocab:
            row = self.token_rows[_key(t)]
            stray = next((c for c in sorted(set(row) | set(self.const)) if row.get(c, 0) != self.const.get(c, 0) and self.owner.get(c) != "tokens"), None)
            if stray is not None:
                raise Unsupported(f"the embedding of token {t!r:.20} writes column {model.labels[stray]!r:.40}, which is no token column")

    def enc(self, o: str, v: Value, aux: fmpq | dict[int, fmpq] | None = None, decoded: bool = True) -> Row:
        """enc_o(v) (module docstring); ``aux`` the centre a SelectorWidth's head writes for this v."""
        out: Row = {}
        if o == "tokens":
            return {c: x for c, x in self.token_rows[_key(_plain(v))].items() if self.const.get(c, 0) != x}
        if aux is not None:
            out.update(aux if isinstance(aux, dict) else {self.aux[o]: aux})
        if not decoded:
            return _nz(out)
        cols = self.columns.get(o, [])
        if self.prog.nodes[o]["encoding"] == "numerical":
            x = number(v)
            if x is None or len(cols) != 1:
                raise Unsupported(f"{o!r:.40}: a numerical column cannot hold {v!r:.30}")
            out[cols[0]] = out.get(cols[0], fmpq(0)) + x
            return _nz(out)
        if v == NONE:
            return _nz(out)
        c = self._column(o, v, cols)
        out[c] = out.get(c, fmpq(0)) + 1
        return _nz(out)

    def _column(self, o: str, v: Value, cols: list[int]) -> int:
        """The one column ``o:value`` spelling v (remembered: the induction asks for it again and again)."""
        if (o, v) not in self._spelt:
            pv = _plain(v)
            found = [c for c in cols if _spells(self.m.labels[c][len(o) + 1 :], pv)]
            if not found:  # tracr spells what it computed in floats, or a tuple as Python prints it
                found = [c for c in cols if _loosely(self.m.labels[c][len(o) + 1 :], v)]
            if len(found) != 1:
                raise Unsupported(f"{o!r:.40} takes {v!r:.30}, which has {'no' if not found else 'more than one'} column")
            self._spelt[o, v] = found[0]
        return self._spelt[o, v]


def _loosely(suffix: str, v: Value) -> bool:
    """Whether tracr's label spells v as tracr computed it: a number within 2^-40 (relative) of the float in the
    label (tracr computes -1 + 4/5 as -0.19999999999999996), a tuple as Python prints the tuple of its values.
    Choosing the column of a SOp's value is the induction's own encoding, checked against the weights at every
    step (a wrong column leaves a radius of 1 there): any choice is sound, a good one needed to prove."""
    if v[0] == "q":
        try:
            x = Fraction(float(suffix))
        except ValueError:
            return False
        q = Fraction(v[1], v[2])
        return abs(x - q) <= max(abs(q), Fraction(1)) / 2**40
    return v[0] == "t" and suffix == _printed(v)


def _printed(v: Value) -> str:
    """A value as Python prints it inside a tuple (tracr's labels of tuple values)."""
    if v[0] == "t":
        inner = [_printed(x) for x in v[1]]
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
    if v[0] == "q":
        return str(v[1]) if v[2] == 1 else repr(v[1] / v[2])
    return "None" if v == NONE else repr(v[1])


def rows_of(model: Model, t: Any) -> int:
    row = next((r for u, r in model.row_of if _same(u, t)), None)
    if row is None:
        raise ParseError(f"the token {t!r:.20} (BOS) has no embedding row")
    return row


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _key(v: Any) -> tuple[str, Any]:
    return (type(v).__name__, str(v))


def _dense(m: Any) -> list[Row]:
    r, _, w, _ = m
    rows: list[Row] = [{} for _ in range(r)]
    for (i, j), x in w.items():
        rows[i][j] = x
    return rows


def _nz(r: Row) -> Row:
    return {c: x for c, x in r.items() if x != 0}


def _add(a: Row, b: Row) -> Row:
    out = dict(a)
    for c, x in b.items():
        out[c] = out.get(c, fmpq(0)) + x
    return _nz(out)


class Config:
    """A position (None: not read) and a value of each owner read, with the row's centre and radius."""

    __slots__ = ("p", "vals", "centre", "radius")

    def __init__(self, p: int | None, vals: dict[str, Value], centre: Row, radius: Row):
        self.p, self.vals, self.centre, self.radius = p, vals, centre, radius


class Induction:
    """The induction of the module docstring at length bound n."""

    def __init__(self, model: Model, prog: Program, vocab: list[Any], n: int, tol: fmpq, exact: bool = False):
        self.m, self.prog, self.n, self.tol, self.exact = model, prog, n, tol, exact
        self.lay = Layout(model, prog)
        if any(not any(_same(t, u) for u in self.lay.vocab) for t in vocab):
            raise ParseError("a token of the vocabulary has no embedding row")
        #: owner -> value -> radius of its columns (a SelectorWidth's aux column among them)
        self.rad: dict[str, dict[Value, Row]] = {"tokens": {_tag(t): {} for t in vocab}}
        self.aux_centre: dict[str, dict[int, dict[int, fmpq]]] = {}  # SelectorWidth -> w -> its aux centre (columns)
        self.decoded: set[str] = set()
        self.bos = [ball(self.lay.bos_row.get(c, fmpq(0)), fmpq(0)) for c in range(model.width)]
        self.steps: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.undefined: set[str] = set()
        self._pairs: dict[tuple[str, str], set[tuple[Value, Value]] | None] = {}  # :meth:`_joint_means`
        self._mean_sets: dict[tuple[Value, ...], list[Value]] = {}  # :meth:`_means`, by the values averaged
        self._summed = 0  # additions :meth:`_means` has taken, against MAX_SUMS
        #: (step, query position, value) -> (the largest radius, the rows of the configuration giving it): :meth:`_weak`
        self.weak: dict[tuple[str, Value], tuple[fmpq, list[tuple[int | None, dict[str, Value]]]]] = {}

    # -- configurations --------------------------------------------------------------------------

    def _weak(self, step: str, o: str, v: Value, r: fmpq, qc: Config, keys: list[Config], rival: Config | None = None, scored: set[str] = frozenset()) -> None:
        """Remember, per step, query position and value, the configuration where the bound is largest: the rows
        (position, values of the SOps read) of the query with o = v, of its weakest selected keys, and of its
        strongest unselected key (only the SOps its score reads: which value it holds is free). The prover
        builds inputs presenting them (:mod:`proofs.tracr.witnesses`); nothing recorded depends on this."""
        old = self.weak.get((step, qc.p, v))
        if old is None or r > old[0]:
            rows = [(qc.p, {**qc.vals, o: v})] + [(k.p, dict(k.vals)) for k in keys]
            if rival is not None:
                rows.append((rival.p, {x: y for x, y in rival.vals.items() if x in scored}))
            self.weak[step, qc.p, v] = (r, rows)

    def values(self, o: str) -> list[Value]:
        if o not in self.rad:
            raise Unsupported(f"{o!r:.40} is read before a layer computes it")
        return sorted(self.rad[o], key=repr)

    def configs(self, owners: list[str], positions: bool) -> Iterator[Config]:
        """Every configuration of the owners' values (and the position, when read): its row's centre and radius,
        the SOps computed from the position alone (static: ``1 - indices``) included at their value there."""
        ps: list[int | None] = list(range(1, self.n + 1)) if positions else [None]
        fixed = [o for o in self.rad if o in self.prog.static and o in self.lay.columns]
        joint = [(i, k, self._joint_means(a, b)) for i, a in enumerate(owners) for k, b in enumerate(owners) if i < k]
        joint = [(i, k, pairs) for i, k, pairs in joint if pairs is not None]
        for p in ps:
            base, moved = (_add(self.lay.const, self.lay.pos[p]), {}) if p is not None else (dict(self.lay.const), {})
            for o in fixed if p is not None else []:
                v = self.prog.at(o, p)
                base = _add(base, self.encode(o, v))
                for c, r in self.rad[o][v].items():
                    moved[c] = moved.get(c, fmpq(0)) + r
            for combo in itertools.product(*(self.values(o) for o in owners)):
                if any((combo[i], combo[k]) not in pairs for i, k, pairs in joint):
                    continue  # two means of one selection that no input gives together
                centre, radius = base, dict(moved)
                for o, v in zip(owners, combo):
                    centre = _add(centre, self.encode(o, v))
                    for c, r in self.rad[o][v].items():
                        radius[c] = radius.get(c, fmpq(0)) + r
                yield Config(p, dict(zip(owners, combo)), centre, radius)

    def _joint_means(self, a: str, b: str) -> set[tuple[Value, Value]] | None:
        """The pairs of values two numerical Aggregates of one selection (the same Select, or two with the same
        arguments and Comparison) take together at a query, when few enough to list: with the same selected keys S,
        (mean_S W_a, mean_S W_b) averages |S| = 1..n pairs (W_a, W_b) that one position holds together (:meth:`_joint`),
        or is (default_a, default_b) when S is empty. None: not such a pair, or too many to list (no pruning)."""
        key = (a, b)
        if key not in self._pairs:
            self._pairs[key] = None
            na, nb = self.prog.nodes[a], self.prog.nodes[b]
            if na["op"] == nb["op"] == "aggregate" and na["encoding"] == nb["encoding"] == "numerical" and self._same_selection(na["args"][0], nb["args"][0]):
                at_once = self._joint([na["args"][1], nb["args"][1]])
                nums = None if at_once is None else {(number(x), number(y)) for x, y in at_once}
                if nums is not None and all(x is not None and y is not None for x, y in nums):
                    sums, out = {(fmpq(0), fmpq(0))}, set()
                    for w in range(1, self.n + 1):
                        sums = {(s + x, t + y) for s, t in sums for x, y in nums}
                        if len(sums) > MAX_JOINT:
                            break
                        out |= {(_tag(s / w), _tag(t / w)) for s, t in sums}
                    else:
                        out.add((na["default"], nb["default"]))
                        self._pairs[key] = out
        return self._pairs[key]

    def _same_selection(self, s: str, t: str) -> bool:
        """Whether two Selects select the same keys at every query: one node, or the same arguments and Comparison."""
        ns, nt = self.prog.nodes[s], self.prog.nodes[t]
        return s == t or ns["args"] == nt["args"] and ns["predicate"] is not None and ns["predicate"] == nt["predicate"]

    def _joint(self, labels: list[str]) -> set[tuple[Value, ...]] | None:
        """The tuples of values the SOps ``labels`` take together at one position: their ancestors through maps down to
        tokens, the position and any other SOp (taken as free over its value set), every assignment of those evaluated
        through the maps' tables; None past MAX_JOINT assignments."""
        leaves: list[str] = []
        seen: set[str] = set()

        def walk(x: str) -> None:
            if x in seen:
                return
            seen.add(x)
            node = self.prog.nodes[x]
            if x in self.prog.static or node["op"] not in ("map", "sequence_map"):
                if x not in self.prog.static:
                    leaves.append(x)
                return
            for y in node["args"]:
                walk(y)

        for x in labels:
            walk(x)
        static = any(x in self.prog.static for x in seen)
        sizes = [len(self._set_of(x)) for x in leaves]
        if math.prod(sizes) * (self.n if static else 1) > MAX_JOINT:
            return None
        out = set()
        for p in range(1, self.n + 1) if static else [None]:
            for combo in itertools.product(*(self._set_of(x) for x in leaves)):
                known = dict(zip(leaves, combo))

                def val(x: str) -> Value:
                    if x not in known:
                        known[x] = self.prog.at(x, p) if x in self.prog.static else self.prog.apply(x, tuple(val(y) for y in self.prog.nodes[x]["args"]))
                    return known[x]

                try:
                    out.add(tuple(val(x) for x in labels))
                except Unsupported:  # a table without the combination: no input presents it
                    continue
        return out

    def encode(self, o: str, v: Value) -> Row:
        if o in self.aux_centre:
            return self.lay.enc(o, v, self.aux_centre[o][int(v[1])], o in self.decoded)
        return self.lay.enc(o, v)

    def arg(self, label: str, cfg: Config) -> Value:
        if label in self.prog.static:
            return self.prog.at(label, cfg.p)
        return cfg.vals[label]

    def read(self, cols: set[int], where: str) -> tuple[list[str], bool]:
        """The dynamic owners of the columns read, and whether the position is read."""
        owners, positions = set(), False
        for c in cols:
            o = self.lay.owner.get(c)
            if o is None:
                continue
            if o == "indices" or o in self.prog.static:
                positions = True
            else:
                owners.add(o)
        return sorted(owners), positions

    def dyn(self, *labels: str | None) -> tuple[set[str], bool]:
        out, positions = set(), False
        for x in labels:
            if x is None:
                continue
            if x in self.prog.static or self.prog.nodes[x]["op"] == "indices":
                positions = True
            else:
                out.add(x)
        return out, positions

    # -- the induction ---------------------------------------------------------------------------

    def run(self) -> None:
        with ctx.workprec(PRECISION):
            for l, layer in enumerate(self.m.layers):
                self.attention(l, layer)
                self.mlp(l, layer)
            self.decide()

    def attention(self, l: int, layer: dict[str, Any]) -> None:
        k = self.m.key_size
        wo = layer["linear"]
        new_bos = list(self.bos)
        for h in range(self.m.heads):
            block = range(h * k, (h + 1) * k)
            writes = sorted({j for (i, j) in wo[2] if i in block})
            reads_v = {i for (i, j) in layer["value"][2] if j in block}
            if not writes or not reads_v and not any(j in block for j in layer["value"][3]):
                continue
            for c, x in self.head(l, h, layer, list(block), writes):
                new_bos[c] = new_bos[c] + x
        for j, x in wo[3].items():
            new_bos[j] = new_bos[j] + arb(x)
            self.problems.append(f"layer {l} attention: a nonzero output bias (column {self.m.labels[j]!r:.30}), which the invariant does not carry")
        self.bos = new_bos

    def head(self, l: int, h: int, layer: dict[str, Any], block: list[int], writes: list[int]) -> list[tuple[int, arb]]:
        """One head's step (module docstring); returns its output at the BOS query, column by column."""
        families = {self.lay.owner.get(c) for c in writes}
        if len(families) != 1 or None in families:
            raise Unsupported(f"layer {l} head {h} writes columns of {sorted(map(str, families))!r:.60}, not of one SOp")
        (A,) = families
        node = self.prog.nodes[A]
        width = node["op"] == "selector_width"
        if node["op"] not in ("aggregate", "selector_width") or A in self.rad:
            raise Unsupported(f"layer {l} head {h} writes {A!r:.40}, which is no Aggregate or SelectorWidth computed here")
        if width != (writes == [self.lay.aux.get(A)]):
            raise Unsupported(f"layer {l} head {h}: a SelectorWidth's head writes its attention column alone")
        if not width:  # every column of A's encoding is measured, those W_O leaves at 0 included (a value's column
            writes = sorted(set(writes) | set(self.lay.columns.get(A, [])))  # the head never writes: radius 1 there)
        where = f"layer {l} head {h} ({A})"
        sel = node["args"][0]
        K, Q = self.prog.nodes[sel]["args"]
        V = None if width else node["args"][1]
        wq, wk, wv, wo = layer["query"], layer["key"], layer["value"], layer["linear"]
        bset = set(block)
        q_read = {i for (i, j) in wq[2] if j in bset}
        k_read = {i for (i, j) in wk[2] if j in bset}
        v_read = {i for (i, j) in wv[2] if j in bset}
        q_own, q_pos = self.read(q_read, where)
        k_own, k_pos = self.read(k_read | v_read, where)
        dq, pq = self.dyn(Q)
        dk, pk = self.dyn(K, V)
        causal = self.m.causal
        queries = list(self.configs(sorted(set(q_own) | dq), q_pos or pq or causal))
        keys = list(self.configs(sorted(set(k_own) | dk), k_pos or pk or causal))
        if len(queries) * len(keys) > MAX_PAIRS:
            raise Unsupported(f"{where}: {len(queries) * len(keys):,} query-key configurations, over {MAX_PAIRS:,}")
        scale = arb(self.m.scale)
        qrows = project(queries, wq, block)
        krows = project(keys, wk, block)
        vo = value_out(project(keys, wv, block), wo, block, writes)
        vc = value_out(project(keys, wv, block, centre=True), wo, block, writes)
        bos_row = self.bos
        qb, kb = project_ball(bos_row, wq, block), project_ball(bos_row, wk, block)
        (vb,) = value_out([project_ball(bos_row, wv, block)], wo, block, writes)
        S = (arb_mat(qrows) * arb_mat(krows).transpose()).tolist() if queries and keys else [[] for _ in queries]
        s_bos = [dot(q, kb) / scale for q in qrows]
        mask = arb(self.m.mask)
        n = self.n
        one = arb(1)
        kvals = [self.arg(K, c) for c in keys]
        wvals = [self.arg(V, c) for c in keys] if V else None
        nw = range(len(writes))
        kend = [[ends(x) for x in v] for v in vo]  # each key's value, as [lo, hi] per column
        cmid = [[self.mid_of(x) for x in v] for v in vc]
        bend = [ends(x) for x in vb]
        distinct = self._distinct(K)
        rad: dict[Value, Row] = {}
        gap_bos, gap_unsel, spread, leak = None, None, fmpq(0), fmpq(0)

        scored = set(self.read(k_read, where)[0]) | self.dyn(K)[0]
        if V and node["encoding"] == "categorical" and len(self._set_of(V)) > 1 and not self._one_value(sel, K, V):
            # the bound is per value of W (a defined input's selected keys hold one): keys holding two values
            # selected together are RASP's mean of numbers, which no one-hot column holds, or undefined
            if len({v for v in self._set_of(V) if v[0] == "q"}) > 1:
                raise Unsupported(f"{where}: its selected keys may hold different numbers, which RASP averages and a one-hot move cannot")
            self.undefined.add(f"Aggregate {A!r} may select keys holding different values, whose mean RASP's evaluation does not define")

        def note(v: Value, r: list[fmpq], qc: Config, weakest: int | None, rival: int | None) -> None:
            old = rad.setdefault(v, {})
            for c, x in zip(writes, r):
                if x > old.get(c, -1):
                    old[c] = x
            chosen = [keys[weakest]] if weakest is not None else []
            self._weak(f"layer {l} head {h}", A, v, max(r, default=fmpq(0)), qc, chosen, None if rival is None else keys[rival], scored)

        def hull(js: list[int], bos: bool) -> list[tuple[fmpq, fmpq]] | None:
            """Per column, the lowest and highest value of the keys js (and BOS's)."""
            ends = [kend[j] for j in js] + ([bend] if bos else [])
            return [(min(e[i][0] for e in ends), max(e[i][1] for e in ends)) for i in nw] if ends else None

        def far(ext: list[tuple[fmpq, fmpq]] | None, t: list[fmpq]) -> list[fmpq]:
            """B: the largest distance of a value of the hull ext from the target t, per column."""
            return [max(ext[i][1] - t[i], t[i] - ext[i][0], fmpq(0)) for i in nw] if ext else [fmpq(0)] * len(writes)

        def bound(A_: list[fmpq], lam: arb, B_: list[fmpq]) -> list[fmpq]:
            """(1 - lambda) A + lambda B <= A + lambda (B - A)^+, per column (module docstring)."""
            return [up(hi(arb(A_[i]) + lam * arb(max(B_[i] - A_[i], fmpq(0))))) for i in nw]

        def split(A_: list[fmpq], shares: tuple[arb, arb, arb], B_b: list[fmpq], B_u: list[fmpq]) -> list[fmpq]:
            """A + lambda_B (B_B - A) + lambda_U (B_U - A) at its largest over lambda_B <= l_B, lambda_U <= l_U,
            lambda_B + lambda_U <= l: the larger excess takes its share first (module docstring)."""
            l_b, l_u, l_all = (hi(x) for x in shares)  # the optimum grows with each limit: their upper ends bound it
            out = []
            for i in nw:
                (e1, l1), (e2, l2) = sorted([(max(B_b[i] - A_[i], fmpq(0)), l_b), (max(B_u[i] - A_[i], fmpq(0)), l_u)], key=lambda e: e[0], reverse=True)
                first = min(l1, l_all)
                out.append(up(A_[i] + first * e1 + min(l2, l_all - first) * e2))
            return out

        if width:  # T(w) = (m_B + w m_K)/(w + 1): m_B BOS's value, m_K the midrange of the keys' value centres
            m_b = [self.mid_of(vb[i]) for i in nw]
            m_k = [(min(m[i] for m in cmid) + max(m[i] for m in cmid)) / 2 if keys else fmpq(0) for i in nw]
            self.aux_centre[A] = {w: {c: (m_b[i] + w * m_k[i]) / (w + 1) for i, c in enumerate(writes)} for w in range(n + 1)}
            hh = [abs(m_b[i] - m_k[i]) / 2 for i in nw]
            r_bos = [max(bend[i][1] - m_b[i], m_b[i] - bend[i][0]) for i in nw]
            r_key = [[max(e[i][1] - m_k[i], m_k[i] - e[i][0]) for i in nw] for e in kend]
        for qi, qc in enumerate(queries):
            qv = self.arg(Q, qc)
            sb = s_bos[qi]
            sb_lo, sb_hi = ends(sb)
            chosen: dict[Any, list[int]] = {}
            others: list[int] = []  # unselected keys, masked ones included
            u_hi: list[fmpq] = []  # their scores' upper ends
            own = [True, True]  # every key configuration the query's own position may present: selected, unselected
            placed: dict[int, bool] = {}  # a key position: whether every key configuration there is selected
            every = True  # every key the query sees is selected
            for j, kc in enumerate(keys):
                if causal and kc.p > qc.p:
                    others.append(j)
                    u_hi.append(hi(mask))
                    continue
                picked = self.prog.selects(sel, kvals[j], qv)
                mine = self._consistent(qc, kc)
                if mine:
                    own = [own[0] and picked is True, own[1] and picked is False]
                if kc.p is not None:
                    placed[kc.p] = placed.get(kc.p, True) and picked is True
                every = every and picked is True
                if picked is None:
                    self.undefined.add(f"Select {sel!r} may apply its comparison to None, on which RASP's evaluation raises")
                    continue
                if picked:
                    group = wvals[j] if V and node["encoding"] == "categorical" and A in self.lay.columns and self._moves(A) else "all"
                    chosen.setdefault(group, []).append(j)
                else:
                    others.append(j)
                    u_hi.append(hi(S[qi][j] / scale))
            u = max(u_hi) if others else None
            rival = others[u_hi.index(u)] if others else None  # the unselected key scoring highest
            out_ext, all_ext = hull(others, False), hull(others, True)
            # a key every input presents (its position: any of an exact length, else one up to the query's) selected
            # whatever its values, or the own key, or a rank: the query selects some key
            present = [p for p, all_of in placed.items() if all_of and (self.exact or qc.p is not None and p <= qc.p)]
            selects_self = own[0] or bool(present) or self._rank(sel, K, Q)
            if width:
                members = [j for js in chosen.values() for j in js]
                keys_at = qc.p if causal else n  # the keys a query sees: n, or its position under the mask
                top = keys_at - (1 if own[1] else 0) if members else 0
                # every key selected: the width is the number of keys, n' (n at an exact length, or under the mask)
                least = (keys_at if self.exact or causal else max(1, qc.p or 1)) if every and members else (1 if selects_self else 0)
                sel_lo = min((lo(S[qi][j] / scale) for j in members), default=None)
                sel_hi = max((hi(S[qi][j] / scale) for j in members), default=None)
                for w in range(least, top + 1):
                    T = [self.aux_centre[A][w][c] for c in writes]
                    m_lo = min(sb_lo, sel_lo) if w else sb_lo
                    m_hi = max(sb_hi, sel_hi) if w else sb_hi
                    d = arb(m_hi - m_lo)
                    # the w + 1 selected centres (BOS's m_B, the keys' m_K) average to T(w); hh half their range
                    A_ = [self._upper((d.exp() - one) * arb(hh[i] if w else 0), where) + max([r_bos[i]] + [r_key[j][i] for j in members if w]) for i in nw]
                    lam = share(self._others(u, u_hi, others, kvals, False, n - w, m_lo, None), w + 1) if others else arb(0)
                    note(("q", w, 1), bound(A_, lam, far(out_ext, T)), qc, None, rival)
                    spread, leak = max(spread, up(m_hi - m_lo)), max(leak, up(hi(lam)))
                    if u is not None:
                        g = down(m_lo - u)
                        gap_unsel = g if gap_unsel is None else min(gap_unsel, g)
                continue
            for group, js in chosen.items():
                low = {j: lo(S[qi][j] / scale) for j in js}
                weakest = min(js, key=low.__getitem__)
                m_lo = low[weakest]
                m_hi = max(hi(S[qi][j] / scale) for j in js)
                target_v = wvals[js[0]] if group != "all" else None
                enc_of = {j: self._target(A, wvals[j], writes) for j in js}
                E = [max(dev(vc[j][i], enc_of[j][i]) for j in js) for i in nw]
                hh = [(max(cmid[j][i] for j in js) - min(cmid[j][i] for j in js)) / 2 for i in nw]
                R = [max(max(kend[j][i][1] - cmid[j][i], cmid[j][i] - kend[j][i][0]) + dev(vc[j][i], cmid[j][i]) for j in js) for i in nw]
                d = arb(m_hi - m_lo)
                A_ = [E[i] + self._upper((d.exp() - one) * arb(hh[i]), where) + R[i] for i in nw]
                # BOS's share and the unselected keys' apart, and together: (1 - lambda_B - lambda_U) A + lambda_B B_B + lambda_U B_U
                x_b = (arb(sb_hi) - arb(m_lo)).exp()
                x_u = self._others(u, u_hi, others, kvals, distinct, n - 1, m_lo, None)
                shares = (share(x_b, 1), share(x_u, 1), share(x_b + x_u, 1))
                bos_ext = hull([], True)
                if group == "all":  # a numerical mean: the bound holds for every value the query can receive, against each
                    for v in self._means(V, js, wvals):
                        t = self._target(A, v, writes)
                        note(v, split(A_, shares, far(bos_ext, t), far(out_ext, t)), qc, weakest, rival)
                else:
                    t = enc_of[js[0]]
                    note(target_v, split(A_, shares, far(bos_ext, t), far(out_ext, t)), qc, weakest, rival)
                lam = shares[2]
                g = down(m_lo - sb_hi)
                gap_bos = g if gap_bos is None else min(gap_bos, g)
                if u is not None:
                    g2 = down(sb_lo - u)
                    gap_unsel = g2 if gap_unsel is None else min(gap_unsel, g2)
                spread, leak = max(spread, up(m_hi - m_lo)), max(leak, up(hi(lam)))
            if not width and not (selects_self and chosen):
                default = node["default"]
                tgt = self._target(A, default, writes)
                lam0 = share(self._others(u, u_hi, others, kvals, distinct, n, sb_lo, None), 1) if others else arb(0)
                A0 = [max(bend[i][1] - tgt[i], tgt[i] - bend[i][0]) for i in nw]
                note(default, bound(A0, lam0, far(out_ext, tgt)), qc, None, rival)
                leak = max(leak, up(hi(lam0)))
                if u is not None:
                    g2 = down(sb_lo - u)
                    gap_unsel = g2 if gap_unsel is None else min(gap_unsel, g2)
        self.rad[A] = rad
        self.steps.append({
            "sublayer": f"layer {l} head {h}", "computes": A, "query_configurations": len(queries), "key_configurations": len(keys),
            "bos_gap": None if gap_bos is None else rational_to_json(gap_bos),
            "unselected_gap": None if gap_unsel is None else rational_to_json(gap_unsel),
            "spread": rational_to_json(spread), "leak": rational_to_json(leak),
            "radius": _radius_json(rad),
        })
        return list(zip(writes, self._bos_output(queries and keys, qb, kb, krows, vo, vb, scale, mask)))

    def mid_of(self, x: arb) -> fmpq:
        return fmpq(*as_q(x.mid()))

    def _moves(self, A: str) -> bool:
        return self.prog.nodes[A]["encoding"] == "categorical"

    def _means(self, V: str, js: list[int], wvals: list[Value]) -> list[Value]:
        """Every mean of 1..n of the values at the keys js (:func:`~proofs.checkers.programs.means`), once per
        set of values, within MAX_SUMS additions in the whole induction."""
        vals = tuple(sorted({wvals[j] for j in js}, key=repr))
        if vals not in self._mean_sets:
            out = means(list(vals), self.n, NONE, self._afford)
            if out is None:
                raise Unsupported(f"the means of {V!r:.40} are too many to enumerate")
            self._mean_sets[vals] = out
        return self._mean_sets[vals]

    def _afford(self, count: int) -> bool:
        if self._summed + count > MAX_SUMS:
            return False
        self._summed += count
        return True

    def _target(self, A: str, v: Value, writes: list[int]) -> list[fmpq]:
        e = self.lay.enc(A, v)
        return [e.get(c, fmpq(0)) for c in writes]

    def _upper(self, x: arb, where: str) -> fmpq:
        """An upper bound of the ball; past 2^HUGE (scores far apart: e^Delta) the bound is useless, so the run
        fails there (a problem) and carries 2^HUGE on."""
        if x < 2**HUGE:
            return hi(x)
        self.problems.append(f"{where}: a bound over 2^{HUGE}")
        return fmpq(2**HUGE)

    def _consistent(self, qc: Config, kc: Config) -> bool:
        """Whether the key configuration kc may be the one the query's own position presents: the same
        position (when both read it) and the same value of every SOp both read (one row of the residual)."""
        if qc.p is not None and kc.p is not None and qc.p != kc.p:
            return False
        return all(kc.vals[o] == v for o, v in qc.vals.items() if o in kc.vals)

    def _others(self, u: fmpq | None, u_hi: list[fmpq], others: list[int], kvals: list[Value], distinct: bool, count: int, m_lo: fmpq, s_bos: fmpq | None) -> arb:
        """x >= (BOS's weight, when s_bos is given, + the unselected keys' weights) / e^{m_lo}: e^{s_B - m_lo} +
        count e^{u - m_lo}, at most ``count`` unselected keys; when K takes distinct values at distinct
        positions, at most one key of each value of K, so the sum of the ``count`` largest of
        e^{u_v - m_lo} over K's values v (u_v the highest score of an unselected key holding v)."""
        x = (arb(s_bos) - arb(m_lo)).exp() if s_bos is not None else arb(0)
        if u is None or count <= 0:
            return x
        if not distinct:
            return x + (arb(u) - arb(m_lo)).exp() * count
        best: dict[Value, fmpq] = {}
        for j, h in zip(others, u_hi):
            if h > best.get(kvals[j], h - 1):
                best[kvals[j]] = h
        for h in sorted(best.values(), reverse=True)[:count]:
            x += (arb(h) - arb(m_lo)).exp()
        return x

    def _rank(self, sel: str, K: str, Q: str) -> bool:
        """The rank rule: Q is ``indices``, the predicate EQ and K a rank (:meth:`_is_rank`): K is then a
        permutation of 0..n-1, so the query at index i selects the one key of rank i."""
        return self.prog.nodes[sel]["predicate"] == "EQ" and self.prog.nodes[Q]["op"] == "indices" and self._is_rank(K)

    def _is_rank(self, K: str) -> bool:
        """Whether K = SelectorWidth(Select(X, X, LT or GT)) without a causal mask, X unique within an input with
        totally ordered values: K_j is the rank of X_j among distinct values, a permutation of 0..n-1."""
        nodes = self.prog.nodes
        if self.m.causal or nodes[K]["op"] != "selector_width":
            return False
        inner = nodes[nodes[K]["args"][0]]
        X = inner["args"][0]
        kinds = {v[0] for v in self._set_of(X)}
        return inner["args"][1] == X and inner["predicate"] in ("LT", "GT") and kinds in ({"q"}, {"s"}) and self._unique(X)

    def _distinct(self, K: str) -> bool:
        """Whether K takes distinct values at distinct positions of any input (:meth:`_unique`, or a rank)."""
        return self._unique(K) or self._is_rank(K)

    def _one_value(self, sel: str, K: str, V: str) -> bool:
        """Whether the keys a query selects within one input hold one value of V (the compiled checker's rules):
        Select(K, Q, EQ), no two of K's values equal as EQ compares them, and K distinct at distinct positions
        (one key at most) or K determining V; or a static selection selecting one key at most at every query."""
        if self.prog.nodes[sel]["predicate"] == "EQ":
            ks = self._set_of(K)
            if len({eq_key(x) for x in ks}) == len(ks) and (self._distinct(K) or self._determines(K, V)):
                return True
        return self._one_key(sel)

    def _determines(self, a: str, v: str) -> bool:
        """Whether, within any one input, positions where a holds equal values hold equal values of v: v is a;
        v a map of SOps a determines; a a map whose table separates an argument that determines v; or a a rank
        SelectorWidth(Select(X, X, LT or GT)) without a causal mask, X totally ordered, X determining v."""
        if a == v:
            return True
        nv, na = self.prog.nodes[v], self.prog.nodes[a]
        if nv["op"] in ("map", "sequence_map") and all(w not in self.prog.static and self._determines(a, w) for w in nv["args"]):
            return True
        if na["op"] in ("map", "sequence_map") and a not in self.prog.static:
            if any(self._separates(a, k) and self._determines(w, v) for k, w in enumerate(na["args"])):
                return True
        if na["op"] == "selector_width" and not self.m.causal:
            inner = self.prog.nodes[na["args"][0]]
            X = inner["args"][0]
            kinds = {x[0] for x in self._set_of(X)}
            if inner["args"][1] == X and inner["predicate"] in ("LT", "GT") and kinds in ({"q"}, {"s"}):
                return self._determines(X, v)
        return False

    def _separates(self, a: str, k: int) -> bool:
        """Whether map a's table, on the product of its arguments' value sets, gives equal values only for equal
        k-th arguments (at most MAX_JOINT tuples: past it, not shown)."""
        sets = [self._set_of(w) for w in self.prog.nodes[a]["args"]]
        if math.prod(map(len, sets)) > MAX_JOINT:
            return False
        seen: dict[Value, Value] = {}
        try:
            return all(seen.setdefault(self.prog.apply(a, combo), combo[k]) == combo[k] for combo in itertools.product(*sets))
        except Unsupported:
            return False

    def _one_key(self, sel: str) -> bool:
        """Whether a static selection selects one key at most for every query position 1..n (keys k <= q under
        a causal mask): a static value is the same at every length."""
        if sel not in self.prog.static:
            return False
        K, Q = self.prog.nodes[sel]["args"]
        n = self.n
        return all(
            sum(1 for k in range(1, (q if self.m.causal else n) + 1) if self.prog.selects(sel, self.prog.at(K, k), self.prog.at(Q, q)) is True) <= 1
            for q in range(1, n + 1)
        )

    def _set_of(self, X: str) -> list[Value]:
        if X in self.prog.static:
            return sorted({self.prog.at(X, p) for p in range(1, self.n + 1)}, key=repr)
        return self.values(X)

    def _unique(self, X: str) -> bool:
        """Whether X takes distinct values at distinct positions of any input: ``indices``, or a map whose table,
        on the product of its arguments' value sets, gives equal values only for equal values of an argument
        that is unique itself."""
        node = self.prog.nodes[X]
        if X in self.prog.static:  # its value at each position, read from the tables
            at = [self.prog.at(X, p) for p in range(1, self.n + 1)]
            return len(set(at)) == len(at)
        if node["op"] not in ("map", "sequence_map"):
            return False
        sets = [self._set_of(a) for a in node["args"]]
        for k, a in enumerate(node["args"]):
            if not self._unique(a):
                continue
            seen: dict[Value, Value] = {}
            try:
                if all(seen.setdefault(self.prog.apply(X, combo), combo[k]) == combo[k] for combo in itertools.product(*sets)):
                    return True
            except Unsupported:  # a combination no input presents (static arguments at two positions): not decided so
                continue
        return False

    def _bos_output(self, any_keys: Any, qb: list[arb], kb: list[arb], krows: list[list[arb]], vo: list[list[arb]], vb: list[arb], scale: arb, mask: arb) -> list[arb]:
        """The head's output at the BOS query: v_B within the leak, and within the hull of every value."""
        sbb = dot(qb, kb) / scale
        if not any_keys:
            return vb
        sk = [mask if self.m.causal else dot(qb, k) / scale for k in krows]
        ell = share((top(sk) - sbb).exp() * self.n, 1)
        out = []
        for i, x in enumerate(vb):
            spread_i = max(dev(v[i], self.mid_of(x)) for v in vo)
            near = ball(self.mid_of(x), up(hi(arb(dev(x, self.mid_of(x))) + ell * arb(spread_i + dev(x, self.mid_of(x))))))
            lows = [lo(v[i]) for v in vo] + [lo(x)]
            highs = [hi(v[i]) for v in vo] + [hi(x)]
            hull = arb(min(lows)).union(arb(max(highs)))
            out.append(near if hi(near) - lo(near) <= hi(hull) - lo(hull) else hull)
        return out

    def mlp(self, l: int, layer: dict[str, Any]) -> None:
        w1, w2 = layer["linear_1"], layer["linear_2"]
        if not w2[2] and not w2[3]:
            return
        family: dict[int, str] = {}
        for (u, c) in w2[2]:
            o = self.lay.owner.get(c)
            if o is None:
                raise Unsupported(f"layer {l} MLP writes column {self.m.labels[c]!r:.40}, which no SOp owns")
            if family.setdefault(u, o) != o:
                raise Unsupported(f"layer {l} MLP: a hidden unit writes two SOps")
        for c in w2[3]:
            self.problems.append(f"layer {l} MLP: a nonzero output bias (column {self.m.labels[c]!r:.30}), which the invariant does not carry")
        new_bos = self._mlp_ball(self.bos, w1, w2)
        for o in sorted(set(family.values())):
            units = sorted(u for u, f in family.items() if f == o)
            self._block(l, o, units, w1, w2)
        self.bos = new_bos

    def _block(self, l: int, o: str, units: list[int], w1: Any, w2: Any) -> None:
        node = self.prog.nodes[o]
        where = f"layer {l} MLP ({o})"
        uset = set(units)
        read = {i for (i, u) in w1[2] if u in uset}
        owners, positions = self.read(read, where)
        if node["op"] == "selector_width":
            if o not in self.aux_centre or o in self.decoded:
                raise Unsupported(f"{where} decodes {o!r:.40} before its head, or twice")
            owners = sorted(set(owners) | {o})
        elif node["op"] in ("map", "sequence_map"):
            if o in self.rad:
                raise Unsupported(f"{where}: {o!r:.40} is computed twice")
            d, p = self.dyn(*node["args"])
            owners, positions = sorted(set(owners) | d), positions or p
        else:
            raise Unsupported(f"{where} writes {o!r:.40}, a {node['op']}")
        # every column of o's encoding is measured, those no unit writes included (they stay 0: a value whose
        # column the block leaves out is 1 away from it there, not unmeasured)
        cols = sorted({c for (u, c) in w2[2] if u in uset} | set(self.lay.columns.get(o, [])))
        W1 = {u: {} for u in units}
        for (i, u), x in w1[2].items():
            if u in uset:
                W1[u][i] = x
        B1 = {u: w1[3].get(u, fmpq(0)) for u in units}
        W2 = {u: {} for u in units}
        for (u, c), x in w2[2].items():
            if u in uset:
                W2[u][c] = x
        rad: dict[Value, Row] = {}
        count, pieces = 0, 0
        for cfg in self.configs(owners, positions):
            count += 1
            if node["op"] == "selector_width":
                v = cfg.vals[o]
                target = self.lay.enc(o, v)  # its own columns; its aux column keeps its centre
                before = self.rad[o][v]
            else:
                v = self.prog.apply(o, tuple(self.arg(a, cfg) for a in node["args"]))
                target = self.lay.enc(o, v)
                before = {}
            x0 = {i: cfg.centre.get(i, fmpq(0)) for i in read}
            r0 = {i: cfg.radius.get(i, fmpq(0)) for i in read}
            box, k = relu_box(x0, r0, W1, B1, W2, cols, SPLITS)
            pieces += k
            r = rad.setdefault(v, dict(before) if node["op"] != "selector_width" else {})
            for c in cols:
                a, b = box[c]
                t = target.get(c, fmpq(0))
                extra = up(max(abs(a - t), abs(b - t)))
                total = up(extra + before.get(c, fmpq(0))) if node["op"] == "selector_width" else extra
                if total > r.get(c, -1):
                    r[c] = total
            if node["op"] == "selector_width":
                for c, x in before.items():
                    if c not in cols and x > r.get(c, -1):
                        r[c] = x
            self._weak(f"layer {l} mlp", o, v, max(r.values(), default=fmpq(0)), cfg, [])
        if node["op"] == "selector_width":
            self.decoded.add(o)
            self.rad[o] = {v: rad.get(v, self.rad[o][v]) for v in self.rad[o]}
        else:
            self.rad[o] = rad
        self.steps.append({"sublayer": f"layer {l} mlp", "computes": o, "configurations": count, "pieces": pieces, "radius": _radius_json(self.rad[o])})

    def _mlp_ball(self, x: list[arb], w1: Any, w2: Any) -> list[arb]:
        """The MLP at the BOS row, the ball vector x: its box mapped as every block's (:func:`bounds.relu_box`)."""
        units = sorted({u for (u, _) in w2[2]})
        W1: dict[int, Row] = {u: {} for u in units}
        for (i, u), a in w1[2].items():
            if u in W1:
                W1[u][i] = a
        W2: dict[int, Row] = {u: {} for u in units}
        for (u, c), a in w2[2].items():
            W2[u][c] = a
        read = sorted({i for r in W1.values() for i in r})
        x0 = {i: self.mid_of(x[i]) for i in read}
        r0 = {i: up(dev(x[i], x0[i])) for i in read}
        cols = sorted({c for (_, c) in w2[2]})
        box, _ = relu_box(x0, r0, W1, {u: w1[3].get(u, fmpq(0)) for u in units}, W2, cols, SPLITS)
        out = list(x)
        for c in cols:
            out[c] = out[c] + arb(box[c][0]).union(arb(box[c][1]))
        for c, b in w2[3].items():
            out[c] = out[c] + arb(b)
        return out

    def decide(self) -> None:
        out = self.prog.output
        if out not in self.rad:
            raise Unsupported(f"the output {out!r:.40} is not computed by the model's layers")
        worst = None
        for v, r in sorted(self.rad[out].items(), key=lambda kv: repr(kv[0])):
            if self.m.categorical:
                pv = _plain(v)
                mine = next((c for u, c in self.m.classes if not isinstance(u, _Double) and _same_value(u, pv)), None)
                if mine is None:
                    mine = next((c for u, c in self.m.classes if isinstance(u, _Double) and u.matches(pv)), None)
                if mine is None:
                    self.problems.append(f"the output may be {'None' if v == NONE else repr(_plain(v))[:30]}, which no class of the argmax gives")
                    continue
                margin = 1 - r.get(mine, fmpq(0)) - max((r.get(c, fmpq(0)) for _, c in self.m.classes if c != mine), default=fmpq(0))
            else:
                if number(v) is None:
                    self.problems.append(f"the output may be {v!r:.30}, which is not a number")
                    continue
                margin = self.tol - r.get(self.m.classes[0][1], fmpq(0))
            if worst is None or margin < worst:
                worst = margin
            if not (margin > 0 if self.m.categorical else margin >= 0):
                self.problems.append(f"the output {_shown(v)} is not decided: the bound leaves a margin of {float(margin):.3g}")
        self.steps.append({"sublayer": "output", "margin": None if worst is None else rational_to_json(worst)})


def _same_value(u: Any, v: Any) -> bool:
    if isinstance(u, (bool, str)) or isinstance(v, (bool, str)) or u is None or v is None:
        return type(u) is type(v) and u == v
    return u == v


def _shown(v: Value) -> str:
    return "None" if v == NONE else repr(_plain(v))[:30]


def _tag(t: Any) -> Value:
    if t is None:
        return NONE
    if isinstance(t, bool):
        return ("b", t)
    if isinstance(t, str):
        return ("s", t)
    q = fmpq(t)
    return ("q", int(q.p), int(q.q))


def _radius_json(rad: dict[Value, Row]) -> list[list[Any]]:
    """[[value, the largest radius over its columns], ...] in the order of the values' spelling."""
    return [[_value_json(v), rational_to_json(max(r.values(), default=fmpq(0)))] for v, r in sorted(rad.items(), key=lambda kv: repr(kv[0]))]


def _value_json(v: Value) -> Any:
    if v == NONE:
        return None
    if v[0] == "q":
        return {"q": rational_to_json(fmpq(v[1], v[2]))}
    if v[0] == "b":
        return {"b": v[1]}
    if v[0] == "s":
        return {"s": v[1]}
    return {"t": [_value_json(x) for x in v[1]]}


def by_length(program: Any, causal: bool) -> bool:
    """Whether the induction runs length by length (``exact``): the program counts every key somewhere
    (a SelectorWidth of a TRUE Select, as tracr's ``length``), whose value is then the length itself, so that
    ``length - indices`` and ``Select(indices, length - 1, EQ)`` are read at their one value per position."""
    prog = Program(program, causal)
    return not causal and any(n["op"] == "selector_width" and prog.nodes[n["args"][0]]["predicate"] == "TRUE" for n in prog.nodes.values())


def charge(spent: int, run: dict[str, Any]) -> int:
    """The query-key pairs spent so far with this run's added (its heads' query times key configurations), or
    Unsupported in one line past MAX_TOTAL_PAIRS: the prover's search and the check charge the runs they make."""
    spent += sum(s["query_configurations"] * s["key_configurations"] for s in run["steps"] if "query_configurations" in s)
    if spent > MAX_TOTAL_PAIRS:
        raise Unsupported(f"the inductions of this proof hold {spent:,} query-key configurations in all, over {MAX_TOTAL_PAIRS:,}")
    return spent


def prove_every_input(model: dict[str, Any] | Model, program: Any, vocab: list[Any], n: int, tol: fmpq, weak: dict[Any, Any] | None = None, exact: bool = False) -> dict[str, Any]:
    """The induction at length bound n on the recorded model (its JSON, or as :class:`Model` read it) and
    program: {"n", "exact", "holds", "steps", "problems", "may_be_undefined"}, over the tokens ``vocab`` (their
    tagged JSON): every input of every length 1..n, or with ``exact`` of the length n alone (every position
    1..n then in every input: a SelectorWidth selecting every key is n). ``weak``, when given, receives the
    configurations where the bound is largest (``Induction.weak``, for the prover's search). Unsupported (one
    line) for a model or program outside its class."""
    m = model if isinstance(model, Model) else Model(model)
    if not 1 <= n <= m.max_seq_len:
        raise ParseError(f"the length bound {n} is outside 1..{m.max_seq_len}")
    prog = Program(program, m.causal)
    proof = Induction(m, prog, [value(t) for t in vocab], n, tol, exact)
    proof.run()
    if weak is not None:
        weak.update(proof.weak)
    return {
        "n": n, "exact": exact, "holds": not proof.problems, "steps": proof.steps, "problems": proof.problems[:10],
        "may_be_undefined": sorted(proof.undefined),
    }
