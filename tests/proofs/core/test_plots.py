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


class Captured:
    """The figure a plot function hands to png_bytes, kept for inspection (its PNG is made as usual)."""

    def __init__(self, module, monkeypatch):
        self.fig = None
        real = module.png_bytes

        def keep(fig, title):
            self.fig = fig
            self.artists = [(ax, [(line.get_label(), line.get_marker(), list(line.get_xdata()), list(line.get_ydata())) for line in ax.get_lines()]) for ax in fig.get_axes()]
            self.texts = [t.get_text() for ax in fig.get_axes() for t in ax.texts]
            self.ylabels = [ax.get_ylabel() for ax in fig.get_axes()]
            return real(fig, title)

        monkeypatch.setattr(module, "png_bytes", keep)


def test_b_of_beta_is_clipped_above_the_outputs_scale_and_says_so(monkeypatch):
    """U(2, 2, 1) at beta = 10 has B = 10^3.98 while its AHAT output is below 1 (max |output| = 10^-0.33): the
    axis stops 3 decades above that scale (10^2.67), B(10) is drawn on the clip as a triangle and its value
    written; the scale is drawn and labelled a reference, not a bound."""
    from attncert.proofs.compiled import plot as compiled_plot
    from attncert.proofs.core.axes import log10

    claim = load_claim("compiled_softmax")
    doc = claim.prove(of="universal", sizes="n=2,d=2,dv=1", betas="10,100,1000", tol="1e-20", prec=256)
    scale = compiled_plot.output_scale(doc)
    from attncert.exact import EE

    ahat = [abs(float(EE.from_json(v))) for v in doc["outputs"]["ahat"]]  # the exact values' floats, another way
    assert abs(scale - float(np.log10(max(ahat)))) < 1e-9
    clip = scale + compiled_plot.CLIP_DECADES
    seen = Captured(compiled_plot, monkeypatch)
    assert_picture(compiled_plot.softmax_bound_png(doc), 900, 550)
    ((ax, lines),) = seen.artists
    drawn = [y for label, _, _, ys in lines if label.startswith(("B(beta)", "B_out(beta)")) for y in ys]
    assert max(drawn) == pytest.approx(clip) and log10(doc["outputs"]["softmax"][0]["bound"]) > clip
    assert any(marker == "^" and ys == [clip] for _, marker, _, ys in lines)  # B(10), on the clip, pointing up
    assert "beta = 10\nB = $10^{4}$" in seen.texts
    assert any(label.startswith("max |AHAT output|") and "not a bound" in label and ys[0] == pytest.approx(scale) for label, _, _, ys in lines)


def test_pots_failures_have_a_band_of_their_own_and_the_plans_a_colorbar(convergence, monkeypatch):
    from attncert.proofs.sinkhorn import plot as sinkhorn_plot

    doc = copy.deepcopy(convergence)
    runs = doc["outputs"]["runs"]
    doc["side_notes"]["pot"]["runs"] = [{**p, "outcome": o} for p, o in zip(doc["side_notes"]["pot"]["runs"] or [{"eps": r["eps"]} for r in runs], ("converged", "numerical error"))]
    seen = Captured(sinkhorn_plot, monkeypatch)
    assert_picture(sinkhorn_plot.convergence_png(doc), 900, 700)
    band = next(lines for ax, lines in seen.artists if ax.get_ylabel() == "POT\nfloat64")
    from attncert.proofs.core.axes import log10

    assert [(marker, xs, ys) for label, marker, xs, ys in band] == [("x", [log10("1/1000")], [0]), ("o", [log10("1/5")], [0])]
    bounds_axis = next(lines for ax, lines in seen.artists if ax.get_ylabel() == "certified bound")
    assert not any(marker == "x" for _, marker, _, _ in bounds_axis)  # no failure drawn at a made-up bound
    assert "P_ij (midpoint of its certified ball)" in seen.ylabels  # the plans' colorbar
