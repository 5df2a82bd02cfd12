r"""Independent re-checks of Sinkhorn certificates, from the recorded inputs and witnesses alone.

Nothing here imports :mod:`constructions` (DESIGN.md, "Certificates"): every
quantity is recomputed from the certificate's inputs with arb, at 64 bits more
than the prover used, by separately written code.

* A Hilbert witness is the exact point u^. We recompute v^ = b / (K^T u^), the
  row sums r of P^ = diag(u^) K diag(v^), Delta(K) from C (by the pairwise
  formula max_{i,j} [max_k (C_jk - C_ik) + max_l (C_il - C_jl)] / eps),
  beta = d_H(r, a) (e^{Delta/2} + 1) / 2, and the enclosure
  P^ * [e^-beta, e^beta] of the Sinkhorn plan (the bound of
  :mod:`constructions.sinkhorn.hilbert`).
* A Krawczyk witness is the exact potentials (x^, y^) and a radius rho. We
  re-run Krawczyk's test on the box z^ +- rho with our own approximate inverse
  and recompute the plan K_ij e^{x_i + y_j} over the box.

The recorded enclosure must contain ours; then it contains the Sinkhorn plan.
Float cross-checks (POT, mpmath) in a certificate are agreement only and are
not re-run.
"""

from __future__ import annotations

from typing import Any, Sequence

from flint import arb, arb_mat, ctx, fmpq

from exact import Ball, ParseError, QQ
from exact.matrices import matrix_from_json

EXTRA_BITS = 64

Matrix = Sequence[Sequence[fmpq]]
Vector = Sequence[fmpq]


def _q(obj: Any) -> fmpq:
    return QQ.from_json(obj)


def qvector(obj: Any) -> list[fmpq]:
    if not isinstance(obj, list) or not obj:
        raise ParseError("expected a non-empty list of rationals")
    return [_q(x) for x in obj]


def diameter(C: Matrix, eps: fmpq) -> fmpq:
    n = len(C)
    best = fmpq(0)
    for i in range(n):
        for j in range(n):
            d = [cj - ci for ci, cj in zip(C[i], C[j])]
            best = max(best, max(d) - min(d))
    return best / eps


def _kernel(C: Matrix, eps: fmpq, prec: int) -> list[list[arb]]:
    with ctx.workprec(prec):
        return [[(-arb(c) / arb(eps)).exp() for c in row] for row in C]


def hilbert_plan(C: Matrix, a: Vector, b: Vector, eps: fmpq, u: list[fmpq], prec: int) -> tuple[arb, list[list[arb]]]:
    """(beta, enclosure of P*) recomputed from the Hilbert witness u^."""
    n, m = len(a), len(b)
    K = _kernel(C, eps, prec)
    with ctx.workprec(prec):
        U = [arb(x) for x in u]
        v = [arb(b[j]) / sum((K[i][j] * U[i] for i in range(n)), arb(0)) for j in range(m)]
        q = [U[i] * sum((K[i][j] * v[j] for j in range(m)), arb(0)) / arb(a[i]) for i in range(n)]
        hi = max((t.upper() for t in q), key=lambda t: t.mid())
        lo = min((t.lower() for t in q), key=lambda t: t.mid())
        gap = ((arb(diameter(C, eps)) / 2).exp() + 1) / 2
        beta = ((hi / lo).log() * gap).upper()
        f = arb(0, beta).exp()
        return beta, [[U[i] * K[i][j] * v[j] * f for j in range(m)] for i in range(n)]


def krawczyk_plan(C: Matrix, a: Vector, b: Vector, eps: fmpq, x: list[fmpq], y: list[fmpq], rho: fmpq, prec: int) -> list[list[arb]] | None:
    """Enclosure of P* if Krawczyk's test holds on (x^, y^) +- rho, else None."""
    n, m = len(a), len(b)
    if y[0] != 0 or len(x) != n or len(y) != m or rho <= 0:
        return None
    K = _kernel(C, eps, prec)
    N = n + m - 1

    def system(X: list[arb], Y: list[arb]) -> tuple[list[arb], list[list[arb]]]:
        eX, eY = [t.exp() for t in X], [t.exp() for t in Y]
        s = [sum((K[i][j] * eY[j] for j in range(m)), arb(0)) for i in range(n)]
        t = [sum((K[i][j] * eX[i] for i in range(n)), arb(0)) for j in range(m)]
        F = [X[i] + s[i].log() - arb(a[i]).log() for i in range(n)] + [Y[j] + t[j].log() - arb(b[j]).log() for j in range(1, m)]
        J = [[arb(0)] * N for _ in range(N)]
        for i in range(n):
            J[i][i] = arb(1)
            for j in range(1, m):
                J[i][n + j - 1] = K[i][j] * eY[j] / s[i]
        for j in range(1, m):
            J[n + j - 1][n + j - 1] = arb(1)
            for i in range(n):
                J[n + j - 1][i] = K[i][j] * eX[i] / t[j]
        return F, J

    with ctx.workprec(prec):
        X0, Y0 = [arb(v) for v in x], [arb(v) for v in y]
        F0, J0 = system(X0, Y0)
        R = arb_mat(J0).mid().inv().mid()
        D = arb(0, rho)
        XD, YD = [t + D for t in X0], [Y0[0]] + [t + D for t in Y0[1:]]
        _, JD = system(XD, YD)
        eye = arb_mat(N, N, [int(i == j) for i in range(N) for j in range(N)])
        k = (eye - R * arb_mat(JD)) * arb_mat(N, 1, [D] * N) - R * arb_mat(N, 1, F0)
        if not all(abs(k[i, 0]).upper() < rho for i in range(N)):
            return None
        return [[K[i][j] * (XD[i] + YD[j]).exp() for j in range(m)] for i in range(n)]


def contained(recorded: Sequence[Sequence[arb]], ours: Sequence[Sequence[arb]]) -> bool:
    return len(recorded) == len(ours) and all(len(r) == len(o) and all(x.contains(y) for x, y in zip(r, o)) for r, o in zip(recorded, ours))


def check_run(C: Matrix, a: Vector, b: Vector, eps: fmpq, run: dict, plan_json: Any, prec_key: int) -> list[str]:
    """Problems with one recorded Ball run: its plan must contain our recomputed enclosure."""
    problems: list[str] = []
    witness, method = run.get("witness"), run.get("method")
    if plan_json is None or witness is None:
        return ["no plan enclosure or witness recorded"] if run.get("certified") else []
    prec = prec_key + EXTRA_BITS
    recorded = matrix_from_json(plan_json, Ball(prec))
    if method == "hilbert":
        beta, ours = hilbert_plan(C, a, b, eps, qvector(witness["u"]), prec)
        bound = _q(run["bound"])
        if beta.fmpq() > bound:  # beta is an exact arb
            problems.append(f"eps {eps}: recomputed Hilbert bound exceeds the recorded bound")
    elif method == "krawczyk":
        ours = krawczyk_plan(C, a, b, eps, qvector(witness["x"]), qvector(witness["y"]), _q(witness["rho"]), prec)
        if ours is None:
            return [f"eps {eps}: Krawczyk's test does not hold on the recorded box"]
        bound = _q(run["bound"])
        if _q(witness["rho"]) > bound:
            problems.append(f"eps {eps}: the recorded bound is below the box radius")
    else:
        raise ParseError(f"unknown Sinkhorn method {method!r:.30}")
    if not contained(recorded, ours):
        problems.append(f"eps {eps}: the recorded plan does not contain the recomputed enclosure")
    if run.get("certified") and not bound <= _q(run["tol"]):
        problems.append(f"eps {eps}: marked certified but the bound exceeds tol")
    return problems


def witness_json(w: dict | None) -> dict | None:
    """A result's witness in canonical JSON."""
    if w is None:
        return None
    return {k: (QQ.to_json(v) if isinstance(v, fmpq) else [QQ.to_json(t) for t in v]) for k, v in w.items()}


def l1(p: Sequence[fmpq], q: Sequence[fmpq]) -> fmpq:
    return sum((abs(u - v) for u, v in zip(p, q)), fmpq(0))


def w1_holds(cert: dict, pi: Matrix, pi2: Matrix, xs: Matrix, ys: Matrix) -> bool:
    """LP duality, checked in QQ: the recorded flow moves (pi - pi2)_+ onto (pi - pi2)_-, the recorded
    potentials satisfy phi_s - psi_t <= d(s, t) for all pairs, and flow cost = dual value = recorded value."""
    cells = [(x, y) for x in xs for y in ys]
    d = lambda s, t: l1(cells[s][0], cells[t][0]) + l1(cells[s][1], cells[t][1])  # noqa: E731
    diff = [u - v for ru, rv in zip(pi, pi2) for u, v in zip(ru, rv)]
    value = _q(cert["value"])
    phi = {int(k): _q(v) for k, v in cert["phi"].items()}
    psi = {int(k): _q(v) for k, v in cert["psi"].items()}
    moved_out = [fmpq(0)] * len(diff)
    moved_in = [fmpq(0)] * len(diff)
    cost = fmpq(0)
    for s, t, f in cert["flow"]:
        f = _q(f)
        if f < 0 or not (0 <= s < len(diff) and 0 <= t < len(diff)):
            return False
        moved_out[s] += f
        moved_in[t] += f
        cost += f * d(s, t)
    supply = {k for k, x in enumerate(diff) if x > 0}
    demand = {k for k, x in enumerate(diff) if x < 0}
    if any(moved_out[k] != max(diff[k], fmpq(0)) or moved_in[k] != max(-diff[k], fmpq(0)) for k in range(len(diff))):
        return False
    if set(phi) != supply or set(psi) != demand:
        return False
    if any(phi[s] - psi[t] > d(s, t) for s in supply for t in demand):
        return False
    dual = sum((phi[s] * diff[s] for s in supply), fmpq(0)) - sum((psi[t] * -diff[t] for t in demand), fmpq(0))
    return cost == dual == value
