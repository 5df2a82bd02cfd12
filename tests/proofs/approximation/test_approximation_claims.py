"""lipschitz_approx and lipschitz_rates: proofs that verify, self-consistent forgeries that do not, bad
input refused with one line and exit 2, the rates against the theory, and the plot.

Each forgery is well formed and correctly hashed, and its claim is false; the independent check alone
(proofs/checkers/approximation/claims.py, without the rebuild) must already refuse it.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import resource
import subprocess
import sys

import mpmath
import numpy as np
import pytest
from flint import fmpq

import attncert.proofs.approximation.common as common
from attncert.constructions import rasp
from attncert.proofs.checkers.approximation.closed_form import ClosedForm
from attncert.exact import QQ, ParseError
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal, write_certificate
from attncert.proofs.cli import main
from attncert.proofs.core.registry import load_claims
from attncert.proofs.core.verify import BAD, DOES_NOT_HOLD, NOT_PROVEN, OK, REJECTED, verify_bytes

CLAIMS = load_claims()
APPROX, RATES = CLAIMS["lipschitz_approx"], CLAIMS["lipschitz_rates"]
SMALL = {"d": 2, "h": "1/4"}


def prove(claim, **kw) -> dict:
    return claim.prove(**{**claim.defaults(), **kw})


def status(doc: dict) -> str:
    return verify_bytes(canonical_json(seal(doc))).status


def refused(doc: dict, match: str, claim=APPROX) -> None:
    """The independent check alone names the problem, and verify says REJECTED (or BAD)."""
    try:
        problems = claim.check(doc)
    except ParseError as e:
        problems = [str(e)]
    assert any(match in p for p in problems), problems
    assert status(doc) in (REJECTED, BAD)


@pytest.fixture(scope="module")
def small() -> dict:
    return prove(APPROX, **SMALL)


@pytest.fixture(scope="module")
def small_rates() -> dict:
    """Four rows of three cones, at d = 1 (m = 1, 2), 2 and 3 (m = 1)."""
    return prove(RATES, m1="1,2", m2="1", m3="1", holder_targets="")


def test_the_default_certificate_holds_and_verifies():
    doc = prove(APPROX)
    r = doc["result"]
    assert r["holds"] and r["relation"] == "bound" and r["rasp_equals_closed_form"]
    assert QQ.from_json(r["lower"]) <= QQ.from_json(r["eps"]) <= fmpq(5, 4) * QQ.from_json(r["lower"])
    assert doc["construction"]["compiled"]["equals_rasp"] and r["width"] == 512 and r["depth"] == 11
    assert QQ.from_json(r["network_lipschitz"]) == 6  # three cones in d = 2: 3 d
    assert status(doc) == OK


def test_a_user_expression_is_approximated_and_verifies():
    doc = prove(APPROX, expr="Max(Abs(x1 - 1/3), x2/2) + sin(x1*x2)/4", L="3/2", d=2, h="1/6")
    assert doc["result"]["holds"] and doc["inputs"]["target"]["name"] == "expr"
    assert doc["outputs"]["independent"]["bound"] is not None
    assert status(doc) == OK


def test_holder_target_uses_the_holder_theorem_in_the_subgrid():
    doc = prove(APPROX, target="cbrt", d=1, h="1/8")
    assert doc["result"]["holds"] and doc["construction"]["slope"] == "4"  # 8^(1 - 1/3)
    assert "Hölder theorem" in doc["outputs"]["independent"]["modulus"]
    assert status(doc) == OK


def test_a_wrong_lipschitz_constant_fails_and_names_the_pair(tmp_path, capsys):
    doc = prove(APPROX, target="sin", d=1, h="1/16", L="3")  # pi > 3
    v = doc["reference"]["hypothesis"]["violated_pair"]
    assert not doc["result"]["holds"] and v["x_i"] == ["0"] and v["x_j"] == ["1/16"]  # sin(pi/16) > 3/16
    assert "x_0 = (0), x_1 = (1/16)" in doc["result"]["violation"]
    assert status(doc) == DOES_NOT_HOLD  # genuine: the check confirms the violated pair the certificate records
    # the same certificate saying that it holds is a forgery, and the check names the violated pair
    refused({**doc, "result": {**doc["result"], "holds": True}}, "fails on the grid pair x_0 = (0), x_1 = (1/16)")
    assert main(["prove", "lipschitz_approx", "--target", "sin", "--d", "1", "--h", "1/16", "--L", "3", "--out", str(tmp_path / "c.json")]) == 1
    assert main(["verify", str(tmp_path / "c.json")]) == 1
    out = capsys.readouterr().out
    assert "DOES-NOT-HOLD" in out and "genuine; the claim does not hold: the stated" in out and "fails on the grid pair" in out


def test_a_wrong_holder_constant_is_found_on_a_far_pair():
    doc = prove(APPROX, target="sqrt", d=1, h="1/16", L="1/2")
    v = doc["reference"]["hypothesis"]["violated_pair"]
    assert not doc["result"]["holds"] and v is not None and status(doc) == DOES_NOT_HOLD


# -- "holds" means proven: the stated modulus on grid pairs -----------------------------------------


def forged_as_proven(monkeypatch, **kw) -> dict:
    """An ordinary prove run whose grid-pair decision is replaced by one saying every tested pair is proven:
    a self-consistent certificate (counts, statement, holds) of a stated bound that is false or undecided."""
    real = common.decide

    def all_proven(*args):
        d = real(*args)
        return dataclasses.replace(d, proven=d.pairs, violated=0, undecided=0, precisions=d.precisions[:1], violated_pair=None, undecided_pair=None)

    monkeypatch.setattr(common, "decide", all_proven)
    doc = prove(APPROX, **kw)
    monkeypatch.undo()
    assert doc["result"]["holds"] and doc["result"]["violation"] is None
    return doc


def violated_pairs_by_mpmath(f, C: str, alpha: str, m: int) -> int:
    """All pairs i < j of the grid {0..m}/m with |f(x_i) - f(x_j)| > C |x_i - x_j|^alpha, at 50 digits (strict
    inequalities only: the cases below have no equality)."""
    with mpmath.workdps(50):
        c, a = mp(C), mp(alpha)
        x = [mpmath.mpf(j) / m for j in range(m + 1)]
        return sum(abs(f(x[i]) - f(x[j])) > c * abs(x[i] - x[j]) ** a for i in range(m + 1) for j in range(i + 1, m + 1))


def mp(text: str) -> mpmath.mpf:
    p, _, q = text.partition("/")
    return mpmath.mpf(int(p)) / int(q or 1)


#: Leaf budget of the instances below: g = f exactly for f = x1 (sup |f - g| = 0), so no lower bound ever
#: comes within the ratio and the search stops at its budget.
BUDGET = 64

# The three examples on the grid of step 1/8. For alpha = 1 the tested pairs are the 8 neighbour pairs
# (j/8, (j+1)/8), each with |f(x_i) - f(x_j)| = 1/8 > L/8; for alpha < 1 all 9 * 8 / 2 = 36 pairs.
EXAMPLES = [
    ("x1", "1/2", "", 8, 8),
    ("x1", "2097151/2097152", "", 8, 8),  # L = 1 - 2^-21: 1/8 - L/8 = 2^-24, within the old check's 2 * 2^-24 slack
    ("sqrt(x1)", "7/8", "1/2", 36, violated_pairs_by_mpmath(mpmath.sqrt, "7/8", "1/2", 8)),
]


@pytest.mark.parametrize("expr, L, alpha, pairs, violated", EXAMPLES)
def test_a_stated_constant_violated_on_a_grid_pair_does_not_hold(expr, L, alpha, pairs, violated, tmp_path, capsys):
    doc = prove(APPROX, expr=expr, L=L, alpha=alpha, d=1, h="1/8", max_leaves=BUDGET)
    rec = doc["reference"]["hypothesis"]
    assert (rec["pairs"], rec["violated"], rec["proven"], rec["undecided"]) == (pairs, violated, pairs - violated, 0)
    # x_0 = 0 and x_1 = 1/8 are rational points where f is exact (0 and 1/8, or 0 and (1/8)^(1/2))
    assert rec["violated_pair"] == {"i": 0, "j": 1, "x_i": ["0"], "x_j": ["1/8"], "decided_by": "exact values of f"}
    assert not doc["result"]["holds"] and "fails on the grid pair x_0 = (0), x_1 = (1/8)" in doc["result"]["statement"]
    assert doc["outputs"]["certified"]["closed_form"]["bound"] is None  # its hypothesis fails with this constant
    assert status(doc) == DOES_NOT_HOLD
    out = tmp_path / "c.json"
    args = ["prove", "lipschitz_approx", "--expr", expr, "--L", L, "--d", "1", "--h", "1/8", "--max-leaves", str(BUDGET), "--out", str(out)]
    args += ["--alpha", alpha] if alpha else []
    assert main(args) == 1 and main(["verify", str(out)]) == 1
    assert "fails on the grid pair x_0 = (0), x_1 = (1/8)" in capsys.readouterr().out


@pytest.mark.parametrize("expr, L, alpha, pairs, violated", EXAMPLES)
def test_forgery_a_violated_constant_recorded_as_proven(expr, L, alpha, pairs, violated, monkeypatch):
    bad = forged_as_proven(monkeypatch, expr=expr, L=L, alpha=alpha, d=1, h="1/8", max_leaves=BUDGET)
    assert f"proven on all {pairs} tested grid pairs" in bad["result"]["statement"]
    refused(bad, "fails on the grid pair x_0 = (0), x_1 = (1/8)")


def test_equality_is_proven_from_exact_values():
    """f = x1 with L = 1 (every neighbour pair at equality), and x1^(1/2) with C = 1 (the pairs (0, x))."""
    lip = prove(APPROX, expr="x1", L="1", d=1, h="1/8", max_leaves=BUDGET)["reference"]["hypothesis"]
    assert (lip["pairs"], lip["proven"], lip["from_exact_values"]) == (8, 8, 8)
    doc = prove(APPROX, target="sqrt", d=1, h="1/8")
    rec = doc["reference"]["hypothesis"]
    # exact pairs: x1^(1/2) is rational at 0, 1/4 and 1; both rational: (0, 2/8), (0, 1), (2/8, 1); one zero:
    # (0, j/8) for j = 1..8. Together 9.
    assert (rec["pairs"], rec["proven"], rec["from_exact_values"], rec["precisions"]) == (36, 36, 9, [64])
    assert doc["result"]["holds"] and status(doc) == OK


UNDECIDED = {"expr": "x1 + sin(x1)**2 + cos(x1)**2", "L": "1", "d": 1, "h": "1/4", "max_leaves": BUDGET}  # f = x1 + 1


def test_a_pair_that_cannot_be_decided_is_not_counted_as_holding():
    doc = prove(APPROX, **UNDECIDED)
    rec = doc["reference"]["hypothesis"]
    # f(0) = 1 is exact, f(j/4) for j > 0 is not: every pair is an equality that no enclosure decides
    assert (rec["pairs"], rec["proven"], rec["violated"], rec["undecided"], rec["precisions"]) == (4, 0, 0, 4, [64, 256, 1024])
    assert rec["undecided_pair"]["x_i"] == ["0"] and rec["undecided_pair"]["x_j"] == ["1/4"]
    assert not doc["result"]["holds"] and "is not decided on the grid pair x_0 = (0), x_1 = (1/4)" in doc["result"]["statement"]
    assert status(doc) == NOT_PROVEN  # genuine: "holds" means proven, and the bound is not; no pair is violated either
    refused({**doc, "result": {**doc["result"], "holds": True}}, "is not decided on the grid pair x_0 = (0), x_1 = (1/4)")


def test_forgery_an_undecided_bound_recorded_as_proven(monkeypatch):
    refused(forged_as_proven(monkeypatch, **UNDECIDED), "is not decided on the grid pair x_0 = (0), x_1 = (1/4)")


def test_eps_is_the_closed_form_where_it_is_better():
    """Three cones, d = 2, h = 1/16: L_f = L = 6, so the closed form is (6 + 6)/(2 * 16) + 2^-24 = 3/8 + 2^-24
    (the branch-and-bound alone reported 0.3875 before)."""
    doc = prove(APPROX, h="1/16")
    cert = doc["outputs"]["certified"]
    assert QQ.from_json(cert["eps"]) == QQ.from_json(cert["closed_form"]["bound"]) == fmpq(3, 8) + fmpq(1, 2**24)
    assert QQ.from_json(cert["lower"]) <= QQ.from_json(cert["eps"]) < QQ.from_json(cert["partition_bound"])
    assert "L_f = 6 <= L" in cert["closed_form"]["modulus"] and status(doc) == OK


def test_forgery_a_closed_form_whose_hypothesis_fails(monkeypatch):
    """f = x1 stated 1/2-Lipschitz: a prover that took the stated constant as f's (closed form (1/2 + 1/2)/16
    + 2^-24) and counted the pairs as proven writes a consistent certificate of a false eps."""
    monkeypatch.setattr(common, "closed_form", lambda expr, d, m, C, alpha, L, bits: ClosedForm((C + L) / (2 * m) + fmpq(1, 2**bits), "assumed", ""))
    bad = forged_as_proven(monkeypatch, expr="x1", L="1/2", d=1, h="1/8", max_leaves=BUDGET)
    assert bad["result"]["eps"] == QQ.to_json(fmpq(1, 16) + fmpq(1, 2**24))
    refused(bad, "the closed-form bound is not available: the structural Lipschitz bound L_f = 1 of f exceeds the slope L = 1/2")


# -- no abort, whatever the target -------------------------------------------------------------------

MEMORY_CAP = 2 << 30


def capped(*args: str) -> subprocess.CompletedProcess:
    """attncert in a fresh process limited to 2 GiB of address space."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    return subprocess.run([sys.executable, "-m", "attncert", *args], capture_output=True, text=True, preexec_fn=limit, timeout=300)


@pytest.mark.parametrize(
    "expr, fragment",
    [
        ("exp(10**10)", "exp(10000000000) reaches about 2^14,426,950,408 in magnitude"),  # 10^10 / ln 2 = 14426950408.9
        ("exp(10**30)", "in magnitude, over the limit of 2^1,024"),  # FLINT aborted in arf_get_fmpq
    ],
)
def test_prove_refuses_a_huge_target_in_one_line_under_a_memory_cap(expr, fragment, tmp_path):
    r = capped("prove", "lipschitz_approx", "--expr", expr, "--L", "1", "--d", "1", "--h", "1/4", "--out", str(tmp_path / "c.json"))
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1 and fragment in r.stderr, r.stderr
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("expr, where", [("exp(10**10)", "params and inputs"), ("exp(10**30)", "inputs only")])
def test_verify_refuses_a_certificate_of_a_huge_target_in_one_line_under_a_memory_cap(expr, where, tmp_path):
    """A small, re-sealed certificate whose target is huge: refused by the cost model (params) or by the
    checker's bounded enclosures (the expression read from inputs), never computed with."""
    doc = prove(APPROX, expr="x1", L="1", d=1, h="1/4", max_leaves=BUDGET)
    doc["inputs"]["target"]["expression"] = expr
    if where == "params and inputs":
        doc["params"]["expr"] = expr
    path = tmp_path / "forged.json"
    write_certificate(path, seal(doc))
    assert len(path.read_bytes()) < 20_000
    r = capped("verify", str(path))
    assert r.returncode == 2 and r.stdout.startswith("BAD") and r.stdout.count("\n") == 1 and r.stderr == "", (r.stdout, r.stderr)
    assert "in magnitude, over the limit of 2^1,024" in r.stdout


def test_the_estimate_states_the_target_magnitude():
    # e^700 = 2^(700 / ln 2) = 2^1009.9, so |x1 e^700| < 2^1010 on [0, 1]
    assert APPROX.estimate({"expr": "x1*exp(700)", "L": "1", "d": 1, "h": "1/4"}).magnitude == 1010
    # three cones in d = 2: the largest subexpression is 3 (|x1 - 9/10| + |x2 - 3/4|) <= 3 (9/10 + 3/4) = 4.95 < 2^3
    assert APPROX.estimate({}).magnitude == 3


# -- forgeries ---------------------------------------------------------------------------------------


def test_forgery_eps_too_small_with_a_consistent_partition(small):
    bad = copy.deepcopy(small)
    cert = bad["outputs"]["certified"]
    # three cones, d = 2, h = 1/4: the closed form (6 + 6)/8 + 2^-24 is above the lower bound, so eps = lower
    # is the better of the forged partition bound and the closed form, as a prover would record it
    assert QQ.from_json(cert["closed_form"]["bound"]) == fmpq(3, 2) + fmpq(1, 2**24) > QQ.from_json(cert["lower"])
    cert["eps"] = cert["partition_bound"] = bad["result"]["eps"] = cert["lower"]
    cert["stopped"] = bad["result"]["stopped"] = "ratio"
    refused(bad, "bounds |f - g| only by")


def test_forgery_a_partition_that_misses_a_corner(small):
    bad = copy.deepcopy(small)
    leaves = bad["outputs"]["certified"]["leaves"]
    leaves.remove(next(leaf for leaf in leaves if leaf[1:] == [0, 0]))
    refused(bad, "does not cover the box [0, ")


def test_forgery_overlapping_leaves(small):
    bad = copy.deepcopy(small)
    leaves = bad["outputs"]["certified"]["leaves"]
    leaves.append([1, 0, 0])
    leaves.sort()  # recorded in order, as the search writes them: the tiling check finds the overlap
    refused(bad, "overlap")


@pytest.mark.parametrize("change", ["swap", "repeat"])
def test_a_partition_has_one_record_the_sorted_one(small, small_rates, change):
    """Issue 30's structural walk: two leaves swapped verified OK (the rebuild wrote the recorded order back).
    A partition is a set; its record lists the leaves once each in increasing order, and another order or a
    repeated leaf is malformed."""
    bad = copy.deepcopy(small)
    leaves = bad["outputs"]["certified"]["leaves"]
    if change == "swap":
        leaves[3], leaves[4] = leaves[4], leaves[3]
    else:
        leaves.insert(3, leaves[3])
    refused(bad, "in increasing order")
    rows = copy.deepcopy(small_rates)
    leaves = rows["outputs"]["rows"][0]["certified"]["leaves"]
    leaves[0], leaves[1] = leaves[1], leaves[0]
    refused(rows, "in increasing order", RATES)


def test_a_null_member_left_out_of_the_recorded_grid_pair_decision_is_a_difference(small, small_rates):
    """Issue 30's structural walk: the decision's ``undecided_pair`` (null: no pair is undecided) dropped
    verified OK, since a missing member read as null and the rebuild wrote the record back as it was."""
    for doc, claim, record in ((small, APPROX, lambda d: d["reference"]["hypothesis"]), (small_rates, RATES, lambda d: d["outputs"]["rows"][0]["hypothesis"])):
        bad = copy.deepcopy(doc)
        assert record(bad).pop("undecided_pair") is None and record(bad)["violated_pair"] is None
        refused(bad, "differs from its recomputation in undecided_pair", claim)


def test_forgery_samples_that_are_not_f(monkeypatch):
    real = common.samples

    def shifted(t, grid, bits, prec):
        Y = real(t, grid, bits, prec)
        return [Y[0] + 2 ** (bits - 4)] + Y[1:]  # y_0 = f(x_0) + 1/16, everything else computed from it

    monkeypatch.setattr(common, "samples", shifted)
    bad = prove(APPROX, **SMALL)
    monkeypatch.undo()
    assert bad["result"]["holds"]
    refused(bad, "is not within 2^-24 of f(x_0)")


def test_forgery_a_wrong_lipschitz_constant_of_the_network(small):
    from attncert.proofs.checkers.approximation.mcshane import Interpolant
    from attncert.proofs.checkers.approximation.subgrid import subgrid_bound
    from attncert.exact.expressions import parse_function

    bad = copy.deepcopy(small)
    half = QQ.from_json(bad["construction"]["slope"]) / 2
    bad["construction"]["network_lipschitz"] = bad["result"]["network_lipschitz"] = QQ.to_json(half)
    # the sub-grid bound recomputed with the forged constant, so that it is consistent with it
    y = [QQ.from_json(v) for v in bad["construction"]["samples"]["y"]]
    s = subgrid_bound(parse_function(bad["inputs"]["target"]["expression"], 2), 2, Interpolant(2, 4, y, 2 * half), half, 64)
    bad["outputs"]["independent"]["bound"] = bad["result"]["independent_bound"] = QQ.to_json(s.bound)
    refused(bad, "Lipschitz constant from its weights is")


def test_forgery_a_violated_bound_recorded_as_holding(monkeypatch):
    bad = forged_as_proven(monkeypatch, target="sin", d=1, h="1/16", L="3")
    refused(bad, "fails on the grid pair x_0 = (0), x_1 = (1/16)")


def test_forgery_another_target_with_the_same_samples(small):
    bad = copy.deepcopy(small)
    bad["inputs"]["target"]["expression"] += " + x1/8"
    refused(bad, "is not within 2^-24 of f(x_")


def test_forgery_a_lower_bound_above_what_the_point_shows(small):
    bad = copy.deepcopy(small)
    bad["outputs"]["certified"]["lower"] = bad["result"]["lower"] = bad["outputs"]["certified"]["eps"]
    refused(bad, "the lower bound at the recorded point is")


# -- bad input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--expr", "x1 + x3", "--L", "1"], "must be a function of d = 2"),
        (["--expr", "open('x')", "--L", "1"], "not allowed"),
        (["--expr", "x1"], "needs its Lipschitz"),
        (["--h", "0"], "h must be in (0, 1]"),
        (["--h", "-1/4"], "h must be in (0, 1]"),
        (["--h", "3/2"], "h must be in (0, 1]"),
        (["--L", "0"], "L must be > 0"),
        (["--L", "-2"], "L must be > 0"),
        (["--alpha", "0"], "alpha must be in (0, 1]"),
        (["--alpha", "2"], "alpha must be in (0, 1]"),
        (["--d", "3", "--h", "1/64"], "needs a sequence of 4,194,304 positions, over the limit of 32,768"),
        (["--ratio", "1"], "ratio must be > 1"),
        (["--target", "nope"], "unknown target"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, fragment, capsys, tmp_path):
    assert main(["prove", "lipschitz_approx", *args, "--out", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1 and not (tmp_path / "x.json").exists()


def test_estimate_states_the_width():
    cost = APPROX.estimate({"d": 3, "h": "1/8"})
    assert cost.positions == 8192


# -- rates and the plot ------------------------------------------------------------------------------


def fitted(doc: dict) -> dict[tuple[str, int], tuple[float, float]]:
    """(slope of log eps against log h, theory) per (target, d), fitted here from the certified rows."""
    series: dict = {}
    for row in doc["outputs"]["rows"]:
        series.setdefault((row["target"]["name"], row["grid"]["d"]), []).append(row)
    out = {}
    for key, rows in series.items():
        x = [math.log(float(QQ.from_json(r["grid"]["h"]))) for r in rows]
        y = [math.log(float(QQ.from_json(r["certified"]["eps"]))) for r in rows]
        out[key] = (float(np.polyfit(x, y, 1)[0]), float(QQ.from_json(rows[0]["target"]["alpha"])))
    return out


@pytest.fixture(scope="module")
def rates() -> dict:
    return prove(RATES)


def test_rates_follow_the_theory(rates):
    """eps = O(h) for the Lipschitz target at d = 1, 2, O(h^alpha) for x^(1/2) and x^(1/3)."""
    slopes = fitted(rates)
    for (name, d), (slope, theory) in slopes.items():
        if d < 3:
            assert abs(slope - theory) <= 0.15 * max(theory, 1 / 2), (name, d, slope, theory)
    assert status(rates) == OK


def test_rows_grow_in_width_and_their_errors_shrink(rates):
    for (name, d), rows in _series(rates).items():
        widths = [r["width"] for r in rows]
        eps = [QQ.from_json(r["certified"]["eps"]) for r in rows]
        assert widths == sorted(widths) and eps == sorted(eps, reverse=True), (name, d)
        assert all(r["depth"] == 2 + r["width"].bit_length() - 1 for r in rows)


def _series(doc: dict) -> dict:
    out: dict = {}
    for row in doc["outputs"]["rows"]:
        out.setdefault((row["target"]["name"], row["grid"]["d"]), []).append(row)
    return out


@pytest.mark.slow
def test_rates_in_three_dimensions():
    doc = prove(RATES, m3="2,4,8", holder_targets="")
    slope, theory = fitted(doc)[("three_cones", 3)]
    assert abs(slope - theory) <= 0.25, slope
    assert status(doc) == OK


def test_a_forged_rates_row_fails(rates):
    bad = copy.deepcopy(rates)
    row = bad["outputs"]["rows"][-1]
    row["certified"]["eps"] = row["certified"]["partition_bound"] = row["certified"]["lower"]
    bad["result"]["table"][-1]["eps"] = row["certified"]["lower"]
    refused(bad, "cbrt, d = 1, m = 64: the leaf", RATES)


def test_plot_writes_a_png_and_refuses_a_certificate_that_does_not_verify(tmp_path, capsys):
    out = tmp_path / "r.png"
    assert main(["plot", "lipschitz_rates", "--m1", "4,8", "--m2", "2,4", "--m3", "2", "--holder-targets", "sqrt", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    doc = prove(RATES, m1="4,8", m2="2", m3="2", holder_targets="")
    doc["outputs"]["rows"][0]["certified"]["eps"] = "1/1000"
    write_certificate(tmp_path / "bad.json", seal(doc))
    assert main(["plot", "lipschitz_rates", "--certificate", str(tmp_path / "bad.json"), "--out", str(tmp_path / "b.png")]) == 2
    assert "does not verify" in capsys.readouterr().err and not (tmp_path / "b.png").exists()


def test_the_graph_is_the_recorded_rasp_program(small, capsys):
    """attncert graph lipschitz_approx draws the one RASP program the certificate records: the same graph (JSON),
    of depth 2 + log2 N, N = 128 positions for d = 2, h = 1/4 (25 grid points padded to 32 groups of 2d = 4 pieces)."""
    assert main(["graph", "lipschitz_approx", "--d", "2", "--h", "1/4", "--format", "json"]) == 0
    drawn = json.loads(capsys.readouterr().out)
    assert drawn == small["construction"]["graph"]
    assert small["result"]["width"] == 128 and small["result"]["depth"] == 2 + 7
    assert rasp.size(rasp.graph_from_json(drawn)).layers == 2 + 7
