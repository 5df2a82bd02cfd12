"""Hostile identity certificates (issue 30, "3b"): verify refuses each cleanly and quickly, never crashes.

Each document is well-formed and correctly sealed; what it records is built to make the checker
fail other than with one line: a selection by TRUE beside recorded regions (the data flow reads
its pattern from the predicate alone, outside an evaluation).
"""

from __future__ import annotations

from attncert.constructions import rasp
from attncert.proofs.checkers.identity import check_identity
from attncert.proofs.verify import FAIL
from tests.proofs.test_identity_checker import prove, refused, status
from tests.proofs.test_identity_checker_regions import _prove_relu_with, _relu_construction

# -- a TRUE or FALSE select beside recorded regions --------------------------------------------------


def _aggregate_relu(selector: rasp.Selector, n: int):
    """relu of the numerical aggregate of the tokens over ``selector``, on relu(n)'s layout."""
    mean = rasp.numerical(rasp.Aggregate(selector, rasp.tokens, default=0))
    return _relu_construction(rasp.numerical(rasp.Map(rasp.fn("relu"), mean)), n)


def test_a_true_select_with_regions_is_checked(monkeypatch):
    # Select TRUE and Select EQ on the indices select each query's own key: relu(x), with the regions of
    # relu(2); the check follows the TRUE select's pattern in the data flow (it was BAD: "'Evaluator'
    # object has no attribute 'pairs'"), and the construction, not attncert's, is what verify refuses
    both = rasp.SelectorAnd(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE), rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.EQ))
    doc = _prove_relu_with(monkeypatch, _aggregate_relu(both, 2))
    assert doc["result"]["holds"] and doc["outputs"]["regions"]
    assert check_identity(doc) == []
    assert status(doc) == FAIL


def test_a_true_select_whose_data_flow_spans_two_groups_fails(monkeypatch):
    # relu of the mean of the tokens reads both variables; recorded with one group per variable
    doc = _prove_relu_with(monkeypatch, _aggregate_relu(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE), 2))
    doc["outputs"]["regions"] = prove("relu", n=2)["outputs"]["regions"]
    doc["result"].update(holds=True, mismatches=[])
    refused(doc, "depends on the recorded variable groups [0, 1]")
