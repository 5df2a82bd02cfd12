"""Canonical JSON: deterministic, round-tripping, and strict about what it reads."""

import json

import pytest
from flint import fmpq
from hypothesis import given, settings

from attncert.exact import EE, QQ, Ball, Float, ParseError, domain_from_name
from attncert.exact.canonical import canonical_json, sha256_hex
from attncert.exact.matrices import matrix_from_json, matrix_to_json
from attncert.exact.testing import ee_numbers, rational_matrices, rationals


@settings(max_examples=100, deadline=None)
@given(ee_numbers())
def test_ee_round_trip_and_determinism(x):
    j = EE.to_json(x)
    y = EE.from_json(json.loads(canonical_json(j)))
    assert y == x
    assert EE.to_json(y) == j
    assert canonical_json(EE.to_json(x)) == canonical_json(j)


def test_ee_json_form():
    x = (EE.exp(2) - 1) / (EE.exp(1) - 1)
    assert EE.to_json(x) == {"num": [["-1", "-1"], ["1", "1"]], "den": [["-1", "-1"], ["0", "1"]]}
    assert EE.to_json(EE.convert("-3/4")) == {"num": [["0", "-3/4"]], "den": [["0", "1"]]}


@given(rationals(10**9, 10**9))
def test_qq_and_float_round_trip(q):
    assert QQ.from_json(QQ.to_json(q)) == q
    f = int(q.p) / int(q.q)
    assert Float.from_json(Float.to_json(f)) == f


def test_ball_round_trip_contains_the_original():
    B = Ball(120)
    x = B.exp(B.convert(fmpq(1, 3)))
    y = B.from_json(json.loads(canonical_json(B.to_json(x))))
    # Reading rounds the radius outward (arb's radius has a 30-bit mantissa), never inward.
    assert y.contains(x)
    assert y.mid() == x.mid()
    assert y.rad() <= x.rad() * (1 + fmpq(1, 2**20))


@settings(max_examples=30, deadline=None)
@given(rational_matrices(3, 4))
def test_matrix_round_trip(rows):
    m = [[QQ.convert(x) for x in r] for r in rows]
    assert matrix_from_json(matrix_to_json(m, QQ), QQ) == m


def test_canonical_json_is_sorted_compact_utf8_and_refuses_floats():
    assert canonical_json({"b": 1, "a": ["x", "é"]}) == '{"a":["x","é"],"b":1}'.encode()
    with pytest.raises(ParseError):
        canonical_json({"a": 0.5})
    assert sha256_hex({"a": 1}) == sha256_hex({"a": 1})
    assert sha256_hex({"a": 1}) != sha256_hex({"a": 2})


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"num": [["0", "1"]]}, "exactly the keys"),
        ({"num": [["1", "1"], ["0", "1"]], "den": [["0", "1"]]}, "strictly increasing"),
        ({"num": [["0", "0"]], "den": [["0", "1"]]}, "zero coefficient"),
        ({"num": [["0", "1"]], "den": []}, "zero"),
        ({"num": [["0", 1]], "den": [["0", "1"]]}, "rational string"),
        ({"num": [["0"]], "den": [["0", "1"]]}, "pair"),
        ({"num": "e", "den": [["0", "1"]]}, "list"),
        ([1, 2], "exactly the keys"),
    ],
)
def test_malformed_ee_json_is_refused_clearly(bad, match):
    with pytest.raises(ParseError, match=match):
        EE.from_json(bad)


@pytest.mark.parametrize(
    "bad", [{"mid": "1"}, {"mid": "1", "rad": "-1"}, {"mid": 1.5, "rad": "0"}, "1"]
)
def test_malformed_ball_json_is_refused(bad):
    with pytest.raises(ParseError):
        Ball(64).from_json(bad)


@pytest.mark.parametrize("bad", [[], [[]], [["1"], ["1", "2"]], "x", [["1/0"]]])
def test_malformed_matrix_json_is_refused(bad):
    with pytest.raises(ParseError):
        matrix_from_json(bad, QQ)


def test_domain_names():
    assert domain_from_name("QQ") is QQ and domain_from_name("EE") is EE
    assert domain_from_name("Ball(256)") == Ball(256)
    with pytest.raises(ParseError):
        domain_from_name("RR")
