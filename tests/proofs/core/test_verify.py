"""attncert verify: valid certificates pass; tampering and hostile documents are caught."""

import copy
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.core.certify import CLAIM_FIELDS
from attncert.proofs.core.registry import load_claims
from attncert.proofs.core.verify import BAD, OK, REJECTED, verify_bytes


def make(claim, **params):
    return seal(load_claims()[claim].prove(**params))


@pytest.fixture(scope="module")
def certs():
    return {
        "transpose": make("transpose", r=2, c=2, seed=1),
        "universal": make("universal", n=2, d=1, dv=1, seed=2),
        "relu": make("relu", n=2, seed=3, domain="QQ"),
    }


def status(doc, reseal=False):
    data = canonical_json(seal(doc) if reseal else doc)
    return verify_bytes(data).status


def number_paths(obj, path=()):
    """Paths to every rational string in a JSON value."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from number_paths(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from number_paths(v, path + (i,))
    elif isinstance(obj, str) and obj.lstrip("-").split("/")[0].isdigit():
        yield path


def set_path(doc, path, value):
    doc = copy.deepcopy(doc)
    node = doc
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return doc


def bump(s: str) -> str:
    num, _, den = s.partition("/")
    return f"{int(num) + 1}/{den}" if den else str(int(num) + 1)


@pytest.mark.parametrize("claim", ["transpose", "universal", "relu"])
def test_valid_certificates_verify(certs, claim):
    assert status(certs[claim]) == OK


@pytest.mark.parametrize("claim", ["transpose", "universal"])
@pytest.mark.parametrize("part", ["inputs", "outputs", "reference"])
def test_changing_any_single_number_is_detected(certs, claim, part):
    doc = certs[claim]
    paths = list(number_paths(doc[part], (part,)))
    assert paths
    for path in paths:
        node = doc
        for p in path:
            node = node[p]
        bad = set_path(doc, path, bump(node))
        assert status(bad) == REJECTED, path  # the stale hash catches it
        assert status(bad, reseal=True) != OK, path  # and so does the recomputation


def _rewire(g):
    """Point the first edge at another source node."""
    e = g["edges"][0]
    e["source"] = next(n["id"] for n in g["nodes"] if n["id"] not in (e["source"], e["target"]))


def test_changing_the_graph_is_detected(certs):
    doc = certs["transpose"]
    g = doc["construction"]["graph"]
    maps = [i for i, n in enumerate(g["nodes"]) if n["op"] == "map"]
    selects = [i for i, n in enumerate(g["nodes"]) if n["op"] == "select"]
    mutations = [
        ("edge", lambda d: _rewire(d["construction"]["graph"])),
        ("op", lambda d: d["construction"]["graph"]["nodes"][maps[0]].update(op="sequence_map")),
        ("param", lambda d: d["construction"]["graph"]["nodes"][maps[0]]["params"]["fn"]["params"]["coeffs"]["list"][0].update(q="2")),
        ("predicate", lambda d: d["construction"]["graph"]["nodes"][selects[0]]["params"].update(predicate="LEQ")),
        ("registry", lambda d: d["construction"]["graph"]["nodes"][maps[0]]["params"]["fn"].update(name="os.system")),
    ]
    for what, mutate in mutations:
        bad = copy.deepcopy(doc)
        mutate(bad)
        assert status(bad) == REJECTED, what
        assert status(bad, reseal=True) != OK, what


HOSTILE = {
    "truncated": lambda good: good[: len(good) // 2],
    "not an object": lambda good: b"[1, 2, 3]",
    "deep nesting": lambda good: b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "million-digit integer": lambda good: good.replace(b'"params":{', b'"params":{"x":' + b"7" * 1_000_000 + b",", 1),
    "NaN": lambda good: good.replace(b'"params":{', b'"params":{"x":NaN,', 1),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_bytes_exit_2_with_one_line(certs, tmp_path, name):
    f = tmp_path / "c.json"
    f.write_bytes(HOSTILE[name](canonical_json(certs["relu"])))
    r = subprocess.run([sys.executable, "-m", "attncert", "verify", str(f)], capture_output=True, text=True)
    assert r.returncode == 2, (name, r.stdout, r.stderr)
    assert len(r.stdout.strip().splitlines()) == 1 and "Traceback" not in r.stdout + r.stderr


@pytest.mark.parametrize(
    "name, mutate",
    [
        ("wrong type", lambda d: d["inputs"].update(x="not a matrix")),
        ("huge digits", lambda d: d["inputs"]["x"][0].__setitem__(0, "1" * 20_000)),
        ("exponent 10^9", lambda d: d["construction"]["graph"]["nodes"][0]["params"].update(fill={"ee": {"num": [["1000000000", "1"]], "den": [["0", "1"]]}})),
        ("unknown claim", lambda d: d.update(claim="rm -rf")),
        ("function outside the registry", lambda d: d["construction"]["graph"]["nodes"][-1]["params"]["fn"].update(name="__import__")),
    ],
)
def test_hostile_but_sealed_documents_are_bad_input(certs, name, mutate):
    doc = copy.deepcopy(certs["relu"])
    mutate(doc)
    assert status(doc, reseal=True) in (BAD, REJECTED), name


def test_exponent_limit_is_enforced(certs):
    doc = copy.deepcopy(certs["universal"])
    doc["outputs"]["output"][0][0] = {"num": [["1000000000", "1"]], "den": [["0", "1"]]}
    o = verify_bytes(canonical_json(seal(doc)))
    assert o.status == BAD and "exponent" in o.reason


def test_cli_verify_exit_codes(certs, tmp_path):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_bytes(canonical_json(certs["transpose"]))
    wrong = copy.deepcopy(certs["transpose"])
    wrong["outputs"]["output"][0][0] = bump(wrong["outputs"]["output"][0][0])
    bad.write_bytes(canonical_json(seal(wrong)))
    run = lambda *f: subprocess.run([sys.executable, "-m", "attncert", "verify", *map(str, f)], capture_output=True, text=True)  # noqa: E731
    assert run(good).returncode == 0
    r = run(good, bad)
    lines = r.stdout.splitlines()
    assert r.returncode == 3 and len(lines) == 3 and lines[0].startswith("OK ") and lines[1].startswith("REJECTED ")
    assert lines[2].startswith("2 certificates: 1 genuine and holding (OK), 0 genuine and not holding (DOES-NOT-HOLD), 0 genuine and not proven (NOT-PROVEN), 1 rejected (REJECTED)")


# --- fuzzing ------------------------------------------------------------------------------------

_atoms = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.sampled_from(["1/0", "nan", "-0", "1e9", "2/4", "", "x", "0", "1", "-1/3", "10000000000/3", "EQ", "map", "add"]),
)
json_values = st.one_of(_atoms, st.lists(_atoms, max_size=3), st.dictionaries(st.sampled_from(["q", "s", "num", "den", "name"]), _atoms, max_size=2))


def all_paths(obj, path=()):
    yield path
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from all_paths(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from all_paths(v, path + (i,))


@pytest.fixture(scope="module")
def fuzz_base():
    doc = make("relu", n=1, seed=0, domain="QQ")
    return doc, [p for p in all_paths(doc) if p]


def _fuzz_settings(examples: int):
    return settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)


@_fuzz_settings(2_000)
@given(st.data())
def test_fuzz_mutated_certificates_never_crash_or_pass(fuzz_base, data):
    mutate_and_verify(fuzz_base, data)


@pytest.mark.slow
@_fuzz_settings(20_000)
@given(st.data())
def test_fuzz_mutated_certificates_at_length(fuzz_base, data):
    mutate_and_verify(fuzz_base, data)


def mutate_and_verify(fuzz_base, data) -> None:
    """One mutation (a field replaced by a hostile JSON value, or deleted), resealed or not: verify
    answers OK, REJECTED or BAD in one line, and OK only when no claim field changed."""
    doc, paths = fuzz_base
    path = data.draw(st.sampled_from(paths))
    action = data.draw(st.sampled_from(["replace", "delete"]))
    mutated = copy.deepcopy(doc)
    node = mutated
    for p in path[:-1]:
        node = node[p]
    if action == "delete":
        del node[path[-1]]
    else:
        node[path[-1]] = data.draw(json_values)
    reseal = data.draw(st.booleans())
    out = verify_bytes(canonical_json(seal(mutated) if reseal else mutated))
    assert out.status in (OK, REJECTED, BAD) and "\n" not in out.reason
    if out.status == OK:  # only a mutation that changed no claim field may pass (provenance is informational)
        assert reseal or mutated == doc
        assert {k: mutated.get(k) for k in CLAIM_FIELDS} == {k: doc[k] for k in CLAIM_FIELDS}
