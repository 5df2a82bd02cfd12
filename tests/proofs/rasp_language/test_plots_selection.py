"""proofs/rasp_language/plot.py: selection patterns as PNGs (size, not blank, the cells filled where selected)."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest
from PIL import Image

from attncert.constructions.rasp.language.interpreter import Interpreter
from attncert.exact.errors import AttncertError
from attncert.proofs.rasp_language import plot as selection
from attncert.proofs.rasp_language.plot import DPI, SELECTED, patterns_png, program_selections_png, selection_png


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from the PNG's IHDR chunk, read by hand from the file format."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def selected_pixels(data: bytes) -> int:
    """How many pixels have the colour of a selected cell."""
    rgb = np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).reshape(-1, 3)
    target = np.array([int(SELECTED[i : i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(rgb - target).sum(axis=1) <= 6).sum())


def test_one_selection_is_a_png_of_the_expected_size_with_its_cells_filled():
    n = 6
    identity = [[q == k for k in range(n)] for q in range(n)]
    lower = [[k <= q for k in range(n)] for q in range(n)]
    tokens = list("abcdef")
    a, b = selection_png(identity, tokens, tokens, "diagonal"), selection_png(lower, tokens, tokens, "lower")
    width, height = png_size(a)
    assert png_size(b) == (width, height)
    side = max(selection.PANEL_MIN, min(selection.CELL * n, selection.PANEL_MAX))  # one panel, by the module's figure rule
    assert (width, height) == (round((side + 0.9) * DPI), round((side + 1.3) * DPI))
    pixels = np.asarray(Image.open(io.BytesIO(a)).convert("RGB"))
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 10  # not blank: cells, grid, labels, text
    # 6 cells selected against 21 (n(n+1)/2): the filled area scales with the cells selected
    ratio = selected_pixels(a) / selected_pixels(b)
    assert selected_pixels(a) > 0 and ratio == pytest.approx(6 / 21, rel=0.08)
    assert selected_pixels(selection_png([[False] * n] * n, tokens, tokens, "nothing")) == 0


def test_every_attention_of_a_program_gets_a_panel():
    it = Interpreter()
    it.run('prevs = select(indices, indices, <=); frac = aggregate(prevs, indicator(tokens == "l"));'
           " flip = select(indices, length - indices - 1, ==); x = aggregate(flip, frac) + selector_width(prevs);")
    one = program_selections_png(it.env.values["frac"], list("hello"))
    two = program_selections_png(it.env.values["x"], list("hello"))  # prevs (read twice, drawn once) and flip
    assert png_size(two)[0] > png_size(one)[0]
    # prevs selects 1 + 2 + ... + 5 = 15 cells, flip 5: the picture of x fills 20 cells to frac's 15
    assert selected_pixels(two) / selected_pixels(one) == pytest.approx(20 / 15, rel=0.08)


def test_nothing_to_draw_is_one_clear_error():
    it = Interpreter()
    it.run("y = tokens + 1;")
    with pytest.raises(AttncertError, match="reads no selector"):
        program_selections_png(it.env.values["y"], [1, 2])
    with pytest.raises(AttncertError, match="no selection pattern"):
        patterns_png([], [1, 2], "t")


def test_long_inputs_label_some_tokens_and_stay_within_the_panel_bound():
    n = 61  # past MAX_LABELS: every third token labelled; past PANEL_MAX / CELL: the panel at its largest
    data = selection_png([[k % 7 == q % 7 for k in range(n)] for q in range(n)], list(range(n)), list(range(n)), "mod 7")
    width, height = png_size(data)
    assert width == round((selection.PANEL_MAX + 0.9) * DPI) and height == round((selection.PANEL_MAX + 1.3) * DPI)
    assert selected_pixels(data) > 0
