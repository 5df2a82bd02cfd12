"""A fresh hostile audit of the every-size checker where the last one (test_fresh_attack_every_size.py) did not go:
the positivity of denominators (the tagged U above all), coefficient divisors, and fixed sizes against quantified
ones (the heads h, the hierarchy's cases, case splits, MaxMin's parity regions).

The forgeries are *self-consistent*: a template changed at its builder is proven by attncert's own prover, made
dishonest where needed (every region recorded as equal, whatever its forms, and ``div_const`` taking any divisor), so
that the template, the facts, the forms and the hypotheses are what a prover writes for it; or a genuine certificate
edited in every field that names the size changed. Each is checked by the independent checker alone
(``check_every_size``; ``attncert verify`` also rebuilds the template from the builders, which refuses any changed
template). Every forgery is of a false statement, or of one the checker has no business accepting, and the tests
name the check that refuses it.

Found and fixed here: a quotient whose denominator is dropped on the way to the output (``token_tag`` of a plain
number is 1) was never required nonzero, so a template computing x / x at x = 0 (a division by zero at run time)
checked clean, and attncert's prover proved it; now every ``div`` is required, by the checker and by the prover, to
divide by a value shown nonzero where it is made (the prover then finds the failing run: "the claim is FALSE"); and
every ``div_const`` of the template is examined, not only those the output reads (the program computes every node at
every position). A certificate with
the heads h quantified made the checker raise a bare Refusal (a traceback from ``attncert verify``), and
``prove multihead_every_size --every h,...`` a TypeError: every h is proven now, and a relabelled record is one line.

Also fixed: a ``div`` at positions the output never reads (values of a head no query selects) was not evaluated by
the checker, but the RASP program computes it at every position; each div node now has regions of its own.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import itertools
import math
import random
from fractions import Fraction
from typing import Any, Callable, Iterator

import pytest
from flint import fmpq

from attncert.constructions import activations, linalg, rasp, simulator
from attncert.constructions.layout import Construction, Layout
from attncert.constructions.linalg import gather, index_map
from attncert.constructions.rasp import Comparison as Cmp
from attncert.exact import ParseError
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.exact.domains.qq import QQ
from attncert.proofs.checkers.every_size import check_every_size
from attncert.proofs.cli import main
from attncert.proofs.checkers.every_size.forms import Coefficients, Form, exp, positive, read
from attncert.proofs.checkers.every_size.sizes import Poly
from attncert.proofs.every_size import evaluate as prover_evaluate
from attncert.proofs.every_size import prove as prover
from attncert.proofs.every_size.claims import EverySizeClaim


# -- forging ---------------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def dishonest(lenient: bool, any_divisor: bool) -> Iterator[None]:
    """The prover with its comparison (positivity included) always 'equal', and its div_const and div taking any divisor
    (and any node no region evaluates: a quotient no query reads is then written down, for the checker to refuse)."""
    saved = prover._compare, prover_evaluate._nonzero, prover_evaluate.positive, prover_evaluate.Evaluator.__init__
    init = saved[3]

    def equal(region: Any, data_rows: Any = None) -> None:
        region.equal = True

    def every_node_examined(self: Any, *a: Any, **k: Any) -> None:
        init(self, *a, **k)
        self.examined.update(self.nodes)

    try:
        if lenient:
            prover._compare = equal
        if any_divisor:
            prover_evaluate._nonzero = lambda c: c
            prover_evaluate.positive = lambda f, data_rows=None: True
            prover_evaluate.Evaluator.__init__ = every_node_examined
        yield
    finally:
        prover._compare, prover_evaluate._nonzero, prover_evaluate.positive, prover_evaluate.Evaluator.__init__ = saved


def forge(base: str, build: Callable[..., Construction], every: str, lenient: bool = False, any_divisor: bool = False, **fixed: int) -> dict[str, Any]:
    """The certificate attncert's prover writes for BASE_every_size with the template of ``build``."""
    claim = EverySizeClaim(base)
    claim.spec = dataclasses.replace(prover.SPECS[base], build=build)
    with dishonest(lenient, any_divisor):
        return seal(claim.prove(every, **fixed))


def refused(problems: list[str], *words: str) -> None:
    """Some problem, and one that names each word (which check refused it)."""
    assert problems, "a forgery checked clean"
    assert any(all(w in p for w in words) for p in problems), problems


def refused_denominator(problems: list[str]) -> None:
    """Refused by the rule of denominators: the divisor where the division is made, or the value's final denominator."""
    assert problems, "a forgery checked clean"
    assert any("div by a value not shown nonzero" in p or "denominator is not shown positive" in p for p in problems), problems


def run(c: Construction, x: list[int]) -> Any:
    """The RASP program run exactly at the fixed size of c, on the row x."""
    return c.run({"x": [[fmpq(v) for v in x]]}, QQ)


# -- 1. denominators ---------------------------------------------------------------------------------------------------


def relu_times_x_over_x(n: Any) -> Construction:
    """relu(x) times token_tag(x / x): the tag of a plain number is 1, but x / x divides by 0 at x = 0."""
    x = rasp.numerical(rasp.Map(rasp.fn("relu"), rasp.tokens))
    q = rasp.numerical(rasp.SequenceMap(rasp.fn("div"), rasp.tokens, rasp.tokens))
    one = rasp.numerical(rasp.Map(rasp.fn("token_tag"), q))
    return Construction("relu", rasp.numerical(rasp.SequenceMap(rasp.fn("mul"), x, one)), Layout((("x", 1, n),), (1, n), n))


def test_a_dropped_denominator_is_still_a_division_by_zero():
    """Fixed here (was a false OK of the checker alone, and the prover proved it): the quotient x / x reaches the output
    only through token_tag, which drops it, so the final denominator is 1; but the program divides by 0."""
    with pytest.raises(Exception, match="division by an exact zero"):
        run(relu_times_x_over_x(2), [0, 1])
    assert run(relu_times_x_over_x(2), [2, -1]) == [fmpq(2), fmpq(0)]  # elsewhere it is ReLU: only the division is wrong
    with pytest.raises(ParseError, match="not shown nonzero.*the claim is FALSE"):  # the prover, its counterexample run
        forge("relu", relu_times_x_over_x, "n")
    refused(check_every_size(forge("relu", relu_times_x_over_x, "n", any_divisor=True)), "node 2", "div by a value not shown nonzero")


def relu_plus_unread_quotient(n: Any) -> Construction:
    """relu(x) plus a gather whose query is always -1 (no key: its default 0) of x / x, computed at every position."""
    x = rasp.numerical(rasp.Map(rasp.fn("relu"), rasp.tokens))
    q = rasp.numerical(rasp.SequenceMap(rasp.fn("div"), rasp.tokens, rasp.tokens))
    unread = gather(index_map((0, 1), (1, 0), bound=0, other=-1), q)
    return Construction("relu", rasp.numerical(rasp.SequenceMap(rasp.fn("add"), x, unread)), Layout((("x", 1, n),), (1, n), n))


def test_a_division_no_query_reads_is_still_made():
    """Fixed here (the checker said OK, attncert's own prover proved it): every div node is evaluated at every
    position t < N, in regions of its own ("div N"), its divisor shown nonzero there, read or not."""
    with pytest.raises(Exception, match="division by an exact zero"):
        run(relu_plus_unread_quotient(2), [0, 1])
    with pytest.raises(ParseError, match="div 5 region.*not shown nonzero.*the claim is FALSE"):  # the prover, its counterexample run
        forge("relu", relu_plus_unread_quotient, "n")
    refused(check_every_size(forge("relu", relu_plus_unread_quotient, "n", any_divisor=True)), "div by a value not shown nonzero")


def relu_plus_unread_div_const(n: Any) -> Construction:
    """relu(x) plus a gather no query selects of x / (n - 1), computed at every position: 0 at n = 1."""
    x = rasp.numerical(rasp.Map(rasp.fn("relu"), rasp.tokens))
    q = rasp.numerical(rasp.Map(rasp.fn("div_const", c=n - 1), rasp.tokens))
    unread = gather(index_map((0, 1), (1, 0), bound=0, other=-1), q)
    return Construction("relu", rasp.numerical(rasp.SequenceMap(rasp.fn("add"), x, unread)), Layout((("x", 1, n),), (1, n), n))


def test_a_div_const_no_query_reads_is_still_required_nonzero():
    """Fixed here (attncert's prover proved it, the checker said OK): every div_const of the template is examined, by
    the checker and by the prover, since its divisor is a size, whatever position reads it."""
    with pytest.raises(Exception, match="division by an exact zero"):
        relu_plus_unread_div_const(1).run({"x": [[fmpq(1)]]}, QQ)
    with pytest.raises(ParseError, match="computed at every position.*the claim is FALSE: at n = 1"):
        forge("relu", relu_plus_unread_div_const, "n")
    doc = forge("relu", relu_plus_unread_div_const, "n", any_divisor=True)
    refused(check_every_size(doc), "divides by n - 1 (div_const), not shown nonzero")


def tagged_with_plain_weights(n: Any, d: Any, dv: Any) -> Construction:
    """The tagged U whose softmax weights tag_k e^{S_ik} are tag_k S_ik (masked_exp replaced by mul): its denominator
    (1/n) Σ_k tag_k S_ik is 0 or negative for some X."""
    fn = rasp.fn

    def plain(name: str, **kw: Any) -> Any:
        return fn("mul") if name == "masked_exp" else fn(name, **kw)

    rasp.fn = plain
    try:
        return simulator.universal(n, d, dv)
    finally:
        rasp.fn = fn


def test_tagged_weights_without_exp_are_refused():
    doc = forge("universal_tagged", tagged_with_plain_weights, "n", lenient=True, any_divisor=True, d=1, dv=1)
    refused_denominator(check_every_size(doc))


def softmax_scaled_by_c_minus_1(r: Any, c: Any) -> Construction:
    """Softmax with its numerator and its row mean both times (c - 1): the same forms once cancelled, 0 / 0 at c = 1."""
    e = rasp.numerical(rasp.Map(rasp.fn("exp"), rasp.tokens))
    num = rasp.numerical(rasp.Map(rasp.fn("compose", fns=(rasp.fn("exp"), rasp.fn("div_const", c=c), rasp.fn("mul_const", c=c - 1))), rasp.tokens))
    row = index_map((0, c), (1, 0))
    mean = rasp.numerical(rasp.Aggregate(rasp.Select(row, row, Cmp.EQ), e, default=0))
    den = rasp.numerical(rasp.Map(rasp.fn("mul_const", c=c - 1), mean))
    return Construction("softmax", rasp.numerical(rasp.SequenceMap(rasp.fn("div"), num, den)), Layout((("S", r, c),), (r, c), r * c))


def test_a_denominator_with_a_size_factor_that_is_zero_at_one_is_refused():
    refused_denominator(check_every_size(forge("softmax", softmax_scaled_by_c_minus_1, "c,r", lenient=True, any_divisor=True)))


# The positivity rule itself, on forms the checker builds: each expectation is from the hypothesis (tags 0 or 1 of the
# rows k < n, some 1), with the assignment that makes the form 0 or negative named.

K = Coefficients(("d", "n"))
n, d = Poly.symbol("n"), Poly.symbol("d")
ZERO, ONE = Poly.const(0), Poly.const(1)


def tag(row: Poly, col: Poly = ZERO, block: str = "tag(X)") -> Any:
    return read(K, block, row, col)


def weight(row: Poly) -> Any:
    return exp(K, read(K, "X", row, ZERO))


def test_positivity_with_tags_of_a_size_n():
    k = Poly.symbol("k")
    rows = ("X", n)
    assert positive((tag(k) * weight(k)).summed("k", n), rows)  # Σ_k tag_k e^{x_k}: some tag is 1
    assert not positive((tag(k) * weight(k)).summed("k", n), None)  # without the hypothesis: all tags may be 0
    assert not positive((tag(k) * weight(k)).summed("k", d), rows)  # rows k < d: those tagged 1 may all be >= d
    assert not positive((tag(k, ONE) * weight(k)).summed("k", n), rows)  # column 1's tags are not the hypothesis's
    assert not positive((tag(k, ZERO, "tag(A)") * weight(k)).summed("k", n), rows)  # nor A's
    assert not positive((tag(k + ONE) * weight(k)).summed("k", n), rows)  # rows 1 .. n: the one tagged 1 may be row 0
    assert not positive((tag(k) * read(K, "X", k, ZERO)).summed("k", n), rows)  # a plain weight x_k may be <= 0
    assert not positive((tag(k) * weight(k)).summed("k", n).scale(K.of(n - ONE)), rows)  # (n - 1) is 0 at n = 1
    assert not positive(weight(k).summed("k", n - ONE), None)  # an empty sum at n = 1
    assert not positive(tag(ZERO) * weight(ZERO), ("X", n))  # row 0 alone: tags (0, 1) at n = 2


def test_positivity_with_tags_of_a_fixed_n():
    rows = ("X", Poly.const(2))
    both = tag(ZERO) * weight(ZERO) + tag(ONE) * weight(ONE)
    assert positive(both, rows)  # tags (1, 0), (0, 1), (1, 1): one of the two terms is positive
    assert not positive(tag(ZERO) * weight(ZERO), rows)  # tags (0, 1) make it 0
    assert not positive(tag(ZERO) * tag(ONE) * weight(ZERO), rows)  # tags (1, 0) make it 0
    assert not positive(tag(ZERO) * weight(ZERO) + tag(Poly.const(2)) * weight(ONE), rows)  # row 2 is past n = 2
    assert not positive(both - tag(ZERO) * tag(ONE), rows)  # a negative term: 0 at tags (1, 1), x = 0


def test_the_tags_hypothesis_is_the_checkers_own(certificates):
    doc = copy.deepcopy(certificates["tagged"])
    doc["result"]["hypotheses"][-1] = "tag(X)[k][0] in {0, 1} for k < n"  # without "some is 1"
    refused(check_every_size(seal(doc)), "result.hypotheses")


# -- 2. coefficient divisors -------------------------------------------------------------------------------------------


def relu_over_n_minus_1(n: Any) -> Construction:
    """ReLU(x) (n - 1) / (n - 1): the same form as ReLU(x), 0 / 0 at n = 1."""
    fns = (rasp.fn("relu"), rasp.fn("mul_const", c=n - 1), rasp.fn("div_const", c=n - 1))
    return Construction("relu", rasp.numerical(rasp.Map(rasp.fn("compose", fns=fns), rasp.tokens)), Layout((("x", 1, n),), (1, n), n))


def matmul_over_k_minus_c(r: Any, k: Any, c: Any) -> Construction:
    """AB (k - c) / (k - c): 0 / 0 wherever k = c."""
    m = linalg.matmul(r, k, c)
    fns = (rasp.fn("mul_const", c=k - c), rasp.fn("div_const", c=k - c))
    return Construction("matmul", rasp.numerical(rasp.Map(rasp.fn("compose", fns=fns), m.program)), m.layout)


@pytest.fixture(scope="module")
def divided() -> dict[str, Any]:
    return {
        "n - 1": forge("relu", relu_over_n_minus_1, "n", lenient=True, any_divisor=True),
        "k - c": forge("matmul", matmul_over_k_minus_c, "c,k,r", lenient=True, any_divisor=True),
    }


def test_div_const_by_a_size_that_is_zero_at_one_is_refused(divided):
    with pytest.raises(Exception, match="division by an exact zero"):
        relu_over_n_minus_1(1).run({"x": [[fmpq(1)]]}, QQ)
    refused(check_every_size(divided["n - 1"]), "div_const by n - 1", "not shown nonzero")


def test_div_const_by_a_difference_of_sizes_is_refused(divided):
    refused(check_every_size(divided["k - c"]), "div_const by -c + k", "not shown nonzero")


def test_div_const_by_zero_is_refused(divided):
    doc = copy.deepcopy(divided["n - 1"])
    for node in doc["construction"]["template"]["nodes"]:
        for f in node["params"].get("fn", {}).get("params", {}).get("fns", {}).get("list", []):
            if f["fn"]["name"] in ("div_const", "mul_const"):
                f["fn"]["params"]["c"] = {"q": "0"}
    refused(check_every_size(seal(doc)), "div_const by 0")


# -- 3. fixed sizes and case splits ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificates() -> dict[str, Any]:
    """Genuine certificates, small: each proven once for the module."""
    return {
        "universal": EverySizeClaim("universal").prove(),
        "tagged": EverySizeClaim("universal_tagged").prove(),
        "tagged_n3": EverySizeClaim("universal_tagged").prove("d,dv", n=3),
        "maxmin": EverySizeClaim("maxmin").prove(),
        "multihead": EverySizeClaim("multihead").prove("n", d=1, dv=1, do=1, h=1),
        "hierarchy": EverySizeClaim("hierarchy").prove("D,d", N=2, Dv=1, n=1, dv=1),
    }


def test_the_genuine_ones_check_clean(certificates):
    """The baseline the forgeries below are edits of (none is refused for a reason of its own)."""
    for name, doc in certificates.items():
        assert check_every_size(doc) == [], name


def test_heads_relabelled_are_refused(certificates):
    doc = copy.deepcopy(certificates["multihead"])
    doc["params"]["h"] = 2
    doc["construction"]["sizes"]["fixed"]["h"] = 2
    for c in doc["outputs"]["cases"]:
        c["fixed"]["h"] = 2
    refused(check_every_size(seal(doc)), "the layout's inputs")


def test_heads_relabelled_as_quantified_are_one_line(certificates, tmp_path, capsys):
    """A certificate of h = 1 relabelled as proven for every h: refused, one line (the checker once raised a bare
    Refusal here, a traceback from ``attncert verify``). Every h is now proven for real (test_every_size_heads.py), with
    the heads stacked, which is not this record's layout."""
    doc = copy.deepcopy(certificates["multihead"])
    doc["params"] = {"every": "d,do,dv,h,n"}
    doc["construction"]["sizes"] = {"fixed": {}, "quantified": ["d", "do", "dv", "h", "n"]}
    for c in doc["outputs"]["cases"]:
        c["fixed"] = {}
    problems = check_every_size(seal(doc))
    assert problems
    path = tmp_path / "h.json"
    path.write_bytes(canonical_json(seal(doc)))
    capsys.readouterr()
    assert main(["verify", str(path)]) in (2, 3)  # BAD or REJECTED
    out = capsys.readouterr()
    assert out.out.startswith(("BAD", "REJECTED")) and len(out.out.strip().splitlines()) == 1 and not out.err.strip(), out


def test_a_case_dropped_is_refused(certificates):
    doc = copy.deepcopy(certificates["universal"])
    doc["outputs"]["cases"] = doc["outputs"]["cases"][1:]  # only d != 1 is left
    doc["outputs"]["regions"] = [dict(r, case=0) for r in doc["outputs"]["regions"] if r["case"] == 1]
    doc["result"]["cases"], doc["result"]["regions"] = 1, len(doc["outputs"]["regions"])
    refused(check_every_size(seal(doc)), "are not s = c and s != c")


def test_a_split_moved_to_another_size_value_is_refused(certificates):
    """The case d = 1's regions presented as d = 2's, and d != 2 for d != 1: the cases cover every d, the forms do not."""
    doc = copy.deepcopy(certificates["universal"])
    doc["outputs"]["cases"][0].update(path=[{"fix": "d", "value": 2}], fixed={"d": 2})
    doc["outputs"]["cases"][1].update(path=[{"differs": "d", "value": 2}], assumed=["d != 2"])
    for r in doc["outputs"]["regions"]:
        r["assumed"] = ["d != 2" if a == "d != 1" else a for a in r["assumed"]]
    refused(check_every_size(seal(doc)), "does not prove")


def test_the_hierarchys_pinned_size_is_required(certificates):
    """D = 1 fixes d = 1 (1 <= d <= D): a case that leaves d free is not what its path gives."""
    doc = copy.deepcopy(certificates["hierarchy"])
    case = doc["outputs"]["cases"][0]
    assert case["path"] == [{"fix": "D", "value": 1}] and case["fixed"]["d"] == 1
    del case["fixed"]["d"]
    refused(check_every_size(seal(doc)), "case 0", "not what its path gives")


def test_maxmins_odd_positions_are_required(certificates):
    doc = copy.deepcopy(certificates["maxmin"])
    doc["outputs"]["regions"] = [r for r in doc["outputs"]["regions"] if not any(p.get("residue") == 1 for p in r["path"])]
    doc["result"]["regions"] = len(doc["outputs"]["regions"])
    refused(check_every_size(seal(doc)), "the refinement of j by 2 has the residues [0]")
    doc = copy.deepcopy(certificates["maxmin"])
    for r in doc["outputs"]["regions"]:
        for p in r["path"]:
            if p.get("residue") == 1:
                p["residue"] = 0
    refused(check_every_size(seal(doc)), "the same path")


def test_a_fixed_n_relabelled_is_refused(certificates):
    """The tagged U proven at n = 3 presented as n = 2 (sizes, layout, cases, hypotheses): its sums over 3 rows."""
    doc = copy.deepcopy(certificates["tagged_n3"])
    doc["params"]["n"] = 2
    doc["construction"]["sizes"]["fixed"]["n"] = 2
    for c in doc["outputs"]["cases"]:
        c["fixed"]["n"] = 2
    doc["construction"]["layout"]["inputs"][0]["rows"] = doc["construction"]["layout"]["output"]["rows"] = "2"
    doc["result"]["hypotheses"] = [h.replace("k < 3", "k < 2") for h in doc["result"]["hypotheses"]]
    refused(check_every_size(seal(doc)), "does not prove")


def test_fixed_sizes_that_break_the_hierarchys_relations_are_malformed(certificates):
    """n = 3 > N = 2, both fixed: the statement (for n <= N ...) is vacuous, which prove refuses in one line. The checker
    had no such rule: 3 <= 2 became a hypothesis of every region (a false one, from which any fact follows), and a
    forgery made by the prover without its rule was refused only because its forms differ. Fixed here: malformed."""
    doc = copy.deepcopy(certificates["hierarchy"])
    doc["params"]["n"] = doc["construction"]["sizes"]["fixed"]["n"] = 3
    for c in doc["outputs"]["cases"]:
        c["fixed"]["n"] = 3
    with pytest.raises(ParseError, match="n <= N"):
        check_every_size(seal(doc))


def test_positivity_with_tags_of_a_fixed_n_against_every_tag_assignment():
    """Random forms Σ c Π tag(X)[k][0] e^{X[k'][0]} (rows up to n, one past it: its tag any real), n fixed in 1..3: each one
    the rule shows positive is > 0, evaluated here in floats, at every assignment of 0/1 tags to the rows k < n with some
    1 and at random X."""
    rng = random.Random(7)

    def value(f: Any, tags: list[float], xs: list[float]) -> float:
        total = 0.0
        for c, t in f.terms.values():
            assert not t.binders
            v = float(Fraction(str(c.as_expr())))
            for x in t.factors:
                if x.kind == "read":
                    v *= tags[x.args[1].constant()]
                else:
                    v *= math.exp(sum(float(Fraction(str(c2.as_expr()))) * math.prod(xs[y.args[1].constant()] for y in t2.factors) for c2, t2 in x.args[0].terms.values()))
            total += v
        return total

    shown = 0
    for _ in range(1500):
        R = rng.choice([1, 2, 3])
        f = Form.coeff(K, K.zero)
        for _ in range(rng.randint(1, 3)):
            term = Form.coeff(K, K.const(rng.choice([-1, 1, 2, 3])))
            for _ in range(rng.randint(0, 2)):
                term = term * tag(Poly.const(rng.randrange(R + 1)))
            if rng.random() < 0.7:
                term = term * exp(K, read(K, "X", Poly.const(rng.randrange(R)), ZERO))
            f = f + term
        if not positive(f, ("X", Poly.const(R))):
            continue
        shown += 1
        for tags in itertools.product([0, 1], repeat=R):
            if any(tags):
                for _ in range(2):
                    xs = [rng.uniform(-3, 3) for _ in range(R)]
                    assert value(f, [*tags, rng.uniform(-3, 3)], xs) > 0, (f.key, tags, xs)
    assert shown > 100  # the rule is not vacuous here
