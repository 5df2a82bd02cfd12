"""A fresh hostile audit of the every-size theorems (docs/every-size.md): forged certificates against
``attncert verify``.

Each attack starts from an ordinary proof (``EverySizeClaim(base).prove()``), edits the JSON so that it
stays well-formed and self-consistent where the attack needs it (a fact's SMT-LIB written again by the
checker's own writer from its changed hypotheses and goal, the counts in ``result`` updated), and reseals
it (:func:`exact.certificate.seal`). Refused attacks assert the refusal twice where it applies: the
independent checker alone (:func:`check_every_size`) finds a problem, and the whole verification
(checker, then rebuild) does not say OK. The two attacks that succeeded when this audit was written (facts
cvc5 cannot decide, every one sent to it before citations were checked; a product of size expressions
multiplied out before its size was bounded) are closed and are plain tests now.

Where an attack's claim is false, its falsity is derived from the definitions: the transpose of a
concrete matrix computed here by hand, against what the forged template's index map reads.
"""

from __future__ import annotations

import copy
import json
import time
from typing import Any

import pytest

from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.checkers.every_size import check_every_size, smtlib
from attncert.proofs.checkers.every_size.sizes import parse_rel
from attncert.proofs.core.verify import OK, verify_bytes
from attncert.proofs.every_size.claims import EverySizeClaim

_PROVEN: dict[str, dict[str, Any]] = {}


def proven(base: str) -> dict[str, Any]:
    """The prover's certificate of BASE_every_size at its defaults, proven once per process; a fresh copy."""
    if base not in _PROVEN:
        _PROVEN[base] = EverySizeClaim(base).prove()
    return copy.deepcopy(_PROVEN[base])


def verify(doc: dict[str, Any]) -> tuple[str, str]:
    """(status, reason) of ``attncert verify`` on the resealed document, as written canonically."""
    out = verify_bytes(canonical_json(seal(doc)))
    return out.status, out.reason


def check(doc: dict[str, Any]) -> list[str]:
    """The independent checker alone (no rebuild)."""
    try:
        return check_every_size(seal(doc))
    except Exception as e:  # a ParseError is a refusal too (BAD)
        return [f"{type(e).__name__}: {e}"]


def add_fact(doc: dict[str, Any], hypotheses: list[str], goal: str) -> int:
    """Append a fact whose script is the checker's own text for it; its index."""
    H, G = [parse_rel(h) for h in hypotheses], parse_rel(goal)
    facts = doc["outputs"]["facts"]
    facts.append({"extremes": False, "goal": G.text, "hypotheses": [h.text for h in H], "smtlib": smtlib.script(H, G, False)})
    doc["result"]["facts"] = len(facts)
    return len(facts) - 1


def rewrite_fact(fact: dict[str, Any]) -> None:
    H, G = [parse_rel(h) for h in fact["hypotheses"]], parse_rel(fact["goal"])
    fact["smtlib"] = smtlib.script(H, G, fact["extremes"])


def refused(doc: dict[str, Any], by_checker: bool = True) -> tuple[list[str], str]:
    problems = check(doc)
    status, reason = verify(doc)
    if by_checker:
        assert problems, "the independent checker accepted the forgery"
    assert status != OK, "verify said OK to a forgery"
    return problems, reason


def test_the_genuine_certificate_verifies() -> None:
    """The baseline every attack edits: verify says OK, the checker finds nothing."""
    doc = proven("transpose")
    assert check(doc) == []
    assert verify(doc) == (OK, "")


# -- templates and forms -----------------------------------------------------------------------------


def _transpose_source(doc: dict[str, Any]) -> dict[str, Any]:
    return next(n for n in doc["construction"]["template"]["nodes"] if n["name"] == "transpose_source")["params"]["fn"]["params"]


def test_a_wrong_template_with_its_forms_adjusted_is_refused() -> None:
    """The index map's coefficients swapped (read position c*i + j... the identity's, not the transpose's):
    at r = 2, c = 3 the output entry (0, 1) of M^T is M[1][0] = 4 for M = [[1, 2, 3], [4, 5, 6]] (by hand),
    while reading the token at the output position itself (coefficients [c, 1] -> positions j*1 + i*c
    mixed up) gives another. The value and the reference recorded are both set to the untransposed read."""
    doc = proven("transpose")
    src = _transpose_source(doc)
    src["coeffs"]["list"] = [{"size": "c"}, {"q": "1"}]
    M = [[1, 2, 3], [4, 5, 6]]
    assert [[M[i][j] for i in range(2)] for j in range(3)][0][1] == 4  # M^T[0][1] = M[1][0], from the definition
    for region in doc["outputs"]["regions"]:
        for part in ("value", "reference"):
            for term in region[part]["num"]:
                term["factors"] = [{"read": ["M", "i", "j"]}]
    problems, _ = refused(doc)
    assert any("region 0" in p for p in problems)


def test_a_reference_changed_to_match_a_wrong_value_is_refused() -> None:
    """The reference form recorded as M[i][j] (not M^T's M[j][i]) and the value likewise: the checker
    computes both itself from the template and the definition."""
    doc = proven("transpose")
    for region in doc["outputs"]["regions"]:
        region["reference"]["num"][0]["factors"] = [{"read": ["M", "i", "j"]}]
        region["value"]["num"][0]["factors"] = [{"read": ["M", "i", "j"]}]
    problems, _ = refused(doc)
    assert any("recorded value" in p or "recorded reference" in p for p in problems)


def test_a_value_scaled_by_one_over_a_size_is_refused() -> None:
    """The value recorded as (1/c) M[j][i] over 1, reference likewise: a division by a size smuggled into a form."""
    doc = proven("transpose")
    for region in doc["outputs"]["regions"]:
        for part in ("value", "reference"):
            region[part]["num"][0]["coeff"] = ["1", "c"]
    refused(doc)


# -- facts -----------------------------------------------------------------------------------------


def test_assert_false_smuggled_into_a_script_is_refused() -> None:
    doc = proven("transpose")
    f = doc["outputs"]["facts"][4]
    f["smtlib"] = f["smtlib"].replace("(check-sat)", "(assert false)\n(check-sat)")
    problems, _ = refused(doc)
    assert any("recorded script" in p for p in problems)


def test_an_uninterpreted_function_in_a_script_is_refused() -> None:
    doc = proven("transpose")
    f = doc["outputs"]["facts"][4]
    f["smtlib"] = f["smtlib"].replace("(check-sat)", "(declare-fun f (Int) Int)\n(assert (= (f 0) (+ (f 0) 1)))\n(check-sat)")
    problems, _ = refused(doc)
    assert any("recorded script" in p for p in problems)


def test_a_contradictory_hypothesis_n_below_zero_is_refused() -> None:
    """The hypothesis c < 0 (with 1 <= c, a contradiction that proves anything) added to a fact, its script
    written again consistently: the fact is proven, but c < 0 is no hypothesis of the region citing it."""
    doc = proven("transpose")
    f = doc["outputs"]["facts"][4]
    f["hypotheses"].append("c < 0")
    rewrite_fact(f)
    problems, _ = refused(doc)
    assert any("c < 0, which is not a hypothesis" in p for p in problems)


def test_a_false_fact_is_refused() -> None:
    """A fact the region could cite, made false (goal c*j + i < c*r weakened to c*j + i < c), script consistent."""
    doc = proven("transpose")
    f = next(f for f in doc["outputs"]["facts"] if f["goal"] == "c*j + i < c*r")
    f["goal"] = "c*j + i < c"
    rewrite_fact(f)
    problems, _ = refused(doc)
    # refused as the false fact it is (cvc5's counter-model), or before any solver is asked: the step needs
    # c*j + i < c*r and the fact now states something else
    assert any("counter-model" in p or "does not prove" in p or "proves c*j + i < c, not c*j + i < c*r" in p for p in problems)


def test_a_division_by_a_size_in_a_fact_is_bad_in_one_line() -> None:
    """floor by a size (not a positive integer) is not a size expression: BAD, one line."""
    doc = proven("transpose")
    doc["outputs"]["facts"][0]["goal"] = "floor(c, r) <= c*r"
    status, reason = verify(doc)
    assert status == "BAD" and "\n" not in reason


def test_floor_by_zero_in_a_fact_is_bad_in_one_line() -> None:
    """floor(x, 0) would define an atom by 0 <= x < 0, a contradiction proving anything: refused as BAD."""
    doc = proven("transpose")
    doc["outputs"]["facts"][0]["hypotheses"].append("floor(c, 0) <= 0")
    status, reason = verify(doc)
    assert status == "BAD" and "positive integer" in reason


def test_facts_swapped_are_refused() -> None:
    doc = proven("transpose")
    facts = doc["outputs"]["facts"]
    facts[3], facts[4] = facts[4], facts[3]
    refused(doc)


def test_a_fact_deleted_is_refused() -> None:
    doc = proven("transpose")
    del doc["outputs"]["facts"][6]
    doc["result"]["facts"] -= 1
    refused(doc)


# -- statement, sizes, regions ---------------------------------------------------------------------


def test_hypotheses_strengthened_are_refused() -> None:
    """result.hypotheses with c >= 2 added (a statement about fewer sizes is another claim)."""
    doc = proven("transpose")
    doc["result"]["hypotheses"].append("c >= 2")
    problems, _ = refused(doc)
    assert any("result.hypotheses" in p for p in problems)


def test_hypotheses_weakened_are_refused() -> None:
    doc = proven("transpose")
    doc["result"]["hypotheses"] = doc["result"]["hypotheses"][:1]
    problems, _ = refused(doc)
    assert any("result.hypotheses" in p for p in problems)


def test_a_statement_text_changed_is_refused_only_by_the_rebuild() -> None:
    """The human statement rewritten to a false one (M^T replaced by M). The independent checker does not
    read result.statement (a finding, not a success: the rebuild compares the whole document and refuses)."""
    doc = proven("transpose")
    doc["result"]["statement"] = doc["result"]["statement"].replace("vec(M^T)", "vec(M)")
    assert "vec(M) to vec(M)" in doc["result"]["statement"]
    problems, reason = refused(doc, by_checker=False)
    assert problems == []
    assert "result.statement" in reason


def test_a_size_moved_from_quantified_to_fixed_is_refused() -> None:
    doc = proven("transpose")
    doc["params"] = {"every": "c", "r": 3}
    refused(doc)


def test_a_length_changed_is_refused() -> None:
    """N = c*r + 1: a position after the output block, which the certificate says nothing of."""
    doc = proven("transpose")
    doc["construction"]["layout"]["length"] = "c*r + 1"
    refused(doc)


def test_an_output_shape_changed_is_refused() -> None:
    doc = proven("transpose")
    doc["construction"]["layout"]["output"] = {"cols": "c", "rows": "r"}
    problems, _ = refused(doc)
    assert any("output shape" in p for p in problems)


def test_a_region_deleted_is_refused() -> None:
    """Regions that do not cover the output: matmul's second region gone."""
    doc = proven("matmul")
    assert len(doc["outputs"]["regions"]) >= 2
    del doc["outputs"]["regions"][-1]
    doc["result"]["regions"] -= 1
    refused(doc)


def test_a_region_duplicated_is_refused() -> None:
    doc = proven("matmul")
    doc["outputs"]["regions"].append(copy.deepcopy(doc["outputs"]["regions"][0]))
    doc["result"]["regions"] += 1
    refused(doc)


def test_a_region_assuming_a_contradiction_without_its_negation_is_refused() -> None:
    """The output region narrowed by an assumption c < 0 (its complement c >= 0 never checked)."""
    doc = proven("transpose")
    r = doc["outputs"]["regions"][0]
    r["path"] = [{"assume": "c < 0"}]
    r["assumed"] = ["c < 0"]
    refused(doc)


def test_a_tagged_hypothesis_dropped_is_refused() -> None:
    """universal_tagged without 'some tag is 1' (attention over no row divides by 0)."""
    doc = proven("universal_tagged")
    doc["result"]["hypotheses"] = [h for h in doc["result"]["hypotheses"] if "tag(" not in h]
    problems, _ = refused(doc)
    assert any("result.hypotheses" in p for p in problems)


def test_a_huge_fixed_size_is_refused_quickly() -> None:
    """matmul with k fixed (every r, c), then k = 2 replaced by 2^20 in params, sizes, layout and template
    (the written-out sums over k would hold 2^20 terms): refused, and within a minute."""
    doc = EverySizeClaim("matmul").prove("c,r", k=2)
    big = str(1 << 20)
    doc["params"]["k"] = 1 << 20
    doc["construction"]["sizes"]["fixed"]["k"] = 1 << 20
    text = json.dumps(doc["construction"]["template"]).replace('{"q": "2"}', '{"q": "%s"}' % big).replace('"2*', '"%s*' % big)
    doc["construction"]["template"] = json.loads(text)
    layout = doc["construction"]["layout"]
    layout["inputs"] = [{k: (big if v == "2" else v) for k, v in x.items()} for x in layout["inputs"]]
    layout["length"] = layout["length"].replace("2*", big + "*")
    t = time.process_time()
    refused(doc)
    assert time.process_time() - t < 60  # a bound on a resource attack, not a speed claim


# -- resource attacks ------------------------------------------------------------------------------


def _hard_facts(doc: dict[str, Any], count: int) -> None:
    """Facts cvc5 cannot decide (x^3 + y^3 != z^3 for z >= k, Fermat's n = 3: true, out of reach of its
    nonlinear integer procedure), cited by no step; each its own script so none is asked twice."""
    for k in range(1, count + 1):
        add_fact(doc, ["1 <= c", "1 <= r", f"{k} <= i"], "c^3 + r^3 != i^3")


def test_uncited_hard_facts_cost_no_solver_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fast form of the attack: cvc5 mocked to answer 'unknown' at once, recording the time each call may
    take. A verifier bounded against this would not spend solver budget on facts no step cites, or would
    cap the total; the budget it grants three uncited facts is measured."""
    doc = proven("transpose")
    _hard_facts(doc, 3)
    budget: list[int] = []
    real = smtlib.cvc5_answer

    def counting(text: str, ms: int = smtlib.TIMEOUT_MS) -> str:
        if "(* c c c)" in text or "(* v0 v0 v0)" in text:
            budget.append(ms)
            return "unknown"
        return real(text, ms)

    monkeypatch.setattr(smtlib, "cvc5_answer", counting)
    problems = check(doc)
    assert problems  # refused in the end (uncited, unknown)
    assert sum(budget) <= 60_000, f"{sum(budget) / 1000:.0f} s of solver time granted to 3 uncited facts"


@pytest.mark.slow
def test_four_hard_facts_verify_within_a_minute() -> None:
    doc = proven("transpose")
    _hard_facts(doc, 4)
    assert len(canonical_json(seal(doc))) < 8000
    t = time.monotonic()
    status, _ = verify(doc)
    elapsed = time.monotonic() - t
    assert status != OK
    assert elapsed < 60, f"verify took {elapsed:.0f} s"


# -- a size text whose product is built before its size is bounded -------------------------------------


def _sum_of(prefix: str, count: int) -> str:
    return "(" + "+".join(f"{prefix}{k}" for k in range(count)) + ")"


def test_a_short_size_text_is_refused_cheaply() -> None:
    """Fast form: 16 symbols cubed times 16 others cubed, 816 x 816 = 665,856 terms built before the refusal
    (about 4.6 s of CPU and 400 MiB here); a bounded parser refuses it from |P| |Q| > MAX_TERMS at once."""
    from attncert.exact import ParseError
    from attncert.proofs.checkers.every_size.sizes import parse_size

    text = f"{_sum_of('a', 16)}^3*{_sum_of('b', 16)}^3"
    assert len(text) < 120
    t = time.process_time()
    with pytest.raises(ParseError):
        parse_size(text)
    assert time.process_time() - t < 1.0, f"{time.process_time() - t:.1f} s of CPU to refuse a {len(text)}-character size text"


@pytest.mark.slow
def test_a_length_of_fifteen_million_terms_verifies_within_3_gib(tmp_path: Any) -> None:
    """transpose's layout length set to (a0 + ... + a15)^4 (b0 + ... + b15)^4, resealed; verify run in a child
    process limited to 3 GiB of address space: it must answer (REJECTED or BAD) within 60 s, not run out of memory."""
    import resource
    import subprocess
    import sys

    doc = proven("transpose")
    doc["construction"]["layout"]["length"] = f"{_sum_of('a', 16)}^4*{_sum_of('b', 16)}^4"
    path = tmp_path / "length.json"
    path.write_bytes(canonical_json(seal(doc)))
    assert path.stat().st_size < 8000

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    t = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "attncert", "verify", str(path)], capture_output=True, text=True, timeout=300, preexec_fn=limit)
    elapsed = time.monotonic() - t
    assert run.returncode in (2, 3)
    assert "out of memory" not in run.stdout + run.stderr
    assert elapsed < 60, f"verify took {elapsed:.0f} s"
