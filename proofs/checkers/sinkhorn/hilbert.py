r"""Birkhoff-Hilbert contraction: an a-posteriori enclosure of the Sinkhorn plan from one point u^.

Theorem (Birkhoff 1957; Franklin & Lorenz, Linear Algebra Appl. 114/115 (1989)
717-735; derivation in :mod:`constructions.sinkhorn.hilbert`, re-derived here
independently). Hypotheses:

1. (C, a, b, eps) satisfies :mod:`proofs.checkers.sinkhorn.problem` (eps > 0, a, b > 0,
   sum a = sum b), so K = exp(-C/eps) > 0 has projective diameter Delta and
   contracts Hilbert's metric d_H by lambda = tanh(Delta/4) < 1;
2. the witness u^ is a positive vector of length n (d_H is a metric on the
   positive cone only: a mixed-sign u^ proves nothing).

Let v^ = b / (K^T u^) (a column update: P^ = diag(u^) K diag(v^) has column
sums exactly b, hence total mass sum b = sum a) and r = P^ 1. Then

    max_ij |log P^_ij - log P*_ij| <= beta = d_H(r, a) / (1 - lambda)
                                        = d_H(r, a) (e^{Delta/2} + 1) / 2,

so P*_ij lies in P^_ij [e^-beta, e^beta]. Everything is evaluated in arb.

With a recorded shift (alpha, beta_s) the same holds for the kernel
K' = exp(-(C - alpha 1^T - 1 beta_s^T)/eps) = diag(e^{alpha/eps}) K diag(e^{beta_s/eps}):
its Sinkhorn plan is K's (a plan diag(x) K' diag(y) is diag(x e^{alpha/eps}) K diag(...))
and its projective diameter too (cross differences cancel the shift). The witness u^ then
scales K'; the float-verified runs on a cost known only as balls record it so.
"""

from __future__ import annotations

from flint import arb, ctx, fmpq

from attncert.proofs.checkers.sinkhorn.problem import HypothesisError, PlanEnclosure, Problem, kernel, projective_diameter


def hilbert_enclosure(p: Problem, u: list[fmpq], prec: int, shift: tuple[list[fmpq], list[fmpq]] | None = None) -> PlanEnclosure:
    """The enclosure P^ [e^-beta, e^beta] of P* and beta (an exact upper bound), from the witness u^ (of the kernel
    shifted by ``shift`` = (alpha, beta_s) when given)."""
    if len(u) != p.n:
        raise HypothesisError(f"the Hilbert witness has {len(u)} entries, not n = {p.n}")
    if not all(x > 0 for x in u):
        raise HypothesisError("the Hilbert witness u is not positive (d_H is a metric on positive vectors only)")
    if shift is not None and (len(shift[0]), len(shift[1])) != (p.n, p.m):
        raise HypothesisError(f"the recorded shift has {len(shift[0])} + {len(shift[1])} entries, not n + m = {p.n} + {p.m}")
    K = kernel(p, prec, shift)
    with ctx.workprec(prec):
        U = [arb(x) for x in u]
        v = [arb(p.b[j]) / sum((K[i][j] * U[i] for i in range(p.n)), arb(0)) for j in range(p.m)]
        q = [U[i] * sum((K[i][j] * v[j] for j in range(p.m)), arb(0)) / arb(p.a[i]) for i in range(p.n)]
        hi = max((t.upper() for t in q), key=lambda t: t.mid())
        lo = min((t.lower() for t in q), key=lambda t: t.mid())
        if not lo > 0:
            raise HypothesisError(f"the row sums of P^ are not provably positive at {prec} bits")
        gap = ((arb(projective_diameter(p, prec)) / 2).exp() + 1) / 2  # Delta, or an upper bound: gap grows with it
        beta = ((hi / lo).log() * gap).upper()
        f = arb(0, beta).exp()
        plan = [[U[i] * K[i][j] * v[j] * f for j in range(p.m)] for i in range(p.n)]
    return PlanEnclosure(plan, beta.fmpq())
