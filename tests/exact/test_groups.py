"""Row means through one table per distinct group (exact.groups) against the definition, row by row."""

from fractions import Fraction

import numpy as np
from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.exact import EE, QQ
from attncert.exact.groups import grouping, take
from attncert.exact.testing import ee_numbers, rationals


@st.composite
def selections(draw, values):
    """(values, cols, offsets): rows of sorted distinct keys, repeated rows likely."""
    vals = draw(st.lists(values, min_size=1, max_size=8))
    pool = draw(st.lists(st.sets(st.integers(0, len(vals) - 1), max_size=len(vals)), min_size=1, max_size=3))
    rows = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=10))
    cols = np.array([k for r in rows for k in sorted(r)], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum([len(r) for r in rows]))).tolist()
    return vals, cols, offsets


def _definition(values, cols, offsets):
    """Row r: the mean of values[k] over its keys, values[k] for one key, None for none."""
    out = []
    for a, b in zip(offsets[:-1], offsets[1:]):
        keys = cols[a:b].tolist()
        out.append(None if not keys else values[keys[0]] if len(keys) == 1 else sum(values[k] for k in keys) / len(keys))
    return out


@settings(max_examples=200, deadline=None)
@given(selections(rationals()))
def test_qq_means_are_the_row_means(sel):
    values, cols, offsets = sel
    got = QQ.means(values, cols, offsets)
    want = _definition([Fraction(int(v.p), int(v.q)) for v in values], cols, offsets)
    assert [None if g is None else Fraction(int(g.p), int(g.q)) for g in got] == want
    assert all(type(g) is fmpq for g in got if g is not None)


@settings(max_examples=60, deadline=None)
@given(selections(st.one_of(rationals(), ee_numbers(2))))
def test_ee_means_are_the_row_means(sel):
    values, cols, offsets = sel
    got = EE.means(values, cols, offsets)
    want = _definition(values, cols, offsets)
    assert [g is None for g in got] == [w is None for w in want]
    assert all(g == w for g, w in zip(got, want) if w is not None)


@given(selections(rationals()))
def test_rows_with_the_same_keys_read_one_mean(sel):
    values, cols, offsets = sel
    index, groups = grouping(cols, offsets, len(values))
    rows = [tuple(cols[a:b].tolist()) for a, b in zip(offsets[:-1], offsets[1:])]
    assert len(groups) == len({r for r in rows if len(r) > 1})
    for r, i in zip(rows, index.tolist()):
        assert i == (-1 if not r else r[0] if len(r) == 1 else len(values) + groups.index(list(r)))
    table = list(values) + QQ.group_means(values, groups) + ["default"]
    assert take(table, index) == [table[i] for i in index.tolist()]
