"""The cost model of every claim against what proving actually does (docs/limits.md).

The sequence lengths and the numbers of evaluations are exact figures of the model:
they must equal the lengths and the number of sequences the evaluator is handed.
For Sinkhorn claims the number of runs is exact and the precision an upper estimate.
"""

from __future__ import annotations

from typing import Any

import pytest

import attncert.constructions.rasp as rasp
from attncert.constructions.rasp import batch
from attncert.proofs.core.cost import CAP, Cost, check, krawczyk_bits
from attncert.proofs.core.registry import load_claims
from attncert.exact.errors import LimitExceeded
from attncert.exact.limits import Limits
from flint import fmpq

RASP_CASES: list[tuple[str, dict[str, Any]]] = [
    ("transpose", {"r": 2, "c": 3}),
    ("transpose", {"r": 5, "c": 1}),
    ("matmul", {"r": 2, "k": 3, "c": 2}),
    ("matmul", {"r": 3, "k": 1, "c": 1}),
    ("softmax", {"r": 2, "c": 3}),
    ("relu", {"n": 5}),
    ("maxmin", {"n": 7}),
    ("inverse3", {}),
    ("universal", {"n": 3, "d": 2, "dv": 1}),
    ("universal", {"n": 1, "d": 3, "dv": 4}),
    ("multihead", {"n": 2, "d": 2, "dv": 1, "h": 2, "do": 3}),
    ("multihead", {"n": 1, "d": 1, "dv": 3, "h": 3, "do": 1}),
    ("encoder_layer", {"n": 2, "d": 1, "dv": 2, "h": 2, "f": 3}),
    ("encoder_layer", {"n": 1, "d": 3, "dv": 1, "h": 1, "f": 5}),
    ("hierarchy", {"N": 2, "D": 2, "Dv": 1}),
    ("match2", {"max_M": 3, "max_length": 2}),
    ("parity", {"max_k": 2, "max_length": 3}),
]


@pytest.mark.parametrize("name, params", RASP_CASES, ids=[f"{n}-{p}" for n, p in RASP_CASES])
def test_positions_and_evaluations_are_what_the_evaluator_is_handed(name, params, monkeypatch):
    claim = load_claims()[name]
    lengths: list[int] = []
    real = rasp.evaluate_graph

    def counting(g, xs, *a, **k):
        lengths.append(len(xs))
        return real(g, xs, *a, **k)

    monkeypatch.setattr(rasp, "evaluate_graph", counting)
    real_batch = batch.run_batch

    def counting_batch(g, tokens, *a, **k):  # a batch of sequences of one length (constructions.rasp.batch)
        lengths.extend([tokens.length] * tokens.size)
        return real_batch(g, tokens, *a, **k)

    monkeypatch.setattr(batch, "run_batch", counting_batch)
    doc = claim.prove(**{**claim.defaults(), **params})
    assert doc["result"]["holds"]
    cost = claim.estimate(params)
    assert cost.positions == max(lengths)
    assert cost.evaluations == len(lengths)
    assert cost.pairs >= cost.positions and cost.seconds > 0 and cost.memory > 0


@pytest.mark.parametrize(
    "name, params, runs",
    [
        ("sinkhorn_convergence", {"n": 3, "eps": "1/5,1/1000", "ref_iter": 10, "pot_iter": 10}, 2),
        ("sinkhorn_transformer", {"n": 2, "m": 3}, 1),
        ("sinkhorn_limit", {"n": 2, "m": 2, "ts": "1/2,1/3,1/4"}, 3),
    ],
)
def test_sinkhorn_runs_are_exact_and_precision_an_upper_estimate(name, params, runs):
    claim = load_claims()[name]
    doc = claim.prove(**{**claim.defaults(), **params})
    cost = claim.estimate(params)
    assert cost.evaluations == runs
    recorded = [r["details"]["prec"] for r in doc["outputs"].get("runs", [])] + (
        [doc["construction"]["sinkhorn"]["details"]["prec"]] if "sinkhorn" in doc["construction"] else []
    )
    assert all(p <= max(cost.precision, 1) for p in recorded), (recorded, cost.precision)


def test_krawczyk_bits_follow_the_prover_ladder_without_floats():
    assert krawczyk_bits(fmpq(1), fmpq(1, 5), 128) == 128  # Delta = 10 <= 40: Hilbert at prec
    # Delta = 20000: ceil(20000 * 0.7214) + 128 = 14556 (the prover needs Delta / (2 ln 2) + 128 = 14555)
    assert krawczyk_bits(fmpq(1), fmpq(1, 10000), 128) == 14556
    assert krawczyk_bits(fmpq(1), fmpq(1, 10**400), 128) > 10**400  # exact: no float overflow


def test_a_refusal_names_parameters_size_limit_and_option():
    with pytest.raises(LimitExceeded) as e:
        check("universal", {"n": 1000, "d": 8, "seed": 0}, Cost(positions=8_000_000), Limits())
    msg = str(e.value)
    assert "n=1000, d=8" in msg and "8,000,000" in msg and "32,768" in msg and "--max-positions" in msg and "seed" not in msg
    with pytest.raises(LimitExceeded, match="more than 10"):
        check("parity", {"max_length": 10**9}, Cost(positions=CAP), Limits())
    check("relu", {"n": 4}, Cost(positions=4), Limits())  # within the limits: no error
