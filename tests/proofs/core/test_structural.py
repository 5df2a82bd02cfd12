"""Structural forgeries: change the shape of a certificate, not a value, and verify says REJECTED or BAD.

tests/proofs/core/test_every_leaf.py changes each value. This walk changes the structure of the claim fields
(``CLAIM_FIELDS``) of every claim's certificate, at the sizes of that walk, and of thirteen more whose
rebuild reuses what they record (:data:`VARIANTS`: a model file's weights, a compositional proof's tables,
tracr programs and models, costs, texts, families and inputs read from files):

* every list: one element deleted, one duplicated (the copy next to it), two distinct neighbours
  swapped (a class of a decoder, an entry of a table, a head, a column label, a region, a leaf);
* every object: an unknown member added, one member dropped.

The element or member is chosen from the list's path (a stable hash), so that the many lists of one
kind (the rows of a matrix, the nodes of a graph) are changed at different places. Each changed
document is resealed as a forger would (:func:`resealed`: the digests of recorded content computed
again, then the sha256) and must be REJECTED or BAD, unless :data:`ALLOWED` says why the claim it states
is still exactly true: the same claim of the same object (a mapping listed in another order, say), not
tried; or a claim about another object (a recorded model with one weight moved or deleted), tried, and
an OK must then be confirmed apart from attncert (tracr running the changed weights).

The default run tries up to :data:`SAMPLE` changes of each quick certificate; the slow run (CI) every
change of every certificate, at most :data:`MOST` where a certificate has more, shared evenly among the
kinds and evenly spaced through the document.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import itertools
import json
import re
import zlib
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pytest

from attncert.exact.canonical import canonical_json, json_equal
from attncert.exact.certificate import seal
from attncert.proofs.core.certify import CLAIM_FIELDS
from attncert.proofs.cli import main
from attncert.proofs.core.registry import INDEX, load_claims
from attncert.proofs.core.verify import OK, verify_bytes
from tests.proofs.core.test_every_leaf import SLOW, SMALL, small_certificate

ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Change:
    """One structural change at ``path``: ``delete``, ``duplicate`` (the copy follows it) or ``swap``
    (with the next element) the element ``at`` of a list; ``add`` the member ``unknown`` to an object,
    or ``drop`` its member ``at``."""

    path: tuple
    kind: str
    at: int | str | None = None

    def applied(self, doc: dict) -> dict:
        changed = copy.deepcopy(doc)
        node = changed
        for key in self.path:
            node = node[key]
        if self.kind == "add":
            node["unknown"] = 0
        elif self.kind in ("drop", "delete"):
            del node[self.at]
        elif self.kind == "duplicate":
            node.insert(self.at, copy.deepcopy(node[self.at]))
        else:
            node[self.at], node[self.at + 1] = node[self.at + 1], node[self.at]
        return changed

    def __str__(self) -> str:
        return f"{self.kind} {self.at!r} at {'.'.join(map(str, self.path))}"


def containers(obj: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """(path, value) of every list and object in obj, obj included, in document order."""
    if isinstance(obj, (dict, list)):
        yield path, obj
        for key, v in obj.items() if isinstance(obj, dict) else enumerate(obj):
            yield from containers(v, path + (key,))


def changes(doc: dict) -> list[Change]:
    """Every structural change of the claim fields (module docstring), in document order."""
    out = []
    for path, node in containers({k: doc[k] for k in CLAIM_FIELDS}):
        if not path:
            continue  # the document's own fields are pinned by the format (differing_fields)
        pick = zlib.crc32(repr(path).encode())
        if isinstance(node, dict):
            out.append(Change(path, "add"))
            if node:
                out.append(Change(path, "drop", sorted(node)[pick % len(node)]))
            continue
        if node:
            out += [Change(path, "delete", pick % len(node)), Change(path, "duplicate", pick % len(node))]
        distinct = [i for i in range(len(node) - 1) if not json_equal(node[i], node[i + 1])]
        if distinct:
            out.append(Change(path, "swap", distinct[pick % len(distinct)]))
    return out


def _model_file(tmp: Path) -> dict[str, Any]:
    out = tmp / "matmul.json"
    assert main(["compile", "matmul", "--sizes", "r=1,k=2,c=1", "--out", str(out)]) == 0
    return {"of": "matmul", "sizes": "r=1,k=2,c=1", "model": str(out)}


def _problem_files(tmp: Path) -> dict[str, Any]:
    (tmp / "C.json").write_text('[[0, "1/3", 0.5], [1, 0.25, "2e-1"]]')
    (tmp / "a.csv").write_text("1/2,1/2\n")
    (tmp / "b.csv").write_text("0.25\n0.25\n1/2\n")
    n = load_claims()["sinkhorn_convergence"].defaults()["n"]  # the sizes are the files' (SMALL's n is for the random cost)
    return {"n": n, "cost": str(tmp / "C.json"), "a": str(tmp / "a.csv"), "b": str(tmp / "b.csv")}


MU = {"x": [["0"], ["1/2"]], "a": ["1/3", "2/3"]}
NU = {"x": [["-1"], ["1/4"], ["1"]], "a": ["1/2", "1/4", "1/4"]}


def _texts_file(tmp: Path) -> dict[str, Any]:
    (tmp / "texts.json").write_text(json.dumps({"mu": MU, "nu": NU}))
    return {"n": 2, "m": 3, "texts": str(tmp / "texts.json")}


def _family_file(tmp: Path) -> dict[str, Any]:
    (tmp / "family.json").write_text(json.dumps({"fit": [{"mu": MU, "nu": NU}], "held_out": [{"mu": NU, "nu": MU}]}))
    return {"family": str(tmp / "family.json")}


def _inputs_file(tmp: Path) -> dict[str, Any]:
    (tmp / "in.json").write_text(json.dumps({"A": [["1/10", "1/3"]], "B": [["1/5"], ["3"]]}))
    return {"inputs": str(tmp / "in.json")}


PROGRAM = str(ROOT / "examples" / "prog.rasp")


@dataclass(frozen=True)
class Certificate:
    """A certificate the walk changes: its claim, its parameters beside SMALL's (given a directory for
    the files they name), and whether it needs the tracr extra."""

    claim: str
    params: Callable[[Path], dict[str, Any]] = lambda _: {}
    tracr: bool = False


#: Certificates whose rebuild reuses what they record, beside each claim's own at the sizes of SMALL.
VARIANTS: dict[str, Certificate] = {
    "compiled-model-file": Certificate("compiled", _model_file),
    "compiled_program-compositional": Certificate("compiled_program", lambda _: {"file": PROGRAM, "expr": "frac_a", "lengths": "every", "method": "compositional"}),
    "compiled_program-causal": Certificate("compiled_program", lambda _: {"file": PROGRAM, "expr": "frac_a", "lengths": "every", "causal": 1}),
    "compiled_program-tracr": Certificate("compiled_program", lambda _: {"program": "tests.proofs.tracr.programs:frac_prevs", "vocab": "x,y"}, tracr=True),
    "compiled_program-tracr-compositional": Certificate(
        "compiled_program",
        lambda _: {"program": "tests.proofs.tracr.programs:sort_unique", "vocab": "1,2,3", "max_seq_len": 3, "lengths": "every", "method": "compositional"},
        tracr=True,
    ),
    "sinkhorn_convergence-files": Certificate("sinkhorn_convergence", _problem_files),
    "sinkhorn_transformer-texts": Certificate("sinkhorn_transformer", _texts_file),
    "sinkhorn_transformer-layer-norm": Certificate("sinkhorn_transformer", lambda _: {"layers": 2, "layer_norm": 1}),
    "sinkhorn_universality-family": Certificate("sinkhorn_universality", _family_file),
    "matmul-inputs-file": Certificate("matmul", _inputs_file),
    "tracr_model-numerical": Certificate("tracr_model", lambda _: {"program": "tests.proofs.tracr.programs:frac_prevs", "vocab": "x,y"}, tracr=True),
    "tracr_model-causal": Certificate("tracr_model", lambda _: {"program": "tests.proofs.tracr.programs:frac_prevs", "vocab": "x,y", "causal": 1}, tracr=True),
    "tracr_model-histogram": Certificate("tracr_model", lambda _: {"program": "tests.proofs.tracr.programs:hist"}, tracr=True),
}
#: Each claim's certificate at the sizes of SMALL, under the claim's name, and the variants.
CERTIFICATES: dict[str, Certificate] = {name: Certificate(name, tracr=INDEX[name].needs == "tracr") for name in SMALL} | VARIANTS


Key = str | int | tuple


@dataclass(frozen=True)
class Pattern:
    """Changes of the given kinds at the paths that match ``path`` in the named certificates: a key or index
    of the pattern matches itself, ``"*"`` any, a tuple any of its members; ``when`` narrows it further."""

    certificates: frozenset[str]
    path: tuple[Key, ...]
    kinds: frozenset[str]
    reason: str
    when: Callable[[dict, Change], bool] = lambda doc, change: True
    #: For a change that gives another object of the claim (other weights): ``confirm(name, changed)`` decides the
    #: changed document's claim apart from attncert, and verify's OK must agree. Without it the change is not tried.
    confirm: Callable[[str, dict], bool] | None = None

    def matches(self, certificate: str, doc: dict, change: Change) -> bool:
        return (
            certificate in self.certificates
            and change.kind in self.kinds
            and len(change.path) == len(self.path)
            and all(p == "*" or p == k or isinstance(p, tuple) and k in p for p, k in zip(self.path, change.path))
            and self.when(doc, change)
        )


def outside_the_output(doc: dict, change: Change) -> bool:
    """Whether the two residual labels a swap exchanges both name columns outside a tracr model's output
    space (neither is the output's label, nor OUTPUT:VALUE)."""
    model = doc["construction"]["model"]
    out = model["output"]["label"]
    return all(label != out and not label.startswith(out + ":") for label in model["residual"][change.at : change.at + 2])


def weights(record: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """A recorded tracr matrix (shape, nonzero [row, column, weight], nonzero [column, bias]) as float32 arrays."""
    w = np.zeros(record["shape"], dtype=np.float32)
    b = np.zeros(record["shape"][1], dtype=np.float32)
    for i, j, x in record["w"]:
        w[i, j] = float(Fraction(x))
    for j, x in record["b"]:
        b[j] = float(Fraction(x))
    return w, b


def tracr_decodes_every_input(name: str, changed: dict) -> bool:
    """Whether tracr's own model, the program compiled again by tracr with the recorded weights in place of its
    parameters, decodes every input of every length to the RASP output the certificate records (categorical:
    that value; numerical: within the tolerance): the claim of the changed certificate, decided by tracr."""
    from tracr.compiler import compiling

    from attncert.proofs.core.user_programs import call_program, parse_vocab

    params, model = changed["params"], changed["construction"]["model"]
    program = CERTIFICATES[name].params(Path()).get("program", load_claims()["tracr_model"].defaults()["program"])
    vocab = parse_vocab(params["vocab"])
    assembled = compiling.compile_rasp_to_model(
        call_program(program), vocab=set(vocab), max_seq_len=params["max_seq_len"], causal=bool(params["causal"]), compiler_bos=params["bos"]
    )
    # The same columns in the same order: the labels alike but for the ids tracr numbers each new program's SOps with
    # (tracr's length_5 is recorded as length: attncert drops tracr's {name}_{id} suffix, docs/tracr.md).
    assert [re.sub(r"_[0-9]+", "", str(label)) for label in assembled.residual_labels] == [re.sub(r"_[0-9]+", "", label) for label in model["residual"]]
    for key in assembled.params:
        part = key.rpartition("/")[2]
        if key in ("token_embed", "pos_embed"):
            assembled.params[key] = {"embeddings": weights(model[key])[0]}
        else:
            w, b = weights(model["layers"][int(key.split("/")[1].removeprefix("layer_"))][part])
            assembled.params[key] = {"w": w, "b": b}
    values = changed["reference"]["rasp"]["values"]
    tolerance = Fraction(params["tolerance"]) if model["output"]["encoding"] == "numerical" else Fraction(0)
    for n, outputs in zip(range(1, params["max_seq_len"] + 1), changed["reference"]["rasp"]["outputs"]):
        for xs, want in zip(itertools.product(vocab, repeat=n), outputs):
            got = assembled.apply([params["bos"], *xs]).decoded[1:]
            if len(got) != n or not all(decodes_to(g, values[i], tolerance) for g, i in zip(got, want)):
                return False
    return True


def decodes_to(decoded: Any, tagged: Any, tolerance: Fraction) -> bool:
    """Whether tracr's decoded value is the tagged RASP value ({"s": ...}, {"b": ...}, {"q": "p/q"}): the same
    token or truth value, or a number within the tolerance (0 for a categorical class)."""
    ((tag, body),) = tagged.items()
    if tag in ("s", "b"):
        return type(decoded) is type(body) and decoded == body
    return not isinstance(decoded, (bool, str)) and decoded is not None and abs(Fraction(float(decoded)) - Fraction(body)) <= tolerance


def exact_forward_gives_the_reference(name: str, changed: dict) -> bool:
    """Whether the recorded weights, run by this test's own exact forward pass of the model class the certificate
    states (positions 0..N, BOS at 0; the positional table plus each token in the token column; every head of a
    layer reads the residual before it and adds the mean of W_OV^T x_j over the keys j of maximal score
    x_i^T W_QK x_j; then the MLP's stages of affine maps and units, and its affine output), map the recorded
    inputs to the recorded reference, zeros after it: the claim's output, decided apart from attncert's two forward
    passes (its SOp-by-SOp part is the comparison the rebuild runs)."""
    cons, model = changed["construction"], changed["construction"]["model"]
    N, width = cons["layout"]["length"], len(model["basis"])
    tokens = [Fraction(v) for spec in cons["layout"]["inputs"] for row in changed["inputs"][spec["name"]] for v in row]
    x = [[Fraction(0)] * width for _ in range(N + 1)]  # x[position][column]
    for c, entries in model["positional"].items():
        for p, v in entries:
            x[p][int(c)] += Fraction(v)
    (token_column,) = model["token_columns"]
    for t, v in enumerate(tokens):
        x[t + 1][token_column] += v
    units = {"product": lambda a, b: a * b, "relu": lambda a: max(a, Fraction(0)), "reciprocal": lambda a: 1 / a}
    affine = lambda a, ins: sum((ins[i] * Fraction(w) for i, w in a["terms"]), Fraction(a["bias"]))  # noqa: E731
    for layer in model["layers"]:
        heads = [[Fraction(0)] * width for _ in range(N + 1)]
        for head in layer["heads"]:
            for i in range(N + 1):
                scores = [sum(x[i][a] * Fraction(w) * x[j][b] for a, b, w in head["qk"]) for j in range(N + 1)]
                keys = [j for j, score in enumerate(scores) if score == max(scores)]
                for a, b, w in head["ov"]:
                    heads[i][b] += sum(x[j][a] for j in keys) * Fraction(w) / len(keys)
        x = [[u + v for u, v in zip(row, added)] for row, added in zip(x, heads)]
        for row in x if layer["mlp"] is not None else []:
            ins = row
            for stage in layer["mlp"]["stages"]:
                ins = [units[u["unit"]](*(affine(a, ins) for a in u["args"])) for u in stage]
            for c, a in [(c, affine(a, ins)) for c, a in layer["mlp"]["out"]]:
                row[c] += a
    (output,) = model["outputs"]["output"]
    got = [x[p][output] for p in range(1, N + 1)]
    want = [Fraction(v) for row in changed["reference"]["output"] for v in row]
    return got == want + [Fraction(0)] * (N - len(want))


TRACR_MODELS = frozenset(name for name, c in CERTIFICATES.items() if c.claim == "tracr_model")
MODEL_FILE = frozenset({"compiled-model-file"})
OTHER_WEIGHTS = (
    "the claim is about the recorded model, so the changed document is a certificate of another model; it may "
    "verify where that model is right on every input, which tracr itself, running the changed weights, must confirm"
)

#: Structural changes that leave the claim exactly true, and why. Verify may say OK to them: a change without
#: ``confirm`` states the same claim of the same object and is not tried; one with it is tried, and an OK must be
#: confirmed.
ALLOWED: list[Pattern] = [
    # tracr_model: the recorded model is the subject of the claim (construction.model, named by model_sha256).
    Pattern(
        TRACR_MODELS,
        ("construction", "model", ("token_embed", "pos_embed"), "w"),
        frozenset({"delete", "swap"}),
        f"an embedding entry [row, column, weight] deleted (the weight is then 0) or two entries reordered: {OTHER_WEIGHTS}",
        confirm=tracr_decodes_every_input,
    ),
    Pattern(
        TRACR_MODELS,
        ("construction", "model", "layers", "*", "*", "w"),
        frozenset({"delete", "swap"}),
        f"a layer's weight entry deleted (the weight is then 0) or two entries reordered: {OTHER_WEIGHTS}",
        confirm=tracr_decodes_every_input,
    ),
    Pattern(
        TRACR_MODELS,
        ("construction", "model", ("token_embed", "pos_embed"), "w", "*"),
        frozenset({"swap"}),
        f"an entry's row and column exchanged, which moves one weight: {OTHER_WEIGHTS}",
        confirm=tracr_decodes_every_input,
    ),
    Pattern(
        TRACR_MODELS,
        ("construction", "model", "layers", "*", "*", "w", "*"),
        frozenset({"swap"}),
        f"an entry's row and column exchanged, which moves one weight: {OTHER_WEIGHTS}",
        confirm=tracr_decodes_every_input,
    ),
    Pattern(
        TRACR_MODELS,
        ("construction", "model", "tokens"),
        frozenset({"swap", "duplicate"}),
        "the token rows are a mapping from token to embedding row, recorded as [token, row] pairs: another order, "
        "or the same pair twice, states the same mapping, so the model is the same",
    ),
    Pattern(
        TRACR_MODELS,
        ("construction", "model", "output", "classes"),
        frozenset({"swap"}),
        "the output classes are a mapping from value to residual column: tracr's argmax over the output space and "
        "the checker's separated argmax do not depend on the order they are listed in",
    ),
    Pattern(
        TRACR_MODELS,
        ("construction", "model", "residual"),
        frozenset({"swap"}),
        "two labels of columns outside the output space exchanged: such a label only names a column (the forward "
        "pass reads the weights, the decoder the output's OUTPUT:VALUE columns alone), so the model decodes as before",
        outside_the_output,
    ),
    # compiled --model FILE: the file's weights are the subject of the claim; the residual layout is derived.
    Pattern(
        MODEL_FILE,
        ("construction", "model", "layers", "*", "heads"),
        frozenset({"swap"}),
        "two heads of a layer exchanged: every head reads the residual before the layer and their outputs are added, "
        "so their order is not part of the model",
    ),
    Pattern(
        MODEL_FILE,
        ("construction", "model", "layers", "*", "heads", "*", ("qk", "ov")),
        frozenset({"swap"}),
        "two entries [row, column, weight] of a sparse W_QK or W_OV reordered: the same matrix",
    ),
    Pattern(
        MODEL_FILE,
        ("construction", "model", "layers", "*", "heads", "*", ("qk", "ov"), "*"),
        frozenset({"swap"}),
        "an entry's row and column exchanged, which moves one weight: the claim is about the file's weights, so the "
        "changed document is a certificate of other weights; it may verify where they compute the construction on "
        "the recorded input, which the test's own exact forward pass must confirm",
        confirm=exact_forward_gives_the_reference,
    ),
    Pattern(
        MODEL_FILE,
        ("construction", "model", "layers", "*", "mlp", "stages", "*", "*", "args"),
        frozenset({"swap"}),
        "the two factors of a product unit exchanged: x y = y x, the same model",
    ),
]

def certificate(name: str, tmp: Path) -> dict:
    """The sealed certificate ``name`` of :data:`CERTIFICATES` (skipped without the extra it needs)."""
    c = CERTIFICATES[name]
    if c.tracr and importlib.util.find_spec("tracr") is None:
        pytest.skip(f"{name} needs the tracr extra")
    return small_certificate(c.claim, **c.params(tmp))


def test_every_claim_and_variant_is_walked():
    assert set(SMALL) == set(load_claims()) and set(VARIANTS).isdisjoint(SMALL)
    assert all(v.claim in SMALL for v in VARIANTS.values())


def test_the_changes_of_a_small_document():
    doc = {k: {} for k in CLAIM_FIELDS} | {"inputs": {"x": [1, 2, 2]}}
    found = changes(doc)
    by_kind = {(c.path, c.kind): c for c in found}
    # every object gets an unknown member, every non-empty one loses one of its members
    assert {c.path for c in found if c.kind == "add"} == {(k,) for k in CLAIM_FIELDS} | {("inputs",)}
    assert by_kind[("inputs",), "drop"].at == "x" and ("params", "drop") not in by_kind
    # the list: one element deleted and one duplicated, and the one distinct pair of neighbours swapped
    assert by_kind[("inputs", "x"), "delete"].at in (0, 1, 2) and by_kind[("inputs", "x"), "swap"].at == 0
    i = by_kind[("inputs", "x"), "duplicate"].at
    assert by_kind[("inputs", "x"), "duplicate"].applied(doc)["inputs"]["x"] == [1, 2, 2][: i + 1] + [1, 2, 2][i:]
    assert by_kind[("inputs", "x"), "swap"].applied(doc)["inputs"]["x"] == [2, 1, 2]
    assert by_kind[("inputs",), "add"].applied(doc)["inputs"] == {"x": [1, 2, 2], "unknown": 0}
    assert doc["inputs"] == {"x": [1, 2, 2]}  # a change is made on a copy


#: Changes tried per certificate in the default run, evenly spaced through the document.
SAMPLE = 60
#: At most this many per certificate in the slow run, evenly spaced (every change of all but the largest).
MOST = 1200
#: Certificates left out of the default run: SLOW's (test_every_leaf), the tracr ones, and the larger variants.
SLOW_HERE = SLOW | {name for name, c in CERTIFICATES.items() if c.tracr} | {"sinkhorn_universality-family", "sinkhorn_transformer-layer-norm"}


def sample(found: list[Change], most: int) -> list[Change]:
    """All the changes, or where there are more than ``most``, ``most`` of them shared out evenly among the
    kinds (a kind with fewer than its share gives all it has), each kind's evenly spaced through the document."""
    if len(found) <= most:
        return found
    kinds = sorted({c.kind for c in found}, key=lambda k: sum(c.kind == k for c in found))
    chosen: set[Change] = set()
    for i, kind in enumerate(kinds):
        of_kind = [c for c in found if c.kind == kind]
        share = (most - len(chosen)) // (len(kinds) - i)
        chosen.update(of_kind if len(of_kind) <= share else [of_kind[j * len(of_kind) // share] for j in range(share)])
    return [c for c in found if c in chosen]


def resealed(doc: dict) -> bytes:
    """The document as a forger would send it after changing it: every digest of recorded content made
    right again, then sealed. The digests are ``construction.model_sha256`` (the sha256 of the model's
    canonical JSON, with the newline ``attncert compile`` writes after it, none after a tracr model
    record) and the sha256 of each RASP text ``rasp_program`` records."""
    forged = copy.deepcopy(doc)
    cons, given = forged.get("construction"), forged.get("inputs")
    if isinstance(cons, dict) and isinstance(cons.get("model"), dict) and "model_sha256" in cons:
        tail = b"" if forged.get("claim") == "tracr_model" else b"\n"
        cons["model_sha256"] = hashlib.sha256(canonical_json(cons["model"]) + tail).hexdigest()
    if forged.get("claim") == "rasp_program" and isinstance(given, dict):
        texts = [given.get("source")] + (given["loaded"] if isinstance(given.get("loaded"), list) else [])
        for entry in texts:
            if isinstance(entry, dict) and "sha256" in entry and isinstance(entry.get("text"), str):
                entry["sha256"] = hashlib.sha256(entry["text"].encode("utf-8")).hexdigest()
    return canonical_json(seal(forged))


def status(doc: dict) -> str:
    """What verify says of the document, resealed as a forger would."""
    return verify_bytes(resealed(doc)).status


def accepted(name: str, doc: dict, tried: list[Change]) -> list[Change]:
    """The changes verify says OK to that :data:`ALLOWED` does not account for."""
    found = []
    for change in tried:
        rule = next((p for p in ALLOWED if p.matches(name, doc, change)), None)
        if rule is not None and rule.confirm is None:
            continue  # the same claim of the same object: the rule says why
        changed = change.applied(doc)
        if status(changed) == OK and (rule is None or not rule.confirm(name, changed)):
            found.append(change)
    return found


def _walks() -> Iterator[Any]:
    for name in sorted(CERTIFICATES):
        if name not in SLOW_HERE:
            yield pytest.param(name, SAMPLE, id=name)
        yield pytest.param(name, MOST, id=f"{name}-every-change", marks=pytest.mark.slow)


@pytest.mark.parametrize("name, most", list(_walks()))
def test_a_structural_change_is_caught(name, most, tmp_path):
    doc = certificate(name, tmp_path)
    assert status(doc) == OK
    tried = sample(changes(doc), most)
    assert {c.kind for c in tried} >= {"add", "drop", "delete", "duplicate"}
    wrong = accepted(name, doc, tried)
    assert not wrong, f"{len(wrong)} of {len(tried)} structural changes verified OK: " + "; ".join(map(str, wrong[:5]))


@pytest.mark.slow
def test_tracr_confirms_the_recorded_model_and_refutes_a_broken_one(tmp_path):
    """The confirmation of a weight change is not vacuous: tracr, running the recorded weights, decodes every input
    of the certificate right, and with the MLP's output weights deleted (the width no longer reaches the output
    columns) it does not."""
    doc = certificate("tracr_model-histogram", tmp_path)
    assert tracr_decodes_every_input("tracr_model-histogram", doc)
    broken = copy.deepcopy(doc)
    broken["construction"]["model"]["layers"][-1]["linear_2"]["w"] = []
    assert not tracr_decodes_every_input("tracr_model-histogram", broken)
    assert status(broken) != OK


def test_the_exact_forward_pass_confirms_the_recorded_weights_and_refutes_others(tmp_path):
    """The confirmation of a moved weight in a model file is not vacuous: the test's own forward pass maps the
    recorded inputs to the reference with the file's weights, and not with the last MLP's output doubled."""
    doc = certificate("compiled-model-file", tmp_path)
    assert exact_forward_gives_the_reference("compiled-model-file", doc)
    doubled = copy.deepcopy(doc)
    out = doubled["construction"]["model"]["layers"][-1]["mlp"]["out"][0][1]
    out["terms"] = [[i, str(2 * Fraction(w))] for i, w in out["terms"]]
    assert not exact_forward_gives_the_reference("compiled-model-file", doubled)
    assert status(doubled) != OK
