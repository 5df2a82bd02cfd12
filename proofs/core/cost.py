r"""Cost models: what a claim will compute, from its parameters alone, before anything is built.

Every claim declares ``cost(**params) -> Cost``. ``attncert prove``, ``sweep`` and
``verify`` consult it first and refuse, with one line that names the claim's
parameters, the computed size, the limit and the option that raises it, any run
over the limits in force (:class:`exact.limits.Limits`, one set shared by prove
and verify). ``attncert prove CLAIM --estimate`` prints the figures without
running. The formulas (docs/limits.md) mirror each construction's layout:

* transpose r x c: N = rc;  relu, maxmin: N = n;  inverse3: N = 9;  softmax r x c: N = rc;
* matmul (r, k, c): N = max(rk + kc, rck);
* U(n, d, d_v): N = max(nd + d^2 + d d_v, n d^2, n d d_v, n^2 d, n^2 d_v, 1);
* multi-head (h heads, d_o): N = max(inputs, h n d^2, h n d d_v, h n^2 d, h n^2 d_v, n d_o h d_v),
  inputs = nd + h d^2 + h d d_v + h d_v d_o;
* encoder layer (h heads, f hidden): as multi-head with d_o = d, and n f d, and the
  inputs W_1, b_1, W_2, b_2 (2 d f + f + d more);
* hierarchy: U(N, D, D_v) on N D D_v cases;
* Match2: U(L, M, M) on sum_{M=1}^{max_M} sum_{n=1}^{L} M^n words;
* k-PARITY: U(L, 3, 1) on sum_{n=1}^{L} min(max_k, n) 2^n words;
* approximation targets: the magnitude of f and its subexpressions on [0, 1]^d
  (below 2^1024, docs/approximation.md), from one interval enclosure on the cube;
* Sinkhorn: no RASP sequence; the arb precision of a Krawczyk run is at least
  Delta / (2 ln 2) + 128 bits with Delta <= 2 (max C - min C) / eps.

``pairs`` (selection pairs of the widest attention) and ``seconds`` / ``memory``
are estimates, labelled so: N times the widest fan-in, and linear models with
constants measured on the benchmark machine (2 cores); the language claims, which
evaluate U on batches of words, have their own constant per position and word.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Sequence

from flint import ctx, fmpq

from attncert.exact.errors import LimitExceeded
from attncert.exact.limits import Limits, current as current_limits, limits

if TYPE_CHECKING:
    import sympy

#: Seconds per evaluated position (U(256, 8, 8) proved, certificate written: about 20 s for 524 288 positions).
SECONDS_PER_POSITION = 4.5e-5
#: Words per batched evaluation of the language claims (proofs.simulator.languages cuts its chunks so).
WORDS_PER_BATCH = 1024
#: Seconds per position and word of the exhaustive language checks, which evaluate U on batches of words
#: (constructions/rasp/batch.py; Match2 at M = 5, n = 8: about 0.15 ms a word of 320 positions in one
#: process, bench/RESULTS.md; twice that allowed for a busy machine).
BATCHED_SECONDS_PER_POSITION = 1.0e-6
#: Bytes per word and position a batch holds at its peak, per process (4-PARITY at n = 16: 90 MiB over
#: the interpreter for 1024 words of 768 positions), rounded up.
BATCHED_BYTES_PER_POSITION = 128
#: Seconds per (n m) x (bits / 128)^1.5 of a certified Sinkhorn run (8 x 8 at eps = 1/10000: about 2 s).
SINKHORN_SECONDS = 2.6e-5
#: Counts beyond this are reported as this (2^1000000000 words is never computed).
CAP = 10**18


@dataclass(frozen=True)
class Cost:
    """What one run of a claim computes: exact sizes, and rough estimates of time and memory."""

    positions: int = 0  # longest RASP sequence evaluated (exact)
    pairs: int = 0  # selection pairs of the widest attention layer (estimate: N x widest fan-in)
    evaluations: int = 1  # sequences (words, cases) or Sinkhorn runs (exact)
    precision: int = 0  # arb working precision of the hardest Sinkhorn run, in bits (estimate, 0: none)
    seconds: float = 0.0  # estimate
    memory: int = 0  # estimate, bytes
    magnitude: int = 0  # an approximation target's values on the cube are below 2^magnitude (0: no target)
    variables: int = 0  # input variables of a for-all-inputs proof (exact)
    terms: int = 0  # polynomial terms a for-all-inputs proof holds at its peak (estimate)
    entries: int = 0  # entries of the largest matrix or text the run builds (exact; 0: bounded by the other sizes)
    document: int = 0  # bytes of the certificate the run writes (estimate from the sizes, an upper bound; 0: not estimated)
    problem: str = ""  # the problem the run takes, where the parameters alone do not say it (a file's shape)

    def lines(self) -> list[str]:
        return ([f"problem                      {self.problem}"] if self.problem else []) + [
            f"sequence length (positions)  {self.positions:,}",
            f"selection pairs (estimate)   {self.pairs:,}",
            f"evaluations or runs          {self.evaluations:,}",
            f"arb precision, bits (est.)   {self.precision:,}",
            f"time (rough estimate)        {_seconds(self.seconds)}",
            f"memory (rough estimate)      {_bytes(self.memory)}",
        ] + ([f"target magnitude, bits       {self.magnitude:,} (limit {_max_magnitude_bits():,})"] if self.magnitude else []) + (
            [f"input variables              {self.variables:,}", f"polynomial terms (estimate)  {self.terms:,}"] if self.variables else []
        ) + (
            [f"largest matrix, entries      {self.entries:,}"] if self.entries else []
        ) + (
            [f"certificate, bytes (est.)    {self.document:,}"] if self.document else []
        )


#: Limit field, Cost field, what it counts, the option that raises it.
CHECKED = (
    ("max_positions", "positions", "a sequence of {:,} positions", "--max-positions"),
    ("max_pairs", "pairs", "about {:,} selection pairs", "--max-pairs"),
    ("max_evaluations", "evaluations", "{:,} evaluations", "--max-evaluations"),
    ("max_entries", "entries", "a matrix of {:,} entries", "--max-entries"),
    ("max_precision", "precision", "about {:,} bits of arb precision", "--max-precision"),
    ("max_memory", "memory", "about {:,} bytes of memory (predicted from the sequence length and the schedule, docs/limits.md)", "--max-memory"),
    ("max_symbolic_terms", "terms", "about {:,} polynomial terms (a for-all-inputs proof's estimate, docs/identity.md)", "--max-symbolic-terms"),
    # Checked only where a certificate is written (prove, sweep): verify reads the document's own size, and
    # graph writes no certificate.
    ("max_bytes", "document", "a certificate of about {:,} bytes (estimated from the sizes, docs/limits.md)", "--max-bytes"),
)


def check(claim: str, params: dict[str, Any], cost: Cost, lim: Limits, writes: bool = True) -> None:
    """LimitExceeded (one line: claim, parameters, size, limit, option) if the cost is over a limit; the
    certificate's size only when the run ``writes`` one."""
    over = refusals(claim, params, cost, lim, writes)
    if over:
        raise LimitExceeded(over[0])


def refusals(claim: str, params: dict[str, Any], cost: Cost, lim: Limits, writes: bool = True) -> list[str]:
    """One line for each limit the cost is over (claim, parameters, size, limit, option), in CHECKED's order;
    the certificate's size (max_bytes) only when the run ``writes`` one."""
    shown = ", ".join(f"{k}={v}" for k, v in params.items() if v is not None and k not in ("seed", "inputs", "jobs", "domain", "scheduler", "chunks"))
    # where the cost model names the problem it estimated (a file's shape, the temperatures --reg sets), that says it
    subject = f"on {cost.problem}" if cost.problem else f"with {shown or 'these parameters'}"
    lines = []
    for limit_field, cost_field, what, option in CHECKED:
        if cost_field == "document" and not writes:
            continue
        size, limit = getattr(cost, cost_field), getattr(lim, limit_field)
        if size > limit:
            amount = what.format(size) if size < CAP else what.replace("{:,}", "more than 10^18").replace("about ", "")
            lines.append(
                f"{claim} {subject} needs {amount}, over the limit of {limit:,} "
                f"(raise it with {option} if you mean it)"
            )
    return lines


def _seconds(s: float) -> str:
    return f"{s:.2g} s" if s < 120 else f"{s / 60:.2g} min" if s < 7200 else f"{s / 3600:.2g} h"


def _bytes(b: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if b < 1024 or unit == "TiB":
            return f"{b:.3g} {unit}" if unit != "B" else f"{b} B"
        b /= 1024
    return f"{b} B"


def rasp_cost(positions: int, fan_in: int, evaluations: int = 1, per_position: float = SECONDS_PER_POSITION) -> Cost:
    """A RASP run: N positions (exact), N x fan-in pairs, time and memory linear in N."""
    positions, evaluations = min(positions, CAP), min(evaluations, CAP)
    return Cost(
        positions=positions,
        pairs=min(positions * max(fan_in, 1), CAP),
        evaluations=evaluations,
        seconds=per_position * positions * evaluations,
        memory=_predicted_memory(positions),
    )


# The checkers read this module (the identity checker's work budget, the size of a recorded tracr model) and
# never load the constructions: the formulas that need a construction's schedule import it when they run.


def _predicted_memory(positions: int) -> int:
    from attncert.proofs.core import memory

    return memory.predict(positions)


def _sequence_length(*sizes: int, inputs: int) -> int:
    from attncert.constructions.simulator import sequence_length

    return sequence_length(*sizes, inputs=inputs)


# -- sequence lengths -----------------------------------------------------------------------------


def universal_length(n: int, d: int, dv: int) -> int:
    """U's sequence: its input vec(X) ++ vec(A) ++ vec(V), or its widest stage (simulator.sequence_length)."""
    return _sequence_length(n, d, dv, inputs=n * d + d * d + d * dv)


def multihead_length(n: int, d: int, dv: int, h: int, do: int, f: int = 0, extra_inputs: int = 0) -> int:
    return _sequence_length(n, d, dv, h, do, f, inputs=n * d + h * d * d + h * d * dv + h * dv * do + extra_inputs)


# -- certificate size -------------------------------------------------------------------------------
#
# A layout claim's certificate records its input matrices, its output block twice (the output and the
# reference, equal when the claim holds), the rest of the evaluated sequence (zeros), and a few KB more:
# envelope, statement, layout and the recorded graph, which does not grow with the sizes. The bytes of one
# recorded value are bounded by measurement over seeds and sizes (tests/proofs/core/test_document_sizes.py checks
# the bound against real certificates; docs/limits.md has the figures), rounded up. The inputs are the seed's,
# rationals of height at most 20/9: an input file of longer numbers makes a longer certificate than estimated,
# which is still refused when written if it is over --max-bytes.

#: Envelope, statement, layout, size, result, and the recorded graph (the largest, encoder_layer_norm's, 27 KB).
DOCUMENT_BASE = 40_000
#: One recorded value, its comma included: a random rational ("-20/9"); the same lifted into EE (40 measured);
#: a random EE value a + b e^q (relu and maxmin in EE: 52 measured); a zero of the rest in QQ ("0") and in EE
#: ({"den":[["0","1"]],"num":[]}, exactly 29); an EE number's braces and lists besides its terms; a sum of k
#: products of random rationals (matmul's outputs: 16 measured).
QQ_VALUE, EE_RATIONAL, EE_VALUE, QQ_ZERO, EE_ZERO, EE_ENTRY, QQ_SUM = 8, 48, 64, 4, 29, 24, 32
#: One term [exponent, coefficient] of an attention output in EE: base + per_bit log2(d + 1) + per_head h bytes.
#: The exponent is a sum of h scores x_i^T A x_j of d^2 products each, whose digits grow with log d; the
#: coefficients are products of the values. Measured (bytes a term, averaged over an output): universal 20 at
#: d = 1 to 41 at d = 256, multihead 28 to 44 (h = 4, d = 32), encoder_layer 31 to 49 (h = 2, d = 32, f = 64);
#: each formula is 10-50% above its family's figures.
TERM_BYTES = {"universal": (24, 4, 0), "multihead": (26, 4, 1), "encoder_layer": (30, 5, 1)}
#: A softmax output's terms are single scores (16 measured).
SOFTMAX_TERM = 20
#: A compiled model's weights: MODEL_BASE, and MODEL_BYTES a position by construction (measured a position at 1,000
#: to 4,000 positions: relu 11, softmax 45, maxmin 70, transpose 71, matmul 122, universal 419, multihead 484,
#: encoder_layer 669); the languages' readouts (U) and the rest, MODEL_BYTES_OTHER.
MODEL_BASE = 16_000
MODEL_BYTES = {"relu": 16, "softmax": 64, "maxmin": 96, "transpose": 96, "matmul": 160, "universal": 512, "multihead": 640, "encoder_layer": 832}
MODEL_BYTES_OTHER = 832
#: A hierarchy case's sizes and brackets, in inputs, outputs and reference.
CASE_BYTES = 128


def term_bytes(kind: str, d: int, h: int = 1) -> int:
    """Bytes of one exponential term of an attention output of this kind (TERM_BYTES) at width d and h heads."""
    base, per_bit, per_head = TERM_BYTES[kind]
    return base + per_bit * (d + 1).bit_length() + per_head * h


def ball_bytes(prec: int) -> int:
    """A ball at ``prec`` bits as JSON: its midpoint p/2^k and radius, about prec decimal digits in all (150 at 128)."""
    return 48 + prec


def capped_power(n: int, h: int) -> int:
    """n^h, or CAP once it passes CAP (without forming n^h for h = 10^32)."""
    if n <= 1:
        return n
    return CAP if h * (n.bit_length() - 1) >= 60 else min(n**h, CAP)


def layout_document(inputs: int, outputs: int, entry: int, positions: int, zero: int, value: int) -> int:
    """Bytes of a layout claim's certificate: DOCUMENT_BASE, ``inputs`` input values of ``value`` bytes, the output
    block of ``outputs`` entries of ``entry`` bytes twice (output and reference), and the other positions of the
    ``positions``-long sequence as zeros of ``zero`` bytes; at most CAP."""
    return min(DOCUMENT_BASE + inputs * value + 2 * outputs * entry + max(positions - outputs, 0) * zero, CAP)


def compiled_document(of: str, construction: Cost) -> int:
    """A ``compiled`` certificate of the construction ``of``: the construction's, a third copy of the outputs (the
    RASP evaluation's, at most half of what the construction records besides DOCUMENT_BASE) and the model's
    weights; 0 where the construction's is not estimated."""
    if not construction.document:
        return 0
    doc, model = construction.document, MODEL_BASE + MODEL_BYTES.get(of, MODEL_BYTES_OTHER) * construction.positions
    return min(doc + (doc - DOCUMENT_BASE) // 2 + model, CAP)


def _with_document(cost: Cost, document: int) -> Cost:
    return replace(cost, document=document)


# -- the layout claims --------------------------------------------------------------------------------


def transpose(r: int, c: int, **_: Any) -> Cost:
    cost = rasp_cost(r * c, 1)
    return _with_document(cost, layout_document(r * c, r * c, QQ_VALUE, cost.positions, QQ_ZERO, QQ_VALUE))


def matmul(r: int, k: int, c: int, **_: Any) -> Cost:
    cost = rasp_cost(max(r * k + k * c, r * c * k), k)
    return _with_document(cost, layout_document(r * k + k * c, r * c, QQ_SUM, cost.positions, QQ_ZERO, QQ_VALUE))


def softmax(r: int, c: int, scores: int | None = None, **_: Any) -> Cost:
    """Each output exp(s_ij) / sum_k exp(s_ik) has one term over the distinct exponentials of its row: at most
    min(c, ``scores``) + 1 terms, ``scores`` the number of values an input score takes (None: any number)."""
    cost = rasp_cost(r * c, c)
    entry = EE_ENTRY + (min(c, c if scores is None else scores) + 1) * SOFTMAX_TERM
    return _with_document(cost, layout_document(r * c, r * c, entry, cost.positions, EE_ZERO, EE_RATIONAL))


def elementwise(n: int, domain: str = "EE", **_: Any) -> Cost:
    cost = rasp_cost(n, 1)
    value, zero = (EE_VALUE, EE_ZERO) if domain == "EE" else (QQ_VALUE, QQ_ZERO)
    return _with_document(cost, layout_document(n, n, value, cost.positions, zero, value))


def inverse3(**_: Any) -> Cost:
    return _with_document(rasp_cost(9, 9), layout_document(9, 9, 4 * QQ_SUM, 9, QQ_ZERO, QQ_VALUE))


def universal(n: int, d: int, dv: int, **_: Any) -> Cost:
    """Each of the n d_v outputs is a quotient of two sums of n exponentials: 2n terms."""
    cost = rasp_cost(universal_length(n, d, dv), max(n, d))
    entry = EE_ENTRY + 2 * n * term_bytes("universal", d)
    return _with_document(cost, layout_document(n * d + d * d + d * dv, n * dv, entry, cost.positions, EE_ZERO, EE_RATIONAL))


def multihead(n: int, d: int, dv: int, h: int, do: int, **_: Any) -> Cost:
    """Each of the n d_o outputs sums h heads' quotients over one common denominator, the product of the h heads' sums
    of n exponentials: at most 2 n^h terms (n^h in the denominator, n^h in the numerator)."""
    cost = rasp_cost(multihead_length(n, d, dv, h, do), max(n, d, h * dv))
    entry = EE_ENTRY + 2 * capped_power(n, h) * term_bytes("multihead", d, h)
    inputs = n * d + h * d * d + h * d * dv + h * dv * do
    return _with_document(cost, layout_document(inputs, n * do, entry, cost.positions, EE_ZERO, EE_RATIONAL))


def encoder_layer(n: int, d: int, dv: int, h: int, f: int, extra_inputs: int = 0, **_: Any) -> Cost:
    """``extra_inputs``: positions read after the layer's own weights (layer norm's gamma and beta). The n d outputs
    are multi-head attention's (2 n^h terms) through the residual and the MLP, over the same denominator."""
    inputs = n * d + h * d * d + 2 * h * d * dv + 2 * d * f + f + d + extra_inputs
    cost = rasp_cost(multihead_length(n, d, dv, h, d, f, 2 * d * f + f + d + extra_inputs), max(n, d, h * dv, f))
    entry = EE_ENTRY + 2 * capped_power(n, h) * term_bytes("encoder_layer", d, h)
    return _with_document(cost, layout_document(inputs, n * d, entry, cost.positions, EE_ZERO, EE_RATIONAL))


def encoder_layer_norm(n: int, d: int, dv: int, h: int, f: int, prec: int = 128, **_: Any) -> Cost:
    """The encoder layer (its output recorded as ``pre_norm``), gamma and beta, and the n d balls of the layer norm
    at ``prec`` bits, twice (output and reference)."""
    cost = encoder_layer(n, d, dv, h, f, extra_inputs=2 * d)
    return _with_document(cost, min(cost.document + 2 * n * d * ball_bytes(prec), CAP))


def hierarchy(N: int, D: int, Dv: int, **_: Any) -> Cost:
    """U(n, d, d_v) for every n <= N, d <= D, d_v <= D_v: each case records its inputs (rationals), and its n d_v
    outputs of 2n terms twice (no rest). With S1(k) = k(k+1)/2 and S2(k) = k(k+1)(2k+1)/6, the sums over the cases are
    sum n d_v = D S1(N) S1(D_v), sum 2n^2 d_v = 2 D S2(N) S1(D_v), and the inputs n d + d^2 + d d_v sum to
    D_v S1(N) S1(D) + N D_v S2(D) + N S1(D) S1(D_v); each term is at most term_bytes(D)."""
    cost = rasp_cost(universal_length(N, D, Dv), max(N, D), N * D * Dv)
    inputs = Dv * _s1(N) * _s1(D) + N * Dv * _s2(D) + N * _s1(D) * _s1(Dv)
    outputs = 2 * (EE_ENTRY * D * _s1(N) * _s1(Dv) + term_bytes("universal", D) * 2 * D * _s2(N) * _s1(Dv))
    return _with_document(cost, min(DOCUMENT_BASE + inputs * QQ_VALUE + outputs + CASE_BYTES * N * D * Dv, CAP))


def _s1(k: int) -> int:
    return k * (k + 1) // 2


def _s2(k: int) -> int:
    return k * (k + 1) * (2 * k + 1) // 6


def _power_sum(base: int, top: int, weight: Callable[[int], int] = lambda n: 1) -> int:
    """sum_{n=1}^{top} weight(n) base^n for base >= 2, or CAP once it exceeds CAP (after at most 60 terms)."""
    total, term = 0, 1
    for n in range(1, top + 1):
        term *= base
        total += weight(n) * term
        if total > CAP:
            return CAP
    return total


def batched_cost(positions: int, fan_in: int, words: int) -> Cost:
    """Words evaluated in batches of WORDS_PER_BATCH: time per position and word, and a batch's arrays in memory."""
    cost = rasp_cost(positions, fan_in, words, BATCHED_SECONDS_PER_POSITION)
    return replace(cost, memory=cost.memory + min(WORDS_PER_BATCH, words) * min(positions, CAP) * BATCHED_BYTES_PER_POSITION)


def match2(max_M: int, max_length: int, **_: Any) -> Cost:
    words = 0
    for M in range(1, max_M + 1):  # M = 1: one word of each length; the sum passes CAP by M = 2 for long words
        words = min(words + (max_length if M == 1 else _power_sum(M, max_length)), CAP)
        if words == CAP:
            break
    return batched_cost(universal_length(max_length, max_M, max_M), max(max_length, max_M), words)


def parity(max_k: int, max_length: int, **_: Any) -> Cost:
    words = _power_sum(2, max_length, lambda n: min(max_k, n))
    return batched_cost(universal_length(max_length, 3, 1), max(max_length, 3), words)


# -- approximation targets -----------------------------------------------------------------------


def _max_magnitude_bits() -> int:
    from attncert.exact.expressions.enclose import MAX_MAGNITUDE_BITS

    return MAX_MAGNITUDE_BITS


def target_magnitude(claim: str, text: str, expr: sympy.Expr, symbols: Sequence[sympy.Symbol]) -> int:
    """The least k >= 1 with |e| < 2^k on [0, 1]^d for f and every subexpression e (interval enclosures on the
    whole cube at 64 bits, which hold every value on a smaller box): what the run's rationals are sized by.

    LimitExceeded (one line) when a subexpression reaches 2^MAX_MAGNITUDE_BITS, or has no finite enclosure on
    the cube, before any number the size of such a value is formed (arb keeps its exponent apart)."""
    import sympy  # the expressions' modules load sympy, which a run without a target does not need

    from attncert.exact.expressions import EnclosureError, compile_enclosures, interval
    from attncert.exact.expressions.enclose import magnitude_bits

    nodes = list(dict.fromkeys(sympy.postorder_traversal(expr)))
    try:
        with ctx.workprec(64):
            ranges = compile_enclosures(nodes, symbols)([interval(fmpq(0), fmpq(1))] * len(symbols))
    except EnclosureError as e:
        raise LimitExceeded(f"{claim}: the target {text!r:.60} on [0, 1]^{len(symbols)}: {e}") from None
    return max([1] + [magnitude_bits(v) for r in ranges for v in r if v != 0])


# -- Sinkhorn -------------------------------------------------------------------------------------


def krawczyk_bits(cost_range: fmpq, eps: fmpq, prec: int) -> int:
    """The precision the prover's Krawczyk ladder climbs to: max(4 prec, Delta / (2 ln 2) + 128), Delta <= 2 range / eps.

    Below Delta = 40 the Hilbert bound is used at ``prec`` bits.
    """
    delta = 2 * cost_range / eps
    if delta <= 40:
        return prec
    # 1 / (2 ln 2) < 0.7214; the ceiling of an exact rational, no float overflow for any eps.
    return max(4 * prec, int(-(-(delta * fmpq(7214, 10000)).p // (delta * fmpq(7214, 10000)).q)) + 128)


def sinkhorn_cost(n: int, m: int, runs: int, bits: int) -> Cost:
    """``runs`` certified runs on an n x m plan at up to ``bits`` bits. A cost of 10^400 over eps asks for 10^400
    bits: precision and memory are capped at CAP, far above the precision ceiling (2^24 bits), so that they print."""
    work = min(n * m, CAP) * max(1.0, min(bits, 10**12) / 128) ** 1.5
    return Cost(
        evaluations=runs,
        precision=min(bits, CAP),
        seconds=SINKHORN_SECONDS * work * runs,
        memory=min(64 * n * m * max(bits, 64) + (1 << 20), CAP),
        entries=n * m,
    )



def parsed(claim: Any, raw: dict[str, Any]) -> dict[str, Any]:
    """The claim's declared parameters among ``raw`` (strings or ints), parsed with their own types."""
    out = {}
    for p in claim.params:
        v = raw.get(p.name)
        if v is not None and not isinstance(v, bool):
            out[p.name] = p.type(str(v))
    return out


def refuse_over_limits(claim: Any, raw: dict[str, Any], lim: Limits, writes: bool = True, doc: dict[str, Any] | None = None) -> Cost:
    """The cost at these parameters, or LimitExceeded before anything is built. The cost model runs with the
    limits in force, so that one that builds something to estimate (a schedule, a dry run) stops first where
    a size it computes is over them (:func:`over_limits`). ``writes``: the run writes a certificate, whose
    estimated size is checked too (not for verify, which reads one, nor for graph). ``doc``: the certificate
    whose recorded parameters ``raw`` are, for what its cost model reads from the recorded inputs."""
    params = parsed(claim, raw)
    cost = estimate(claim, params, lim, doc)
    check(claim.name, params, cost, lim, writes)
    return cost


def estimate(claim: Any, params: dict[str, Any], lim: Limits, doc: dict[str, Any] | None = None) -> Cost:
    """The claim's cost model at these (parsed) parameters, of the certificate ``doc`` when given, run with
    ``lim`` in force."""
    with limits(lim):
        return claim.estimate(params, doc)


def over_limits(cost: Cost) -> bool:
    """Whether ``cost`` is over a limit in force: a cost model returns it as it is, building nothing more (the
    certificate's size aside: it is checked only where one is written, and verify still needs the memory model)."""
    lim = current_limits()
    return any(getattr(cost, c) > getattr(lim, f) for f, c, _, _ in CHECKED if c != "document")


# -- a recorded tracr model: the tracr_model checker's forward passes (docs/tracr.md) ------------------------

#: Bytes a ball of the checker's forward pass holds (a FLINT arb and its slot in a list). Measured on make_length over
#: a, b, c to length 6 with J residual columns added (queries, keys and hidden units J wider, one layer): 375 MB at
#: J = 100, 828 MB at 300, 1,565 MB at 600 for 5,103 rows of (width + 3 heads key_size + hidden) balls in one batch,
#: 93 bytes a ball past the interpreter's 110 MB; rounded up.
TRACR_BALL_BYTES = 128
#: Seconds a ball, and a product of a row by a weight (the dense blocks of :func:`tracr_model`, one product a row and
#: entry), the same measurement with the blocks formed once for every chunk: 22 s at J = 600, 176 s at J = 1,400 over
#: 7,107 rows, 2.1 to 3.1 ns a row and entry of the blocks (4 J^2 a row), rounded up; the balls' part from 5.0 s at
#: J = 100 before (1.3 us a ball).
TRACR_SECONDS_PER_BALL, TRACR_SECONDS_PER_PRODUCT = 2.5e-6, 4e-9
#: What the check holds besides its balls (the interpreter, numpy, FLINT), rounded up.
TRACR_BASE_BYTES = 128 << 20


def tracr_balls(width: int, heads: int, key_size: int, hidden: int) -> int:
    """Balls a position of one layer's pass holds at most: the residual, the queries, keys and values of every head,
    the hidden units."""
    return width + 3 * heads * key_size + hidden


def tracr_chunk(positions: int, balls: int) -> int:
    """Inputs one forward pass of the checker runs together: as many as keep its positions x balls within the limit
    on a matrix's entries in force (so that memory does not grow with the number of inputs), at least one."""
    return max(1, current_limits().max_entries // max(positions * balls, 1))


def every_input(tokens: int, max_seq_len: int) -> int:
    """The sequences of every length 1..max_seq_len over ``tokens`` tokens, sum_n tokens^n (at most CAP)."""
    return min(max_seq_len if tokens == 1 else _power_sum(tokens, max_seq_len), CAP)


def tracr_model(inputs: int, max_seq_len: int, width: int, heads: int, key_size: int, hidden: int, layers: int, embedding_rows: int, precision: int) -> Cost:
    """The tracr_model checker on a recorded model (its shapes, read before any weight): ``inputs`` sequences
    (:func:`every_input`, for the exhaustive method) of at most max_seq_len tokens, max_seq_len + 1 positions each
    (BOS first), through ``layers`` layers of :func:`tracr_balls` balls a position, in chunks of :func:`tracr_chunk`
    inputs. ``entries`` is the largest matrix it builds: a chunk's residual, queries or hidden units, a dense block of
    weights and its bias row ((width + 1) x heads key_size for W_Q, W_K, W_V, (width + 1) x hidden for W_1, and the
    transposed blocks), an embedding, a head's logits; ``memory`` a chunk's balls, every layer's blocks (formed once)
    and TRACR_BASE_BYTES; ``seconds`` every ball and every product of a row by a block's entry once (inputs left
    undecided run again at 2 and 4 times the precision)."""
    positions, count = max_seq_len + 1, min(inputs, CAP)
    balls = tracr_balls(width, heads, key_size, hidden)
    chunk = min(tracr_chunk(positions, balls), max(count, 1))
    widest, hk = max(width, heads * key_size, hidden), heads * key_size
    blocks = [(width + 1) * hk] * 3 + [(hk + 1) * width, (width + 1) * hidden, (hidden + 1) * width]  # one layer's
    entries = max(chunk * positions * widest, max(blocks), embedding_rows * width, positions * positions)
    rows = count * positions
    return Cost(
        positions=positions,
        pairs=min(positions * positions, CAP),
        evaluations=count,
        precision=4 * precision,
        seconds=rows * layers * (TRACR_SECONDS_PER_BALL * balls + TRACR_SECONDS_PER_PRODUCT * sum(blocks)),
        memory=min(TRACR_BASE_BYTES + TRACR_BALL_BYTES * (chunk * positions * balls + layers * sum(blocks) + positions * positions), CAP),
        entries=min(entries, CAP),
    )


# -- for-all-inputs (identity) proofs: docs/identity.md ------------------------------------------

#: Bytes and seconds per polynomial term of a symbolic proof: U(32, 8, 8) holds about 262,000 terms
#: (exp arguments and the reference's numerators) in 257 MiB and U(16, 16, 16) as many in 384 MiB,
#: proven in 4-6 s on the benchmark machine; rounded up for a busy one. A term costs a byte more per
#: input variable: FLINT packs each monomial's exponents, at least a byte each (transpose(128, 128),
#: 16,384 variables and terms: 370 MiB). The checker's terms are smaller (sorted pairs, about 0.7 KiB
#: a term of the layer norm's variances), and verify checks before it proves again, so one peak
#: covers both (docs/identity.md, "What prove and verify may hold").
BYTES_PER_TERM = 1536
SECONDS_PER_TERM = 6e-5
#: What a symbolic proof holds besides its terms (the interpreter, attncert, FLINT, sympy: 97-101 MiB
#: measured for relu(1) and inverse3, prove and verify alike), rounded up.
SYMBOLIC_BASE_BYTES = 128 << 20


def identity_terms(base: str, p: dict[str, Any]) -> tuple[int, int]:
    """(input variables, polynomial terms held at the peak) of the for-all-inputs proof of ``base``.

    The terms are those of the exp arguments and of the numerators over the softmax sums, which
    dominate: U(n, d, d_v) forms n^2 exponents of d^2-term scores and n d_v numerators of n d terms,
    twice (construction and reference); a product of k terms per entry, a row softmax c terms per
    entry; an encoder layer adds its n f ReLU arguments (Y W_1 + b_1)_ik, each the sum over j of
    Y_ij W_1[j, k] with Y_ij one part per head of n d_v d terms (a key's E_ik X_kt V_tv W_O[v, j]):
    h n d^2 d_v + d + 1 terms (measured: 525 at (4, 4, 4, 2, 32), 128 arguments), twice. The layer norm's
    variance of a row sums the squares of its d centred entries, each one part per head over that
    head's softmax sum, of n d_v d^2 terms (a key's E_ik times X_kt V_tv W_O[v, j'], j' over the
    centring), and one part of (f + 2) d terms without a denominator: row^2 / 2 terms, row =
    h n d_v d^2 + (f + 2) d, for each of the n rows. That dominates: (5, 4, 3, 3, 5) holds 1.4
    million, where the layer's own terms are 29,000. The largest product the checker forms, of two
    heads' parts (n d_v d^2)^2 terms, is within it, so what this estimate lets run the checker's
    limit on a product (max_symbolic_terms, docs/identity.md) lets through.
    """
    n, d, dv, h, f = (p.get(k, 1) for k in ("n", "d", "dv", "h", "f"))
    if base == "transpose":
        return p["r"] * p["c"], p["r"] * p["c"]
    if base == "matmul":
        return p["r"] * p["k"] + p["k"] * p["c"], 2 * p["r"] * p["c"] * p["k"]
    if base == "softmax":
        return p["r"] * p["c"], 2 * p["r"] * p["c"] * p["c"]
    if base in ("relu", "maxmin"):
        return p["n"], 3 * p["n"]
    if base == "inverse3":
        return 9, 2_000
    one_head = 2 * n * n * d * d + 2 * n * n * d * dv
    if base == "universal":
        return n * d + d * d + d * dv, one_head
    do = d if base.startswith("encoder_layer") else p.get("do", 1)
    variables = n * d + h * d * d + h * d * dv + h * dv * do
    terms = h * one_head + 2 * n * do * h * dv * n * d
    if base.startswith("encoder_layer"):
        variables += 2 * d * f + f + d
        terms += 2 * n * f * (h * n * d * d * dv + d + 1) + 2 * n * d * f
    if base == "encoder_layer_norm":
        variables += 2 * d
        row = h * n * dv * d * d + (f + 2) * d
        terms += n * row * row // 2
    return variables, terms


#: A term of an identity certificate's exp basis (rows and arguments: [monomial, coefficient], a monomial a list
#: of [variable, exponent]) is at most IDENTITY_TERM + IDENTITY_TERM_PER_DIGIT k bytes, a term of a recorded divisor
#: IDENTITY_DIVISOR_TERM + IDENTITY_TERM_PER_DIGIT k, and a variable's name IDENTITY_VARIABLE + k, with k the digits of
#: the largest variable index (measured, bytes a term: 27-29 at k = 2, 30.5-31.3 at k = 3; divisors 36-49).
IDENTITY_TERM, IDENTITY_DIVISOR_TERM, IDENTITY_TERM_PER_DIGIT, IDENTITY_VARIABLE = 24, 40, 3, 8
#: The basis rows hold more terms than the arguments they span (reduced to distinct leading monomials): 1.23 to 1.41
#: times at the sizes measured (U(2, 32, 1) to U(16, 16, 8)), so the exp basis is at most 2.6 times the arguments'.
IDENTITY_BASIS_FACTOR = 2.6
#: One ReLU or MaxMin region group (a sign tree of three leaves and its Motzkin certificates): 123-142 bytes measured
#: (relu(1 to 64), maxmin(9, 64)); a leaf of the one tree of a compiled model's regions (every variable's sign
#: combined, 3^n leaves for relu(n)): 46 bytes (compiled relu(8): 303,135 bytes).
IDENTITY_REGION_GROUP, IDENTITY_REGION_LEAF = 160, 48
#: inverse3's one recorded divisor (det M, 205 bytes).
IDENTITY_INVERSE3 = 256


def identity_document(base: str, p: dict[str, Any], regions: str = "groups") -> int:
    """Bytes of the identity certificate of ``base`` at sizes ``p``, an upper bound from what it records: the
    envelope and the graph (DOCUMENT_BASE), the variables' names, the exp basis (softmax's r c scores; U's n^2
    scores x_i A x_j^T of d^2 terms, h times for multi-head attention and the encoder layers), the divisors (a
    softmax row sum of c terms per row; n of n terms, h times) and the regions (one group per ReLU input or MaxMin
    pair; ``regions="tree"`` for a compiled model, one tree over every variable).

    Measured, written / estimated: U(16, 8, 8) 1.20 / 1.33 MB; U(16, 16, 8) 4.98 / 5.45 MB; U(32, 32, 8) 85.07 /
    94.6 MB; U(32, 2, 1) 320 / 395 KB; multihead(8, 4, 4, 4, 8) 294 / 431 KB; encoder_layer(8, 8, 4, 2, 8) 600 / 855
    KB; encoder_layer_norm(4, 3, 2, 2, 4) 50 / 66 KB; softmax(8, 16) 13.9 / 55 KB; relu(64) 9.7 / 51 KB; compiled
    relu(8) 303 / 371 KB. About 75 n^2 d^2 bytes for U (79 per n^2 d^2 at U(32, 32, 8), 73-76 at d = 16 and 32)."""
    variables, _ = identity_terms(base, p)
    k = len(str(max(variables - 1, 1)))
    term, divisor = IDENTITY_TERM + IDENTITY_TERM_PER_DIGIT * k, IDENTITY_DIVISOR_TERM + IDENTITY_TERM_PER_DIGIT * k
    n, d, h = (p.get(x, 1) for x in ("n", "d", "h"))
    arguments = divisors = extra = 0
    if base == "softmax":
        arguments = divisors = p["r"] * p["c"]
    elif base == "universal" or base in ("multihead", "encoder_layer", "encoder_layer_norm"):
        arguments, divisors = h * n * n * d * d, h * n * n
    elif base == "inverse3":
        extra = IDENTITY_INVERSE3
    elif base in ("relu", "maxmin"):
        groups = n if base == "relu" else (n + 1) // 2
        extra = IDENTITY_REGION_LEAF * capped_power(3, groups) if regions == "tree" else IDENTITY_REGION_GROUP * groups
    body = IDENTITY_BASIS_FACTOR * arguments * term + divisors * divisor + extra
    return min(DOCUMENT_BASE + variables * (IDENTITY_VARIABLE + k) + int(body), CAP)


def identity(base: str, positions: int, **p: Any) -> Cost:
    """A for-all-inputs proof of ``base`` on a sequence of ``positions`` (the one-input claim's): its
    variables, terms and certificate."""
    variables, terms = identity_terms(base, p)
    return replace(_symbolic(positions, variables, terms, 1), document=identity_document(base, p))


def hierarchy_identity(N: int, D: int, Dv: int, **_: Any) -> Cost:
    """N D D_v symbolic proofs of U(N, D, D_v), one after the other: memory of the largest, time of all. The
    certificate records every case as U's identity certificate records its one (without the envelope), each
    at most as long as :func:`identity_document` of that case (measured: (4, 3, 2) 74 / 118 KB, (8, 3, 2) 411 /
    541 KB); the sums over the cases are taken in closed form (S1, S2), each term at the largest case's digits."""
    variables, terms = identity_terms("universal", {"n": N, "d": D, "dv": Dv})
    k = len(str(max(variables - 1, 1)))
    arguments, divisors = _s2(N) * _s2(D) * Dv, _s2(N) * D * Dv
    names = Dv * _s1(N) * _s1(D) + N * Dv * _s2(D) + N * _s1(D) * _s1(Dv)
    body = IDENTITY_BASIS_FACTOR * arguments * (IDENTITY_TERM + IDENTITY_TERM_PER_DIGIT * k) + divisors * (IDENTITY_DIVISOR_TERM + IDENTITY_TERM_PER_DIGIT * k)
    document = min(DOCUMENT_BASE + names * (IDENTITY_VARIABLE + k) + CASE_BYTES * N * D * Dv + int(body), CAP)
    return replace(_symbolic(universal_length(N, D, Dv), variables, terms, min(N * D * Dv, CAP)), document=document)


def _symbolic(positions: int, variables: int, terms: int, runs: int) -> Cost:
    positions, terms = min(positions, CAP), min(terms, CAP)
    return Cost(
        positions=positions,
        pairs=positions,
        evaluations=runs,
        seconds=SECONDS_PER_TERM * terms * runs,
        memory=min(SYMBOLIC_BASE_BYTES + (BYTES_PER_TERM + variables) * terms, CAP),
        variables=variables,
        terms=terms,
    )
