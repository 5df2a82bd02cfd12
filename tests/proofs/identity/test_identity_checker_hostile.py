"""Hostile identity certificates (issue 30, "3b"): verify refuses each cleanly and quickly, never crashes.

Each document is well-formed and correctly sealed; what it records is built to make the checker
fail other than with one line. Sizes nothing bounded: ReLU of e^x e^(10^12) or of x^(2^40) (40
squarings), whose values at the checker's point were rationals to those powers (SIGFPE, exit
136); x^(2^40) restricted to a region's equality x = 2 (the same, in the substitution);
(2x)^(2^40), whose coefficient doubles its digits at each squaring; the fourth power of the mean
of 120 tokens, a product of 26 million terms that was formed before it was counted (261 s and
past 10 GB). Each now ends in one line, REJECTED or BAD, in a process whose address space is capped.
And a selection by TRUE beside recorded regions (the data flow read its pattern outside an
evaluation: an AttributeError).

The cost model covers the check: verify refuses up front, with prove's line, a layer norm whose
estimate is over the limits (it held 8.6 GiB for 232 s before); the largest product the check
forms is within the estimate that both are held to; and (slow) the peak memory of prove and of
verify is within the estimate.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from flint import fmpq

from attncert.constructions import rasp
from attncert.exact import LimitExceeded
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.checkers.identity import field as identity_field
from attncert.proofs.checkers.identity.check import check_identity
from attncert.proofs.checkers.identity.field import Basis, Field
from attncert.proofs.checkers.identity.graph import read_graph, static_selections
from attncert.proofs.core.verify import REJECTED
from tests.proofs.identity.test_identity_checker import prove, refused, status
from tests.proofs.identity.test_identity_checker_regions import _prove_relu_with, _relu_construction

# -- sizes nothing bounded ---------------------------------------------------------------------------

MUL, ADD, RELU = ({"name": name, "params": {}} for name in ("mul", "add", "relu"))


class Graph:
    """A recorded graph (format attncert-rasp/1) built node by node; each method returns the new node's id."""

    def __init__(self) -> None:
        self.nodes: list[dict] = []
        self.edges: list[dict] = []

    def add(self, op: str, *args: int, **params) -> int:
        v = len(self.nodes)
        self.nodes.append({"id": v, "op": op, "label": f"v{v}", "name": f"v{v}", "params": params, "encoding": "numerical"})
        self.edges += [{"source": u, "target": v, "arg": k} for k, u in enumerate(args)]
        return v

    def squared(self, v: int, times: int) -> int:
        for _ in range(times):
            v = self.add("sequence_map", v, v, fn=MUL)
        return v

    def json(self, output: int) -> dict:
        return {"format": "attncert-rasp/1", "outputs": {"output": output}, "nodes": self.nodes, "edges": self.edges}


def relu_document(n: int, graph: dict) -> dict:
    """relu(n)'s honest certificate with its graph (and the static-selection proof) replaced: sealed, well-formed."""
    doc = prove("relu", n=n)
    doc["construction"]["graph"] = graph
    doc["construction"]["static_selections"] = static_selections(read_graph(graph))
    return doc


def relu_of_exponentials() -> dict:
    # relu(e^x e^(10^12)): x lies in the recorded basis (one row, x), e^(10^12) is T^(10^12)
    g = Graph()
    x = g.add("tokens")
    product = g.add("sequence_map", g.add("map", x, fn={"name": "exp", "params": {}}), g.add("map", g.add("full", fill={"q": str(10**12)}), fn={"name": "exp", "params": {}}), fn=MUL)
    doc = relu_document(1, g.json(g.add("map", product, fn=RELU)))
    doc["outputs"]["exp_basis"].update(rows=[[[[[0, 1]], "1"]]], arguments=[[[[[[0, 1]], "1"]], [[0, 1]]]])
    return doc


def relu_of_a_power() -> dict:
    g = Graph()
    return relu_document(1, g.json(g.add("map", g.squared(g.add("tokens"), 40), fn=RELU)))


def a_power_on_a_region_equality() -> dict:
    # x^(2^40) + relu(x - 2) against relu(x), on the recorded leaves of x - 2 and then x: on x - 2 = 0
    # the difference is restricted to x = 2
    g = Graph()
    x = g.add("tokens")
    shifted = g.add("map", g.add("sequence_map", x, g.add("full", fill={"q": "-2"}), fn=ADD), fn=RELU)
    doc = relu_document(1, g.json(g.add("sequence_map", g.squared(x, 40), shifted, fn=ADD)))

    def x_then(*branches):
        return {"form": {"coefficients": [[0, "1"]], "constant": "0"}, "branches": list(branches)}

    # {x - 2 = 0, x < 0} and {x - 2 = 0, x = 0} are empty: 1 (x - 2) + 1 (-x) = -2 and 1 (x - 2) - 1 x = -2;
    # with x - 2 > 0, the same multipliers
    empty = [{"empty": ["1", "1"]}, {"empty": ["1", "-1"]}]
    tree = {
        "form": {"coefficients": [[0, "1"]], "constant": "-2"},
        "branches": [x_then({"leaf": 0}, {"leaf": 1}, {"leaf": 2}), x_then(*empty, {"leaf": 3}), x_then(*empty, {"leaf": 4})],
    }
    doc["outputs"]["regions"] = [{"variables": [0], "tree": tree}]
    return doc


def a_coefficient_squared_forty_times() -> dict:
    g = Graph()
    twice = g.add("map", g.add("tokens"), fn={"name": "mul_const", "params": {"c": {"q": "2"}}})
    return relu_document(1, g.json(g.add("map", g.squared(twice, 40), fn=RELU)))


def the_mean_to_the_fourth(n: int = 120) -> dict:
    # (mean of the n tokens)^4 at every position: the square of the square of an n-term mean
    g = Graph()
    indices = g.add("indices", encoding="numerical")
    everything = g.add("select", indices, indices, predicate="TRUE")
    g.nodes[everything].pop("encoding")
    mean = g.add("aggregate", everything, g.add("tokens"), default=None)
    doc = relu_document(n, g.json(g.squared(mean, 2)))
    del doc["outputs"]["regions"]  # the output reads every group; without regions the evaluation is reached
    return doc


HOSTILE = {
    "exponentials": (relu_of_exponentials, "REJECTED", "restricting a value with exponentials or uninterpreted functions"),
    "power": (relu_of_a_power, "REJECTED", "restricting a value with exponentials or uninterpreted functions"),
    "region": (a_power_on_a_region_equality, "BAD", "a value restricted to a region's equalities may have"),
    "coefficient": (a_coefficient_squared_forty_times, "BAD", "a coefficient in the evaluation has over 10,000 digits"),
    "mean4": (the_mean_to_the_fourth, "BAD", "a product in the evaluation may have 26,357,430 terms"),
}

#: The address space of the verifying process: a blow-up is a MemoryError or an abort, never the machine's memory.
MEMORY_CAP = 2 << 30


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def test_hostile_sizes_are_refused_in_one_line_each(tmp_path: Path):
    paths = []
    for name, (build, _, _) in HOSTILE.items():
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_bytes(canonical_json(seal(build())) + b"\n")
    start = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "attncert", "verify", *map(str, paths)], capture_output=True, text=True, timeout=300, preexec_fn=_capped
    )
    assert time.monotonic() - start < 60, "each refusal is quick"
    assert r.returncode == 3 and "Traceback" not in r.stderr, (r.returncode, r.stderr[-2000:])  # REJECTED outranks BAD
    lines = r.stdout.splitlines()
    assert len(lines) == len(HOSTILE) + 1 and lines[-1].startswith(f"{len(HOSTILE)} certificates: "), r.stdout  # then the tally
    for line, (name, (_, outcome, reason)) in zip(lines, HOSTILE.items()):
        assert line.startswith(outcome) and f"{name}.json" in line and reason in line, line


def test_a_product_is_counted_before_it_is_formed(monkeypatch):
    # the square of the mean of 120 tokens has 7,260 terms, its square at most 7,260 * 7,261 / 2
    with pytest.raises(LimitExceeded, match="26,357,430 terms, over the limit of 5,000,000"):
        check_identity(the_mean_to_the_fourth())
    # refused before a term of it is multiplied: the square of a 4-term mean has 10 terms, over a limit of 9
    field = Field([f"x_0_{i}" for i in range(4)], Basis([]), 1)
    mean = field.mul(field.total(field.variable(i) for i in range(4)), fmpq(1, 4))  # a sum, scaled: no product
    field.max_terms = 9

    def formed(*_):
        raise AssertionError("a term of the refused product was formed")

    monkeypatch.setattr(identity_field, "square_into", formed)
    monkeypatch.setattr(identity_field, "multiply_into", formed)
    with pytest.raises(LimitExceeded, match="may have 10 terms, over the limit of 9"):
        field.mul(mean, mean)


def test_huge_exponents_are_evaluated_at_the_point_at_once():
    # x^(2^40) e^(10^12), and its reciprocal, at the checker's point: residues mod 2^61 - 1
    field = Field(["x_0_0"], Basis([]), 1)
    x = field.variable(0)
    for _ in range(40):
        x = field.mul(x, x)
    big = field.mul(x, field.exp(fmpq(10**12)))
    assert field.value_at(big) * field.value_at(field.div(fmpq(1), big)) == 1



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
    assert status(doc) == REJECTED


def test_a_true_select_whose_data_flow_spans_two_groups_fails(monkeypatch):
    # relu of the mean of the tokens reads both variables; recorded with one group per variable
    doc = _prove_relu_with(monkeypatch, _aggregate_relu(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE), 2))
    doc["outputs"]["regions"] = prove("relu", n=2)["outputs"]["regions"]
    doc["result"].update(holds=True, mismatches=[])
    refused(doc, "depends on the recorded variable groups [0, 1]")
# -- the cost model covers the check --------------------------------------------------------------------

LAYER_NORM = "encoder_layer_norm_identity"


def test_verify_refuses_up_front_what_its_check_would_not_finish_within_the_limits():
    # (5, 4, 3, 3, 5): the check held 8.6 GiB for 232 s before anything refused it; now the estimate (2.4 GiB,
    # from the sizes alone) is over a limit of 1 GiB, and verify and prove refuse it with the same line at once
    from attncert.exact.limits import Limits
    from attncert.proofs.core.cost import refuse_over_limits
    from attncert.proofs.core.registry import load_claim
    from attncert.proofs.core.verify import BAD, verify_bytes

    doc = prove("encoder_layer_norm", n=1, d=1, dv=1, h=1, f=1, delta="1/100")
    doc["params"].update(n=5, d=4, dv=3, h=3, f=5)
    lim = Limits(max_memory=1 << 30)
    start = time.monotonic()
    out = verify_bytes(canonical_json(seal(doc)), lim=lim)
    assert out.status == BAD and time.monotonic() - start < 5
    assert "bytes of memory" in out.reason and "--max-memory" in out.reason and "\n" not in out.reason
    with pytest.raises(LimitExceeded) as proving:
        refuse_over_limits(load_claim(LAYER_NORM), dict(doc["params"]), lim)
    assert str(proving.value) == out.reason


@pytest.mark.parametrize(
    "sizes", [{"n": 2, "d": 2, "dv": 1, "h": 1, "f": 2}, {"n": 1, "d": 4, "dv": 1, "h": 1, "f": 1}, {"n": 2, "d": 2, "dv": 1, "h": 1, "f": 12}, {"n": 3, "d": 2, "dv": 2, "h": 2, "f": 3}]
)
def test_the_largest_product_the_check_forms_is_within_the_estimate(monkeypatch, sizes):
    # the checker refuses a product over max_symbolic_terms; the cost model holds its estimate of the whole proof
    # to the same limit, so the estimate must bound every honest product, or verify would refuse what prove wrote
    from attncert.proofs.core.cost import identity_terms

    largest = [0]
    count = Field._refuse_over_terms

    def recorded(self, bound):
        largest[0] = max(largest[0], bound)
        return count(self, bound)

    doc = prove("encoder_layer_norm", **sizes, delta="1/100")
    monkeypatch.setattr(Field, "_refuse_over_terms", recorded)
    assert check_identity(doc) == []
    assert 0 < largest[0] <= identity_terms("encoder_layer_norm", sizes)[1]


#: Runs the command in its arguments and prints its peak RSS in bytes (the largest of this process's children: one).
PEAK = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)"
)


@pytest.mark.slow
@pytest.mark.parametrize(
    "claim, args", [("encoder_layer_norm", ["--n", "4", "--d", "3", "--dv", "2", "--h", "2", "--f", "4"]), ("transpose", ["--r", "64", "--c", "64"])]
)
def test_prove_and_verify_stay_within_the_estimated_memory(tmp_path: Path, claim, args):
    # the peak RSS of prove, and of verify (the check, then proving again), each in a fresh process
    from attncert.exact.certificate import read_certificate
    from attncert.exact.limits import Limits
    from attncert.proofs.core.cost import refuse_over_limits
    from attncert.proofs.core.registry import load_claim

    out = tmp_path / "c.json"
    cli = [sys.executable, "-m", "attncert"]
    peaks = []
    for command in ([*cli, "prove", claim, "--for-all", *args, "--out", str(out)], [*cli, "verify", str(out)]):
        run = subprocess.run([sys.executable, "-c", PEAK, *command], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        peaks.append(int(run.stdout))
    estimate = refuse_over_limits(load_claim(f"{claim}_identity"), read_certificate(out)["params"], Limits()).memory
    assert max(peaks) <= estimate, (peaks, estimate)
