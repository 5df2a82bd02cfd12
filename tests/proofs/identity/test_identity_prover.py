"""The prover of identity certificates: what it proves, what it refutes, what it refuses.

Refutations use references that are wrong on purpose, each shown wrong by hand (a transposed
factor; a ReLU that is 1 at 0; a swapped pair), so that a "holds" could only come from a
broken decision procedure.
"""

import pytest
from flint import fmpq

from attncert.constructions import rasp
from attncert.constructions.activations import relu
from attncert.constructions.layout import Construction, Layout
from attncert.constructions.linalg import matmul
from attncert.constructions.rasp.static import ValueDependentSelect, influences, static_selections
from attncert.constructions.simulator import universal
from attncert.proofs.checkers import references
from attncert.proofs.identity.claims import IdentityClaim
from attncert.proofs.identity.compiled import prove as prove_compiled
from attncert.proofs.identity.hierarchy import prove as prove_hierarchy
from attncert.proofs.identity.prove import NoSymbolicRule, SymbolicTask, prove_symbolic


@pytest.mark.parametrize(
    "base, sizes",
    [
        ("transpose", {"r": 2, "c": 3}),
        ("matmul", {"r": 2, "k": 2, "c": 3}),
        ("softmax", {"r": 2, "c": 3}),
        ("relu", {"n": 3}),
        ("maxmin", {"n": 5}),
        ("inverse3", {}),
        ("universal", {"n": 3, "d": 2, "dv": 2}),
        ("multihead", {"n": 2, "d": 2, "dv": 1, "h": 2, "do": 2}),
        ("encoder_layer", {"n": 2, "d": 2, "dv": 1, "h": 1, "f": 2}),
    ],
)
def test_every_construction_is_an_identity(base, sizes):
    doc = IdentityClaim(base).prove(**sizes)
    result = doc["result"]
    assert result["relation"] == "identity" and result["holds"] is True
    assert result["mismatches"] == [] and result["rest_is_zero"] is True
    assert result["statement"].startswith("for all real")
    # inverse3 divides by det M, which has no sign: the one hypothesis; softmax sums are positive
    assert result["hypotheses"] == (1 if base == "inverse3" else 0)
    # the encoder layer's ReLU of exponential expressions is uninterpreted; n f of them
    assert result["uninterpreted"] == (sizes["n"] * sizes["f"] if base == "encoder_layer" else 0)
    if base in ("relu", "maxmin"):
        assert doc["outputs"]["regions"]
    signs = [d["sign"] for d in doc["outputs"]["divisors"]]
    assert signs.count("hypothesis") == result["hypotheses"]


def _task(cons, reference):
    return SymbolicTask.of_construction(cons, reference)


def test_a_wrong_reference_is_refuted():
    wrong = lambda m, dom: references.matmul(m["A"], references.transpose(m["B"]), dom)  # noqa: E731  (B is 2x2)
    proof = prove_symbolic(_task(matmul(2, 2, 2), wrong))
    assert proof.mismatches  # AB != AB^T as functions: entry (0, 0) differs by A01 (B10 - B01)


def test_a_difference_only_at_zero_is_found_on_the_zero_region():
    """relu(x) against "x for x > 0, 1 at 0, 0 below": equal on the open regions, not on x = 0."""

    def wrong(m, dom):
        return [[v if dom.sign(v) > 0 else (dom.one() if dom.sign(v) == 0 else dom.zero()) for v in m["x"][0]]]

    proof = prove_symbolic(_task(relu(3), wrong))
    assert len(proof.mismatches) == 3
    assert prove_symbolic(_task(relu(3), lambda m, dom: [[v if dom.sign(v) >= 0 else dom.zero() for v in m["x"][0]]])).mismatches == []


def test_a_finer_exponential_lattice_restarts_the_evaluation():
    """exp(x) from the construction, exp(x/2)^2 from the reference: the lattice of {x, x/2} is Z x/2."""
    cons = Construction("exp", rasp.numerical(rasp.Map(rasp.fn("exp"), rasp.tokens)), Layout((("x", 1, 1),), (1, 1), 1))
    half = fmpq(1, 2)
    proof = prove_symbolic(_task(cons, lambda m, dom: [[dom.exp(m["x"][0][0] * half) * dom.exp(m["x"][0][0] * half)]]))
    assert proof.mismatches == []
    assert len(proof.field.ring.basis) == 1
    assert proof.field.ring.basis.vectors[0] == proof.field.variable("x_0_0").polynomial() * half


def test_value_dependent_selects_and_maps_without_a_rule_are_refused():
    sel = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT)
    cons = Construction("sorting", rasp.numerical(rasp.Aggregate(sel, rasp.tokens, default=0)), Layout((("x", 1, 2),), (1, 2), 2))
    with pytest.raises(ValueDependentSelect, match="value-dependent"):
        prove_symbolic(_task(cons, lambda m, dom: m["x"]))
    floor = Construction("floor", rasp.numerical(rasp.Map(rasp.fn("floordiv_const", k=2), rasp.tokens)), Layout((("x", 1, 1),), (1, 1), 1))
    with pytest.raises(NoSymbolicRule, match="no symbolic proof"):
        prove_symbolic(_task(floor, lambda m, dom: m["x"]))


def test_static_selections_and_influences_of_u():
    g = universal(2, 2, 1).graph()
    sels = static_selections(g)
    assert sels and all(g.nodes[u]["op"] != "tokens" for s in sels for u in s.get("keys", []) + s.get("queries", []))
    # U(2, 2, 1): X (4 entries), A (4), V (2) at positions 0..9; each output entry reads X, A, V
    infl = influences(g, universal(2, 2, 1).layout.length, g.graph["outputs"]["output"])
    assert infl[0] == frozenset(range(10)) and infl[1] == frozenset(range(10))


def test_hierarchy_and_compiled_identities_hold():
    doc = prove_hierarchy(2, 2, 1)
    assert doc["result"]["holds"] is True and doc["result"]["cases_checked"] == 4
    for of, sizes in (("universal", "n=2,d=2,dv=1"), ("relu", "n=2"), ("inverse3", "")):
        doc = prove_compiled(of, sizes)
        assert doc["result"]["holds"] is True, of
        assert all(h["reads"] for h in doc["construction"]["static_heads"])


def test_an_equality_inside_a_map_is_a_region_question():
    """relu(x) + [x == 0] is 1 at x = 0: the map's x == 0 must split the region x = 0, not be read
    as "x is the zero function" (False), which proved the sum equal to relu(x)."""
    x = rasp.tokens
    is_zero = rasp.numerical(rasp.Map(rasp.fn("indicator"), rasp.Map(rasp.fn("compare_const", op="==", c=0), x)))
    total = rasp.numerical(rasp.SequenceMap(rasp.fn("add"), rasp.numerical(rasp.Map(rasp.fn("relu"), x)), is_zero))
    cons = Construction("relu_plus", total, Layout((("x", 1, 1),), (1, 1), 1))
    proof = prove_symbolic(_task(cons, lambda m, dom: [[dom.relu(m["x"][0][0])]]))
    assert proof.mismatches == [{"row": 0, "col": 0}]


def test_a_division_by_an_uninterpreted_value_is_a_divisor():
    """relu(x) relu(x^2) / relu(x^2) divides by 0 at x = 0: relu(x^2) is no unit, so it is recorded."""
    x = rasp.tokens
    square = rasp.numerical(rasp.SequenceMap(rasp.fn("mul"), x, x))
    r2 = rasp.numerical(rasp.Map(rasp.fn("relu"), square))
    r1 = rasp.numerical(rasp.Map(rasp.fn("relu"), x))
    out = rasp.numerical(rasp.SequenceMap(rasp.fn("div"), rasp.numerical(rasp.SequenceMap(rasp.fn("mul"), r1, r2)), r2))
    cons = Construction("relu_ratio", out, Layout((("x", 1, 1),), (1, 1), 1))
    proof = prove_symbolic(_task(cons, lambda m, dom: [[dom.relu(m["x"][0][0])]]))
    assert proof.mismatches == []
    assert len(proof.field.ring.divisors()) == 1  # relu(x^2): a hypothesis of the statement
    from attncert.proofs.identity.witness import Witness

    (divisor,) = Witness(proof.field.ring).divisors_json()
    assert divisor["sign"] == "hypothesis"


def test_prove_for_all_on_the_command_line(tmp_path):
    import subprocess
    import sys

    cli = [sys.executable, "-m", "attncert"]
    out = tmp_path / "u.json"
    done = subprocess.run(cli + ["prove", "universal", "--for-all", "--n", "2", "--d", "2", "--dv", "1", "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "universal_identity" in done.stdout and "identity" in done.stdout
    done = subprocess.run(cli + ["verify", str(out)], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("OK"), done.stdout + done.stderr
    # a seed means nothing for all inputs: one line, exit 2, nothing written
    bad = tmp_path / "x.json"
    done = subprocess.run(cli + ["prove", "universal", "--for-all", "--seed", "3", "--out", str(bad)], capture_output=True, text=True)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "--seed" in done.stderr
    assert not bad.exists()


def test_a_for_all_proof_over_its_terms_is_refused_up_front(tmp_path):
    """multihead(3, 2, 2, 2, 3)'s estimate, by hand from proofs.core.cost.identity_terms' formula: each head
    2 n^2 d^2 + 2 n^2 d d_v = 144 terms, two heads 288, and the W_O stage 2 n d_o h d_v n d = 432: 720."""
    import subprocess
    import sys

    from attncert.proofs.core.cost import identity_terms

    assert identity_terms("multihead", {"n": 3, "d": 2, "dv": 2, "h": 2, "do": 3}) == (3 * 2 + 2 * 4 + 2 * 4 + 2 * 2 * 3, 720)
    out = tmp_path / "m.json"
    cmd = [sys.executable, "-m", "attncert", "prove", "multihead", "--for-all", "--max-symbolic-terms", "719", "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 2 and not out.exists()
    (line,) = done.stderr.strip().splitlines()
    assert "about 720 polynomial terms" in line and "--max-symbolic-terms" in line
