"""lipschitz_approx and lipschitz_rates: proofs that verify, self-consistent forgeries that do not, bad
input refused with one line and exit 2, the rates against the theory, and the plot.

Each forgery is well formed and correctly hashed, and its claim is false; the independent check alone
(proofs/checkers/approximation_claims.py, without the rebuild) must already refuse it.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from flint import fmpq

import proofs.approximation.common as common
from exact import QQ, ParseError
from exact.canonical import canonical_json
from exact.certificate import seal, write_certificate
from proofs.cli import main
from proofs.registry import load_claims
from proofs.verify import BAD, FAIL, OK, verify_bytes

CLAIMS = load_claims()
APPROX, RATES = CLAIMS["lipschitz_approx"], CLAIMS["lipschitz_rates"]
SMALL = {"d": 2, "h": "1/4"}


def prove(claim, **kw) -> dict:
    return claim.prove(**{**claim.defaults(), **kw})


def status(doc: dict) -> str:
    return verify_bytes(canonical_json(seal(doc))).status


def refused(doc: dict, match: str, claim=APPROX) -> None:
    """The independent check alone names the problem, and verify says FAIL (or BAD)."""
    try:
        problems = claim.check(doc)
    except ParseError as e:
        problems = [str(e)]
    assert any(match in p for p in problems), problems
    assert status(doc) in (FAIL, BAD)


@pytest.fixture(scope="module")
def small() -> dict:
    return prove(APPROX, **SMALL)


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
    assert status(doc) == FAIL
    assert main(["prove", "lipschitz_approx", "--target", "sin", "--d", "1", "--h", "1/16", "--L", "3", "--out", str(tmp_path / "c.json")]) == 1
    assert main(["verify", str(tmp_path / "c.json")]) == 1
    assert "fails on the grid pair" in capsys.readouterr().out


def test_a_wrong_holder_constant_is_found_on_a_far_pair():
    doc = prove(APPROX, target="sqrt", d=1, h="1/16", L="1/2")
    v = doc["reference"]["hypothesis"]["violated_pair"]
    assert not doc["result"]["holds"] and v is not None and status(doc) == FAIL


# -- forgeries ---------------------------------------------------------------------------------------


def test_forgery_eps_too_small_with_a_consistent_partition(small):
    bad = copy.deepcopy(small)
    cert = bad["outputs"]["certified"]
    cert["eps"] = bad["result"]["eps"] = cert["lower"]
    cert["stopped"] = bad["result"]["stopped"] = "ratio"
    refused(bad, "bounds |f - g| only by")


def test_forgery_a_partition_that_misses_a_corner(small):
    bad = copy.deepcopy(small)
    leaves = bad["outputs"]["certified"]["leaves"]
    leaves.remove(next(leaf for leaf in leaves if leaf[1:] == [0, 0]))
    refused(bad, "does not cover the box [0, ")


def test_forgery_overlapping_leaves(small):
    bad = copy.deepcopy(small)
    bad["outputs"]["certified"]["leaves"].append([1, 0, 0])
    refused(bad, "overlap")


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
    from proofs.checkers.mcshane import Interpolant
    from proofs.checkers.subgrid import subgrid_bound
    from exact.expressions import parse_function

    bad = copy.deepcopy(small)
    half = QQ.from_json(bad["construction"]["slope"]) / 2
    bad["construction"]["network_lipschitz"] = bad["result"]["network_lipschitz"] = QQ.to_json(half)
    # the sub-grid bound recomputed with the forged constant, so that it is consistent with it
    y = [QQ.from_json(v) for v in bad["construction"]["samples"]["y"]]
    s = subgrid_bound(parse_function(bad["inputs"]["target"]["expression"], 2), 2, Interpolant(2, 4, y, 2 * half), half, 64)
    bad["outputs"]["independent"]["bound"] = bad["result"]["independent_bound"] = QQ.to_json(s.bound)
    refused(bad, "Lipschitz constant from its weights is")


def test_forgery_a_violated_bound_recorded_as_holding():
    bad = prove(APPROX, target="sin", d=1, h="1/16", L="3")
    bad["reference"]["hypothesis"]["violated_pair"] = None
    bad["result"]["holds"], bad["result"]["violation"] = True, None
    refused(bad, "the grid pair (0, 1) violates the stated bound")


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
    row["certified"]["eps"] = row["certified"]["lower"]
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
