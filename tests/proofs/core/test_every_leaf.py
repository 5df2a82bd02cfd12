"""Every leaf of every claim's certificate is pinned: change any one (and reseal) and verify says REJECTED or BAD.

All 48 claims, at small sizes. The default run walks up to 300 evenly spaced
leaves of each claim (every leaf of most), leaving out the eight claims whose walk
takes 14-40 s, the Sinkhorn Transformer's two, whose certificates record whole
models, tracr_model, whose proof compiles with tracr, and the seven every-size claims whose certificates
hold 500 to 3,000 leaves (about 0.05 s of CPU each); the slow run (CI runs it) walks every leaf of every claim. Only
``provenance`` and ``side_notes`` are informational (hashed, never compared), so
they are not walked.

One kind of change may pass: a parameter changed to a value whose certificate
is the very same document (``prec`` 128 -> 129 where the run works at 192 bits
anyway; ``max_k`` 1 -> 2 when no word is long enough for k = 2). Such a document
is a genuine certificate of a true claim; the test proves it with the changed
parameters and requires every claim field to be reproduced.
"""

from __future__ import annotations

import copy
from typing import Any, Iterator

import pytest

from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.constructions.rasp.language.programs import path as shipped_program
from attncert.proofs.core.certify import CLAIM_FIELDS
from attncert.proofs.core.registry import INDEX, available, load_claims
from attncert.proofs.core.verify import OK, verify_bytes

SMALL: dict[str, dict[str, Any]] = {
    "transpose": {"r": 2, "c": 1},
    "matmul": {"r": 1, "k": 2, "c": 1},
    "softmax": {"r": 1, "c": 2},
    "relu": {"n": 2},
    "maxmin": {"n": 3},
    "inverse3": {},
    "universal": {"n": 1, "d": 1, "dv": 1},
    "multihead": {"n": 1, "d": 1, "dv": 1, "h": 1, "do": 1},
    "encoder_layer": {"n": 1, "d": 1, "dv": 1, "h": 1, "f": 1},
    "encoder_layer_norm": {"n": 1, "d": 2, "dv": 1, "h": 1, "f": 1},
    "hierarchy": {"N": 1, "D": 1, "Dv": 2},
    "match2": {"max_M": 2, "max_length": 1},
    "parity": {"max_k": 1, "max_length": 1},
    "sinkhorn_fixed_point": {"n": 2, "m": 2},
    "sinkhorn_limit": {"n": 2, "m": 2, "ts": "1/3"},
    "sinkhorn_convergence": {"n": 2, "eps": "1/5", "ref_iter": 10, "pot_iter": 10},
    "sinkhorn_transformer": {"n": 2, "m": 2, "d": 1, "k": 1, "heads": 1},
    "sinkhorn_universality": {"pairs": 1, "held_out": 1, "max_n": 2, "widths": "1,2"},
    "transport_plan": {"n": 3, "m": 2},
    "compiled": {"of": "matmul", "sizes": "r=1,k=2,c=1"},
    "compiled_program": {"vocab": "a,b", "max_seq_len": 2},  # attncert's shipped make_reverse, every input
    "compiled_softmax": {"of": "softmax", "sizes": "r=1,c=2", "betas": "10,100", "tol": "1e-10", "prec": 128},
    # a shipped program that loads another file, with an expected value
    "rasp_program": {"file": str(shipped_program("transpose")), "expr": "transpose(tokens, 2, 1)", "input": "[1, 2]", "expect": "[1, 2]"},
    "lipschitz_approx": {"target": "sin", "d": 1, "h": "1/2"},
    "lipschitz_rates": {"m1": "1,2", "m2": "1", "m3": "1", "holder_targets": ""},
    "transpose_identity": {"r": 2, "c": 1},
    "matmul_identity": {"r": 1, "k": 2, "c": 1},
    "softmax_identity": {"r": 1, "c": 2},
    "inverse3_identity": {},
    "universal_identity": {"n": 2, "d": 1, "dv": 1},
    "multihead_identity": {"n": 1, "d": 1, "dv": 1, "h": 2, "do": 1},
    "relu_identity": {"n": 2},
    "maxmin_identity": {"n": 3},
    "encoder_layer_identity": {"n": 1, "d": 1, "dv": 1, "h": 1, "f": 1},
    "encoder_layer_norm_identity": {"n": 1, "d": 2, "dv": 1, "h": 1, "f": 1},
    "hierarchy_identity": {"N": 1, "D": 1, "Dv": 2},
    "compiled_identity": {"of": "matmul", "sizes": "c=1,k=2,r=1"},
    "tracr_model": {"vocab": "a,b", "max_seq_len": 2},  # needs the tracr extra (CI has it)
    # for every value of one or two sizes, the others fixed small: the fewest leaves (a template's are most of them)
    "transpose_every_size": {"every": "r,c"},
    "matmul_every_size": {"every": "k", "r": 1, "c": 1},
    "softmax_every_size": {"every": "c", "r": 1},
    "relu_every_size": {"every": "n"},
    "maxmin_every_size": {"every": "n"},
    "universal_every_size": {"every": "dv", "n": 1, "d": 1},
    "universal_tagged_every_size": {"every": "dv", "n": 1, "d": 1},
    "hierarchy_every_size": {"every": "Dv,dv", "N": 1, "n": 1, "D": 1, "d": 1},
    "multihead_every_size": {"every": "do", "n": 1, "d": 1, "dv": 1, "h": 1},
    "encoder_layer_every_size": {"every": "dv", "n": 1, "d": 1, "h": 1, "f": 1},
}


def small_certificate(name: str, **params: Any) -> dict:
    """The sealed certificate of the claim at its defaults, then the sizes of :data:`SMALL`, then ``params``."""
    claim = load_claims()[name]
    return seal(claim.prove(**{**claim.defaults(), **SMALL[name], **params}))


def leaves(obj: Any, path: tuple = ()) -> Iterator[tuple]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from leaves(v, path + (i,))
    else:
        yield path


def changed(v: Any) -> Any:
    """Another well-typed value: a rational string moves by 1, other strings gain a character."""
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return v + 1
    if v is None:
        return "0"
    num, slash, den = v.partition("/")
    if num.lstrip("-").isdigit() and (not slash or den.isdigit()):
        return f"{int(num) + 1}{slash}{den}"
    return v + "~"


def with_leaf_changed(doc: dict, path: tuple) -> dict:
    """A copy of doc with the leaf at ``path`` changed (:func:`changed`), not yet resealed."""
    bad = copy.deepcopy(doc)
    node = bad
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = changed(node[path[-1]])
    return bad


def genuine(claim, doc: dict, path: tuple) -> bool:
    """Whether a changed parameter gives exactly the certificate attncert writes for it."""
    if path[0] != "params":
        return False
    redo = claim.prove(**{k: str(v) if isinstance(v, str) else v for k, v in doc["params"].items()})
    return all(redo[k] == doc[k] for k in CLAIM_FIELDS)


def test_every_claim_is_walked():
    assert set(SMALL) == set(load_claims()) and len(SMALL) == 48


SLOW = {
    "encoder_layer", "encoder_layer_identity", "encoder_layer_norm", "encoder_layer_norm_identity", "match2", "multihead",
    "multihead_identity", "parity",
    "sinkhorn_transformer", "sinkhorn_universality", "lipschitz_rates", "tracr_model",
    "matmul_every_size", "maxmin_every_size", "universal_every_size", "universal_tagged_every_size", "hierarchy_every_size",
    "multihead_every_size", "encoder_layer_every_size",
}  # fmt: skip
# The default run walks at most this many leaves per claim, evenly spaced through the document
# (every leaf of the small claims); the slow run walks every leaf of every claim.
SAMPLE = 300


def _walks():
    for name in sorted(SMALL):
        if name not in SLOW:
            yield pytest.param(name, False, id=name)
        yield pytest.param(name, True, id=f"{name}-every-leaf", marks=pytest.mark.slow)


@pytest.mark.parametrize("name, every_leaf", list(_walks()))
def test_changing_any_single_leaf_is_caught(name, every_leaf):
    if not available(name):
        pytest.skip(f"{name} needs the {INDEX[name].needs} extra")
    claim = load_claims()[name]
    doc = small_certificate(name)
    assert verify_bytes(canonical_json(doc)).status == OK
    paths = [p for p in leaves({k: doc[k] for k in CLAIM_FIELDS})]
    assert paths
    if not every_leaf:
        paths = paths[:: -(-len(paths) // SAMPLE)]
    accepted = []
    for path in paths:
        bad = with_leaf_changed(doc, path)
        if verify_bytes(canonical_json(seal(bad))).status == OK and not genuine(claim, bad, path):
            accepted.append(path)
    assert not accepted, f"{len(accepted)} of {len(paths)} single-leaf changes verified OK, e.g. {accepted[:3]}"
