"""Every input through a tracr model in balls and through its RASP program exactly: verdicts.

For each input (a sequence over the vocabulary, length 1..N) and each position t = 1..n (position
0 is BOS, whose output tracr does not decode):

* **categorical output**: the classes whose balls may hold the largest logit are the candidates
  (class c is one unless another class's ball lies wholly above c's); the position is *correct*
  when the only candidate is the RASP value's class, a *counterexample* when the RASP value's
  class is not a candidate (or the RASP value is None, or no class has it: no decoding gives it),
  and *undecided* otherwise (argmax is not decided by the balls);
* **numerical output**: with y the output ball and v the RASP value, correct when
  max |y - v| <= tol, a counterexample when min |y - v| > tol (or v is not a number), undecided
  otherwise; the largest max |y - v| over correct positions is the certified error.

An input is correct when every position is, a counterexample when some position is, undecided
otherwise; *undefined* when attncert's exact evaluation of the program fails on it. Decisions are
exact comparisons of the balls' endpoints (rationals). Inputs left undecided are run again at
twice the precision, up to 4 times the base precision.

For a counterexample, :func:`leaves_encoding` finds the first residual stream (after the
embedding or a sublayer) where some SOp already written leaves the encoding tracr's basis gives
its RASP value (a 1 in the column ``label:value`` and 0 in the SOp's other columns; the value
itself in the numerical column ``label``): its largest deviation over the positions certainly
exceeds 1/2 (categorical: rounding no longer gives the one-hot vector) or tol (numerical).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from flint import arb, ctx, fmpq

from attncert.constructions import rasp
from attncert.constructions.rasp.evaluate import EvaluationError
from attncert.constructions.tracr.forward import State, forward
from attncert.constructions.tracr.model import FloatClass, Matrix, TracrModel, spells
from attncert.constructions.tracr.program import Program, key, tabulate, to_rasp
from attncert.exact import QQ
from attncert.exact.rationals import rational_to_json
from attncert.exact.errors import AttncertError

#: Undecided inputs are run again at 2, then 4 times the base precision.
ESCALATIONS = 2


@dataclass
class Position:
    """One decided or undecided output position: its status, the RASP value, what the model decodes
    (a value; ``among`` the candidate values; or the output ball), and the enclosures that decided it."""

    t: int
    status: str
    rasp: Any
    decoded: Any
    balls: list[arb]
    error: fmpq | None = None  # numerical: the upper bound of |y - v|


@dataclass
class Verdict:
    status: str  # correct, counterexample, undecided, undefined
    positions: list[Position] = field(default_factory=list)  # the positions that are not correct
    error: fmpq | None = None  # numerical: the largest upper bound of |y - v| over the input's positions
    precision: int = 0


#: Endpoints are kept on the grid of 2^-GRID: exact for every ball whose midpoint and radius have no
#: bit below it, rounded outward otherwise (a causal model's masked keys weigh about e^{-10^30}).
GRID = 1024


def endpoints(x: arb) -> tuple[fmpq, fmpq]:
    """Rationals lo <= x <= hi for every point x of the ball: its endpoints, exactly when they lie on
    the grid of 2^-GRID, else rounded outward to it."""
    (m, k), (r, j) = x.mid().man_exp(), x.rad().man_exp()
    mid_lo, mid_hi = _scaled(int(m), int(k))
    _, rad_hi = _scaled(int(r), int(j))
    return fmpq(mid_lo - rad_hi, 1 << GRID), fmpq(mid_hi + rad_hi, 1 << GRID)


def _scaled(m: int, k: int) -> tuple[int, int]:
    """floor and ceil of m 2^(k + GRID)."""
    e = k + GRID
    if e >= 0:
        return m << e, m << e
    if -e > m.bit_length():  # |m 2^e| < 1
        return (-1, 0) if m < 0 else (0, 1 if m else 0)
    f = m >> -e  # floor
    return f, f + (1 if f << -e != m else 0)


def ball_json(x: arb) -> dict[str, str]:
    """A ball as certificates record it here: the midpoint and radius of [lo, hi] = :func:`endpoints`
    (the ball itself unless it has bits below 2^-GRID; then a ball containing it)."""
    lo, hi = endpoints(x)
    return {"mid": rational_to_json((lo + hi) / 2), "rad": rational_to_json((hi - lo) / 2)}


def exact_outputs(prog: Program, inputs: Sequence[Sequence[Any]], causal: bool = False) -> tuple[list[Any], list[dict[str, Any]]]:
    """attncert's exact evaluation of the program on each input (its output, or the error line for an
    input it fails on), and every node's value on each input, by label (for tabulation)."""
    run = tracer(prog, causal)
    outs: list[Any] = []
    traces: list[dict[str, Any]] = []
    for xs in inputs:
        out, tr = run(xs)
        outs.append(out)
        if tr is not None:
            traces.append(tr)
    return outs, traces


def tracer(prog: Program, causal: bool = False) -> Callable[[Sequence[Any]], tuple[Any, dict[str, Any] | None]]:
    """The program's graph built once, and a function of one input giving its exact output (or
    :class:`EvaluationFailed`) and every SOp's values by label (None where the evaluation fails)."""
    g = rasp.to_graph(to_rasp(prog, causal))
    label = {v: g.nodes[v]["label"] for v in g.nodes}
    out_node = g.graph["outputs"]["output"]

    def run(xs: Sequence[Any]) -> tuple[Any, dict[str, Any] | None]:
        try:
            tr = rasp.trace_graph(g, list(xs), QQ)
        except Exception as e:  # the program fails on this input (a user's lambda may raise anything): undefined there
            why = str(e).splitlines()[0] if str(e) else ""
            return EvaluationFailed(f"{type(e).__name__}: {why}"[:200] if not isinstance(e, (EvaluationError, AttncertError)) else why[:200]), None
        return list(tr[out_node]), {label[v]: tr[v] for v in tr if g.nodes[v]["op"] not in _SELECTORS}

    return run


_SELECTORS = ("select", "constant_selector", "selector_and", "selector_or", "selector_not")


@dataclass(frozen=True)
class EvaluationFailed:
    """The RASP program has no value on an input: attncert's evaluation refused it (the line says why)."""

    reason: str


def tabulated(prog: Program, inputs: Sequence[Sequence[Any]], causal: bool = False) -> list[Any]:
    """Exact outputs on the inputs; a program with callables (while proving) adds the arguments they
    receive to its tables (:func:`.program.tabulate`)."""
    outs, traces = exact_outputs(prog, inputs, causal)
    tabulate(prog, traces)
    return outs


def recorded(prog: Program) -> Program:
    """The program as recorded: its callables dropped, its tables kept."""
    for n in prog.nodes:
        n.fn = None
    return prog


def decide(model: TracrModel, state: State, outputs: Sequence[Any], tol: fmpq) -> list[Verdict]:
    """The verdict of every input of a batch from its final residual stream and exact outputs."""
    cache: dict[tuple[Any, ...], Position] = {}
    verdicts = []
    class_of = {key(v): c for c, (v, _) in enumerate(model.classes) if not isinstance(v, FloatClass)}
    doubles = [(c, v) for c, (v, _) in enumerate(model.classes) if isinstance(v, FloatClass)]
    for b, exact in enumerate(outputs):
        if isinstance(exact, EvaluationFailed):
            verdicts.append(Verdict("undefined"))
            continue
        bad: list[Position] = []
        worst: fmpq | None = None
        for t, v in enumerate(exact, start=1):
            rid = int(state.ids[b, t])
            ck = (rid, key(v) if not isinstance(v, (list, tuple)) else ("other", repr(v)))
            p = cache.get(ck)
            if p is None:
                p = cache[ck] = _position(model, state.rows[rid], v, class_of, doubles, tol)
            if p.error is not None and p.status == "correct":
                worst = p.error if worst is None or p.error > worst else worst
            if p.status != "correct":
                bad.append(Position(t, p.status, p.rasp, p.decoded, p.balls, p.error))
        status = "counterexample" if any(p.status == "counterexample" for p in bad) else "undecided" if bad else "correct"
        verdicts.append(Verdict(status, bad, worst, ctx.prec))
    return verdicts


def _position(model: TracrModel, row: list[arb], v: Any, class_of: dict[Any, int], doubles: list[tuple[int, FloatClass]], tol: fmpq) -> Position:
    balls = [row[c] for _, c in model.classes]
    if model.categorical:
        ends = [endpoints(x) for x in balls]
        top = max(lo for lo, _ in ends)
        cands = [c for c, (_, hi) in enumerate(ends) if hi >= top]
        decoded = model.classes[cands[0]][0] if len(cands) == 1 else {"among": [model.classes[c][0] for c in cands]}
        mine = class_of.get(key(v)) if not isinstance(v, (list, tuple)) else None
        if mine is None:  # a class tracr holds as a float stands for the exact values that round to it
            mine = next((c for c, f in doubles if f.matches(v)), None)
        if mine is None or mine not in cands:
            status = "counterexample"
        else:
            status = "correct" if cands == [mine] else "undecided"
        return Position(0, status, v, decoded, balls)
    (y,) = balls
    lo, hi = endpoints(y)
    if isinstance(v, bool):
        v = int(v)
    if v is None or isinstance(v, (str, list, tuple)):
        return Position(0, "counterexample", v, y, balls)
    v = QQ.convert(v)
    upper = max(abs(lo - v), abs(hi - v))
    lower = fmpq(0) if lo <= v <= hi else min(abs(lo - v), abs(hi - v))
    status = "correct" if upper <= tol else "counterexample" if lower > tol else "undecided"
    return Position(0, status, v, y, balls, upper)


def certify_inputs(model: TracrModel, inputs: Sequence[Sequence[Any]], outputs: Sequence[Any], tol: fmpq, precision: int) -> list[Verdict]:
    """Verdicts for a batch of inputs of one length: at ``precision`` bits, then the undecided ones again
    at twice the precision, ESCALATIONS times."""
    verdicts: list[Verdict | None] = [None] * len(inputs)
    todo = list(range(len(inputs)))
    for step in range(ESCALATIONS + 1):
        with ctx.workprec(precision << step):
            state = forward(model, [inputs[i] for i in todo])[-1]
            found = decide(model, state, [outputs[i] for i in todo], tol)
        for i, v in zip(todo, found):
            verdicts[i] = v
        todo = [i for i, v in zip(todo, found) if v.status == "undecided"]
        if not todo:
            break
    return verdicts  # type: ignore[return-value]


def relabel(prog: Program, model: TracrModel) -> None:
    """The model's labels in the program's (:func:`.program.from_tracr` renames tracr's ``{name}_{id}``
    labels): the output, and every residual label that starts with a node's tracr label
    (``length_1:3``, ``length_1_selector_width_attn_output``) follows its node. The columns keep tracr's order."""
    new = prog.tracr_labels
    model.output = new.get(model.output, model.output)
    by_length = sorted(new, key=len, reverse=True)

    def renamed(s: str) -> str:
        old = next((o for o in by_length if s == o or s.startswith(o + ":") or s.startswith(o + "_")), None)
        return s if old is None else new[old] + s[len(old):]

    model.labels = [renamed(s) for s in model.labels]


def writers(model: TracrModel) -> list[set[int]]:
    """The residual columns each stream writes: the embedding, then each layer's attention and MLP."""

    def cols(m: Matrix) -> set[int]:
        return {j for (_, j) in m.w} | set(m.b)

    out = [cols(model.token_embed) | cols(model.pos_embed)]
    for layer in model.layers:
        out += [cols(layer["linear"]), cols(layer["linear_2"])]
    return out


def stream_names(model: TracrModel) -> list[str]:
    return ["embedding"] + [f"layer {i} {part}" for i in range(len(model.layers)) for part in ("attention", "mlp")]


def leaves_encoding(model: TracrModel, prog: Program, xs: Sequence[Any], tol: fmpq, precision: int) -> dict[str, Any] | None:
    """The first stream where a SOp already written leaves its encoding on input xs (see the module
    docstring): the stream's name, the SOp, the position and the bounds of the deviation; None if none does."""
    g = rasp.to_graph(to_rasp(prog, model.causal))
    tr = rasp.trace_graph(g, list(xs), QQ)
    encodings = {n.label: n.encoding for n in prog.sops()}
    values = {g.nodes[v]["label"]: tr[v] for v in g.nodes if g.nodes[v]["label"] in encodings}
    with ctx.workprec(precision):
        states = forward(model, [xs], keep=True)
    written: set[int] = set()
    for s, (state, cols, name) in enumerate(zip(states, writers(model), stream_names(model))):
        written |= cols
        for sop, vals in values.items():
            own = _columns(model, sop, encodings[sop])
            if not own or not set(own) <= written:
                continue
            threshold = fmpq(1, 2) if encodings[sop] == "categorical" else tol
            for t, v in enumerate(vals, start=1):
                target = _encoding(model, own, encodings[sop], v)
                if target is None:
                    continue
                row = state.row(0, t)
                lows, highs = zip(*(_deviation(row[c], target[c]) for c in own))
                if max(lows) > threshold:
                    return {"stream": name, "sop": sop, "position": t, "deviation": [max(lows), max(highs)]}
    return None


def _columns(model: TracrModel, sop: str, encoding: str) -> list[int]:
    if encoding == "numerical":
        return [i for i, s in enumerate(model.labels) if s == sop]
    return [i for i, s in enumerate(model.labels) if s.startswith(sop + ":")]


def _encoding(model: TracrModel, own: list[int], encoding: str, v: Any) -> dict[int, fmpq] | None:
    """The exact column values tracr's basis gives the value v (None: v has no numerical encoding)."""
    if encoding == "numerical":
        if isinstance(v, bool):
            v = int(v)
        return None if v is None or isinstance(v, str) else {own[0]: QQ.convert(v)}
    return {c: fmpq(1) if v is not None and spells(model.labels[c].split(":", 1)[1], v) else fmpq(0) for c in own}


def _deviation(x: arb, target: fmpq) -> tuple[fmpq, fmpq]:
    lo, hi = endpoints(x)
    upper = max(abs(lo - target), abs(hi - target))
    return (fmpq(0) if lo <= target <= hi else min(abs(lo - target), abs(hi - target))), upper
