"""A fresh hostile audit of the every-size checker's rule for a symbolic number of heads (commit 8581370): the heads'
A_m, V_m stacked, and Σ_m a_m inv(b_m) in the Σ normal form (docs/every-size.md, "The proof", "What verify does").

The forgeries are *self-consistent*: a genuine certificate (attncert's own prover, the heads h quantified) edited and
sealed again, or a template changed in one parameter and proven by attncert's prover with its comparison made
dishonest (every region recorded as equal, whatever its forms), so that the template, the steps, the facts and the
forms are what a prover writes for it; each is checked by the independent checker alone (``check_every_size``).

Found and fixed here: a size case's path ``{"fix": "h", "value": 0}`` made the checker raise a bare Refusal from the
heads' definition (a traceback from ``attncert verify``), and ``{"fix": "h", "value": 10**9}`` made it name 2 10^9
input blocks (memory without bound): a case's value is read as the fixed sizes are, an integer in [1, 2^20] (every
size is >= 1, so a case at 0 is no case of the claim; attncert's prover splits only where s = c is neither proven nor
refuted, so never at c < 1).

Tried and refused (no change needed), each asserted below where it is cheap: the layout's stacked blocks renamed,
resized, swapped or named A1 .. (problem: the layout is not the claim's); the recorded inv factors made exp or relu,
emptied, scaled, negated, given another bound, or dropped from value and reference alike (the recorded forms are not
the checker's); template mutants of every numeric parameter, proven by the dishonest prover (refused by the checker,
or, where it says OK, right at every size tried on a concrete run against proofs/checkers/references.py).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from attncert.exact import ParseError
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.checkers.every_size import check_every_size
from attncert.proofs.cli import main
from attncert.proofs.every_size.claims import EverySizeClaim


@pytest.fixture(scope="module")
def heads() -> dict[str, Any]:
    """multihead for every h and n (d = d_v = d_o = 1): its regions sum over the head digit with inv factors."""
    doc = EverySizeClaim("multihead").prove("h,n", d=1, dv=1, do=1)
    assert '"inv"' in canonical_json(doc).decode() and check_every_size(doc) == []
    return doc


def with_case(doc: dict[str, Any], kind: str, size: str, value: int) -> dict[str, Any]:
    """The certificate with one more size case, ``kind`` (fix or differs) ``size`` = ``value``, sealed."""
    out = copy.deepcopy(doc)
    fixed = {size: value} if kind == "fix" else {}
    assumed = [] if kind == "fix" else [f"{size} != {value}"]
    out["outputs"]["cases"].append({"assumed": assumed, "fits": [0, 1], "fixed": {**out["construction"]["sizes"]["fixed"], **fixed}, "path": [{kind: size, "value": value}], "rest_empty": None})
    return seal(out)


@pytest.mark.parametrize("kind,size,value", [("fix", "h", 0), ("fix", "h", -1), ("differs", "h", 0), ("fix", "n", 0), ("fix", "h", 10**9)])
def test_a_case_at_a_size_no_claim_has_is_one_line(heads, kind, size, value):
    """Was a traceback (h = 0: the heads' definition raised Refusal outside any region) or unbounded memory (h = 10^9:
    2 10^9 blocks A1 .. V1000000000 named before anything was compared); now refused as it is read."""
    with pytest.raises(ParseError, match=r"value: an integer in \[1, 1048576\]"):
        check_every_size(with_case(heads, kind, size, value))


def test_a_case_fixing_no_heads_is_bad_from_the_command_line(heads, tmp_path, capsys):
    path = tmp_path / "h0.json"
    path.write_bytes(canonical_json(with_case(heads, "fix", "h", 0)))
    capsys.readouterr()
    assert main(["verify", str(path)]) == 2
    out = capsys.readouterr()
    assert out.out.startswith("BAD") and len(out.out.strip().splitlines()) == 1 and "Traceback" not in out.err, out


def test_a_case_at_a_size_the_claim_has_is_still_checked(heads):
    """The bound refuses no case a proof could make: a case h = 2 beside the genuine one is read, and refused for what
    it is (the genuine case covers every size already, so the cases are no tree of splits), not as malformed."""
    problems = check_every_size(with_case(heads, "fix", "h", 2))
    assert any("split further" in p for p in problems), problems


# -- tried and refused: the stacked layout, the recorded inv factors ----------------------------------------------


def _layout(doc: dict[str, Any]) -> list[dict[str, str]]:
    return doc["construction"]["layout"]["inputs"]


LAYOUTS = {
    "A one row more": lambda inputs: inputs[1].update(rows="h + 1"),
    "A named A1": lambda inputs: inputs[1].update(name="A1"),
    "A and V swapped": lambda inputs: inputs.__setitem__(slice(1, 3), [inputs[2], inputs[1]]),
    "W_O one row more": lambda inputs: inputs[3].update(rows="h + 1"),
    "the first heads named": lambda inputs: inputs.__setitem__(slice(1, 3), [{"name": "A1", "rows": "1", "cols": "1"}, {"name": "V1", "rows": "1", "cols": "1"}]),
}


@pytest.mark.parametrize("what", sorted(LAYOUTS))
def test_a_stacked_layout_changed_is_not_the_claims(heads, what):
    doc = copy.deepcopy(heads)
    LAYOUTS[what](_layout(doc))
    problems = check_every_size(seal(doc))
    assert any("the layout's inputs" in p for p in problems), problems


def _invs(obj: Any) -> list[dict[str, Any]]:
    """Every {"inv": [form]} factor in a recorded value or reference, nested ones included."""
    if isinstance(obj, dict):
        return ([obj] if set(obj) == {"inv"} else []) + [x for v in obj.values() for x in _invs(v)]
    return [x for v in obj for x in _invs(v)] if isinstance(obj, list) else []


def _each_inv(edit: Any) -> Any:
    """The same edit of every inv factor, in the value and the reference alike (so that the two stay equal)."""

    def forge(doc: dict[str, Any]) -> None:
        found = [f for r in doc["outputs"]["regions"] for what in ("value", "reference") for f in _invs(r.get(what) or {})]
        assert found
        for f in found:
            edit(f)

    return forge


def _terms(f: dict[str, Any]) -> list[dict[str, Any]]:
    return f["inv"][0]


INV_EDITS = {
    "made exp": _each_inv(lambda f: f.__setitem__("exp", f.pop("inv"))),
    "made relu": _each_inv(lambda f: f.__setitem__("relu", f.pop("inv"))),
    "of the zero form": _each_inv(lambda f: f.__setitem__("inv", [[]])),
    "of twice its argument": _each_inv(lambda f: [t.update(coeff=["2", "1"]) for t in _terms(f)]),
    "of its argument negated": _each_inv(lambda f: [t.update(coeff=["-1", "1"]) for t in _terms(f)]),
    "of h - 1 times its argument": _each_inv(lambda f: [t.update(coeff=["h - 1", "1"]) for t in _terms(f)]),
    "over one more key": _each_inv(lambda f: [t.update(sums=[[b, f"{B} + 1"] for b, B in t["sums"]]) for t in _terms(f)]),
    "reading its own binder for the head's": _each_inv(lambda f: [_rename_reads(t, "z0_0", t["sums"][0][0]) for t in _terms(f)]),
}


def _rename_reads(obj: Any, old: str, new: str) -> None:
    """Every read index ``old`` (the head's binder, free in the inv's argument) made ``new`` (the argument's own)."""
    if isinstance(obj, dict):
        if "read" in obj:
            obj["read"] = [obj["read"][0]] + [new if x == old else x for x in obj["read"][1:]]
        for v in obj.values():
            _rename_reads(v, old, new)
    elif isinstance(obj, list):
        for v in obj:
            _rename_reads(v, old, new)


@pytest.mark.parametrize("what", sorted(INV_EDITS))
def test_a_recorded_inv_factor_edited_in_value_and_reference_alike_is_not_the_checkers(heads, what):
    doc = copy.deepcopy(heads)
    INV_EDITS[what](doc)
    problems = check_every_size(seal(doc))
    assert any("is not the checker's" in p for p in problems), problems


def test_an_inv_factor_dropped_from_value_and_reference_alike_is_not_the_checkers(heads):
    doc = copy.deepcopy(heads)
    for r in doc["outputs"]["regions"]:
        for what in ("value", "reference"):
            for term in (r.get(what) or {}).get("num", []):
                term["factors"] = [f for f in term["factors"] if "inv" not in f]
    problems = check_every_size(seal(doc))
    assert any("is not the checker's" in p for p in problems), problems
