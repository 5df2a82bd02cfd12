r"""The stated modulus |f(x) - f(y)| <= C ||x - y||_inf^alpha, decided on grid pairs: proven, violated, or undecided.

The grid is {0..m}^d / m (row-major, x1 slowest). For alpha = 1 the pairs tested
are the king neighbours: two grid points are joined by ||x_i - x_j||_inf m king
moves of length 1/m, so the bound on every neighbour pair gives it on every grid
pair by the triangle inequality. For alpha < 1 every pair is tested. A pair at
max-norm distance k/m counts as

* **proven** when |f(x_i) - f(x_j)| <= T_k = C (k/m)^alpha is shown,
* **violated** when |f(x_i) - f(x_j)| > T_k is shown,
* **undecided** otherwise: it is not counted as holding.

How each pair is decided:

1. *Exact values.* Where f is exact at a grid point (:mod:`exact.expressions.radicals`:
   a rational, or a radical r^(1/n) such as x1^(1/2) at 2/9), a pair whose
   difference is a radical too (both values rational, one of them 0, or both
   equal) is decided exactly: |f(x_i) - f(x_j)| = r^(1/n) against T_k = (C^q
   (k/m)^p)^(1/q) (alpha = p/q), compared as N-th powers, N = lcm(n, q). Such
   pairs are counted as decided from exact values; equality is proven, as it
   must be for f = x1 with C = 1, or x1^(1/2) with C = 1 at the pairs (0, x).
2. *Enclosures.* Every grid value lies in [lo_i, hi_i] (the exact value, or f's
   enclosure at ``prec`` bits), rounded outward to integers at scale 2^S, S the
   precision. With U = max(hi_i - lo_j, hi_j - lo_i) and D = max(lo_i - hi_j,
   lo_j - hi_i), and t_k = floor(T_k 2^S) computed exactly (floor of a q-th
   root of an integer), the pair is proven if U <= t_k (then |f_i - f_j| 2^S <=
   U <= T_k 2^S) and violated if D > t_k (then D >= t_k + 1 > T_k 2^S). Every
   pair at once, per offset of the grid tensor, in integers: first at the
   coarser scale that keeps them in int64 (most pairs are decided there), then
   at scale 2^prec for the pairs still open.
3. Pairs left undecided by both are enclosed again at 4 and 16 times the
   precision (at most 2^16 bits); what is still undecided stays undecided.

The first violated and the first undecided pair (least (i, j), i < j) are
recorded with how they were decided.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import sympy
from flint import ctx, fmpq, fmpz

from attncert.exact import QQ
from attncert.exact.expressions import compile_enclosure, point, variables
from attncert.exact.expressions.enclose import MAX_PRECISION, endpoints, rational
from attncert.exact.expressions.radicals import Radical, Value, compare, compile_exact, radical

INT64_LIMIT = 1 << 62
#: Precision multipliers of the enclosures tried on pairs left undecided.
LADDER = (1, 4, 16)
EXACT = "exact values of f"
#: Most pairs decided one by one from exact values (the rest of them are left to the enclosures).
MAX_EXACT_PAIRS = 1_000_000


@dataclass(frozen=True)
class Pair:
    i: int
    j: int
    decided_by: str  # EXACT, or "enclosures at P bits"; "" for an undecided pair


@dataclass(frozen=True)
class Decision:
    pairs: int
    proven: int
    from_exact_values: int
    violated: int
    undecided: int
    precisions: tuple[int, ...]
    violated_pair: Pair | None
    undecided_pair: Pair | None


def ladder(prec: int) -> tuple[int, ...]:
    return tuple(prec * k for k in LADDER if prec * k <= MAX_PRECISION)


def thresholds(C: fmpq, alpha: fmpq, m: int, S: int, distances: Sequence[int]) -> dict[int, int]:
    """t_k = floor(C (k/m)^alpha 2^S) for each k, exactly: floor(r^(1/q)) = floor(floor(r)^(1/q)) for r >= 0."""
    p, q = int(alpha.p), int(alpha.q)
    out = {}
    for k in distances:
        r = (C * 2**S) ** q * fmpq(k, m) ** p
        out[k] = int(fmpz(r.floor()).root(q))
    return out


def decide(expr: sympy.Expr, d: int, m: int, C: fmpq, alpha: fmpq, prec: int) -> Decision:
    """The stated modulus on the grid pairs of the module docstring."""
    symbols = variables(d)
    points = [tuple(fmpq(j, m) for j in p) for p in itertools.product(range(m + 1), repeat=d)]
    f, exact_at = compile_enclosure(expr, symbols), compile_exact(expr, symbols)
    values = [exact_at(x) for x in points]
    shape, G = (m + 1,) * d, len(points)
    index = np.arange(G, dtype=np.int64).reshape(shape)
    # ident numbers the distinct exact values (-1: none); a pair is exactly comparable when both values
    # are exact and their difference is a radical: rational - rational, anything - 0, two equal values.
    ident: dict[Value, int] = {}
    ids = np.array([-1 if v is None else ident.setdefault(v, len(ident)) for v in values], dtype=np.int64).reshape(shape)
    rational_at = np.array([isinstance(v, fmpq) for v in values]).reshape(shape)
    zero_at = np.array([isinstance(v, fmpq) and v == 0 for v in values]).reshape(shape)
    reach = 1 if alpha == 1 else m
    offsets = []
    for o in itertools.product(range(-reach, reach + 1), repeat=d):
        src = tuple(slice(max(0, -v), m + 1 - max(0, v)) for v in o)
        dst = tuple(slice(max(0, v), m + 1 - max(0, -v)) for v in o)
        if o > (0,) * d and index[src].size:
            offsets.append((max(map(abs, o)), src, dst))
    comparable = [(ids[s] >= 0) & (ids[t] >= 0) & ((rational_at[s] & rational_at[t]) | zero_at[s] | zero_at[t] | (ids[s] == ids[t])) for _, s, t in offsets]
    still = [np.ones(index[s].shape, dtype=bool) for _, s, _ in offsets]  # the pairs not decided yet
    counts = {"proven": 0, "exact": 0, "violated": 0}
    worst: list[tuple[int, str]] = []  # (key i G + j of the least violated pair, how it was decided)

    def record_violated(keys: np.ndarray, exactly: np.ndarray, how: str) -> None:
        counts["violated"] += int(keys.size)
        if keys.size:
            at = int(np.argmin(keys))
            worst.append((int(keys[at]), EXACT if exactly[at] else how))

    def enclose(P: int) -> list[tuple[fmpq, fmpq]]:
        """[lo, hi] containing each grid value: the exact value, or enclosures at P bits."""
        out = []
        with ctx.workprec(P):
            for x, v in zip(points, values):
                if isinstance(v, fmpq):
                    out.append((v, v))
                elif v is not None:
                    ball = v.enclose()
                    out.append((rational(ball.lower()), rational(ball.upper())))
                else:
                    out.append(endpoints(f([point(c) for c in x])))
        return out

    def sweep(ends: list[tuple[fmpq, fmpq]], S: int, how: str, first: bool) -> None:
        """Decide the open pairs from these intervals rounded outward to integers at scale 2^S
        (on the first rung, a pair of exactly comparable values counts as decided from exact values)."""
        scale = fmpq(2) ** S
        ints = [(int((lo * scale).floor()), int((hi * scale).ceil())) for lo, hi in ends]
        dtype = np.int64 if 2 * max(max(abs(a), abs(b)) for a, b in ints) < INT64_LIMIT else object
        LO, HI = (np.array([e[k] for e in ints], dtype=dtype).reshape(shape) for k in (0, 1))
        thr = thresholds(C, alpha, m, S, sorted({k for k, _, _ in offsets}))
        for n, (k, s, t) in enumerate(offsets):
            at = np.flatnonzero(still[n])  # only the open pairs: on later passes few, in big integers
            if not at.size:
                continue
            lo_s, hi_s, lo_t, hi_t = (A[u].ravel()[at] for A, u in ((LO, s), (HI, s), (LO, t), (HI, t)))
            ok = np.maximum(hi_s - lo_t, hi_t - lo_s) <= thr[k]
            bad = np.maximum(lo_s - hi_t, lo_t - hi_s) > thr[k]
            counts["proven"] += int(ok.sum())
            exactly = comparable[n].ravel()[at] if first else np.zeros_like(ok)
            counts["exact"] += int((exactly & (ok | bad)).sum())
            record_violated(_keys(index[s].ravel()[at][bad], index[t].ravel()[at][bad], G), exactly[bad], how)
            flat = still[n].ravel()  # a view: still[n] is contiguous
            flat[at[ok | bad]] = False

    tried = []
    for rung, P in enumerate(ladder(prec)):
        if rung and not any(o.any() for o in still):
            break
        tried.append(P)
        ends = enclose(P)
        if rung == 0:
            # A first pass at the scale that keeps every integer in int64 decides most pairs quickly.
            top = max(max(abs(lo), abs(hi)) for lo, hi in ends)
            coarse = min(P, 58 - (int(top.p).bit_length() - int(top.q).bit_length() + 1))
            if coarse > 0:
                sweep(ends, coarse, f"enclosures at {P} bits", True)
        sweep(ends, P, f"enclosures at {P} bits", rung == 0)
        if rung == 0:  # exact values decide what their rounded enclosures left open (at most MAX_EXACT_PAIRS)
            budget = MAX_EXACT_PAIRS
            for n, (k, s, t) in enumerate(offsets):
                pick = still[n] & comparable[n]
                for a, b, at in itertools.islice(zip(index[s][pick], index[t][pick], np.argwhere(pick)), budget):
                    budget -= 1
                    verdict = _exact_verdict(values[int(a)], values[int(b)], C, alpha, k, m)
                    if verdict is not None:
                        counts["exact"] += 1
                        counts["proven" if verdict else "violated"] += 1
                        if not verdict:
                            worst.append((_keys(np.array([a]), np.array([b]), G)[0], EXACT))
                        still[n][tuple(at)] = False
    open_keys = [_keys(index[s][still[n]], index[t][still[n]], G) for n, (_, s, t) in enumerate(offsets)]
    undecided = sum(int(k.size) for k in open_keys)
    first_open = min((int(k.min()) for k in open_keys if k.size), default=None)
    first_bad = min(worst, default=None)
    return Decision(
        sum(int(o.size) for o in still),
        counts["proven"],
        counts["exact"],
        counts["violated"],
        undecided,
        tuple(tried),
        None if first_bad is None else Pair(*divmod(first_bad[0], G), first_bad[1]),
        None if first_open is None else Pair(*divmod(first_open, G), ""),
    )


def _keys(a: np.ndarray, b: np.ndarray, G: int) -> np.ndarray:
    """min(a, b) G + max(a, b): pairs (i < j) in lexicographic order."""
    return np.minimum(a, b) * G + np.maximum(a, b)


def _exact_verdict(a: Value | None, b: Value | None, C: fmpq, alpha: fmpq, k: int, m: int) -> bool | None:
    """|a - b| <= C (k/m)^alpha decided exactly (True, False); None when the difference is not known exactly
    or the comparison is beyond the size bounds of :mod:`exact.expressions.radicals`."""
    if a is None or b is None:
        return None
    if a == b:
        diff: Value = fmpq(0)
    elif isinstance(a, fmpq) and isinstance(b, fmpq):
        diff = abs(a - b)
    elif a == 0 or b == 0:
        diff = b if a == 0 else a
        diff = abs(diff) if isinstance(diff, fmpq) else Radical(1, diff.r, diff.n)
    else:
        return None
    p, q = int(alpha.p), int(alpha.q)
    bound = radical(1, C**q * fmpq(k, m) ** p, q)
    order = None if bound is None else compare(diff, bound)
    return None if order is None else order <= 0


def decision_json(dec: Decision, C: fmpq, alpha: fmpq, d: int, m: int) -> dict[str, Any]:
    """The record of a decision in a certificate."""

    def pair(p: Pair | None) -> dict[str, Any] | None:
        if p is None:
            return None
        coords = lambda i: [QQ.to_json(fmpq((i // (m + 1) ** (d - 1 - k)) % (m + 1), m)) for k in range(d)]  # noqa: E731
        return {"i": p.i, "j": p.j, "x_i": coords(p.i), "x_j": coords(p.j), "decided_by": p.decided_by}

    return {
        "statement": f"|f(x) - f(y)| <= {QQ.to_json(C)} ||x - y||_inf^{QQ.to_json(alpha)}",
        "pairs_tested": "king neighbours, enough for alpha = 1" if alpha == 1 else "all pairs",
        "pairs": dec.pairs,
        "proven": dec.proven,
        "from_exact_values": dec.from_exact_values,
        "violated": dec.violated,
        "undecided": dec.undecided,
        "precisions": list(dec.precisions),
        "violated_pair": pair(dec.violated_pair),
        "undecided_pair": pair(dec.undecided_pair),
    }


def decision_text(rec: dict[str, Any]) -> str | None:
    """None when the bound is proven on every tested pair, else one line saying what was decided."""
    if rec["proven"] == rec["pairs"]:
        return None
    counts = f"of the {rec['pairs']:,} tested pairs {rec['proven']:,} are proven, {rec['violated']:,} violated and {rec['undecided']:,} undecided"
    v, u = rec["violated_pair"], rec["undecided_pair"]
    where = lambda p: f"x_{p['i']} = ({', '.join(p['x_i'])}), x_{p['j']} = ({', '.join(p['x_j'])})"  # noqa: E731
    if v is not None:
        return f"the stated {rec['statement']} fails on the grid pair {where(v)}, where |f(x_i) - f(x_j)| is larger (proven from {v['decided_by']}); {counts}"
    bits = ", ".join(map(str, rec["precisions"]))
    return f"the stated {rec['statement']} is not decided on the grid pair {where(u)} (exact values unavailable, enclosures at {bits} bits too wide); {counts}"
