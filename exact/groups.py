"""Row means of a selection, computed once per distinct group of keys.

RASP's Aggregate gives query r the mean of the values at its selected keys G_r:
values[k] itself when G_r = {k}, (1/|G_r|) sum_{i in G_r} values[i] when |G_r| >= 2,
and the default when G_r is empty. Many queries select the same keys (every output
position of one softmax row, say), and most select exactly one (a gather), so the
means are laid out as one table

    values ++ [mean of each distinct group of at least two keys] ++ [default]

and query r reads entry index[r] of it: k for a single key k, len(values) + j for
the j-th distinct group, -1 (the last entry) for none. The grouping depends on the
selection only, so a selection that is the same for every input computes it once.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def grouping(cols: np.ndarray, offsets: Sequence[int], n_values: int) -> tuple[np.ndarray, list[list[int]]]:
    """(index, groups) for a selection in CSR form (row r selects cols[offsets[r]:offsets[r+1]]).

    ``groups`` are the distinct key lists of the rows that select at least two keys, in
    order of first appearance; ``index`` (int64, one per row) is described in the module
    docstring.
    """
    off = np.asarray(offsets, dtype=np.int64)
    widths = np.diff(off)
    index = np.full(len(widths), -1, dtype=np.int64)
    single = widths == 1
    index[single] = cols[off[:-1][single]]
    groups: list[list[int]] = []
    seen: dict[bytes, int] = {}
    for r in np.flatnonzero(widths > 1).tolist():
        keys = cols[off[r] : off[r + 1]]
        j = seen.setdefault(keys.tobytes(), len(groups))
        if j == len(groups):
            groups.append(keys.tolist())
        index[r] = n_values + j
    return index, groups


def take(table: list[Any], index: np.ndarray) -> list[Any]:
    """[table[i] for i in index], at C speed."""
    return list(map(table.__getitem__, index.tolist()))
