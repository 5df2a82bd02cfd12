"""tracr-style maps that return plain Python ints (or other exact numbers) work in every domain.

The evaluator converts what a user function returns into the evaluation domain
(int, bool arithmetic, fmpz, fmpq, Fraction, numpy integers), so a numerical
Aggregate after such a map computes exact means in QQ and EE, enclosures in Ball
and doubles in Float. Expected values below are worked out by hand.
"""

from fractions import Fraction

import numpy as np
import pytest
from flint import arb, fmpq, fmpz
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions import rasp
from attncert.constructions.rasp import Comparison as Cmp
from attncert.exact import EE, QQ, Ball, Float, EENumber

DOMAINS = [QQ, EE, Ball(64), Float]
prefix = rasp.Select(rasp.indices, rasp.indices, Cmp.LEQ)  # query i averages keys 0..i
previous = rasp.Select(rasp.indices, rasp.indices, lambda k, q: k + 1 == q)  # query i reads key i-1


def _dyadic(x: arb) -> fmpq:
    m, e = x.man_exp()
    return fmpq(int(m)) * fmpq(2) ** int(e) if e >= 0 else fmpq(int(m), 2 ** int(-e))


def check(out, want, domain):
    """out (the program's values) is want (exact rationals, or None) in the domain's own element type."""
    assert len(out) == len(want)
    for got, w in zip(out, want):
        if w is None:
            assert got is None
        elif domain is QQ:
            assert type(got) is fmpq and got == w
        elif domain is EE:
            assert type(got) in (fmpq, EENumber) and EE.eq(EE.convert(got), EE.convert(w))
        elif domain is Float:
            assert type(got) is float and abs(got - int(w.p) / int(w.q)) <= 1e-15 * max(1, abs(float(w)))
        else:  # Ball: a ball around the exact value, and a tight one
            assert isinstance(got, arb)
            mid, rad = _dyadic(got.mid()), _dyadic(got.rad())
            assert abs(mid - w) <= rad and rad <= fmpq(1, 2**50)


@pytest.mark.parametrize("domain", DOMAINS, ids=str)
def test_numerical_map_returning_zero_or_one_then_mean(domain):
    positive = rasp.numerical(rasp.Map(lambda x: 1 if x > 0 else 0, rasp.tokens))
    frac = rasp.numerical(rasp.Aggregate(prefix, positive, default=0))
    # positive: [1, 0, 1, 0, 1]; prefix means 1/1, 1/2, 2/3, 2/4, 3/5
    check(rasp.evaluate(positive, [3, -1, 4, -1, 5], domain), [fmpq(1), fmpq(0), fmpq(1), fmpq(0), fmpq(1)], domain)
    check(rasp.evaluate(frac, [3, -1, 4, -1, 5], domain), [fmpq(1), fmpq(1, 2), fmpq(2, 3), fmpq(1, 2), fmpq(3, 5)], domain)


@pytest.mark.parametrize("domain", DOMAINS, ids=str)
def test_map_x_plus_one_on_boolean_tokens(domain):
    # rasp.Map(lambda x: x + 1, rasp.tokens) on tokens True, False, True: 2, 1, 2 (ints, from bool arithmetic)
    plus_one = rasp.numerical(rasp.Map(lambda x: x + 1, rasp.tokens))
    mean = rasp.numerical(rasp.Aggregate(prefix, plus_one, default=0))
    check(rasp.evaluate(plus_one, [True, False, True], domain), [fmpq(2), fmpq(1), fmpq(2)], domain)
    check(rasp.evaluate(mean, [True, False, True], domain), [fmpq(2), fmpq(3, 2), fmpq(5, 3)], domain)


@pytest.mark.parametrize("domain", DOMAINS, ids=str)
def test_categorical_map_of_letters_then_categorical_aggregate(domain):
    # letter positions a=1, b=2, ...: "cab" -> [3, 1, 2]; each query reads the previous one, default 0
    pos = rasp.categorical(rasp.Map(lambda c: ord(c) - ord("a") + 1, rasp.tokens))
    prev = rasp.categorical(rasp.Aggregate(previous, pos, default=0))
    check(rasp.evaluate(pos, "cab", domain), [fmpq(3), fmpq(1), fmpq(2)], domain)
    check(rasp.evaluate(prev, "cab", domain), [fmpq(0), fmpq(3), fmpq(1)], domain)
    # tracr's default (None) where nothing is selected
    check(rasp.evaluate(rasp.categorical(rasp.Aggregate(previous, pos)), "cab", domain), [None, fmpq(3), fmpq(1)], domain)


@pytest.mark.parametrize("domain", DOMAINS, ids=str)
def test_sequence_maps_returning_ints_categorical_and_numerical(domain):
    # weight 3 for an "a" after position 0, else 0: "abaa" -> [0, 0, 3, 3]
    w = rasp.numerical(rasp.SequenceMap(lambda c, i: 3 if c == "a" and i >= 1 else 0, rasp.tokens, rasp.indices))
    mean = rasp.numerical(rasp.Aggregate(prefix, w, default=0))
    check(rasp.evaluate(w, "abaa", domain), [fmpq(0), fmpq(0), fmpq(3), fmpq(3)], domain)
    check(rasp.evaluate(mean, "abaa", domain), [fmpq(0), fmpq(0), fmpq(1), fmpq(3, 2)], domain)

    # categorical: 10 * (letter index) + (1 at position 0, else 2) as an int, then the previous one
    code = rasp.categorical(
        rasp.SequenceMap(lambda c, i: (ord(c) - ord("a")) * 10 + (1 if i == 0 else 2), rasp.tokens, rasp.indices)
    )
    prev = rasp.categorical(rasp.Aggregate(previous, code, default=-1))
    # "abaa": codes 1, 12, 2, 2; previous: -1 (default), 1, 12, 2
    check(rasp.evaluate(code, "abaa", domain), [fmpq(1), fmpq(12), fmpq(2), fmpq(2)], domain)
    check(rasp.evaluate(prev, "abaa", domain), [fmpq(-1), fmpq(1), fmpq(12), fmpq(2)], domain)


@pytest.mark.parametrize("domain", DOMAINS, ids=str)
def test_int_map_feeding_a_select_then_numerical_aggregate(domain):
    # Select keys whose letter class equals the query's: classes of "abab" are [0, 1, 0, 1] (ints)
    cls = rasp.categorical(rasp.Map(lambda c: 0 if c == "a" else 1, rasp.tokens))
    same = rasp.Select(cls, cls, Cmp.EQ)
    val = rasp.numerical(rasp.Map(lambda i: i * 2, rasp.indices))  # 0, 2, 4, 6 (domain values)
    avg = rasp.numerical(rasp.Aggregate(same, val, default=0))
    # class 0 at positions 0, 2: mean (0 + 4)/2 = 2; class 1 at 1, 3: (2 + 6)/2 = 4
    check(rasp.evaluate(avg, "abab", domain), [fmpq(2), fmpq(4), fmpq(2), fmpq(4)], domain)
    assert rasp.SelectorWidth(same)("abab") == [2, 2, 2, 2]


EXACT_MAKERS = [
    (int, "int"),
    (fmpz, "fmpz"),
    (lambda k: fmpq(k, 1), "fmpq"),
    (lambda k: Fraction(k, 1), "Fraction"),
    (np.int64, "np.int64"),
    (np.int32, "np.int32"),
]


@pytest.mark.parametrize("domain", DOMAINS, ids=str)
@pytest.mark.parametrize("make", [m for m, _ in EXACT_MAKERS], ids=[n for _, n in EXACT_MAKERS])
def test_every_exact_number_type_a_map_returns_is_converted(domain, make):
    m = rasp.numerical(rasp.Map(lambda c: make(2 if c == "x" else 1), rasp.tokens))
    mean = rasp.numerical(rasp.Aggregate(prefix, m, default=0))
    # "xyx": [2, 1, 2]; prefix means 2, 3/2, 5/3
    check(rasp.evaluate(m, "xyx", domain), [fmpq(2), fmpq(1), fmpq(2)], domain)
    check(rasp.evaluate(mean, "xyx", domain), [fmpq(2), fmpq(3, 2), fmpq(5, 3)], domain)


@pytest.mark.parametrize("domain", DOMAINS, ids=str)
def test_fractions_returned_by_a_map_keep_their_value(domain):
    half = rasp.numerical(rasp.Map(lambda c: Fraction(1, 2) if c == "h" else Fraction(-1, 3), rasp.tokens))
    mean = rasp.numerical(rasp.Aggregate(prefix, half, default=0))
    # "hth": 1/2, -1/3, 1/2; means 1/2, (1/2 - 1/3)/2 = 1/12, (2/3)/3 = 2/9
    check(rasp.evaluate(mean, "hth", domain), [fmpq(1, 2), fmpq(1, 12), fmpq(2, 9)], domain)


@pytest.mark.parametrize("domain", DOMAINS, ids=str)
def test_booleans_and_tokens_returned_by_maps_stay_tokens(domain):
    is_a = rasp.Map(lambda c: c == "a", rasp.tokens)
    upper = rasp.Map(lambda c: c.upper(), rasp.tokens)
    assert rasp.evaluate(is_a, "aba", domain) == [True, False, True]
    assert rasp.evaluate(upper, "ab", domain) == ["A", "B"]
    np_bool = rasp.Map(lambda c: np.bool_(c == "a"), rasp.tokens)
    out = rasp.evaluate(np_bool, "ab", domain)
    assert out == [True, False] and all(type(v) is bool for v in out)
    # numerical mean of booleans: 1, 1/2, 2/3
    frac = rasp.numerical(rasp.Aggregate(prefix, rasp.numerical(is_a), default=0))
    check(rasp.evaluate(frac, "aba", domain), [fmpq(1), fmpq(1, 2), fmpq(2, 3)], domain)


@pytest.mark.parametrize("domain", [QQ, EE], ids=str)
def test_float_results_stay_refused_after_ints_are_accepted(domain):
    mixed = rasp.numerical(rasp.Map(lambda c: 1 if c == "a" else np.float64(0.5), rasp.tokens))
    with pytest.raises(rasp.EvaluationError, match=r"returned a float \(np\.float64\(0\.5\)\)"):
        rasp.evaluate(mixed, "ab", domain)
    assert rasp.evaluate(mixed, "a", domain) == [1]  # only ints returned: fine


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from("abcd"), min_size=1, max_size=8), st.sampled_from(DOMAINS))
def test_prefix_mean_of_an_int_map_matches_fractions(word, domain):
    # the letter's position in the alphabet (an int), then a prefix mean, against fractions.Fraction
    pos = rasp.numerical(rasp.Map(lambda c: "abcd".index(c) + 1, rasp.tokens))
    mean = rasp.numerical(rasp.Aggregate(prefix, pos, default=0))
    values = ["abcd".index(c) + 1 for c in word]
    want = [Fraction(sum(values[: i + 1]), i + 1) for i in range(len(word))]
    check(rasp.evaluate(mean, word, domain), [fmpq(f.numerator, f.denominator) for f in want], domain)
