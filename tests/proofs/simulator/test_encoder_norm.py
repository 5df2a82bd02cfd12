"""The encoder layer with layer norm: exact up to Z, an enclosure after the square root."""

from __future__ import annotations

import copy

import mpmath
import pytest
from flint import fmpq

from attncert.constructions.simulator import encoder_layer_norm
from attncert.exact import EE, NotInFieldError, QQ
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.exact.domains import Ball
from attncert.proofs.checkers import references
from attncert.proofs.cli import main
from attncert.proofs.simulator import encoder_norm
from attncert.proofs.core.verify import BAD, OK, REJECTED, verify_bytes


def _verify(doc: dict) -> str:
    return verify_bytes(canonical_json(seal(doc))).status


@pytest.fixture(scope="module")
def genuine() -> dict:
    return encoder_norm.prove(seed=3)


def test_a_genuine_certificate_verifies_and_says_what_is_exact(genuine):
    r = genuine["result"]
    assert r["relation"] == "enclosure" and r["domain"] == "Ball(128)" and r["holds"] is True
    assert r["pre_norm"] == {"relation": "exact_equal", "domain": "EE", "holds": True}
    assert fmpq(*map(int, r["max_radius"].split("/"))) <= fmpq(1, 2**64) and r["disjoint"] == []
    assert _verify(genuine) == OK


def _mp(x) -> mpmath.mpf:
    """A rational or EE value as an mpmath number at the working precision (through a 400-bit ball)."""
    b = EE.convert(x).enclose(400)
    return mpmath.mpf(b.mid().str(120, radius=False))


def layer_norm_mp(mats: dict, delta: fmpq) -> list[list[mpmath.mpf]]:
    """LN(Z) in mpmath at the working precision, from the exact Z (proofs.checkers.references' encoder layer, in EE):
    gamma_j (Z_ij - mu_i) / sqrt(sigma_i^2 + delta) + beta_j, mu_i the row mean, sigma_i^2 the biased variance."""
    z = references.encoder_layer(mats["X"], references._heads(mats), mats["WO"], mats["W1"], mats["b1"], mats["W2"], mats["b2"])
    gamma, beta = mats["gamma"][0], mats["beta"][0]
    out = []
    for row in z:
        x = [_mp(v) for v in row]
        mu = mpmath.fsum(x) / len(x)
        var = mpmath.fsum((v - mu) ** 2 for v in x) / len(x)
        out.append([_mp(gamma[j]) * (v - mu) / mpmath.sqrt(var + _mp(delta)) + _mp(beta[j]) for j, v in enumerate(x)])
    return out


def ball_mp(b) -> tuple[mpmath.mpf, mpmath.mpf]:
    """A ball's midpoint and radius as mpmath numbers."""
    return mpmath.mpf(b.mid().str(60, radius=False)), mpmath.mpf(b.rad().str(5, radius=False))


def test_the_balls_contain_layer_norm_computed_apart_in_mpmath(genuine):
    """LN recomputed in mpmath at 60 digits from the exact Z: every output ball of the program contains it."""
    mats = {k: [[QQ.from_json(v) for v in row] for row in m] for k, m in genuine["inputs"].items()}
    ball = Ball(128)
    with mpmath.workdps(60):
        for i, row in enumerate(layer_norm_mp(mats, fmpq(1, 100))):
            for j, want in enumerate(row):
                mid, rad = ball_mp(ball.from_json(genuine["outputs"]["output"][i][j]))
                assert abs(want - mid) <= rad + mpmath.mpf(10) ** -50


def test_the_program_leaves_ee_only_at_the_square_root():
    cons = encoder_layer_norm(2, 2, 1, 1, 2, fmpq(1, 100))
    mats = encoder_norm.inputs_for(1, None, encoder_norm._shapes(cons), QQ)
    with pytest.raises(NotInFieldError):
        cons.run({k: [[EE.native(x) for x in row] for row in m] for k, m in mats.items()}, EE, cons.graph())


def test_a_self_consistent_forgery_with_another_program_fails(genuine, monkeypatch):
    """A certificate that records delta = 1/100 but whose graph, outputs and reference were all made with
    delta = 1/50: every field agrees with every other and holds is true, yet it is not attncert's program."""
    real = references.encoder_layer_norm
    monkeypatch.setattr(encoder_norm, "positive_rational", lambda s, name: fmpq(1, 50))
    monkeypatch.setattr(references, "encoder_layer_norm", lambda m, delta, prec: real(m, fmpq(1, 50), prec))
    forged = encoder_norm.prove(seed=3)
    monkeypatch.undo()
    assert forged["params"]["delta"] == "1/100" and forged["result"]["holds"] is True
    assert forged["outputs"] != genuine["outputs"]
    assert _verify(forged) == REJECTED


def test_a_forged_reference_that_agrees_with_a_wrong_program_fails(genuine, monkeypatch):
    """The reference LN with gamma doubled, and the program's output replaced by it: consistent, false."""
    real = references.encoder_layer_norm

    def doubled(m, delta, prec):
        z, ln = real({**m, "gamma": [[2 * g for g in m["gamma"][0]]]}, delta, prec)
        return z, ln

    monkeypatch.setattr(references, "encoder_layer_norm", doubled)
    forged = encoder_norm.prove(seed=3)
    monkeypatch.undo()
    forged = copy.deepcopy(forged)
    forged["outputs"]["output"] = forged["reference"]["output"]
    forged["result"] = {**forged["result"], "holds": True, "disjoint": []}
    assert _verify(forged) == REJECTED


@pytest.mark.parametrize("delta", ["0", "-1/2"])
def test_delta_must_be_positive_in_a_certificate_too(genuine, delta):
    assert _verify({**genuine, "params": {**genuine["params"], "delta": delta}}) in (BAD, REJECTED)


@pytest.mark.parametrize("args", [["--delta", "0"], ["--delta", "x"], ["--prec", "8"], ["--n", "0"]])
def test_bad_parameters_are_one_line_and_exit_2(args, tmp_path, capsys):
    try:
        code = main(["prove", "encoder_layer_norm", *args, "--out", str(tmp_path / "c.json")])
    except SystemExit as e:  # argparse's own refusals
        code = e.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("attncert") and "error:" in err[0]
    assert not (tmp_path / "c.json").exists()


def test_the_graph_command_draws_it(tmp_path):
    assert main(["graph", "encoder_layer_norm", "--n", "2", "--out", str(tmp_path / "g.json")]) == 0
    assert (tmp_path / "g.json").read_text().count("norm_scale") == 1
