"""Classic RASP programs (Weiss, Goldberg, Yahav, "Thinking Like Transformers", ICML 2021).

Written with :mod:`constructions.rasp`; each docstring gives the function the
program computes, which the tests check against plain-Python references.
All selectors use Comparison predicates and all maps registered functions, so
every program here serialises and can be certified.
"""

from __future__ import annotations

from typing import Sequence

from attncert.constructions import rasp
from attncert.constructions.rasp import Comparison as Cmp

_TRUE = Cmp.TRUE


def make_length() -> rasp.SOp:
    """length[i] = n."""
    return rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, _TRUE)).named("length")


def make_reverse(sop: rasp.SOp) -> rasp.SOp:
    """reverse[i] = sop[n - 1 - i]."""
    opp = (make_length() - rasp.indices - 1).named("opp_index")
    return rasp.Aggregate(rasp.Select(rasp.indices, opp, Cmp.EQ), sop).named("reverse")


def make_histogram(sop: rasp.SOp = rasp.tokens) -> rasp.SOp:
    """hist[i] = #{j : sop[j] = sop[i]}."""
    return rasp.SelectorWidth(rasp.Select(sop, sop, Cmp.EQ)).named("histogram")


def make_first_occurrence(sop: rasp.SOp = rasp.tokens) -> rasp.SOp:
    """first[i] = True iff sop[j] != sop[i] for all j < i."""
    earlier_same = rasp.Select(sop, sop, Cmp.EQ) & rasp.Select(rasp.indices, rasp.indices, Cmp.LT)
    return (rasp.SelectorWidth(earlier_same) == 0).named("first_occurrence")


def make_double_histogram(sop: rasp.SOp = rasp.tokens) -> rasp.SOp:
    """hist2[i] = the number of distinct values whose count equals the count of sop[i]."""
    hist = make_histogram(sop)
    first = make_first_occurrence(sop)
    same_count_first = rasp.Select(hist, hist, Cmp.EQ) & rasp.Select(first, rasp.Full(True), Cmp.EQ)
    return rasp.SelectorWidth(same_count_first).named("double_histogram")


def make_sort(vals: rasp.SOp, keys: rasp.SOp) -> rasp.SOp:
    """vals reordered by increasing key; equal keys keep their input order (a stable sort).

    The target position of i is #{j : key_j < key_i, or key_j = key_i and j < i}; a
    selector-width computes it and an aggregate moves each value there.
    """
    before = rasp.Select(keys, keys, Cmp.LT) | (
        rasp.Select(keys, keys, Cmp.EQ) & rasp.Select(rasp.indices, rasp.indices, Cmp.LT)
    )
    target = rasp.SelectorWidth(before).named("target_position")
    return rasp.Aggregate(rasp.Select(target, rasp.indices, Cmp.EQ), vals).named("sort")


def make_most_frequent(sop: rasp.SOp = rasp.tokens) -> rasp.SOp:
    """most[i] = the most frequent value; among equally frequent ones, the one that occurs first."""
    neg_hist = (0 - make_histogram(sop)).named("neg_histogram")
    ranked = make_sort(sop, neg_hist)
    return rasp.Aggregate(rasp.Select(rasp.indices, rasp.Full(0), Cmp.EQ), ranked).named("most_frequent")


def _prefix_sum(x: rasp.SOp) -> rasp.SOp:
    """s[i] = x[0] + ... + x[i]: the prefix mean (an exact rational) times i + 1."""
    mean = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, Cmp.LEQ), rasp.numerical(x), default=0))
    return rasp.numerical(mean * (rasp.indices + 1))


def make_dyck(pairs: Sequence[str]) -> rasp.SOp:
    """dyck[i] = 1 if the whole input is a balanced (properly nested) Dyck-k word over ``pairs``, else 0.

    Other tokens are ignored. Dyck-1 is ``pairs=["()"]``, Dyck-2 is ``["()", "[]"]``.
    A word is balanced iff (a) the depth d (opens minus closes in the prefix) never
    goes below 0 and ends at 0, and (b) each closing bracket matches the type of its
    opening bracket. The opening bracket matching a close at i is the latest open
    j < i that reached depth d[i] + 1; it is found by numbering the opens of each
    depth level and selecting the one whose number equals the count of such opens
    before i.
    """
    opens = {p[0]: k for k, p in enumerate(pairs)}
    closes = {p[1]: k for k, p in enumerate(pairs)}
    if len(pairs) == 0 or any(len(p) != 2 for p in pairs) or len(set(opens) | set(closes)) != 2 * len(pairs):
        raise ValueError(f"pairs must be distinct two-character strings, got {list(pairs)!r}")
    is_open = rasp.numerical(_member(rasp.tokens, opens))
    is_close = rasp.numerical(_member(rasp.tokens, closes))
    depth = _prefix_sum(rasp.SequenceMap(rasp.fn("sub"), is_open, is_close)).named("depth")

    went_negative = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, _TRUE), rasp.numerical(depth < 0)))
    last = (make_length() - 1).named("last_index")
    final_depth = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, last, Cmp.EQ), depth))

    # Opens are keyed by the depth they reach, closes ask for the depth their open reached
    # (their own depth + 1); the sentinels -1 and -2 never meet.
    open_level = rasp.SequenceMap(rasp.fn("select_if", other=-1), is_open, depth).named("open_level")
    wanted_level = rasp.SequenceMap(rasp.fn("select_if", other=-2), is_close, depth + 1).named("wanted_level")
    same_level = rasp.Select(open_level, open_level, Cmp.EQ) & rasp.Select(rasp.indices, rasp.indices, Cmp.LEQ)
    open_number = rasp.SelectorWidth(same_level).named("open_number")
    opens_before = rasp.Select(open_level, wanted_level, Cmp.EQ) & rasp.Select(rasp.indices, rasp.indices, Cmp.LT)
    count_before = rasp.SelectorWidth(opens_before).named("count_before")
    match = rasp.Select(open_level, wanted_level, Cmp.EQ) & rasp.Select(open_number, count_before, Cmp.EQ)
    open_type = rasp.Map(rasp.fn("lookup", table=_table(opens), other=-1), rasp.tokens).named("open_type")
    close_type = rasp.Map(rasp.fn("lookup", table=_table(closes), other=-1), rasp.tokens).named("close_type")
    matched_type = rasp.Aggregate(match, open_type, default=-1).named("matched_type")
    bad_close = rasp.numerical(rasp.SequenceMap(rasp.fn("compare", op="!="), close_type, matched_type))
    any_bad = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, _TRUE), bad_close))

    problems = rasp.numerical(rasp.SequenceMap(rasp.fn("add"), went_negative, any_bad))
    return rasp.numerical(rasp.SequenceMap(rasp.fn("both_zero"), problems, final_depth)).named("dyck")


def _table(mapping: dict[str, int]) -> tuple:
    return tuple((k, v) for k, v in sorted(mapping.items()))


def _member(sop: rasp.SOp, symbols: dict[str, int]) -> rasp.SOp:
    return rasp.Map(rasp.fn("lookup", table=tuple((s, 1) for s in sorted(symbols)), other=0), sop)
