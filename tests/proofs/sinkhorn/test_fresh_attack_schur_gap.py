"""A fresh hostile audit of the Schur-complement test of the Sinkhorn Hessian's gap (``schur_gap`` in the checker,
``Hessian.certify`` in the prover), 2026-12-05.

The truth is decided exactly: the number of eigenvalues <= 0 of H^ - sigma E^ (H^ = S H(W') S, E^ = diag(fl(fl(s s) a~),
fl(fl(t t) b~)), built in QQ from the same doubles) is the number of sign changes of the characteristic polynomial of
its negative (Descartes' rule is exact for a real-rooted polynomial) plus the multiplicity of the root 0. The gap
sigma is proven iff that number is at most one (the module docstrings' inertia argument), so a code that says True
where the count is 2 proves a gap the matrix does not have.
"""

from __future__ import annotations

from types import SimpleNamespace

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
