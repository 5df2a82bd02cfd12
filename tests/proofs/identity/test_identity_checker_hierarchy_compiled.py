"""The identity checker on hierarchy_identity and compiled_identity
(proofs/checkers/identity/hierarchy.py, identity_compiled.py, docs/identity.md).

Honest certificates verify OK. Self-consistent forgeries (re-sealed) REJECTED or are BAD, refused by the
check itself: a hierarchy missing a size or listing one twice, a hierarchy of a changed U claimed to
hold (shown wrong in EE at a rational input), a compiled model whose head scores read the input
column (shown to compute something else at a rational input, by the minimal forward pass in QQ),
static heads misrecorded, malformed sizes.
"""

from __future__ import annotations

import copy
import random

import pytest
from flint import fmpq

from attncert.exact import QQ
from attncert.proofs.checkers import references
from attncert.proofs.checkers.forward import forward
from attncert.proofs.checkers.identity.compiled import check_compiled_identity
from attncert.proofs.checkers.identity.hierarchy import check_hierarchy_identity
from attncert.proofs.core.verify import OK
from tests.proofs.identity.test_identity_checker import CLAIMS, mutated, refused, scale_plus_one, status, wrong_at_a_rational_input


# -- hierarchy -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hierarchy() -> dict:
    return CLAIMS["hierarchy_identity"].prove(N=2, D=2, Dv=1)


def test_an_honest_hierarchy_verifies(hierarchy):
    assert hierarchy["result"]["cases_checked"] == 4  # (n, d, d_v) in {1, 2} x {1, 2} x {1}
    assert check_hierarchy_identity(hierarchy) == [] and status(hierarchy) == OK


def test_a_hierarchy_missing_a_size_fails(hierarchy):
    doc = copy.deepcopy(hierarchy)
    for section in ("inputs", "outputs"):
        del doc[section]["cases"][1]  # (1, 2, 1)
    doc["result"]["cases_checked"] = 3
    refused(doc, "every (n, d, d_v)", check_hierarchy_identity)


def test_a_hierarchy_listing_a_size_twice_fails(hierarchy):
    doc = copy.deepcopy(hierarchy)
    for section in ("inputs", "outputs"):
        doc[section]["cases"][1] = copy.deepcopy(doc[section]["cases"][0])
    refused(doc, "every (n, d, d_v)", check_hierarchy_identity)


def test_a_hierarchy_of_a_changed_u_claimed_to_hold_fails(monkeypatch):
    cons, g = mutated("universal", {"n": 2, "d": 2, "dv": 1}, "mul_scaled", scale_plus_one)
    assert wrong_at_a_rational_input("universal", cons, g)  # U(2, 2, 1) itself, the largest size
    monkeypatch.setattr("attncert.proofs.identity.hierarchy.universal", lambda N, D, Dv: cons)
    doc = CLAIMS["hierarchy_identity"].prove(N=2, D=2, Dv=1)
    monkeypatch.undo()
    assert doc["result"]["failures"] and check_hierarchy_identity(doc) == []  # recorded as failing: consistent
    doc["result"].update(holds=True, failures=[])
    refused(doc, "result.failures", check_hierarchy_identity)


# -- compiled weights ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "of, sizes",
    [("transpose", "c=2,r=2"), ("universal", "d=2,dv=1,n=2"), ("relu", "n=2"), ("maxmin", "n=3"), ("inverse3", ""), ("encoder_layer", "d=1,dv=1,f=1,h=1,n=1")],
)
def test_honest_compiled_certificates_verify(of, sizes):
    doc = CLAIMS["compiled_identity"].prove(of=of, sizes=sizes)
    assert doc["result"]["holds"] and check_compiled_identity(doc) == [] and status(doc) == OK


@pytest.fixture(scope="module")
def transpose() -> dict:
    return CLAIMS["compiled_identity"].prove(of="transpose", sizes="c=2,r=2")


def test_a_head_scoring_the_input_fails(transpose):
    doc = copy.deepcopy(transpose)
    model = doc["construction"]["model"]
    (token,) = model["token_columns"]
    layer = next(k for k, layer in enumerate(model["layers"]) if layer["heads"])
    head = model["layers"][layer]["heads"][0]
    head["qk"].append([token, token, "1000"])  # scores x_i^T W x_j + 1000 t_i t_j: the argmax follows the input
    entry = next(h for h in doc["construction"]["static_heads"] if h["layer"] == layer and h["head"] == head["aggregate"])
    entry["reads"] = sorted(set(entry["reads"]) | {token})
    # apart from the checker: at some rational input these weights do not transpose
    rng = random.Random(3)
    for _ in range(20):
        m = [[fmpq(rng.randint(-9, 9), rng.randint(1, 4)) for _ in range(2)] for _ in range(2)]
        out = forward(model, [x for row in m for x in row], QQ)[model["outputs"]["output"][0]][1:]
        if [out[0:2], out[2:4]] != references.BY_CLAIM["transpose"]({"M": m}, QQ):
            break
    else:
        pytest.fail("the changed weights transpose every input tried")
    refused(doc, "which is not a positional column", check_compiled_identity)


def test_misrecorded_static_heads_fail(transpose):
    doc = copy.deepcopy(transpose)
    doc["construction"]["static_heads"][0]["reads"].pop()
    refused(doc, "static_heads", check_compiled_identity)


@pytest.mark.parametrize("sizes", ["r=2", "r=2,c=2", "c=2,r=02", "c=2,r=2,r=2", "c=2,r=0"])
def test_malformed_sizes_are_bad(transpose, sizes):
    doc = copy.deepcopy(transpose)
    doc["params"]["sizes"] = sizes
    refused(doc, "params.sizes", check_compiled_identity)
