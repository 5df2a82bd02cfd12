"""A fresh hostile audit of the Schur-complement test of the Sinkhorn Hessian's gap (``schur_gap`` in the checker,
``Hessian.certify`` in the prover), 2026-12-05.

The truth is decided exactly: the number of eigenvalues <= 0 of H^ - sigma E^ (H^ = S H(W') S, E^ = diag(fl(fl(s s) a~),
fl(fl(t t) b~)), built in QQ from the same doubles) is the number of sign changes of the characteristic polynomial of
its negative (Descartes' rule is exact for a real-rooted polynomial) plus the multiplicity of the root 0. The gap
sigma is proven iff that number is at most one (the module docstrings' inertia argument), so a code that says True
where the count is 2 proves a gap the matrix does not have.
"""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import mpmath
import numpy as np
from flint import fmpq, fmpq_mat

from attncert.constructions.sinkhorn.convexity import Hessian
from attncert.exact.roundoff import exact
from attncert.proofs.checkers.sinkhorn.convexity import lift, rump_positive_definite, schur_gap

EPS = 2.0**-1074  # the smallest positive double


def nonpositive_eigenvalues(ev: SimpleNamespace, sigma: float) -> int:
    """How many eigenvalues of H^ - sigma E^ are <= 0, exactly (module docstring)."""
    n, m = ev.K.shape
    s, t = 1.0 / np.sqrt(ev.a), 1.0 / np.sqrt(ev.b)
    scale = [exact(x) for x in np.concatenate([s, t])]
    e = [exact(x) for x in np.concatenate([(s * s) * ev.a, (t * t) * ev.b])]
    M = fmpq_mat(n + m, n + m)
    for i in range(n):
        for j in range(m):
            w = exact(ev.u[i]) * exact(ev.K[i, j]) * exact(ev.v[j])
            for p, q in ((i, i), (n + j, n + j), (i, n + j), (n + j, i)):
                M[p, q] += w * scale[p] * scale[q]
    for k in range(n + m):
        M[k, k] -= exact(sigma) * e[k]
    c = (-M).charpoly()  # its positive roots are M's negative eigenvalues
    coefficients = [c[k] for k in range(n + m + 1)]
    zero = next(k for k, x in enumerate(coefficients) if x != 0)
    signs = [x > 0 for x in coefficients if x != 0]
    return zero + sum(1 for x, y in zip(signs, signs[1:]) if x != y)


def subnormal_diagonal(xi: float, row_mass_exponent: int) -> SimpleNamespace:
    """Two clusters joined by a weak edge of weight xi 2^-974: {row 1 (mass 2^100), column 1 (mass 2^-974)} and
    {row 2 (mass 2^row_mass_exponent), column 2}. Row 1's diagonal of H^ is exactly 1.5 2^-1074, which rounds to
    2^-1073; with sigma = 2^-1074 the float Delta_E is 2^-1074, twice the exact one. Every product of B and C, and every
    factor of the diagonals, is normal: only the diagonal itself is not."""
    return SimpleNamespace(
        K=np.array([[1.5, 0.0], [xi, 1.0]]),
        u=np.array([2.0**-500, 2.0**-500]),
        v=np.array([2.0**-474, 2.0**520]),
        a=np.array([2.0**100, 2.0**row_mass_exponent]),
        b=np.array([2.0**-974, 2.0**20]),
    )


def prover_certifies(ev: SimpleNamespace, sigma: float) -> bool:
    return Hessian.of(ev.K, ev.u, ev.v, ev.a, ev.b, 0).certify(sigma)


def test_a_subnormal_diagonal_proved_a_gap_above_the_true_one():
    # before the fix both codes said True on all three (the pencil's second eigenvalue, in mpmath at 400 digits,
    # is 0.83, 0.59 and 0.80 times sigma): the rounding of a subnormal d~ is absolute, not within the gamma charged
    for xi, exponent in ((0.875, 101), (0.875, 104), (1.5, 104)):
        ev = subnormal_diagonal(xi, exponent)
        assert nonpositive_eigenvalues(ev, EPS) == 2  # the gap is below sigma
        assert not schur_gap(ev, EPS)
        assert not prover_certifies(ev, EPS)


def test_a_normal_instance_still_proves_its_gap():
    # a 2 x 2 plan (row and column sums 1/2 = a = b): its pencil (H(P), diag(a, b)) has eigenvalues 1 -+ the singular
    # values of K / 0.5 (1 and 1/2), so the gap is 1/2; the codes must prove half of it and refuse 1.5 times it
    K = np.array([[0.375, 0.125], [0.125, 0.375]])
    ev = SimpleNamespace(K=K, u=np.ones(2), v=np.ones(2), a=np.array([0.5, 0.5]), b=np.array([0.5, 0.5]))
    assert nonpositive_eigenvalues(ev, 0.25) == 1 and nonpositive_eigenvalues(ev, 0.75) == 2
    assert schur_gap(ev, 0.25) and prover_certifies(ev, 0.25)
    assert not schur_gap(ev, 0.75) and not prover_certifies(ev, 0.75)


def test_a_tiny_lift_and_an_overflowing_bound_are_refused_not_raised():
    # one row of mass 2^-1021 kept (n < m): |z|^2 = 2^-1021 and need / |z|^2 overflowed, so math.log2(inf) raised
    # OverflowError in both codes; past it, C (about 2^511) made C^T C 1 infinite and exact(inf) raised again
    ev = SimpleNamespace(
        K=np.array([[1.0, 1.0]]), u=np.array([2.0**-600]), v=np.array([2.0**600, 2.0**600]), a=np.array([2.0**-1021]), b=np.array([1.0, 1.0])
    )
    assert schur_gap(ev, 0.99) is False
    assert prover_certifies(ev, 0.99) is False
    zeta = lift(np.array([2.0**-510.5]), 0.99)  # |zeta|^2 must reach 1 + 4 sigma / max(1 - sigma, 2^-6) = 254.44
    assert np.isfinite(zeta).all() and float(zeta @ zeta) >= 254.44


def test_rump_refuses_an_error_above_the_diagonal_instead_of_overflowing():
    # float(err) of an err beyond float64 raised OverflowError; any err at or above the diagonal proves nothing
    assert rump_positive_definite(np.eye(2), fmpq(10) ** 400) is False
    assert rump_positive_definite(np.eye(2), fmpq(1)) is False
    assert rump_positive_definite(np.eye(2), fmpq(1, 2)) is True


def test_a_subnormal_kernel_entry_does_not_carry_the_gap():
    # K^_21 = 2^-1060 (a subnormal fl(fl(x K~) y) is not within the kernel's factor of K2, so P^ >= omega W' may fail
    # there) scaled by u and v into the weight 1 that alone connects W' = [[1, 0], [1, 1]]: with it the pencil's gap
    # is 1/2 (the exact count is 1 at sigma = 0.2) and both codes proved 0.2; without it W' splits in two
    ev = SimpleNamespace(
        K=np.array([[1.0, 0.0], [2.0**-1060, 2.0**-1000]]),
        u=np.array([2.0**-160, 2.0**900]),
        v=np.array([2.0**160, 2.0**100]),
        a=np.array([1.0, 2.0]),
        b=np.array([2.0, 1.0]),
    )
    dropped = SimpleNamespace(**{**vars(ev), "K": np.array([[1.0, 0.0], [0.0, 2.0**-1000]])})
    assert nonpositive_eigenvalues(ev, 0.2) == 1 and nonpositive_eigenvalues(dropped, 0.2) == 2
    assert not schur_gap(ev, 0.2)
    assert not prover_certifies(ev, 0.2)


def test_prover_and_checker_lift_the_same_vector_whatever_its_power_of_two():
    # the prover's z carries 2^k (k about -log4(2 sum a)), the checker's none; both lifts used to keep any z already
    # longer than need, so at large masses the two zeta differed and the checker's (|zeta|^2 = sum b) was too long
    from attncert.constructions.sinkhorn.convexity import lift_exponent

    z = np.array([0.3, 7.0, 1e6])
    for sigma in (1e-3, 0.5, 0.99):
        need = 1 + 4 * sigma / max(1 - sigma, 2.0**-6)
        zeta = lift(z, sigma)
        assert need <= float(zeta @ zeta) < 4 * need  # the least power of two above need
        for k in (-20, 0, 7):
            zk = z * 2.0**k
            assert np.array_equal(zk * 2.0 ** lift_exponent(zk, sigma), zeta)


def test_a_genuine_certificate_with_masses_totalling_1e14_verifies(tmp_path):
    # the 4 x 3 problem of test_fresh_attack_convexity with its masses times 10^14: prove certified it, verify said
    # "the verified Cholesky does not prove the Hessian's gap sigma" (its zeta of length sum b = 1e14 charged
    # gamma |zeta|^2, about 1e-2, above the Schur complement's margin)
    import copy
    import json
    from fractions import Fraction

    from attncert.exact.canonical import canonical_json
    from attncert.exact.certificate import seal
    from attncert.proofs.core.registry import load_claim
    from attncert.proofs.core.verify import OK, verify_bytes

    claim = load_claim("sinkhorn_convergence")
    cost = [["137/1000", "291/500", "867/1000"], ["821/1000", "391/500", "8/125"], ["261/1000", "3/25", "507/1000"], ["779/1000", "23/50", "483/1000"]]
    a = [str(Fraction(x) * 10**14) for x in ("1/11", "2/11", "2/11", "6/11")]
    b = [str(Fraction(x) * 10**14) for x in ("1/4", "9/16", "3/16")]
    paths = {}
    for name, value in (("cost", cost), ("a", a), ("b", b)):
        (tmp_path / f"{name}.json").write_text(json.dumps(value))
        paths[name] = str(tmp_path / f"{name}.json")
    doc = claim.prove(**{**claim.defaults(), **paths, "eps": "1/20", "tol": "1e-9", "ref_iter": 10, "pot_iter": 10})
    run = doc["outputs"]["runs"][0]
    assert run["method"] == "convexity" and run["certified"] and doc["result"]["holds"], run["status"]
    body = {k: v for k, v in copy.deepcopy(doc).items() if k != "sha256"}
    out = verify_bytes(canonical_json(seal(body)))
    assert (out.status, out.reason) == (OK, "")


COST = [["137/1000", "291/500", "867/1000"], ["821/1000", "391/500", "8/125"], ["261/1000", "3/25", "507/1000"], ["779/1000", "23/50", "483/1000"]]
MASSES = (["1/11", "2/11", "2/11", "6/11"], ["1/4", "9/16", "3/16"])


def plan_mpmath(eps: Fraction, digits: int = 60) -> list:
    """P* of the 4 x 3 problem by plain Sinkhorn in mpmath, to a relative row residual of 10^-(digits - 10)."""
    with mpmath.workdps(digits):
        K = [[mpmath.exp(-mpmath.mpf(Fraction(c).numerator) / Fraction(c).denominator / (mpmath.mpf(eps.numerator) / eps.denominator)) for c in row] for row in COST]
        a, b = [[mpmath.mpf(Fraction(x).numerator) / Fraction(x).denominator for x in side] for side in MASSES]
        u = [mpmath.mpf(1)] * len(a)
        for _ in range(100_000):
            v = [b[j] / mpmath.fsum(K[i][j] * u[i] for i in range(len(a))) for j in range(len(b))]
            r = [u[i] * mpmath.fsum(K[i][j] * v[j] for j in range(len(b))) for i in range(len(a))]
            if max(abs(r[i] / a[i] - 1) for i in range(len(a))) < mpmath.mpf(10) ** (10 - digits):
                return [[u[i] * K[i][j] * v[j] for j in range(len(b))] for i in range(len(a))]
            u = [u[i] * a[i] / r[i] for i in range(len(a))]
    raise AssertionError("the mpmath reference did not converge")


def exact_mpf(x) -> mpmath.mpf:
    """An arb's midpoint (an endpoint: radius 0) as an mpmath number, exactly."""
    man, exp = x.mid().man_exp()
    return mpmath.mpf(int(man)) * mpmath.mpf(2) ** int(exp)


def test_the_checker_on_forged_witnesses_still_encloses_the_plan(tmp_path):
    # the checker alone (verify's rebuild would refuse any edited witness as differing from its recomputation): sigma
    # raised to the largest double the Schur test accepts, and x_0 nudged; every enclosure must contain P* (mpmath,
    # 60 digits), and the largest sigma must be below the gap of the pencil formed from the same doubles (exact count)
    import json

    from attncert.proofs.checkers.sinkhorn.convexity import convexity_enclosure
    from attncert.proofs.checkers.sinkhorn.float_hilbert import balanced_evaluation
    from attncert.proofs.checkers.sinkhorn.problem import sinkhorn_problem
    from attncert.proofs.core.registry import load_claim

    claim = load_claim("sinkhorn_convergence")
    paths = {}
    for name, value in (("cost", COST), ("a", MASSES[0]), ("b", MASSES[1])):
        (tmp_path / f"{name}.json").write_text(json.dumps(value))
        paths[name] = str(tmp_path / f"{name}.json")
    doc = claim.prove(**{**claim.defaults(), **paths, "eps": "1/20", "tol": "1e-9", "ref_iter": 10, "pot_iter": 10})
    witness = doc["outputs"]["runs"][0]["witness"]
    q = lambda text: fmpq(*Fraction(text).as_integer_ratio())  # noqa: E731
    p = sinkhorn_problem([[q(c) for c in row] for row in COST], [q(x) for x in MASSES[0]], [q(x) for x in MASSES[1]], fmpq(1, 20))
    x, y, sigma = [q(t) for t in witness["u"]], [q(t) for t in witness["v"]], q(witness["sigma"])
    ev = balanced_evaluation(p, x, y, "integers")
    lo, hi = float(sigma), 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if schur_gap(ev, mid) else (lo, mid)
    assert lo > float(sigma) and nonpositive_eigenvalues(ev, lo) == 1
    P = plan_mpmath(Fraction(1, 20))
    nudged = fmpq(*float(x[0] * fmpq(100001, 100000)).as_integer_ratio())
    for xs, s in ((x, exact(lo)), ([nudged] + x[1:], sigma)):
        enclosure = convexity_enclosure(p, xs, y, s, "integers")
        with mpmath.workdps(60):
            for row, prow in zip(enclosure.plan, P):
                for (low, high), value in zip(row, prow):
                    assert exact_mpf(low.lower()) <= value <= exact_mpf(high.upper())


def test_a_second_product_below_the_normal_range_is_carried_by_a_tail() -> None:
    # cost [[0, 693], [0, 0]] at eps 1 (K' = e^-C, no shift), x = (1, 1), y = (1/2, 2^-30): fl(x K~) is normal
    # everywhere, but K~_01 y_1 = e^-693 2^-30 (about 2^-1030) is subnormal, so K^_01 is not within a relative u of
    # K2_01. It is 0 in K^ now, with the tail 2^-1021; before, its own subnormal value was its tail, uncharged by up to
    # 2^-1075 (about 2^-1045 of its row's sum here, far inside the evaluation's other margins: the formal gap the
    # Schur-gap audit named). The enclosures must hold the exact values, computed here from the definitions at 3000
    # bits: v^_j = b_j / (K2^T 1)_j and q_i = (K2 v^)_i / a_i.
    from flint import arb, ctx, fmpq

    from attncert.proofs.checkers.sinkhorn.float_hilbert import balanced_evaluation
    from attncert.proofs.checkers.sinkhorn.problem import sinkhorn_problem

    half = fmpq(1, 2)
    C = [[fmpq(0), fmpq(693)], [fmpq(0), fmpq(0)]]
    p = sinkhorn_problem(C, [half, half], [half, half], fmpq(1))
    x, y = [fmpq(1), fmpq(1)], [half, fmpq(1, 2**30)]
    ev = balanced_evaluation(p, x, y, "integers")
    assert ev.K[0, 1] == 0.0 and ev.K[1, 1] == 2.0**-30  # the subnormal product is read as 0, the rest as computed
    with ctx.workprec(3000):
        K2 = [[arb(xi) * (-arb(c)).exp() * arb(yj) for c, yj in zip(row, y)] for xi, row in zip(x, C)]
        v = [arb(half) / (K2[0][j] + K2[1][j]) for j in range(2)]
        for j in range(2):
            ratio = v[j] / arb(fmpq(*float(ev.v[j]).as_integer_ratio()))
            assert ev.v_ball.lo <= ratio <= ev.v_ball.hi, (j, ratio, ev.v_ball)
        for i in range(2):
            q = (K2[i][0] * v[0] + K2[i][1] * v[1]) / arb(half)
            assert ev.q_lo <= q <= ev.q_hi, (i, q, ev.q_lo, ev.q_hi)
