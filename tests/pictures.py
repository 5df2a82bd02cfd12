"""Checks of a picture as a person would open it: a PNG that decodes, of a useful size, not blank."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np


def assert_picture(png: bytes | Path, min_width: int, min_height: int, min_drawn: float = 0.01) -> np.ndarray:
    """Decode the PNG (matplotlib's reader, not ours), check its size, and that at least ``min_drawn`` of its
    pixels differ from the background (its most common colour); the decoded pixels are returned."""
    import matplotlib.image

    data = png.read_bytes() if isinstance(png, Path) else png
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pixels = matplotlib.image.imread(io.BytesIO(data), format="png")
    height, width = pixels.shape[:2]
    assert width >= min_width and height >= min_height, f"{width} x {height} pixels, expected at least {min_width} x {min_height}"
    channels = np.round(pixels.reshape(height * width, -1)[:, :3] * 255).astype(np.uint32)
    packed = channels[:, 0] << 16 | channels[:, 1] << 8 | channels[:, 2]  # one integer per RGB colour
    colours, counts = np.unique(packed, return_counts=True)
    drawn = 1 - counts.max() / len(packed)
    assert len(colours) > 2 and drawn >= min_drawn, f"blank: {len(colours)} colour(s), {drawn:.2%} of the pixels off the background"
    return pixels
