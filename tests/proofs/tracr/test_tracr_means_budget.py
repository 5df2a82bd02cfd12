"""The tracr induction's enumeration of numerical means has a budget of its own (MAX_SUMS, about a million, additions in one
induction) and is taken once per set of values: a hostile value set (64 distinct numbers at length 64, whose
sums of w values number about 63 w, some 8 million additions) is refused in one line, and a modest one gives
the means a hand count gives."""

from __future__ import annotations

import time

import pytest

from attncert.proofs.checkers.programs import Unsupported
from attncert.proofs.checkers.tracr.every_input import Induction


def bare(n: int) -> Induction:
    """An induction with only what its enumeration of means reads (its length bound and its budget)."""
    ind = Induction.__new__(Induction)
    ind.n, ind._mean_sets, ind._summed = n, {}, 0
    return ind


def test_a_hostile_value_set_is_refused_within_the_budget():
    ind = bare(64)
    values = [("q", k, 1) for k in range(64)]
    t0 = time.perf_counter()
    with pytest.raises(Unsupported, match="too many to enumerate"):
        ind._means("v", list(range(64)), values)
    assert ind._summed <= 1 << 20
    assert time.perf_counter() - t0 < 60  # a guard against a hang, not a timing claim


def test_the_means_of_zero_and_one_to_length_three_and_their_reuse():
    ind = bare(3)
    values = [("q", 0, 1), ("b", True)]
    got = ind._means("v", [0, 1], values)
    # means of 1..3 values from {0, 1}: 0, 1, 1/2, 1/3, 2/3, and the default None is no number
    assert got == [("q", 0, 1), ("q", 1, 3), ("q", 1, 2), ("q", 2, 3), ("q", 1, 1)]
    spent = ind._summed
    assert ind._means("v", [1, 0], values) == got and ind._summed == spent  # the same set: no new additions


def test_the_inductions_of_one_proof_share_a_budget_of_pairs():
    """A length-by-length proof runs one induction a length; their query-key pairs are charged together, and past
    MAX_TOTAL_PAIRS the proof (and the check, which charges the runs it makes again) stops in one line."""
    from attncert.proofs.checkers.tracr.every_input import MAX_TOTAL_PAIRS, charge

    run = {"steps": [{"sublayer": "layer 0 head 0", "query_configurations": 3000, "key_configurations": 2000}, {"sublayer": "mlp 0", "configurations": 10**9}]}
    spent = charge(0, run)
    assert spent == 6_000_000  # the MLP's configurations are not pairs
    spent = charge(spent, run)
    with pytest.raises(Unsupported, match="query-key configurations in all"):
        charge(spent, run)
    assert 2 * 6_000_000 <= MAX_TOTAL_PAIRS < 3 * 6_000_000
