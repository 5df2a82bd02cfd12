r"""Stage 3: per-node blocks.

**Attention** (an Aggregate of values w under Select(keys k, queries q, EQ), both
static). With the positional columns q, q^2 (queries) and k, k^2 (keys),

    s_ij = 2 q_i k_j - k_j^2 + bos_j (q_i^2 - delta) + bos_i bos_j (delta + 1)
         = q_i^2 - (k_j - q_i)^2                          (j a token, i a token),

maximal exactly at the keys with k_j = q_i. The BOS key scores q_i^2 - delta,
strictly between a match (q_i^2) and the best non-match (q_i^2 - g^2, g the least
nonzero |k - q| over the positions, computed exactly; delta = g^2 / 2): a query
that selects nothing reads BOS alone. BOS itself attends only to BOS (score
1 > 0 >= -k_j^2). W_OV copies w's columns and adds, from the ``bos`` column,
default - w(BOS), so that reading BOS gives exactly the default. Only positional
columns are read by W_QK, so the width does not grow with N (no one-hot
positions).

**MLPs.** Each map compiles to a :class:`Block`: stages of units over affine
pre-activations, and affine outputs. Affine maps take no stage (they are carried
by identity units, products with 1, when assembled); ``mul`` is one product unit;
``div`` a reciprocal then a product; ``masked_exp`` an exp then a product with
the mask; ``max``/``min`` one ReLU; ``compose`` chains its functions' blocks.
Reciprocals add the ``bos`` column to their pre-activation where it would be 0 at
BOS, so BOS never divides by zero (tokens are unaffected: bos = 0 there).

**Functions on a finite set of numbers** (a numerical SOp with a finite value set,
:mod:`.values`), by :func:`interpolant_block`. Lemma: for v_1 < ... < v_m and any
g on {v_1, ..., v_m}, with slopes s_i = (g(v_{i+1}) - g(v_i)) / (v_{i+1} - v_i)
(i = 1..m-1) and s_0 = 0,

    p(x) = g(v_1) + sum_{i=1}^{m-1} (s_i - s_{i-1}) relu(x - v_i)

equals g at every v_j: relu(v_j - v_i) = v_j - v_i = sum_{l=i}^{j-1} (v_{l+1} - v_l)
for i < j and 0 for i >= j, so by exchanging the sums
p(v_j) - g(v_1) = sum_{l<j} (v_{l+1} - v_l) sum_{i<=l} (s_i - s_{i-1})
= sum_{l<j} (v_{l+1} - v_l) s_l = sum_{l<j} (g(v_{l+1}) - g(v_l)) = g(v_j) - g(v_1).
p is the piecewise-linear interpolant through the points (v_i, g(v_i)): m - 1 ReLU
units at most, shared by every output (a categorical output is the interpolant of
each value's 0/1 indicator, e.g. x < 0 takes two units), and a unit whose
coefficient is 0 in every output is left out. The same units give the indicator
of each v_j (the interpolant of g = [x = v_j]), which :func:`table2_block` multiplies
pairwise for functions of two values.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from flint import fmpq

from attncert.constructions.compiler.model import Affine, Unit
from attncert.constructions.compiler.values import NotCompilable

ZERO = fmpq(0)


def aff(terms: dict[int, fmpq] | None = None, bias: Any = 0) -> Affine:
    """An affine form: sorted (input, weight) pairs without zeros, and a bias."""
    return tuple(sorted((i, fmpq(w)) for i, w in (terms or {}).items() if w != 0)), fmpq(bias)


def combine(*parts: tuple[Any, Affine]) -> Affine:
    """sum_k c_k a_k for affine forms a_k."""
    terms: dict[int, fmpq] = {}
    bias = fmpq(0)
    for c, (ts, b) in parts:
        c = fmpq(c)
        for i, w in ts:
            terms[i] = terms.get(i, ZERO) + c * w
        bias += c * b
    return aff(terms, bias)


ONE: Affine = aff({}, 1)


@dataclass
class Block:
    """stages[0] reads the block's inputs (residual columns); stages[k] the units of stages[k-1].
    ``outputs`` are affine forms over the last stage's units (over the inputs if there is no stage)."""

    stages: list[list[Unit]] = field(default_factory=list)
    outputs: list[Affine] = field(default_factory=list)


def affine_block(*outputs: Affine) -> Block:
    return Block([], list(outputs))


def single(kind: str, *args: Affine, scale: Any = 1) -> Block:
    return Block([[Unit(kind, tuple(args))]], [aff({0: scale})])


def two_stage(first: list[Unit], second: list[Unit], outputs: list[Affine]) -> Block:
    return Block([first, second], outputs)


def reciprocal(z: Affine, guard: bool, bos: int) -> Unit:
    return Unit("reciprocal", (combine((1, z), (1, aff({bos: 1}))) if guard else z,))


Rule = Callable[..., Block]


def map_block(fn_name: str, params: dict[str, Any], args: list[list[Affine]], bos: int, bos_zero: Callable[[Affine], bool]) -> Block:
    """The block of one registered function applied to argument forms (one list of forms per argument)."""
    p = {k: (fmpq(v) if isinstance(v, (int, fmpq)) else v) for k, v in params.items()}
    x = args[0][0] if args else None
    y = args[1][0] if len(args) > 1 else None
    one_arg = {
        "identity": lambda: affine_block(x),
        "neg": lambda: affine_block(combine((-1, x))),
        "add_const": lambda: affine_block(combine((1, x), (p["c"], ONE))),
        "sub_const": lambda: affine_block(combine((1, x), (-p["c"], ONE))),
        "rsub_const": lambda: affine_block(combine((-1, x), (p["c"], ONE))),
        "mul_const": lambda: affine_block(combine((p["c"], x))),
        "div_const": lambda: affine_block(combine((1 / p["c"], x))),
        "rdiv_const": lambda: single("reciprocal", reciprocal(x, bos_zero(x), bos).args[0], scale=p["c"]),
        "exp": lambda: single("exp", x),
        "relu": lambda: single("relu", x),
        "abs": lambda: Block([[Unit("relu", (x,)), Unit("relu", (combine((-1, x)),))]], [aff({0: 1, 1: 1})]),
        "ramp": lambda: Block(
            [[Unit("relu", (combine((1 / (p["b"] - p["a"]), x), (-p["a"] / (p["b"] - p["a"]), ONE)),)),
              Unit("relu", (combine((1 / (p["b"] - p["a"]), x), (-p["b"] / (p["b"] - p["a"]), ONE)),))]],
            [aff({0: 1, 1: -1})],
        ),
        "alternating_steps": lambda: _alternating(x, int(p["k"])),
        "mul_exp": lambda: two_stage([Unit("exp", (aff({}, p["c"]),)), Unit("product", (x, ONE))], [Unit("product", (aff({0: 1}), aff({1: 1})))], [aff({0: 1})]),
        "token_value": lambda: affine_block(args[0][0]),
        "token_tag": lambda: affine_block(args[0][1] if len(args[0]) > 1 else ONE),
    }
    two_args = {
        "add": lambda: affine_block(combine((1, x), (1, y))),
        "sub": lambda: affine_block(combine((1, x), (-1, y))),
        "linear": lambda: affine_block(combine((p["a"], x), (p["b"], y))),
        "mul": lambda: single("product", x, y),
        "mul_scaled": lambda: single("product", combine((p["c"], x)), y),
        "affine_relu": lambda: single("relu", combine((p["c"], x), (1, y))),
        "max": lambda: Block([[Unit("relu", (combine((1, x), (-1, y)),)), Unit("product", (y, ONE))]], [aff({0: 1, 1: 1})]),
        "min": lambda: Block([[Unit("relu", (combine((1, y), (-1, x)),)), Unit("product", (y, ONE))]], [aff({0: -1, 1: 1})]),
        "div": lambda: two_stage(
            [Unit("product", (x, ONE)), reciprocal(y, bos_zero(y), bos)], [Unit("product", (aff({0: 1}), aff({1: 1})))], [aff({0: 1})]
        ),
        "masked_exp": lambda: two_stage(
            [Unit("exp", (combine((p["c"], args[0][0])),)), Unit("product", (y, ONE))],
            [Unit("product", (aff({0: 1}), aff({1: 1})))],
            [aff({0: 1})],
        ),
        "pack": lambda: affine_block(*args[0], *args[1]),
    }
    rules = {**one_arg, **two_args}
    if fn_name == "compose":
        return _compose(p["fns"], args, bos, bos_zero)
    if fn_name not in rules:
        raise KeyError(fn_name)
    return rules[fn_name]()


def _alternating(x: Affine, k: int) -> Block:
    """sum_{t=1..k} (-1)^(t+1) (relu(x - t + 1) - relu(x - t)): 2k ReLU units, exact on integers."""
    units = [Unit("relu", (combine((1, x), (-(t - 1 + j), ONE)),)) for t in range(1, k + 1) for j in (0, 1)]
    return Block([units], [aff({2 * (t - 1) + j: (-1) ** (t + 1) * (1 if j == 0 else -1) for t in range(1, k + 1) for j in (0, 1)})])


def _compose(fns: Any, args: list[list[Affine]], bos: int, bos_zero: Callable[[Affine], bool]) -> Block:
    """compose(fns=(g, f)) = f(g(x)): the blocks chained, each reading the previous one's outputs."""
    block = Block([], list(args[0]))
    for f in fns:
        # While no stage has run, the inputs are still residual columns, whose BOS values are known.
        nxt = map_block(f.name, dict(f.params), [block.outputs], bos, bos_zero if not block.stages else (lambda a: False))
        if nxt.stages and block.stages and any(u.kind == "reciprocal" for u in nxt.stages[0]):
            raise NotCompilable(f.name, "a reciprocal after another stage", "its BOS guard needs the bos column, which only stage 1 reads")
        block = Block(block.stages + nxt.stages, nxt.outputs)
    return block


def maxmin_pick_block(x: Affine, y: Affine, even: int) -> Block:
    """max(x, y) at even positions, min(x, y) at odd ones: y + even relu(x - y) - (1 - even) relu(y - x)."""
    first = [Unit("relu", (combine((1, x), (-1, y)),)), Unit("relu", (combine((1, y), (-1, x)),)), Unit("product", (y, ONE)), Unit("product", (aff({even: 1}), ONE))]
    second = [
        Unit("product", (aff({0: 1}), aff({3: 1}))),
        Unit("product", (aff({1: 1}), aff({3: -1}, 1))),
        Unit("product", (aff({2: 1}), ONE)),
    ]
    return two_stage(first, second, [aff({2: 1, 0: 1, 1: -1})])


def interpolant_block(x: Affine, points: Sequence[fmpq], outputs: Sequence[Sequence[fmpq]]) -> Block:
    """The functions g_t with g_t(points[j]) = outputs[t][j], for x on the ascending ``points``: the
    piecewise-linear interpolants of the lemma above, over shared ReLU units relu(x - v_i)."""
    units, coefficients = _interpolant_units(x, points, outputs)
    return Block([units] if units else [], [aff({k: c for k, c in enumerate(row)}, g[0]) if units else combine((g[0], ONE)) for g, row in zip(outputs, coefficients)])


def _interpolant_units(x: Affine, points: Sequence[fmpq], outputs: Sequence[Sequence[fmpq]]) -> tuple[list[Unit], list[list[fmpq]]]:
    """ReLU units relu(x - v_i) and each output's coefficients on them (units unused by every output dropped)."""
    gaps = [points[i + 1] - points[i] for i in range(len(points) - 1)]
    rows = []
    for g in outputs:
        slopes = [fmpq(0)] + [(g[i + 1] - g[i]) / gaps[i] for i in range(len(gaps))]
        rows.append([slopes[i + 1] - slopes[i] for i in range(len(gaps))])
    used = [i for i in range(len(gaps)) if any(r[i] != 0 for r in rows)]
    units = [Unit("relu", (combine((1, x), (-points[i], ONE)),)) for i in used]
    return units, [[r[i] for i in used] for r in rows]


def table2_block(indicators: Sequence[tuple[list[Unit], list[Affine]]], table: Sequence[tuple[int, int, Sequence[fmpq]]], n_outputs: int) -> Block:
    """A function of two values on finite sets: stage 1 the units each argument's indicators read
    (``indicators[a]`` = (units, one affine form over them per value)), stage 2 one product unit
    ind_0[i] ind_1[j] per table entry (i, j, the outputs' weights), and the outputs their sums."""
    first: list[Unit] = []
    forms: list[list[Affine]] = []
    for units, ind in indicators:
        forms.append([_shift_form(a, len(first)) for a in ind])
        first += units
    second = [Unit("product", (forms[0][i], forms[1][j])) for i, j, _ in table]
    return Block([first, second], [aff({k: w[t] for k, (_, _, w) in enumerate(table)}) for t in range(n_outputs)])


def indicator_units(x: Affine, points: Sequence[fmpq]) -> tuple[list[Unit], list[Affine]]:
    """The indicators [x = v_j] on the ascending ``points``, as affine forms over ReLU units (the lemma above)."""
    deltas = [[fmpq(int(i == j)) for i in range(len(points))] for j in range(len(points))]
    units, rows = _interpolant_units(x, points, deltas)
    return units, [aff({k: c for k, c in enumerate(row)}, d[0]) for d, row in zip(deltas, rows)]


def _shift_form(a: Affine, by: int) -> Affine:
    terms, bias = a
    return tuple((i + by, w) for i, w in terms), bias


def finite_function_block(args: Sequence[tuple[Affine | None, Sequence[Any], Sequence[Affine] | None]], weights: Callable[..., Sequence[fmpq]], n_outputs: int) -> Block:
    """outputs[t] = weights(a, b, ...)[t] on finite value sets, where an argument is either a number x with
    ascending values (``(x, values, None)``) or one-hot (``(None, values, indicator columns as forms)``).

    Affine on the product of the value sets (every argument numerical): an affine block, no unit. One
    numerical argument: :func:`interpolant_block`. Two arguments (a SequenceMap): :func:`table2_block` over the
    indicators (ReLU units for a number, identity units for one-hot columns)."""
    numbers = [x is not None for x, _, _ in args]
    if all(numbers):
        fit = _affine_fit([(x, vals) for x, vals, _ in args], weights, n_outputs)
        if fit is not None:
            return affine_block(*fit)
    if len(args) == 1 and numbers[0]:
        x, vals, _ = args[0]
        rows = [weights(a) for a in vals]
        return interpolant_block(x, vals, [[r[t] for r in rows] for t in range(n_outputs)])
    inds = [indicator_units(x, vals) if x is not None else ([Unit("product", (f, ONE)) for f in forms], [aff({k: 1}) for k in range(len(forms))]) for x, vals, forms in args]
    table = [(i, j, weights(a, b)) for i, a in enumerate(args[0][1]) for j, b in enumerate(args[1][1])]
    entries = [(i, j, w) for i, j, w in table if any(z != 0 for z in w)]
    return table2_block(inds, entries, n_outputs)


def _affine_fit(args: Sequence[tuple[Affine, Sequence[fmpq]]], weights: Callable[..., Sequence[fmpq]], n_outputs: int) -> list[Affine] | None:
    """The affine forms c_t + sum_k a_tk x_k equal to the table at every point of the product of the
    value sets, if the table is affine there (slopes from the first two values of each argument, then
    every point checked exactly); None otherwise."""
    base = [vals[0] for _, vals in args]
    f0 = weights(*base)
    slopes = []
    for k, (_, vals) in enumerate(args):
        if len(vals) < 2:
            slopes.append([fmpq(0)] * n_outputs)
            continue
        at = list(base)
        at[k] = vals[1]
        fk = weights(*at)
        slopes.append([(fk[t] - f0[t]) / (vals[1] - vals[0]) for t in range(n_outputs)])
    for point in itertools.product(*(vals for _, vals in args)):
        w = weights(*point)
        if any(w[t] != f0[t] + sum((slopes[k][t] * (point[k] - base[k]) for k in range(len(args))), fmpq(0)) for t in range(n_outputs)):
            return None
    return [combine((f0[t] - sum((slopes[k][t] * base[k] for k in range(len(args))), fmpq(0)), ONE), *((slopes[k][t], x) for k, (x, _) in enumerate(args))) for t in range(n_outputs)]
