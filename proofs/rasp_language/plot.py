"""Selection patterns as pictures: each attention's selection matrix on an input, a heatmap per selector.

A selector on tokens x_0 … x_{n-1} is the n × n matrix M[q][k], true when query q
selects key k (:mod:`attncert.constructions.rasp.patterns`). Each is drawn as the
reference REPL prints it: keys across the top, labelled by their tokens, a row per
query, labelled by its token, a filled cell where the query selects the key. The REPL's
``draw`` and ``attncert plot`` of a RASP program draw with this module; matplotlib is
imported only here, with the Agg backend (no display needed).
"""

from __future__ import annotations

import io
import textwrap
from typing import Any, Sequence

from attncert.constructions.rasp.expr import RASPExpr
from attncert.constructions.rasp.patterns import Pattern, patterns, token_text
from attncert.exact.errors import AttncertError

#: Colours of a selected and an unselected cell.
SELECTED, UNSELECTED = "#5e3c99", "#f4efe4"
#: Inches per cell, and the bounds of a panel's side.
CELL, PANEL_MIN, PANEL_MAX = 0.32, 2.4, 7.0
#: Panels per row of a picture of several selectors.
COLUMNS = 3
#: Past this many tokens a panel labels every k-th one only.
MAX_LABELS = 30
DPI = 100


def selection_png(matrix: Sequence[Sequence[bool]], query_tokens: Sequence[Any], key_tokens: Sequence[Any], title: str) -> bytes:
    """The PNG of one selection matrix: ``matrix[q][k]`` true where query q selects key k."""
    return _png([(matrix, query_tokens, key_tokens, title)], "")


def patterns_png(drawn: Sequence[Pattern], tokens: Sequence[Any], title: str) -> bytes:
    """The PNG of several patterns on one input (queries and keys are both ``tokens``), a panel each,
    under ``title``."""
    if not drawn:
        raise AttncertError("no selection pattern to draw")
    return _png([(p.matrix, tokens, tokens, p.title) for p in drawn], title)


def program_selections_png(program: RASPExpr, tokens: Sequence[Any], title: str | None = None) -> bytes:
    """The PNG of every selector ``program``'s attentions read, evaluated exactly on ``tokens``
    (a selector: itself). A program without attention has nothing to draw (AttncertError)."""
    drawn = patterns(program, list(tokens))
    if not drawn:
        raise AttncertError("the program reads no selector: there is no selection pattern to draw")
    return patterns_png(drawn, list(tokens), title if title is not None else f"selection patterns on {' '.join(map(token_text, tokens))}")


def _png(panels: list[tuple[Sequence[Sequence[bool]], Sequence[Any], Sequence[Any], str]], title: str) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    side = max(min(CELL * max(max(len(q), len(k)) for _, q, k, _ in panels), PANEL_MAX), PANEL_MIN)
    columns = min(COLUMNS, len(panels))
    rows = -(-len(panels) // columns)
    width = columns * (side + 0.9)
    title = "\n".join(textwrap.wrap(title, int(width * 10)))  # about ten characters an inch at its size
    fig, axes = plt.subplots(rows, columns, figsize=(width, rows * (side + 1.3) + 0.2 * (title.count("\n") + 2) * bool(title)), dpi=DPI, squeeze=False, layout="constrained")
    colours = ListedColormap([UNSELECTED, SELECTED])
    for ax, (matrix, queries, keys, name) in zip(axes.flat, panels):
        # 0 and 1 as floats to colour the cells: nothing is computed from them
        ax.imshow([[1.0 if v else 0.0 for v in row] for row in matrix], cmap=colours, vmin=0, vmax=1, interpolation="nearest", aspect="equal")
        for axis, tokens in ((ax.xaxis, keys), (ax.yaxis, queries)):
            step = -(-len(tokens) // MAX_LABELS)
            axis.set_ticks(range(0, len(tokens), step), [token_text(tokens[i]) for i in range(0, len(tokens), step)])
        # the lines between cells, as two collections (a grid of tick lines is an artist per line)
        ax.vlines([k - 0.5 for k in range(1, len(keys))], -0.5, len(queries) - 0.5, colors="white", linewidth=1.0)
        ax.hlines([q - 0.5 for q in range(1, len(queries))], -0.5, len(keys) - 0.5, colors="white", linewidth=1.0)
        ax.xaxis.tick_top()
        ax.xaxis.set_label_position("top")
        ax.set_xlabel("keys", fontsize=8)
        ax.set_ylabel("queries", fontsize=8)
        ax.tick_params(length=0, labelsize=8)
        ax.set_title("\n".join(textwrap.wrap(name, 44)) or " ", fontsize=9)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    if title:
        fig.suptitle(title, fontsize=10)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()
