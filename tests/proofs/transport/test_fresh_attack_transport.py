"""A fresh hostile audit of ``transport_plan`` certificates (2026-12-04): self-consistent forgeries of a genuine
certificate, resealed, and what ``attncert verify`` says of each.

Each forgery keeps every dependent field consistent where the attack needs it (the cost, the dual value, the
optimal cost, the verdict's gap), so that only the mathematical defect is left for the check to find. The expected
reasons are the theorem's hypotheses (docs/transport.md), worked out by hand on the 4 x 3 problem below, never read
from the checker's output.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import numpy as np
import pytest

from attncert.proofs.core.registry import load_claim
from attncert.proofs.core.verify import BAD, OK, REJECTED
from tests.proofs.sinkhorn.test_fresh_attack_convexity import q, verdict

#: The problem: C = [[1, 2, 3], [2, 1, 5], [4, 3, 1], [2, 2, 2]] / 4, a uniform on 4 rows, b uniform on 3 columns.
#: Its optimum, by hand: rows 0, 1, 2 go to columns 0, 1, 2 at cost 1/4 each (3/16 in all), row 3 splits 1/12 to
#: each column at cost 1/2 (1/8 in all): W = 5/16, with f = (0, 0, 0, 1/4) and g = (1/4, 1/4, 1/4) (every reduced
#: cost >= 0, zero on the plan).
COST = [[1, 2, 3], [2, 1, 5], [4, 3, 1], [2, 2, 2]]
OPTIMUM = Fraction(5, 16)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict:
    """A genuine certificate of the problem from files, with a plan to judge (the optimum, one entry moved by 2^-60:
    not a plan of (a, b), so the verdict is not trivially 'optimal')."""
    d = tmp_path_factory.mktemp("transport_attack")
    np.save(d / "C.npy", np.array(COST, dtype=float) / 4)
    (d / "a.json").write_text(json.dumps(["1/4"] * 4))
    (d / "b.json").write_text(json.dumps(["1/3"] * 3))
    G = np.array([[1 / 4, 0, 0], [0, 1 / 4, 0], [0, 0, 1 / 4], [1 / 12, 1 / 12, 1 / 12]])
    np.save(d / "G.npy", G)
    doc = load_claim("transport_plan").prove(cost=str(d / "C.npy"), a=str(d / "a.json"), b=str(d / "b.json"), plan=str(d / "G.npy"))
    assert doc["result"]["holds"] is True
    assert Fraction(doc["result"]["optimal_cost"]) == OPTIMUM
    assert verdict(doc) == (OK, "")
    return doc


@pytest.fixture(scope="module")
def seeded() -> dict:
    doc = load_claim("transport_plan").prove(n=4, m=3, seed=1)
    assert verdict(doc) == (OK, "")
    return doc


def with_optimum(doc: dict, plan: list, f: list, g: list) -> dict:
    """``doc`` with this optimum, every dependent field recomputed from it (the cost <x, C>, the dual value, the
    optimal cost, the judged plan's gap): a self-consistent forgery."""
    out = copy.deepcopy(doc)
    C = [[Fraction(x) for x in row] for row in out["inputs"]["C"]]
    cost = sum(Fraction(v) * C[i][j] for i, j, v in plan)
    out["outputs"]["optimum"] = {"plan": [[i, j, q(v)] for i, j, v in plan], "f": [q(x) for x in f], "g": [q(x) for x in g], "cost": q(cost)}
    out["reference"]["dual_value"] = q(cost)
    out["result"]["optimal_cost"] = q(cost)
    judged = out["outputs"].get("judged")
    if judged is not None:
        judged["gap"] = q(Fraction(judged["cost"]) - cost)
    return out


def test_a_non_optimal_basis_with_potentials_tight_on_it_is_refused(files):
    """Rows 0 and 1 swapped (row 0 to column 1, row 1 to column 0): a feasible spanning tree costing 5/16 + 1/8,
    with the potentials that make every tree arc tight, hence <x, C> = a.f + b.g; but then C_00 - f_0 - g_0 =
    1/4 - 0 - 1/2 < 0."""
    t = Fraction(1, 12)
    plan = [(0, 1, Fraction(1, 4)), (1, 0, Fraction(1, 4)), (2, 2, Fraction(1, 4)), (3, 0, t), (3, 1, t), (3, 2, t)]
    C = [[Fraction(x, 4) for x in row] for row in COST]
    g1 = C[0][1]
    f3 = C[3][1] - g1
    g0, g2 = C[3][0] - f3, C[3][2] - f3
    f = [Fraction(0), C[1][0] - g0, C[2][2] - g2, f3]
    forged = with_optimum(files, plan, f, [g0, g1, g2])
    assert Fraction(forged["result"]["optimal_cost"]) == OPTIMUM + Fraction(1, 8)
    status, reason = verdict(forged)
    assert status == REJECTED
    assert "reduced cost C_ij - f_i - g_j is negative at (0, 0)" in reason


def test_potentials_feasible_only_in_float_are_refused(files):
    """g_0 raised and f_3 lowered by 2^-80: every reduced cost >= 0 in float64, but C_00 - f_0 - g_0 = -2^-80."""
    f = [Fraction(x) for x in files["outputs"]["optimum"]["f"]]
    g = [Fraction(x) for x in files["outputs"]["optimum"]["g"]]
    g[0] += Fraction(1, 2**80)
    f[3] -= Fraction(1, 2**80)
    plan = [(i, j, Fraction(v)) for i, j, v in files["outputs"]["optimum"]["plan"]]
    forged = with_optimum(files, plan, f, g)
    assert float(g[0]) == 0.25  # the float check could not see it
    status, reason = verdict(forged)
    assert status == REJECTED
    assert "negative at (0, 0)" in reason


def test_masses_unbalanced_by_a_tiny_rational_are_refused(files):
    forged = copy.deepcopy(files)
    a0 = Fraction(1, 4) + Fraction(1, 10**30)
    forged["inputs"]["a"][0] = q(a0)
    forged["outputs"]["optimum"]["plan"][0][2] = q(a0)  # the plan follows a, so its row sums are a
    status, reason = verdict(forged)
    assert status == REJECTED
    assert "equal positive totals" in reason


@pytest.mark.parametrize("a, b", [(["0"] * 4, ["0"] * 3), (["-1/4", "3/4", "1/4", "1/4"], ["1/3"] * 3)], ids=["zero", "negative"])
def test_zero_or_negative_masses_are_refused(files, a, b):
    forged = copy.deepcopy(files)
    forged["inputs"]["a"], forged["inputs"]["b"] = a, b
    status, reason = verdict(forged)
    assert status == REJECTED
    assert "the masses are not >= 0 with equal positive totals" in reason


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999999999", "1/0", "0/0", " 1/4", "+1/4", "2/4", "-0"])
def test_a_cost_that_is_not_a_canonical_rational_is_one_line_bad(files, value):
    forged = copy.deepcopy(files)
    forged["inputs"]["C"][0][0] = value
    status, reason = verdict(forged)
    assert status == BAD
    assert repr(value) in reason and "\n" not in reason


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda d: d["params"].__setitem__("n", 3), "C must be 3x3"),
        (lambda d: d["params"].__setitem__("seed", 1), "and no seed"),
        (lambda d: d["params"].__setitem__("a", "xlsx"), "records the formats of cost, a and b"),
        (lambda d: d["outputs"]["optimum"].__setitem__("f", ["0"] * 3), "the potentials f, g must have 4 and 3 entries"),
        (lambda d: d["outputs"]["optimum"].__setitem__("plan", {"0": 1}), "must be a list of [i, j, value] entries"),
        (lambda d: d["outputs"]["optimum"]["plan"].__setitem__(0, [True, 0, "1/4"]), "with integers i, j"),
        (lambda d: d["outputs"]["optimum"]["plan"].__setitem__(0, [0, 3, "1/4"]), "outside the 4x3 matrix"),
        (lambda d: d["inputs"].__setitem__("C", [["1/4", "1/2", "3/4"], ["1/2", "1/4"], ["1", "3/4", "1/4"], ["1/2", "1/2", "1/2"]]), "rectangular"),
        (lambda d: d["inputs"]["plan"][0].__setitem__(2, "0"), "records only its nonzero entries"),
        (lambda d: d["inputs"].__setitem__("b_scaled", d["inputs"]["b"]), "b is recorded scaled"),
    ],
    ids=["n", "seed-with-files", "format", "short-f", "plan-object", "bool-index", "out-of-range", "ragged-C", "judged-zero", "b_scaled-json"],
)
def test_malformed_forgeries_are_one_line_bad(files, edit, words):
    forged = copy.deepcopy(files)
    edit(forged)
    status, reason = verdict(forged)
    assert status == BAD
    assert words in reason


def test_a_judged_plan_with_a_negative_entry_kept_nonnegative_is_refused(files):
    forged = copy.deepcopy(files)
    forged["inputs"]["plan"][0][2] = "-1/4"
    status, reason = verdict(forged)
    assert status == REJECTED
    assert "the verdict's nonnegative is True, the plan's numbers say False" in reason


def test_a_verdict_without_a_plan_to_judge_is_refused(files):
    forged = copy.deepcopy(files)
    del forged["inputs"]["plan"]
    status, reason = verdict(forged)
    assert status == REJECTED
    assert "a verdict is recorded without a plan to judge" in reason


def test_the_seed_changed_is_refused_by_the_rebuild(seeded):
    """The check is about the recorded numbers (which hold for any seed); the rebuild regenerates them from it."""
    forged = copy.deepcopy(seeded)
    forged["params"]["seed"] = 2
    status, reason = verdict(forged)
    assert status == REJECTED
    assert 'the field "inputs.C[0][0]" differs from its recomputation' in reason


def test_an_input_recorded_as_from_a_npy_file_of_integers_holds_only_integers(files):
    """Hole found and fixed: the cost (1/4, 1/2, ...) relabelled as read from a .npy file of integers, read_from
    included, verified OK: the certificate said its cost came exactly from an integer array, which no such file can
    hold. The check now requires integers there, as it requires binary64 values of a .npy file of floats."""
    for key, name in (("cost", "C"), ("plan", "plan")):
        forged = copy.deepcopy(files)
        forged["params"][key] = "npy-int"
        forged["inputs"]["read_from"][key] = "a .npy file of integers, read exactly"
        status, reason = verdict(forged)
        assert status == REJECTED
        assert f"{name} is recorded as read from a .npy file of integers, but holds a value that is not an integer" in reason


def test_a_genuine_problem_from_npy_files_of_integers_verifies(tmp_path):
    np.save(tmp_path / "C.npy", np.array(COST, dtype=np.int64))
    np.save(tmp_path / "a.npy", np.array([3, 3, 3, 3], dtype=np.int64))
    np.save(tmp_path / "b.npy", np.array([4, 4, 4], dtype=np.int64))
    doc = load_claim("transport_plan").prove(cost=str(tmp_path / "C.npy"), a=str(tmp_path / "a.npy"), b=str(tmp_path / "b.npy"))
    assert doc["params"]["cost"] == doc["params"]["a"] == "npy-int"
    assert Fraction(doc["result"]["optimal_cost"]) == 12 * 4 * OPTIMUM  # masses 12 times, costs 4 times the problem above
    assert verdict(doc) == (OK, "")


TINY = "1/" + str(10**250)


def test_masses_below_1e_161_do_not_crash_verify_through_pot(tmp_path):
    """Found by this audit: POT 0.9.7's ot.emd ends the process with a segmentation fault when the largest mass is
    below about 1e-161, and the rebuild of a transport_plan certificate runs ot.emd for its side notes: `attncert
    verify` on a genuine certificate of masses 1e-250 (written where POT is not installed) died with exit 139, as did
    `attncert prove` and attncert.emd2 where it is. Such masses now reach POT scaled up by a power of two
    (constructions/pot.py, pot_emd). Each run is a child process, so a crash is a failed assertion."""
    import subprocess
    import sys

    (tmp_path / "C.json").write_text(json.dumps([["0", "1"], ["1", "0"]]))
    (tmp_path / "a.json").write_text(json.dumps([TINY, TINY]))
    out = tmp_path / "tiny.json"
    without_pot = (
        "import sys; sys.modules['ot'] = None\n"  # POT not installed: prove records no POT run
        "from attncert.proofs.core.registry import load_claim\n"
        "from attncert.exact.certificate import write_certificate\n"
        f"doc = load_claim('transport_plan').prove(cost={str(tmp_path / 'C.json')!r}, a={str(tmp_path / 'a.json')!r}, b={str(tmp_path / 'a.json')!r})\n"
        f"write_certificate({str(out)!r}, doc)\n"
    )
    made = subprocess.run([sys.executable, "-c", without_pot], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr[-500:]
    checked = subprocess.run([sys.executable, "-m", "attncert.proofs.cli", "verify", str(out)], capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0 and checked.stdout.startswith("OK"), (checked.returncode, checked.stdout, checked.stderr[-300:])
    api = "import numpy as np, attncert\nprint(attncert.emd2(np.array([5e-324, 5e-324]), np.array([5e-324, 5e-324]), np.array([[0.0, 1.0], [1.0, 0.0]])))\n"
    ran = subprocess.run([sys.executable, "-c", api], capture_output=True, text=True, timeout=120)
    assert (ran.returncode, ran.stdout.strip()) == (0, "0"), (ran.returncode, ran.stderr[-300:])


def test_a_random_problem_larger_than_verify_reads_is_refused_by_prove():
    """Found by this audit: `prove transport_plan --n 2 --m 5000` wrote a certificate that verify calls BAD (the
    checker reads at most 4,096 rows and columns; the file route already refused more)."""
    from attncert.exact import ParseError

    with pytest.raises(ParseError, match="at most 4,096 rows and columns"):
        load_claim("transport_plan").prove(n=2, m=5000, seed=1)


def test_a_log_whose_duals_are_not_numbers_is_ignored_not_a_traceback():
    """certify_plan's log only guides the start ('correct either way'); duals that are strings raised numpy's
    ValueError out of it. The verdict on POT's own plan is the same with and without such a log."""
    import attncert

    M = np.array([[0.0, 2.0, 1.0], [2.0, 0.0, 1.0]])
    a, b = np.array([0.5, 0.5]), np.array([0.25, 0.25, 0.5])
    G = np.array([[0.25, 0.0, 0.25], [0.0, 0.25, 0.25]])  # optimal: each row to its free column, the rest to column 2
    plain = attncert.certify_plan(a, b, M, G)
    for log in ({"u": ["a", "b"], "v": [0, 0, 0]}, {"u": [np.nan, 0.0], "v": [0.0, 0.0, 0.0]}):
        v = attncert.certify_plan(a, b, M, G, log=log)
        assert (v.feasible, v.optimal, v.cost) == (plain.feasible, plain.optimal, plain.cost) == (True, True, Fraction(1, 2))
