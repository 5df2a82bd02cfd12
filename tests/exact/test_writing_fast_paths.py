"""Writing certificates quickly writes the same bytes, and reading them accepts the same texts:
each shortcut against its plain form.

* rational strings by Python's int-to-decimal against FLINT's ``str``;
* a rational string is accepted exactly when it is FLINT's ``str`` of its value;
* exponents ordered by doubles, decided exactly, against sorting the rationals;
* a certificate encoded once against ``canonical_json(seal(doc))``;
* the value check of canonical JSON refuses what it refused (floats, depth, non-JSON types).
"""

import pytest
from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.exact import ParseError
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import FORMAT, certificate_bytes, seal
from attncert.exact.expsum import ExpSum
from attncert.exact.limits import Limits, limits
from attncert.exact.rationals import _CANONICAL, rational_from_json, rational_to_json

big = st.integers(-(10**3000), 10**3000)


@settings(max_examples=300)
@given(st.one_of(st.integers(-(10**30), 10**30), big), st.one_of(st.integers(1, 10**30), big.filter(lambda d: d > 0)))
def test_rational_strings_are_flints(p, d):
    q = fmpq(p, d)
    assert rational_to_json(q) == q.str()


texts = st.builds(
    lambda sign, p, slash, d: sign + p + (slash + d if slash else ""),
    st.sampled_from(["", "-", "+"]),
    st.one_of(st.from_regex(r"[0-9]{1,6}", fullmatch=True), st.builds(lambda k, c: c * k, st.integers(4001, 4500), st.sampled_from("37"))),
    st.sampled_from(["", "/"]),
    st.from_regex(r"[0-9]{1,6}", fullmatch=True),
)


@settings(max_examples=400)
@given(texts)
def test_a_rational_text_is_read_exactly_when_it_is_canonical(s):
    def plain(t):  # the definition: the pattern, then FLINT's own canonical text of the value
        if not _CANONICAL.fullmatch(t):
            return None
        num, _, den = t.partition("/")
        q = fmpq(int(num), int(den) if den else 1) if (not den or int(den)) else None
        return q if q is not None and q.str() == t else None

    with limits(Limits(max_digits=5000)):  # Python's int() then reads 5000 digits too
        want = plain(s)
        if want is None:
            with pytest.raises(ParseError):
                rational_from_json(s)
        else:
            assert rational_from_json(s) == want


close = st.builds(lambda k, e: fmpq(k, 7) + fmpq(1, 10**e), st.integers(-20, 20), st.integers(20, 40))  # ties as doubles
exponents = st.one_of(st.builds(fmpq, st.integers(-50, 50), st.integers(1, 9)), close, st.builds(fmpq, st.just(10**400), st.integers(1, 3)))


@given(st.lists(exponents, max_size=12))
def test_exponents_ascend_as_rationals(qs):
    s = ExpSum.from_pairs((q, fmpq(1)) for q in qs)
    assert s.ascending() == sorted(s.terms)


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=200)
@given(st.dictionaries(st.text(max_size=10), json_values, max_size=5))
def test_a_certificate_is_encoded_as_its_sealed_canonical_json(extra):
    doc = {**extra, "format": FORMAT}
    assert certificate_bytes(doc) == canonical_json(seal(doc)) + b"\n"


def test_the_value_check_refuses_floats_depth_and_foreign_types():
    for bad in ([1, [2, 0.5]], {"a": {"b": [float("nan")]}}, [object()], {1: "x"}):
        with pytest.raises(ParseError):
            canonical_json(bad)
    with limits(Limits(max_depth=3)):
        assert canonical_json([[["x"]]]) == b'[[["x"]]]'
        assert canonical_json([[[[]]]]) == b"[[[[]]]]"  # an empty list at depth 3 holds nothing deeper
        for deep in ([[[["x"]]]], [[[[[]]]]], {"a": {"b": {"c": {"d": 1}}}}):
            with pytest.raises(ParseError, match="nested deeper"):
                canonical_json(deep)
