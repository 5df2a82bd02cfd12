r"""Stage 6: the compiled model against the RASP evaluation, SOp by SOp (docs/compiler.md, "The check").

**The comparison** (:func:`compare`; ``attncert prove compiled`` records it on its
input). On an input xs the model's residual stream is traced after the embedding and
after every sublayer. Every SOp the model holds (``Model.nodes``: its columns, and the
slot after which they hold its value, -1 for the embedding) is read there at the
token positions 1..N and compared with the RASP evaluation of the same graph on xs,
in the same exact domain (QQ, or EE when the model has exp units):

* numerical columns (two for a pair) must equal the RASP value exactly; booleans
  count 0 and 1, a plain number in a pair is (number, 1); a RASP value None
  disagrees, since a numerical column always holds a number;
* one-hot columns (``Model.one_hot``, the SOp's value set) must be the indicator of
  the RASP value: 1 in its column, 0 in the others, all 0 for None; a RASP value
  outside the value set disagrees.

**The inputs** (:func:`check_model`, run by :func:`~.assemble.compile_graph`):

* categorical tokens, V symbols, length N: every word when V^N <= MAX_INPUTS (an
  exhaustive check at this length); otherwise ceil(V/N) words of consecutive
  symbols (every symbol occurs), each constant word, then words from a fixed-seed
  generator, until every value of every one-hot SOp has been reached at some
  position and at least MIN_RANDOM random words have run, at most
  max(MAX_INPUTS, ceil(V/N) + MIN_RANDOM) words in all;
* scalar and pair tokens: NUMERIC_INPUTS inputs from a fixed seed, alternately
  rationals p/q (|p| <= 9, 1 <= q <= 4) and integers in -2..2 (pairs tagged 0 or 1).
  Numerical value sets are infinite: nothing is said beyond these inputs.

A model for every length (``Model.lengths == "every"``) is checked so at every length
1..N; a causal model against tracr's causal semantics (every selector masked to k <= q).

Inputs the RASP evaluation refuses (a division by zero, a non-numeric mean...) are
outside the program's domain: they are skipped and counted. The number of inputs
shrinks so that the check scores at most CHECK_PAIRS query-key pairs, but at least
one input runs; one input over the pair limit in force is refused up front.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import networkx as nx
from flint import fmpq

from attncert.constructions.compiler.model import Model
from attncert.constructions.compiler.values import NotCompilable
from attncert.constructions.rasp.evaluate import EvaluationError, trace_graph
from attncert.exact import EE, QQ, Domain
from attncert.exact.errors import AttncertError, ExactZeroDivision, LimitExceeded, NotInFieldError, NotRealError
from attncert.exact.limits import current as current_limits

MAX_INPUTS = 64
MIN_RANDOM = 8
NUMERIC_INPUTS = 3
CHECK_PAIRS = 1 << 24

#: What a RASP evaluation raises on an input outside the program's domain.
REFUSED = (EvaluationError, NotInFieldError, ExactZeroDivision, NotRealError)


class CheckFailed(NotCompilable):
    """The compiled model disagrees with the RASP evaluation on a checked input."""


@dataclass(frozen=True)
class Disagreement:
    label: str  # the SOp
    position: int  # the token position, 0-based
    rasp: Any  # the RASP value there
    model: str  # what the model's columns hold there, shown (decoded where they are a valid one-hot)


@dataclass(frozen=True)
class Comparison:
    outputs: dict[str, list[Any]]  # the model's decoded outputs
    rasp: dict[int, Any]  # the RASP value of every node
    disagreements: list[Disagreement]  # the first position of each SOp that differs, in topological order


@dataclass(frozen=True)
class CheckReport:
    """What :func:`check_model` ran: the model equals the RASP evaluation, SOp by SOp, on these inputs."""

    length: int  # N
    inputs: int  # inputs compared
    exhaustive: bool  # every input of this length (categorical tokens); of every length 1..N with every_length
    refused: int  # inputs the RASP evaluation refused, skipped
    sops: int  # SOps compared on each input
    domain: str
    coverage: dict[str, tuple[int, int]]  # one-hot SOp -> (values reached, values in its set)
    unreached: dict[str, tuple[Any, ...]]  # one-hot SOp -> values no checked input reached
    every_length: bool = False  # checked at every length 1..N (a model for every length)

    def describe(self) -> str:
        """One line: what was checked, on which inputs, and what the inputs reached."""
        lengths = f"every length 1..{self.length}" if self.every_length else f"length {self.length}"
        which = f"every input of {lengths}" if self.exhaustive else f"{self.inputs} input{'s' * (self.inputs != 1)}{' of ' + lengths if self.every_length else ''}"
        text = f"equal to the RASP evaluation, {self.sops} SOps compared at every position ({self.domain}), on {which}"
        if self.exhaustive:
            text += f" ({self.inputs} in the program's domain, {self.refused} outside it, skipped)" if self.refused else f" ({self.inputs})"
        elif self.refused:
            text += f"; {self.refused} more outside the program's domain, skipped"
        if self.coverage:
            reached, total = (sum(c[k] for c in self.coverage.values()) for k in (0, 1))
            text += f"; the {len(self.coverage)} one-hot SOps reached {reached} of their {total} values"
            if self.unreached:
                shown = ", ".join(f"{label}: {', '.join(map(_show, vals[:3]))}{'...' * (len(vals) > 3)}" for label, vals in list(self.unreached.items())[:3])
                text += f" (not reached: {shown}{'; ...' * (len(self.unreached) > 3)})"
        elif not self.exhaustive:
            text += "; numerical value sets are not enumerated"
        return text


def check_domain(model: Model) -> Domain:
    """QQ, or EE when an MLP has exp units (e^q is irrational for q != 0)."""
    has_exp = any(u.kind == "exp" for layer in model.layers if layer.mlp for stage in layer.mlp.stages for u in stage)
    return EE if has_exp else QQ


def compare(model: Model, g: nx.MultiDiGraph, xs: Sequence[Any], dom: Domain) -> Comparison:
    """The model's residual stream against the RASP evaluation of ``g`` on ``xs``, SOp by SOp (module docstring).

    The RASP evaluation's refusals (REFUSED) propagate: such an input is outside the program's
    domain. A model that fails where the RASP evaluation does not raises CheckFailed."""
    rasp = trace_graph(g, xs, dom, causal=model.causal)
    try:
        outputs, history = model.forward(xs, dom, trace=True)
    except LimitExceeded:
        raise
    except (AttncertError, ArithmeticError) as e:  # the RASP evaluation accepted xs, so the model must too
        raise CheckFailed("output", "the compiled model fails on an input the RASP evaluation accepts", f"{_show_input(xs)}: {e}") from None
    found = []
    for v in nx.topological_sort(g):
        label = g.nodes[v]["label"]
        if label not in model.nodes:
            continue
        node = model.nodes[label]
        state = history[node["slot"] + 1]
        columns = [state[c][1:] for c in node["columns"]]
        values = model.one_hot.get(label)
        if values is not None:
            p = _first_one_hot_difference(columns, rasp[v], values)
        else:
            p = next((p for p, want in enumerate(rasp[v]) if not _numbers_equal(dom, [col[p] for col in columns], want)), None)
        if p is not None:
            found.append(Disagreement(label, p, rasp[v][p], _shown(dom, [col[p] for col in columns], values)))
    return Comparison(outputs, rasp, found)


def check_model(g: nx.MultiDiGraph, model: Model) -> CheckReport:
    """Run ``model`` against the RASP evaluation of ``g`` on the inputs of the module docstring,
    at its length N, or at every length 1..N for a model of every length.

    CheckFailed (one line: the SOp, the input, the position, both values) at the first
    disagreement; NotCompilable if the RASP evaluation refuses every input; LimitExceeded if
    one input scores more query-key pairs than the limit in force."""
    if model.lengths != "every":
        return _check_length(g, model, model.length)
    reports = [_check_length(g, model, n) for n in range(1, model.length + 1)]
    unreached = {label: tuple(x for x in vals if all(_key(x) in map(_key, r.unreached.get(label, ())) for r in reports)) for label, vals in model.one_hot.items()}
    return CheckReport(
        length=model.length,
        inputs=sum(r.inputs for r in reports),
        exhaustive=all(r.exhaustive for r in reports),
        refused=sum(r.refused for r in reports),
        sops=len(model.nodes),
        domain=reports[0].domain,
        coverage={label: (len(vals) - len(unreached[label]), len(vals)) for label, vals in model.one_hot.items()},
        unreached={label: vals for label, vals in unreached.items() if vals},
        every_length=True,
    )


def _check_length(g: nx.MultiDiGraph, model: Model, N: int) -> CheckReport:
    """:func:`check_model` at the length N."""
    pairs = (N + 1) ** 2
    lim = current_limits().max_pairs
    if pairs > lim:
        raise LimitExceeded(f"checking the compiled model scores {pairs:,} query-key pairs per head, over the limit of {lim:,} (raise it with --max-pairs, or compile with check=False)")
    heads = max(1, sum(len(layer.heads) for layer in model.layers))
    budget = max(1, CHECK_PAIRS // (pairs * heads))
    dom = check_domain(model)
    reached: dict[str, set[Any]] = {label: set() for label in model.one_hot}
    label_of = {g.nodes[v]["label"]: v for v in g.nodes}
    planned = 0  # the sweep and constant words, which run before the random ones
    if model.tokens == "categorical":
        V = len(model.vocab)
        sweeps = -(-V // N)
        wanted = min(max(MAX_INPUTS, sweeps + MIN_RANDOM), budget)
        exhaustive = V == 1 or N <= MAX_INPUTS.bit_length() and V**N <= wanted  # V >= 2: V^N > 64 once N > 6
        words: Iterator[list[Any]] = (list(w) for w in itertools.product(model.vocab, repeat=N)) if exhaustive else _words(model.vocab, N)
        planned = sweeps + V
    else:
        exhaustive = False
        words = _numbers(N, model.tokens == "pair")
        wanted = min(NUMERIC_INPUTS, budget)
    compared = refused = tried = 0
    for xs in words:
        if compared >= wanted or tried >= 4 * wanted and not exhaustive:
            break
        covered = model.tokens == "categorical" and all(len(reached[k]) == len(model.one_hot[k]) for k in reached)
        if not exhaustive and covered and tried >= planned + MIN_RANDOM:
            break
        tried += 1
        try:
            result = compare(model, g, xs, dom)
        except REFUSED:
            refused += 1
            continue
        if result.disagreements:
            d = result.disagreements[0]
            raise CheckFailed(d.label, "the compiled model disagrees with the RASP evaluation", f"on {_show_input(xs)} at position {d.position} RASP gives {_show(d.rasp)}, the model {d.model}")
        compared += 1
        for label, seen in reached.items():
            seen.update(_key(x) for x in result.rasp[label_of[label]] if x is not None)
    if not compared:
        raise NotCompilable("output", "the compiled model could not be checked", f"the RASP evaluation refuses all {refused} check inputs (compile with check=False to receive it unchecked)")
    unreached = {label: tuple(x for x in vals if _key(x) not in reached[label]) for label, vals in model.one_hot.items()}
    return CheckReport(
        length=N,
        inputs=compared,
        exhaustive=exhaustive,
        refused=refused,
        sops=len(model.nodes),
        domain=dom.name,
        coverage={label: (len(vals) - len(unreached[label]), len(vals)) for label, vals in model.one_hot.items()},
        unreached={label: vals for label, vals in unreached.items() if vals},
    )


def _words(vocab: tuple[Any, ...], N: int) -> Iterator[list[Any]]:
    """The sweep (ceil(V/N) words of consecutive symbols, cyclically: every symbol occurs in one), each
    constant word, then words drawn from a fixed seed."""
    V = len(vocab)
    for k in range(-(-V // N)):
        yield [vocab[(k * N + i) % V] for i in range(N)]
    for s in vocab:
        yield [s] * N
    rng = random.Random(0)
    while True:
        yield [rng.choice(vocab) for _ in range(N)]


def _numbers(N: int, pair: bool) -> Iterator[list[Any]]:
    """Rationals p/q (|p| <= 9, 1 <= q <= 4) and integers in -2..2, alternately, from fixed seeds; pairs tagged 0 or 1."""
    for k in itertools.count():
        rng = random.Random(k)
        xs = [fmpq(rng.randint(-9, 9), rng.randint(1, 4)) if k % 2 == 0 else fmpq(rng.randint(-2, 2)) for _ in range(N)]
        yield [(x, fmpq(rng.randint(0, 1))) for x in xs] if pair else xs


def _key(x: Any) -> tuple[bool, Any]:
    """Equality of values that keeps booleans apart from the numbers 0 and 1."""
    return (isinstance(x, bool), x)


def _first_one_hot_difference(columns: list[list[Any]], want: list[Any], values: tuple[Any, ...]) -> int | None:
    """The first position where the columns are not the indicator of the RASP value (1 in the value's
    column, 0 in the others, all 0 for None), or where the value is outside the set; None if there is none.
    Exact domains only: their == decides equality."""
    index = {_key(x): k for k, x in enumerate(values)}
    hot = []
    for p, x in enumerate(want):
        try:
            hot.append(None if x is None else index.get(_key(x), -1))
        except TypeError:  # an unhashable value (an irrational EE number) is in no finite value set
            hot.append(-1)
    ones: dict[int, list[int]] = {}
    for p, k in enumerate(hot):
        ones.setdefault(k, []).append(p)
    bad = ones.get(-1, [])
    for k, col in enumerate(columns):
        # the common case in C (list.count): as many zeros as positions not holding value k, and 1 at those that do
        if col.count(0) != len(col) - len(ones.get(k, ())) or any(col[p] != 1 for p in ones.get(k, ())):
            bad += [p for p, x in enumerate(col) if x != (1 if hot[p] == k else 0)]
    return min(bad, default=None)


def _numbers_equal(dom: Domain, got: list[Any], want: Any) -> bool:
    if want is None:
        return False
    if len(got) == 2 and not isinstance(want, tuple):
        want = (want, 1)  # a plain number in a pair layout is (number, 1)
    parts = list(want) if isinstance(want, tuple) else [want]
    if len(parts) != len(got) or any(isinstance(x, str) or x is None for x in parts):
        return False
    return all(dom.eq(x, dom.convert(int(w)) if isinstance(w, bool) else w) for x, w in zip(got, parts))


def _shown(dom: Domain, got: list[Any], values: tuple[Any, ...] | None) -> str:
    """What the columns hold: numbers, or a valid one-hot as its value (None if no column holds 1)."""
    if values is None:
        return _show(got[0] if len(got) == 1 else tuple(got))
    ones = [u for x, u in zip(got, values) if dom.eq(x, dom.one())]
    if len(ones) <= 1 and all(dom.eq(x, dom.one()) or dom.eq(x, dom.zero()) for x in got):
        return _show(ones[0] if ones else None)
    return f"columns {_show(tuple(got))}, not one-hot"


def _show(x: Any) -> str:
    if isinstance(x, tuple):
        return "(" + ", ".join(map(_show, x)) + ")"
    return f"{x!r:.30}" if isinstance(x, str) or x is None or isinstance(x, bool) else f"{x}"[:30]


def _show_input(xs: Sequence[Any]) -> str:
    shown = ", ".join(_show(x) for x in xs[:8])
    return f"input [{shown}{', ...' if len(xs) > 8 else ''}]"
