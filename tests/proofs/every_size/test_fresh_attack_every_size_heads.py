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
or, where it says OK, right at every size tried on a concrete run against proofs/checkers/references.py, except the
division the output never reads: the open hole of test_fresh_attack_every_size_positivity.py); random forms with inv
factors against the sums they stand for (kept below as property tests: they fail if inv(c F) takes out c instead of
c^{-1}, or if a substitution may capture a binder).
"""

from __future__ import annotations

import copy
import math
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.exact import ParseError
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.checkers.every_size import check_every_size, forms
from attncert.proofs.checkers.every_size.forms import Coefficients
from attncert.proofs.checkers.every_size.sizes import Poly
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


# -- the Σ normal form with inv factors, against the sums it stands for ------------------------------------------
#
# Random terms built from reads, exp, relu, products, sums over a binder and reciprocals of positive (or negative) sums
# over a binder, in the checker's forms (normalised: inv(c F) = c^{-1} inv(F), α-renaming, canonical binders) and, apart,
# as the plain sums and quotients they denote. At random sizes and free indices the two agree in floating point
# (agreement to 1e-9, not an exact comparison), also after a pin i := _0_0 + 1 substitutes a name that looks like a
# canonical binder (capture would read the wrong binder), and forms that get one key agree.

KF = Coefficients(("h", "n"))
SIZE_BOUNDS = {"h": Poly.symbol("h"), "n": Poly.symbol("n"), "2": Poly.const(2)}
SCALES = {"1": KF.one, "2": KF.const(2), "n": KF.gens["n"], "3h + 1": KF.gens["h"] * 3 + 1, "1/n": KF.one / KF.gens["n"]}


def _entry(block: str, r: int, c: int) -> float:
    """A fixed input: an entry in [-1, 1] of each (block, row, column), any integer row and column."""
    return random.Random(f"{block}[{r}][{c}]").uniform(-1, 1)


def _coefficient(c: Any, env: dict[str, int]) -> float:
    vals = [env[s] for s in KF.sizes]
    return float(c.numer(*vals)) / float(c.denom(*vals))


def _value(f: forms.Form, env: dict[str, int]) -> float:
    """The form's value, summed as its terms say (each binder over its bound at these sizes)."""

    def term(t: Any, env: dict[str, int], k: int = 0) -> float:
        if k == len(t.binders):
            return math.prod(factor(x, env) for x in t.factors)
        b, B = t.binders[k]
        return sum(term(t, {**env, b: v}, k + 1) for v in range(B.value(env)))

    def factor(x: Any, env: dict[str, int]) -> float:
        if x.kind == "read":
            return _entry(x.args[0], x.args[1].value(env), x.args[2].value(env))
        a = [_value(g, env) for g in x.args]
        return {"exp": lambda: math.exp(a[0]), "relu": lambda: max(a[0], 0.0), "inv": lambda: 1 / a[0]}[x.kind]()

    return sum(_coefficient(c, env) * term(t, env) for c, t in f.terms.values())


def _index(names: list[str], draw: Any) -> Poly:
    p = Poly.const(draw(st.integers(0, 2)))
    for name in draw(st.lists(st.sampled_from(names), max_size=2)) if names else []:
        p = p + Poly.symbol(name) * draw(st.integers(1, 2))
    return p


@st.composite
def _expression(draw: Any, names: tuple[str, ...] = ("i", "j"), depth: int = 3) -> tuple[forms.Form, Any]:
    """(the checker's form, the plain value as a function of the sizes and free indices)."""
    kind = draw(st.sampled_from(["read"] if depth == 0 else ["read", "exp", "inv", "add", "mul", "sum", "relu"]))
    if kind == "read":
        block, r, c = draw(st.sampled_from("AB")), _index(list(names), draw), _index(list(names), draw)
        return forms.read(KF, block, r, c), lambda env: _entry(block, r.value(env), c.value(env))
    if kind in ("exp", "relu"):
        a, fa = draw(_expression(names, depth - 1))
        if kind == "exp":
            return forms.exp(KF, a.scale(KF.one / 3)), lambda env: math.exp(fa(env) / 3)
        return forms.relu(KF, a), lambda env: max(fa(env), 0.0)
    if kind in ("add", "mul"):
        (a, fa), (b, fb) = draw(_expression(names, depth - 1)), draw(_expression(names, depth - 1))
        return (a + b, lambda env: fa(env) + fb(env)) if kind == "add" else (a * b, lambda env: fa(env) * fb(env))
    binder = forms.fresh()[1:]  # a name of its own (a certificate's begin with a letter)
    a, fa = draw(_expression(names + (binder,), depth - 1))
    bound = draw(st.sampled_from(sorted(SIZE_BOUNDS)))
    B = SIZE_BOUNDS[bound]
    if kind == "sum":
        return a.summed(binder, B), lambda env: sum(fa({**env, binder: v}) for v in range(B.value(env)))
    scale, sign = SCALES[draw(st.sampled_from(sorted(SCALES)))], draw(st.sampled_from([1, -1]))
    denominator = forms.exp(KF, a.scale(KF.one / 3)).scale(scale * sign).summed(binder, B)  # shown positive or negative

    def plain(env: dict[str, int]) -> float:
        return 1 / (sign * _coefficient(scale, env) * sum(math.exp(fa({**env, binder: v}) / 3) for v in range(B.value(env))))

    return forms.reciprocal(denominator), plain


def _agree(x: float, y: float) -> bool:
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


@settings(max_examples=80, deadline=None)
@given(_expression(), st.integers(1, 3), st.integers(1, 3), st.integers(0, 3), st.integers(0, 3))
def test_forms_with_reciprocals_are_the_sums_they_stand_for(built, h, n, i, j):
    form, plain = built
    env = {"h": h, "n": n, "i": i, "j": j}
    assert _agree(_value(form, env), plain(env))
    pinned = form.rename({"i": Poly.symbol("_0_0") + Poly.const(1)})  # a free name spelled as a canonical binder
    assert _agree(_value(pinned, {**env, "_0_0": j}), plain({**env, "i": j + 1}))


@settings(max_examples=60, deadline=None)
@given(_expression(), _expression(), st.integers(1, 3), st.integers(1, 3), st.integers(0, 3), st.integers(0, 3))
def test_forms_with_one_key_have_one_value(a, b, h, n, i, j):
    env = {"h": h, "n": n, "i": i, "j": j}
    if a[0].key == b[0].key:
        assert _agree(_value(a[0], env), _value(b[0], env))
    assert (a[0] - a[0]).key == "0" and _agree(_value(a[0] * b[0], env), a[1](env) * b[1](env))


# -- found by deleting, duplicating, swapping and reversing the record's lists ----------------------------------------


def test_a_recorded_step_the_checker_does_not_take_is_a_problem_not_a_traceback(heads, tmp_path, capsys):
    """Was an IndexError (Steps.untaken read the kind from the step's key, which has three parts, not four), whenever
    a region held a step the checker never took: here the first step again with its facts in the other order (a step
    that is not the one taken), as a list reversed inside the record gave it."""
    doc = copy.deepcopy(heads)
    steps = doc["outputs"]["regions"][0]["steps"]
    step = next(s for s in steps if len(s["facts"]) == 2)
    steps.append(dict(step, facts=step["facts"][::-1]))
    problems = check_every_size(seal(doc))
    assert any("records steps the checker did not take" in p and step["kind"] in p and f"node {step['node']}" in p for p in problems), problems
    path = tmp_path / "untaken.json"
    path.write_bytes(canonical_json(seal(doc)))
    capsys.readouterr()
    assert main(["verify", str(path)]) == 3
    out = capsys.readouterr()
    assert out.out.startswith("REJECTED") and len(out.out.strip().splitlines()) == 1 and "Traceback" not in out.err, out
