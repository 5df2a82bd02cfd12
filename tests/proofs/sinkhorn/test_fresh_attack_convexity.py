"""A fresh hostile audit of the Sinkhorn ``convexity`` method (the strong-convexity bound, its Hessian gap proven by
a verified Cholesky), 2026-12-04: self-consistent forgeries of a genuine ``sinkhorn_convergence`` certificate,
resealed, and what ``attncert verify`` says of each; and two crashes or gaps the attack found.

The expected reasons are the theorem's hypotheses (proofs/checkers/sinkhorn/convexity.py, docs/sinkhorn.md), not
text copied from a run.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import pytest

from attncert.exact import ParseError
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.exact.limits import Limits
from attncert.proofs.core.cost import estimate, parsed
from attncert.proofs.core.registry import load_claim
from attncert.proofs.core.verify import BAD, OK, REJECTED, verify_bytes

CLAIM = load_claim("sinkhorn_convergence")
#: A 4 x 3 problem with costs k/1000: at eps 1/20 (Delta about 30, far beyond Hilbert's reach at tol 1e-9) auto
#: takes the convexity path.
COST = [["137/1000", "291/500", "867/1000"], ["821/1000", "391/500", "8/125"], ["261/1000", "3/25", "507/1000"], ["779/1000", "23/50", "483/1000"]]
A, B = ["1/11", "2/11", "2/11", "6/11"], ["1/4", "9/16", "3/16"]


def q(x: Fraction | int) -> str:
    """A number as a certificate's canonical rational text."""
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def verdict(doc: dict) -> tuple[str, str]:
    body = {k: v for k, v in copy.deepcopy(doc).items() if k != "sha256"}
    out = verify_bytes(canonical_json(seal(body)))
    return out.status, out.reason


@pytest.fixture(scope="module")
def genuine(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("convexity_attack")
    for name, value in (("C", COST), ("a", A), ("b", B)):
        (d / f"{name}.json").write_text(json.dumps(value))
    kw = {**CLAIM.defaults(), "cost": str(d / "C.json"), "a": str(d / "a.json"), "b": str(d / "b.json"), "eps": "1/20", "tol": "1e-9", "ref_iter": 10, "pot_iter": 10}
    doc = CLAIM.prove(**kw)
    run = doc["outputs"]["runs"][0]
    assert run["method"] == "convexity" and run["certified"] and doc["result"]["holds"], run["status"]
    assert verdict(doc) == (OK, "")
    return doc


def run_of(doc: dict) -> dict:
    return doc["outputs"]["runs"][0]


def forged(genuine: dict, edit) -> dict:
    doc = copy.deepcopy(genuine)
    edit(doc)
    return doc


def scaled(key: str, factor: Fraction):
    def edit(doc: dict) -> None:
        w = run_of(doc)["witness"]
        w[key] = q(Fraction(w[key]) * factor)

    return edit


def set_witness(key: str, value):
    return lambda doc: run_of(doc)["witness"].__setitem__(key, value)


def set_run(key: str, value):
    return lambda doc: run_of(doc).__setitem__(key, value)


def first_u(factor: Fraction):
    def edit(doc: dict) -> None:
        u = run_of(doc)["witness"]["u"]
        u[0] = q(Fraction(u[0]) * factor)

    return edit


def shrink_ball(doc: dict) -> None:
    run_of(doc)["plan"][0][0]["rad"] = "0"


@pytest.mark.parametrize(
    "edit, reason",
    [
        # sigma twice ARPACK's 0.9 of the gap: T = S H S - sigma S D S + 4^k z z^T is indefinite, dpotrf fails
        (scaled("sigma", Fraction(2)), "the verified Cholesky does not prove the Hessian's gap sigma"),
        # sigma halved: the Cholesky proves it, so mu halves and the bound kappa eta e^{2t} / mu doubles
        (scaled("sigma", Fraction(1, 2)), "the recorded bound is below what the convexity theorem proves"),
        # sigma times (1 + 2^-60): 53 significant bits times 61 is no double, whatever sigma is
        (scaled("sigma", 1 + Fraction(1, 2**60)), "sigma is not a positive binary64 value"),
        (set_witness("sigma", "0"), "sigma is not a positive binary64 value"),
        (set_witness("sigma", "-1"), "sigma is not a positive binary64 value"),
        (set_witness("sigma", str(2**2000)), "sigma is not a positive binary64 value"),
        # u_0 times (1 + 2^-52): no longer a double (the float evaluation would not be the prover's)
        (first_u(1 + Fraction(1, 2**52)), "the float-verified witness u is not positive binary64 values"),
        (first_u(Fraction(2)), "is not below 0.34: the convexity bound does not apply"),
        (first_u(Fraction(0)), "the float-verified witness u is not positive binary64 values"),
        (first_u(Fraction(-1)), "the float-verified witness u is not positive binary64 values"),
        (lambda d: run_of(d)["witness"]["u"].pop(), "the witness u has 3 entries, not 4"),
        (lambda d: run_of(d)["witness"]["v"].append("1"), "the witness v has 4 entries, not 3"),
        (set_witness("u", [str(2**1000)] * 4), "the balanced kernel leaves [0, 2)"),
        (set_witness("u", ["1/" + str(2**1074)] * 4), "a column of the balanced kernel is all below 2^-900"),
        (set_witness("v", ["1/" + str(2**1000)] * 3), "leaves float64's normal range"),
        (set_run("bound", "0"), "the recorded bound is below what the convexity theorem proves"),
        (set_run("bound", "-1/1000000000000"), "the recorded bound is below what the convexity theorem proves"),
        # the same witness relabelled: each other theorem proves far less on it
        (set_run("method", "float-verified"), "the recorded bound is below what the float-verified theorem proves"),
        (set_run("method", "hilbert"), "the recorded bound is below what the hilbert theorem proves"),
        (set_run("method", "high-precision"), "the recorded bound is below what the high-precision theorem proves"),
        (lambda d: run_of(d)["details"].__setitem__("kernel", "floats"), "is not a binary64 value (recipe 'floats')"),
        (lambda d: run_of(d)["details"].__setitem__("kernel", "balls"), "unknown float-verified recipe 'balls'"),
        (set_run("tol", "1/100000000000000000000"), "marked certified but the bound exceeds tol"),
        (set_run("eps", "1/10"), "the runs are not exactly one per eps of the parameters"),
        (shrink_ball, "the recorded plan does not contain the recomputed enclosure"),
        (lambda d: d["inputs"]["a"].__setitem__(0, "1/10"), "unbalanced marginals"),
        # one cost entry lowered: the recorded witness is then far from the new problem's plan
        (lambda d: d["inputs"]["C"][0].__setitem__(0, "1/1000"), "the recorded bound is below what the convexity theorem proves"),
        (set_run("certified", False), "the run is not certified"),
    ],
    ids=[
        "sigma-x2", "sigma-half", "sigma-not-double", "sigma-0", "sigma-negative", "sigma-huge", "u-off-double", "u-x2",
        "u-zero", "u-negative", "u-short", "v-long", "u-huge", "u-subnormal", "v-tiny", "bound-0", "bound-negative",
        "as-float-verified", "as-hilbert", "as-high-precision", "recipe-floats", "recipe-balls", "tol", "eps", "ball-shrunk",
        "unbalanced", "cost-edited", "not-certified",
    ],
)
def test_a_forged_convexity_run_is_refused(genuine, edit, reason):
    status, why = verdict(forged(genuine, edit))
    assert status == REJECTED
    assert reason in why


@pytest.mark.parametrize(
    "edit, reason",
    [
        (set_witness("sigma", "abc"), "malformed rational 'abc'"),
        (set_run("method", "Convexity"), "unknown Sinkhorn method 'Convexity'"),
        (lambda d: run_of(d)["details"].__setitem__("prec", 10**9), '"prec" must be an integer in [2, 16777216]'),  # past the Ball domain's ceiling
        (lambda d: d["outputs"].__setitem__("runs", []), '"runs" must be a non-empty list'),
        (lambda d: d["params"].__setitem__("eps", "0"), "eps must be > 0"),
    ],
    ids=["sigma-text", "method-case", "prec-huge", "no-runs", "eps-0"],
)
def test_a_malformed_convexity_run_is_one_line_bad(genuine, edit, reason):
    status, why = verdict(forged(genuine, edit))
    assert status == BAD
    assert reason in why and "\n" not in why


def test_a_larger_recorded_bound_is_refused_by_the_rebuild(genuine):
    """A bound twice the proven one is true, so the check accepts it; the rebuild pins the recorded number."""
    status, why = verdict(forged(genuine, lambda d: set_run("bound", q(Fraction(run_of(d)["bound"]) * 2))(d)))
    assert status == REJECTED
    assert 'the field "outputs.runs[0].bound" differs from its recomputation' in why


def test_an_input_recorded_as_from_a_npy_file_of_integers_holds_only_integers(genuine):
    """The cost k/1000 relabelled as read from a .npy file of integers (read_from included): no such file holds it."""

    def relabel(doc: dict) -> None:
        doc["params"]["cost"] = "npy-int"
        doc["inputs"]["read_from"]["C"] = "a .npy file of integers, read exactly"

    status, why = verdict(forged(genuine, relabel))
    assert status == REJECTED
    assert "C is recorded as read from a .npy file of integers" in why


def test_a_singular_newton_system_on_a_small_problem_is_not_a_traceback():
    """Found by this audit: on 2 x 2 problems at small eps (seed 3, eps 1/200; 12 of 240 cases: seeds 0-11, n x m of 2x2 to 4x3, eps 1/20 to 1/200)
    the convexity path's Newton polish (constructions/sinkhorn/convexity.py, _polished) let numpy's LinAlgError
    ('Singular matrix') out of `attncert prove sinkhorn_convergence` as a traceback. It now stops the Newton steps
    there, as the other callers of the same solve do, and auto goes on to the next method."""
    doc = CLAIM.prove(**{**CLAIM.defaults(), "n": 2, "m": 2, "seed": 3, "eps": "1/200", "tol": "1e-9", "ref_iter": 10, "pot_iter": 10})
    run = run_of(doc)
    assert run["certified"] and doc["result"]["holds"], run["status"]
    assert verdict(doc) == (OK, "")


def test_the_mpmath_references_budget_is_estimated_and_bounded():
    """Found by this audit: verify's rebuild runs the mpmath reference with the recorded ref_iter (at most 10^6;
    11 ms an iteration at 64 x 64), so a genuine certificate with ref_iter raised and resealed kept verify busy for
    hours before it said REJECTED. The estimate now counts the reference, a budget of more than 2,000 x 4,096 entry
    updates an eps is refused in one line by prove and --estimate, and so verify's rebuild of such a document stops
    at once (BAD)."""
    lim = Limits()
    base = {"n": 64, "eps": "1/10000", "tol": "1e-9"}
    few = estimate(CLAIM, parsed(CLAIM, {**base, "ref_iter": 1000}), lim)
    more = estimate(CLAIM, parsed(CLAIM, {**base, "ref_iter": 2000}), lim)
    assert more.seconds - few.seconds >= 1000 * 64 * 64 * 2.7e-6  # the thousand more iterations, at the measured 2.7 us an entry
    with pytest.raises(ParseError, match="mpmath reference"):
        estimate(CLAIM, parsed(CLAIM, {**base, "ref_iter": 1_000_000}), lim)
    with pytest.raises(ParseError, match="mpmath reference"):
        CLAIM.prove(**{**CLAIM.defaults(), **base, "ref_iter": 2001})
    doc = CLAIM.prove(**{**CLAIM.defaults(), "n": 3, "eps": "1/5", "tol": "1e-9", "ref_iter": 10, "pot_iter": 10})
    doc["params"]["ref_iter"] = 1_000_000  # 9 x 10^6 entry updates an eps: over the budget, refused before it runs
    status, reason = verdict(doc)
    assert status == BAD and "mpmath reference" in reason, (status, reason)


def test_a_genuine_problem_from_npy_files_of_integers_verifies(tmp_path):
    import numpy as np

    np.save(tmp_path / "C.npy", np.array([[1, 2, 3], [2, 1, 5], [4, 3, 1], [2, 2, 2]], dtype=np.int64))
    np.save(tmp_path / "a.npy", np.array([3, 3, 3, 3], dtype=np.int64))
    np.save(tmp_path / "b.npy", np.array([4, 4, 4], dtype=np.int64))
    kw = {**CLAIM.defaults(), "cost": str(tmp_path / "C.npy"), "a": str(tmp_path / "a.npy"), "b": str(tmp_path / "b.npy"), "eps": "1", "ref_iter": 10, "pot_iter": 10}
    doc = CLAIM.prove(**kw)
    assert doc["params"]["cost"] == doc["params"]["a"] == doc["params"]["b"] == "npy-int"
    assert doc["result"]["holds"]
    assert verdict(doc) == (OK, "")


#: Found by this audit: at eps 1/100 the entry C_10 = 173/25 (y = 692) times the row's small witness x_1 (its mass
#: is 1/10000) underflows in the balanced kernel, fl(x_1 K~_10) < 2^-1022. The balanced evaluation takes that entry
#: as 0 (its sums carry it in a tail), but the plan's balls were u_i K^_ij v_j f: the ball [0 +- 0], which excludes
#: P*_10 = 1.43e-295 > 0 (a Sinkhorn plan is positive). prove wrote it and verify said OK.
UNDERFLOW = {"C": [["11/20", "3/100", "19/25"], ["173/25", "21/25", "17/100"], ["2/25", "43/50", "1/50"]], "a": ["1", "1/10000", "1"], "b": ["6667/10000"] * 3}


def sinkhorn_plan_mpmath(C: list, a: list, b: list, eps: Fraction, digits: int = 60) -> list:
    """P* by plain Sinkhorn in mpmath (no underflow), to a relative row residual of 10^-(digits - 10)."""
    import mpmath

    with mpmath.workdps(digits):
        mp = lambda x: mpmath.mpf(Fraction(x).numerator) / Fraction(x).denominator  # noqa: E731
        K = [[mpmath.exp(-mp(c) / mp(eps)) for c in row] for row in C]
        A, B = [mp(x) for x in a], [mp(x) for x in b]
        u = [mpmath.mpf(1)] * len(A)
        for _ in range(100_000):
            v = [B[j] / mpmath.fsum(K[i][j] * u[i] for i in range(len(A))) for j in range(len(B))]
            r = [u[i] * mpmath.fsum(K[i][j] * v[j] for j in range(len(B))) for i in range(len(A))]
            if max(abs(r[i] / A[i] - 1) for i in range(len(A))) < mpmath.mpf(10) ** (10 - digits):
                return [[u[i] * K[i][j] * v[j] for j in range(len(B))] for i in range(len(A))]
            u = [u[i] * A[i] / r[i] for i in range(len(A))]
    raise AssertionError("the mpmath reference did not converge")


@pytest.fixture(scope="module")
def underflow(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("convexity_underflow")
    for name, value in UNDERFLOW.items():
        (d / f"{name}.json").write_text(json.dumps(value))
    kw = {**CLAIM.defaults(), "cost": str(d / "C.json"), "a": str(d / "a.json"), "b": str(d / "b.json"), "eps": "1/100", "tol": "1e-9", "ref_iter": 10, "pot_iter": 10}
    doc = CLAIM.prove(**kw)
    assert run_of(doc)["method"] == "convexity" and run_of(doc)["certified"], run_of(doc)["status"]
    return doc


def test_an_underflowed_balanced_entry_has_a_ball_containing_the_positive_plan_entry(underflow):
    import mpmath

    P = sinkhorn_plan_mpmath(UNDERFLOW["C"], UNDERFLOW["a"], UNDERFLOW["b"], Fraction(1, 100))
    assert 1e-296 < P[1][0] < 1e-294  # positive, and far below 2^-1022 times the kernel's largest entries
    for i, row in enumerate(run_of(underflow)["plan"]):
        for j, ball in enumerate(row):
            mid, rad = Fraction(ball["mid"]), Fraction(ball["rad"])
            lo = mpmath.mpf(mid.numerator) / mid.denominator - mpmath.mpf(rad.numerator) / rad.denominator
            hi = mpmath.mpf(mid.numerator) / mid.denominator + mpmath.mpf(rad.numerator) / rad.denominator
            assert lo <= P[i][j] <= hi, (i, j, ball)
    assert verdict(underflow) == (OK, "")


def test_the_old_zero_ball_of_an_underflowed_entry_is_refused(underflow):
    """The certificate as the prover wrote it before the fix: the ball of P*_10 exactly [0 +- 0]."""

    def zero(doc: dict) -> None:
        run_of(doc)["plan"][1][0] = {"mid": "0", "rad": "0"}

    status, why = verdict(forged(underflow, zero))
    assert status == REJECTED
    assert "the recorded plan does not contain the recomputed enclosure" in why


#: A genuine certificate that verify REJECTED (found by this audit's sweep, 1 of 110 certified convexity runs on small
#: adversarial problems: costs near y = 700, a row of mass 1/100): the recorded balls (the prover's, at 64 bits) and
#: the checker's recomputed ones (at 192 bits) were both enclosures of P* of nearly the same radius, but centres a
#: relative 3e-21 apart and radii rounded to 30 bits apart, so four recorded balls did not contain the recomputed
#: ones. The checker now compares the recorded balls with its enclosure's exact endpoints (runs.contains_all), which
#: a ball's 30-bit radius does not blur; certificates written before still verify.
NOT_NESTED = {
    "C": [
        ["21/100", "12/25", "49/100", "18/25"], ["9/100", "9/100", "51/100", "3/50"], ["79/100", "47/100", "99/100", "23/100"],
        ["47/100", "22/25", "29/100", "6/25"], ["1727/50", "63/100", "37/100", "863/25"],
    ],
    "a": ["1/100", "3", "7", "5", "5"],
    "b": ["667/200", "2001/400", "667/240", "667/75"],
}
#: A second one (2 x 5, a row of mass 1/10000 and a cost of 34.54 at eps 1/20).
NOT_NESTED_2 = {
    "C": [["17/100", "43/100", "1727/50", "2/25", "69/100"], ["69/100", "13/50", "47/100", "23/100", "13/25"]],
    "a": ["1/10000", "4"],
    "b": ["30589/30000", "2353/5000", "2353/2500", "2353/3000", "2353/3000"],
}


@pytest.mark.parametrize("problem", [NOT_NESTED, NOT_NESTED_2], ids=["5x4", "2x5"])
def test_a_genuine_convexity_certificate_with_nearly_equal_balls_verifies(tmp_path, problem):
    for name, value in problem.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(value))
    kw = {**CLAIM.defaults(), "cost": str(tmp_path / "C.json"), "a": str(tmp_path / "a.json"), "b": str(tmp_path / "b.json"), "eps": "1/20", "tol": "1e-9", "ref_iter": 10, "pot_iter": 10}
    doc = CLAIM.prove(**kw)
    assert run_of(doc)["method"] == "convexity" and doc["result"]["holds"]
    assert verdict(doc) == (OK, "")


def test_a_random_problem_larger_than_verify_reads_is_refused_by_prove():
    """Found by this audit: `prove sinkhorn_convergence --n 2 --m 5000` wrote a certificate that verify calls BAD
    (the checker reads at most 4,096 rows and columns; the file route already refused more), and at --m 9000 prove
    ended in a ValueError traceback from the float-verified evaluation (more than 2^13 columns)."""
    from attncert.exact import ParseError

    for m in (5000, 9000):
        with pytest.raises(ParseError, match="at most 4,096 rows and columns"):
            CLAIM.prove(**{**CLAIM.defaults(), "n": 2, "m": m, "eps": "1/20", "tol": "1e-9", "ref_iter": 10, "pot_iter": 10})


def test_a_kernel_of_more_than_8192_columns_is_unsupported_by_the_float_paths_not_a_crash():
    """The exact digit products need at most 2^13 columns; beyond, the convexity and float-verified paths now say
    why they do not apply (UnsupportedKernel, so auto goes on), where a bare ValueError escaped them."""
    import numpy as np
    from flint import fmpq

    from attncert.constructions.sinkhorn.convexity import convexity_run
    from attncert.constructions.sinkhorn.shifted import array_cost, shifted_kernel

    M = np.random.default_rng(0).random((2, 9000))
    K = shifted_kernel(array_cost(M), fmpq(1, 20))
    a, b = [fmpq(1, 2)] * 2, [fmpq(1, 9000)] * 9000
    run = convexity_run(K, a, b, max_iter=50)
    assert run.evaluation is None
    assert "too large for exact products" in run.reason


def test_tiny_masses_do_not_turn_the_mpmath_reference_into_a_false_does_not_hold(tmp_path):
    """Found by this audit: with masses 1/(3 10^250) the mpmath reference's absolute residual test (10^-50) passed at
    its first iteration, far from the plan; the reference then lay outside the (correct) convexity enclosure, prove
    recorded holds = false and exited 1, and verify REJECTED the certificate (its check found the claim holding). The
    test is now relative to the total mass."""
    (tmp_path / "C.json").write_text(json.dumps([["0", "1/2", "1"], ["1/2", "0", "1/3"], ["1", "1/3", "0"]]))
    (tmp_path / "a.json").write_text(json.dumps(["1/" + str(3 * 10**250)] * 3))
    kw = {**CLAIM.defaults(), "cost": str(tmp_path / "C.json"), "a": str(tmp_path / "a.json"), "b": str(tmp_path / "a.json"), "eps": "1/20", "tol": "1e-9", "ref_iter": 10, "pot_iter": 10}
    doc = CLAIM.prove(**kw)
    assert run_of(doc)["certified"]
    assert "converged in 1 iterations" not in doc["reference"]["references"][0]["mpmath"]
    assert doc["result"]["holds"] is True
    assert verdict(doc) == (OK, "")


def test_a_run_that_is_not_an_object_is_one_clear_line(genuine):
    status, why = verdict(forged(genuine, lambda d: d["outputs"].__setitem__("runs", ["x"])))
    assert (status, why) == (BAD, "every Sinkhorn run must be an object")  # was "malformed certificate (AttributeError: ...)"


def test_the_largest_double_as_sigma_is_refused_without_a_numpy_warning(genuine):
    """sigma = the largest double overflowed the Hessian's diagonal: refused, but numpy printed a RuntimeWarning."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        status, why = verdict(forged(genuine, set_witness("sigma", str((2**53 - 1) * 2**971))))
    assert status == REJECTED
    assert "the verified Cholesky does not prove the Hessian's gap sigma" in why


@pytest.mark.parametrize("reg, scale", [(1e-300, 1.0), (0.1, 1e300), ("1e-400", 1.0)], ids=["reg-1e-300", "cost-1e300", "reg-1e-400"])
def test_attncert_sinkhorn_with_an_extreme_cost_over_reg_is_one_input_error(reg, scale):
    """attncert.sinkhorn (any method, convexity included) raised OverflowError from its slow-path announcement's
    time estimate ((bits / 128)^1.5 of a float) before its own input check could refuse the problem in one line."""
    import numpy as np

    import attncert
    from attncert.exact import ParseError

    M = np.random.default_rng(0).random((4, 3)) * scale
    with pytest.raises(ParseError, match="over the limit of 2\\^53"):
        attncert.sinkhorn(np.ones(4) / 4, np.ones(3) / 3, M, reg)


#: Found by this audit's sweep: a row of mass 1e-6 and a cost of 6.93 at eps 1/100 (kernel entries near e^-693). The
#: convexity path does not apply (kappa), and the arb Hilbert path (Delta <= 36) took Newton steps of e^-40 and
#: beyond: 1 + expm1(step) is exactly 0 in float there, so u_i became 0, v = b / 0, and `prove` ended in a ValueError
#: traceback ('fmpq requires an exact, finite value').
HILBERT_ZERO = {
    "C": [["29/100", "1/4"], ["37/100", "37/100"], ["37/100", "1/100"], ["693/100", "173/25"]],
    "a": ["7", "5", "1/1000000", "8"],
    "b": ["140000007/13000000", "60000003/6500000"],
}


def _prove_hilbert_zero(tmp_path) -> dict:
    for name, value in HILBERT_ZERO.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(value))
    kw = {**CLAIM.defaults(), "cost": str(tmp_path / "C.json"), "a": str(tmp_path / "a.json"), "b": str(tmp_path / "b.json"), "eps": "1/100", "tol": "1e-9", "ref_iter": 10, "pot_iter": 10}
    return CLAIM.prove(**kw)


def test_a_huge_newton_step_in_the_arb_hilbert_loop_is_no_traceback(tmp_path):
    from attncert.exact.errors import AttncertError

    try:
        doc = _prove_hilbert_zero(tmp_path)
    except AttncertError as e:  # one line: today the uncertified run's plan is over the digit limit (below)
        assert "\n" not in str(e)
        return
    assert verdict(doc)[0] in (OK, "DOES-NOT-HOLD", "NOT-PROVEN")


def test_an_uncertified_run_with_a_huge_bound_is_recorded(tmp_path):
    """Found by this audit: the arb Hilbert run on this problem stalls at a bound of 9.2e9 (not certified), and its
    plan, widened by e^bound, had ball endpoints of about 2^13,305,610,241: recording it was refused as over
    --max-digits, so prove stopped instead of writing the run as not certified. An uncertified run's plan proves
    nothing and is no longer recorded."""
    doc = _prove_hilbert_zero(tmp_path)
    run = doc["outputs"]["runs"][0]
    assert doc["result"]["holds"] is False and not run["certified"] and run["plan"] is None
    assert verdict(doc)[0] == "NOT-PROVEN"  # genuine, and not proven at this eps (it may hold)
