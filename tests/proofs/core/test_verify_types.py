"""JSON values are compared with their types: a certificate whose only change is a leaf's JSON kind
(1 -> true, true -> 1, 1 -> "1", "1" -> 1), resealed, is REJECTED or BAD, never OK.

Python's ``==`` says True == 1 and False == 0; before json_equal, a transpose certificate with
``construction.size.heads[1]`` changed from 1 to true verified OK.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.exact.canonical import canonical_json, json_equal
from attncert.exact.certificate import seal
from attncert.exact.errors import ParseError
from attncert.proofs.core.certify import CLAIM_FIELDS, differing_fields
from attncert.proofs.core.registry import load_claims
from attncert.proofs.core.verify import OK, verify_bytes
from tests.proofs.core.test_every_leaf import SMALL as EVERY_LEAF_SIZES, leaves

CLAIMS = load_claims()


def strict_equal(a: Any, b: Any) -> bool:
    """An independent statement of JSON equality: tag each value with its kind, then recurse."""

    def kind(v: Any) -> str:
        return "bool" if isinstance(v, bool) else "int" if isinstance(v, int) else type(v).__name__

    if kind(a) != kind(b):
        return False
    if isinstance(a, dict):
        return set(a) == set(b) and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize(
    "a, b",
    [(True, 1), (False, 0), (1, "1"), ("1", 1), ([1], [True]), ({"k": 0}, {"k": False}), ([[0, 1]], [[False, True]]), (None, False), (None, 0), ([], {}), (1, 1.0)],
)
def test_values_of_different_kinds_are_unequal(a, b):
    assert a == b or a != b  # Python's answer, whatever it is, is not the one asked for
    assert not json_equal(a, b) and not json_equal(b, a)


@pytest.mark.parametrize("a", [True, 0, 1, "1", None, [], {}, [True, 1, "1", None], {"a": [{"b": False}], "c": 7}])
def test_equal_values_are_equal(a):
    assert json_equal(a, copy.deepcopy(a))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["0", "1", "-1", "a"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(json_values, json_values)
def test_json_equal_is_kindwise_equality(a, b):
    assert json_equal(a, b) == strict_equal(a, b) == (canonical_json(a) == canonical_json(b))


def test_differing_fields_names_a_changed_kind():
    doc = {k: {"x": [0, 1]} for k in CLAIM_FIELDS}
    forged = copy.deepcopy(doc)
    forged["construction"]["x"][1] = True
    assert forged == doc  # the very confusion: Python's == sees no change
    (problem,) = differing_fields(forged, doc)
    assert problem.startswith('the field "construction')  # the field, or the member in it, that differs


def valued_leaves(obj: Any) -> Iterator[tuple[tuple, Any]]:
    """(path, value) of every leaf."""
    for path in leaves(obj):
        v = obj
        for key in path:
            v = v[key]
        yield path, v


def retyped(v: Any) -> list[Any]:
    """The values of another JSON kind that Python's == or a careless str() would take for v."""
    if isinstance(v, bool):
        return [int(v), str(int(v)).lower()]
    if isinstance(v, int):
        return ([bool(v)] if v in (0, 1) else []) + [str(v)]
    if isinstance(v, str) and v.lstrip("-").isdigit() and len(v) < 20:
        return [int(v)]
    return []


def forged_leaves(doc: dict, per_claim: int) -> Iterator[tuple[tuple, Any]]:
    """(path, value of another kind) for every int and bool leaf, and for up to ``per_claim`` integer strings."""
    strings = 0
    for path, v in valued_leaves({k: doc[k] for k in CLAIM_FIELDS}):
        if isinstance(v, str):
            if strings >= per_claim or not retyped(v):
                continue
            strings += 1
        for w in retyped(v):
            yield path, w


#: Every claim but the slow ones, at the sizes of test_every_leaf; their documents hold ints, bools and integer strings.
SLOW = {"encoder_layer", "encoder_layer_norm", "match2", "multihead", "parity", "sinkhorn_transformer", "sinkhorn_universality", "tracr_model"}
SMALL = {name: sizes for name, sizes in EVERY_LEAF_SIZES.items() if name not in SLOW}


#: Changes tried per claim in the default run, evenly spaced (the parameters' always); the slow run tries every one.
SAMPLE = 15


def _walks():
    for name in sorted(SMALL):
        yield pytest.param(name, False, id=name)
        yield pytest.param(name, True, id=f"{name}-every-leaf", marks=pytest.mark.slow)


@pytest.mark.parametrize("name, every_leaf", list(_walks()))
def test_a_leaf_of_another_kind_is_caught(name, every_leaf):
    claim = CLAIMS[name]
    doc = claim.prove(**{**claim.defaults(), **SMALL[name]})
    assert verify_bytes(canonical_json(seal(doc))).status == OK
    forged = list(forged_leaves(doc, per_claim=20))
    assert any(isinstance(w, bool) for _, w in forged)  # the walk reaches the true-for-1 confusion
    if not every_leaf:
        forged = [f for f in forged if f[0][0] == "params"] + forged[:: -(-len(forged) // SAMPLE)]
    accepted = []
    for path, w in forged:
        bad = copy.deepcopy(doc)
        node = bad
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = w
        outcome = verify_bytes(canonical_json(seal(bad)))
        assert "\n" not in outcome.line()
        if outcome.status == OK:
            accepted.append((path, w))
    assert not accepted, f"{len(accepted)} of {len(forged)} changes of kind verified OK, e.g. {accepted[:3]}"


def test_the_reported_forgery_fails_in_one_line(tmp_path: Path):
    doc = CLAIMS["transpose"].prove(**CLAIMS["transpose"].defaults())
    heads = doc["construction"]["size"]["heads"]
    assert heads[1] == 1
    heads[1] = True
    path = tmp_path / "heads.json"
    path.write_bytes(canonical_json(seal(doc)) + b"\n")
    done = subprocess.run([sys.executable, "-m", "attncert", "verify", str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stdout + done.stderr  # REJECTED: a forgery
    assert done.stdout.startswith("REJECTED") and done.stdout.count("\n") == 1 and "construction" in done.stdout
    assert "Traceback" not in done.stderr


def test_readers_of_node_ids_take_no_boolean_for_an_integer():
    # True is the dict key 1: a reader that looks a node up by a recorded id must ask for an int first.
    from attncert.constructions.rasp.graph import graph_from_json

    doc = CLAIMS["transpose"].prove(**CLAIMS["transpose"].defaults())
    graph = doc["construction"]["graph"]
    graph_from_json(graph)
    assert {n["id"] for n in graph["nodes"]} >= {1} and graph["edges"][0] == {"source": 0, "target": 1, "arg": 0}
    for edit in (("edges", 0, "target"), ("edges", 2, "source"), ("outputs", "output")):
        forged = copy.deepcopy(graph)
        node = forged
        for key in edit[:-1]:
            node = node[key]
        node[edit[-1]] = True
        with pytest.raises(ParseError, match="unknown node"):
            graph_from_json(forged)
