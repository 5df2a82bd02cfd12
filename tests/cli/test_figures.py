"""prove says what was proven: a bound claim's figures under its table, a failing claim's reason, in one line."""

import json
import subprocess
import sys
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from attncert.proofs.core.figures import ball, lower, upper


def prove(tmp_path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    r = subprocess.run([sys.executable, "-m", "attncert", "prove", *args, "--out", "c.json"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    return r, json.loads((tmp_path / "c.json").read_text())


def figure_line(out: str) -> str:
    """The line between the table and 'certificate: ...'."""
    lines = out.splitlines()
    assert lines[-1].startswith("certificate: ") and lines[1].startswith("---"), out
    assert len(lines) == 5, out  # header, rule, row, the figures, the certificate
    return lines[3]


@given(st.fractions().filter(lambda q: q != 0), st.integers(1, 6))
def test_figures_are_rounded_outward_to_their_digits(q, digits):
    up, down = Fraction(upper(str(q), digits)), Fraction(lower(str(q), digits))
    assert down <= q <= up
    # digits significant digits: the two are at most one unit of the last digit apart
    assert up - down <= abs(q) * Fraction(10) ** (1 - digits)


def test_a_ball_is_shown_as_an_interval_that_contains_it():
    lo, hi = ball("1/3", "1/1000000").strip("[]").split(", ")
    assert Fraction(lo) <= Fraction(1, 3) - Fraction(1, 10**6) and Fraction(1, 3) + Fraction(1, 10**6) <= Fraction(hi)


def test_lipschitz_approx_prints_lower_and_eps(tmp_path):
    r, doc = prove(tmp_path, "lipschitz_approx", "--d", "1", "--h", "1/4")
    assert r.returncode == 0
    line = figure_line(r.stdout)
    lo, hi = line.split(" <= sup |f - g| <= ")
    hi = hi.split(" ")[0]
    eps, low = Fraction(doc["result"]["eps"]), Fraction(doc["result"]["lower"])
    assert Fraction(lo) <= low and eps <= Fraction(hi)  # still true after rounding
    assert Fraction(hi) - eps < Fraction(1, 1000)  # and close


def test_a_violated_modulus_prints_the_violating_grid_pair(tmp_path):
    # f(x) = x1 with a stated Lipschitz constant 1/2: every neighbouring grid pair (step 1/8) violates
    # |f(x) - f(y)| = 1/8 <= 1/2 * 1/8; the first pair is x = 0, y = 1/8
    r, doc = prove(tmp_path, "lipschitz_approx", "--expr", "x1", "--L", "1/2", "--d", "1")
    assert r.returncode == 1 and doc["result"]["holds"] is False
    line = figure_line(r.stdout)
    assert line.startswith("does not hold: the stated |f(x) - f(y)| <= 1/2 ||x - y||_inf^1 fails on the grid pair x_0 = (0), x_1 = (1/8)"), line


def test_rasp_program_expect_prints_expected_and_actual(tmp_path):
    (tmp_path / "rev.rasp").write_text("reverse = aggregate(select(indices, length - indices - 1, ==), tokens);\n")
    r, _ = prove(tmp_path, "rasp_program", "--file", "rev.rasp", "--expr", "reverse", "--input", "hello", "--expect", '["o", "l", "l", "e"]')
    assert r.returncode == 1
    assert figure_line(r.stdout) == 'does not hold: expected ["o", "l", "l", "e"], got ["o", "l", "l", "e", "h"]'


def test_sinkhorn_prints_its_certified_bound(tmp_path):
    r, doc = prove(tmp_path, "sinkhorn_transformer", "--n", "2", "--m", "2")
    assert r.returncode == 0
    line = figure_line(r.stdout)
    shown = line.removeprefix("coupling enclosed: max |log P^ - log P*| <= ")
    bound = Fraction(doc["outputs"]["bound"])
    assert shown != line and bound <= Fraction(shown) <= bound * Fraction(1001, 1000)


def test_a_layout_claim_that_fails_names_the_first_differing_entry():
    from attncert.exact import QQ
    from attncert.proofs.core.layout_claims import summary
    from attncert.proofs.core.inputs import prove_construction
    from attncert.proofs.core.registry import load_claim

    claim = load_claim("transpose")
    cons = claim.build(r=2, c=2)
    M = [[QQ.convert(1), QQ.convert(2)], [QQ.convert(3), QQ.convert(4)]]
    wrong = [[QQ.convert(1), QQ.convert(3)], [QQ.convert(5), QQ.convert(4)]]  # M^T is [[1, 3], [2, 4]]
    doc = prove_construction(cons, {"M": M}, wrong, QQ, {"r": 2, "c": 2}, "transpose")
    assert summary(doc) == "does not hold: the output differs from the reference at row 1, column 0: 2, not 5"
    right = [[QQ.convert(1), QQ.convert(3)], [QQ.convert(2), QQ.convert(4)]]
    assert summary(prove_construction(cons, {"M": M}, right, QQ, {"r": 2, "c": 2}, "transpose")) is None
