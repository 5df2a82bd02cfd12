"""attncert plot of sinkhorn_transformer (the coupling), sinkhorn_convergence (the bound against eps),
compiled_softmax (B(beta) against beta) and rasp_program (selection patterns): each PNG decodes, has a useful
size, is not blank; the bound plots state their certified bounds, rounded up, in their Title text
(proofs/core/figures.py)."""

from __future__ import annotations

import copy
import io
import json
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from PIL import Image

from attncert.exact import ParseError
from attncert.exact.certificate import write_certificate
from attncert.proofs.cli import main
from attncert.proofs.core.registry import load_claim
from attncert.proofs.compiled.plot import softmax_bound_png
from attncert.proofs.rasp_language.plot import SELECTED
from attncert.proofs.rasp_language.program import selections_png
from attncert.proofs.sinkhorn.plot import convergence_png
from tests.pictures import assert_picture


def title(png: bytes) -> str:
    """The PNG's Title text (a tEXt chunk, read by PIL)."""
    return Image.open(io.BytesIO(png)).text["Title"]


def shows_bound(text: str, recorded: str) -> None:
    """``text`` is a decimal at least the recorded bound and within 1% of it (a bound shown rounded up)."""
    shown, exact = Fraction(Decimal(text)), Fraction(recorded)
    assert exact <= shown <= exact * Fraction(101, 100), (text, float(exact))


def test_the_coupling_heatmap_states_its_certified_bound(tmp_path):
    """Through the command line, from a certificate (verified first, as every plot of a certificate is)."""
    claim = load_claim("sinkhorn_transformer")
    path = write_certificate(tmp_path / "t.json", claim.prove(**{**claim.defaults(), "n": 2, "m": 3}))
    doc = json.loads(path.read_text())
    out = tmp_path / "coupling.png"
    assert main(["plot", "sinkhorn_transformer", "--certificate", str(path), "--out", str(out)]) == 0
    assert_picture(out, 700, 500, min_drawn=0.2)  # a filled 2 x 3 heatmap, not a few lines
    stated = title(out.read_bytes())
    assert stated.startswith(f"Sinkhorn Transformer coupling, eps = {doc['inputs']['eps']}, n = 2, m = 3; certified")
    shows_bound(stated.rsplit("<= ", 1)[1], doc["outputs"]["bound"])


@pytest.fixture(scope="module")
def convergence() -> dict:
    claim = load_claim("sinkhorn_convergence")
    # ref_iter 100: the mpmath reference stops short at eps = 1/1000 (no comparison, 4 s saved); the plot draws the runs
    return claim.prove(**{**claim.defaults(), "n": 3, "eps": "1/5,1/1000", "ref_iter": 100})


def test_the_bound_against_eps_and_the_plans(convergence):
    png = convergence_png(convergence)
    assert_picture(png, 900, 700)
    stated = title(png).split(": ", 1)[1].split("; ")
    assert [s.split(":")[0] for s in stated] == ["eps = 1/5", "eps = 1/1000"]
    for s, run in zip(stated, convergence["outputs"]["runs"]):
        shows_bound(s.split(": ")[1], run["bound"])


def test_an_eps_that_was_not_certified_is_drawn_as_such(convergence):
    failed = copy.deepcopy(convergence)
    failed["outputs"]["runs"][1].update(certified=False, bound=None, plan=None)
    png = convergence_png(failed)
    assert_picture(png, 900, 700)
    assert title(png).endswith("eps = 1/1000: not certified")


def test_b_of_beta_against_beta():
    claim = load_claim("compiled_softmax")
    doc = claim.prove(**{**claim.defaults(), "of": "relu", "sizes": "n=2", "betas": "10,100,1000"})
    png = softmax_bound_png(doc)
    assert_picture(png, 900, 550)
    stated = title(png)
    bounds = stated.split("certified B(beta) ", 1)[1].split("; ")[0].split(", ")
    assert [b.split(": ")[0] for b in bounds] == ["10", "100", "1000"]
    for b, row in zip(bounds, doc["outputs"]["softmax"]):
        shows_bound(b.split(": ")[1], row["bound"])
    assert stated.endswith(f"least listed beta with B <= tol: {doc['result']['least_beta_within_tol']}, with B_out <= tol: {doc['result']['least_beta_within_tol_output_block']}")


@pytest.mark.parametrize("claim", ["sinkhorn_transformer", "sinkhorn_convergence", "compiled_softmax"])
def test_each_plot_is_offered(claim, capsys):
    with pytest.raises(SystemExit) as e:
        main(["plot", claim, "--help"])
    assert e.value.code == 0 and "--certificate" in capsys.readouterr().out


def test_a_rasp_programs_selection_patterns(tmp_path, capsys):
    """plot rasp_program draws the selector each attention of the certified expression reads, on the certified
    input: on "abc", select(indices, indices, <=) selects 6 (query, key) pairs and == 3, so its picture has
    twice as many pixels of the selected colour (same panel size), counted by hand from the decoded PNG."""
    program = tmp_path / "p.rasp"
    program.write_text("same = select(indices, indices, ==);\nupto = select(indices, indices, <=);\n")
    counts = {}
    for name, expr in (("same", "aggregate(same, tokens)"), ("upto", "selector_width(upto)")):
        out = tmp_path / f"{name}.png"
        assert main(["plot", "rasp_program", "--file", str(program), "--expr", expr, "--input", "abc", "--out", str(out)]) == 0
        pixels = assert_picture(out, 250, 250)
        rgb = np.round(pixels[..., :3] * 255).astype(int)
        counts[name] = int((np.abs(rgb - [int(SELECTED[i : i + 2], 16) for i in (1, 3, 5)]).sum(axis=-1) <= 6).sum())
    assert counts["same"] > 0 and abs(counts["upto"] / counts["same"] - 2) < 0.05, counts
    assert main(["plot", "rasp_program", "--file", str(program), "--expr", "1 + 1", "--input", "abc", "--out", str(tmp_path / "v.png")]) == 2
    assert "not a sequence or selector" in capsys.readouterr().err and not (tmp_path / "v.png").exists()
    claim = load_claim("rasp_program")
    with pytest.raises(ParseError, match="not a sequence or selector"):
        selections_png(claim.prove(file=str(program), expr="2", input=None, expect=None, e_literal=None))
