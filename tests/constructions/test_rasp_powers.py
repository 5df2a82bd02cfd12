"""Powers in the RASP language: exact for integer exponents and exact rational roots, e^q exact in EE
under an explicit --e-literal, and rigorous Ball enclosures for everything else.

Expected values come from Python's Fraction arithmetic and from mpmath at high precision,
never from the code under test.
"""

from fractions import Fraction

import mpmath
import pytest
from flint import arb, fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions import rasp
from attncert.proofs.cli import main
from attncert.constructions.rasp.language.interpreter import Interpreter, read_e_literal
from attncert.constructions.rasp.language.session import evaluate, labels, relation
from attncert.exact import EE, QQ, EENumber
from attncert.exact.domains import Ball
from attncert.exact.errors import AttncertError, LimitExceeded, NotInFieldError, NotRealError, ParseError

SETTINGS = settings(max_examples=40, deadline=None)
small = st.fractions(min_value=Fraction(-20), max_value=Fraction(20), max_denominator=12)
positive = st.fractions(min_value=Fraction(1, 12), max_value=Fraction(12), max_denominator=12)


def value(src: str, e_literals: frozenset = frozenset()):
    return Interpreter("t.rasp", e_literals=e_literals).run(src)[-1][1]


def q(x: Fraction) -> str:
    """x as a RASP expression."""
    return f"({x.numerator}/{x.denominator})"


def frac(v) -> Fraction:
    return Fraction(int(v.p), int(v.q))


@SETTINGS
@given(small, st.integers(-6, 6))
def test_integer_powers_are_exact(x, k):
    if x == 0 and k < 0:
        return
    v = value(f"{q(x)} ^ {k};")
    assert isinstance(v, fmpq) and frac(v) == x**k


@SETTINGS
@given(positive, st.integers(1, 4), st.integers(-5, 5).filter(lambda p: p != 0))
def test_exact_rational_roots_stay_exact(r, n, p):
    """(r^n)^(p/n) = r^p: a perfect n-th power to a non-integer exponent is still rational."""
    if Fraction(p, n).denominator == 1:
        return
    v = value(f"{q(r**n)} ^ ({p}/{n});")
    assert isinstance(v, fmpq) and frac(v) == r**p


@pytest.mark.parametrize("base,exponent", [(2, Fraction(1, 2)), (Fraction(2, 3), Fraction(-1, 3)), (10, Fraction(7, 5))])
def test_irrational_powers_are_enclosures_that_contain_the_value(base, exponent):
    v = value(f"{q(Fraction(base))} ^ {q(exponent)};")
    assert isinstance(v, arb) and relation(v) == "enclosure"
    with mpmath.workdps(60):
        truth = mpmath.mpf(Fraction(base).numerator) / Fraction(base).denominator
        truth = truth ** (mpmath.mpf(exponent.numerator) / exponent.denominator)
        assert abs(mpmath.mpf(v.mid().str(50, radius=False)) - truth) <= mpmath.mpf(v.rad().str(5, radius=False)) * 2 + mpmath.mpf(10) ** -48
    assert v.rad() < arb(2) ** -100  # 128-bit balls are tight


def test_the_exact_fields_refuse_what_they_do_not_contain():
    with pytest.raises(NotInFieldError):
        QQ.power(fmpq(2), fmpq(1, 2))
    with pytest.raises(NotInFieldError):
        EE.power(fmpq(2), fmpq(1, 2))
    for d in (QQ, EE, Ball(64)):
        with pytest.raises(NotRealError):
            d.power(d.native(fmpq(-8)), d.native(fmpq(1, 3)))


def test_negative_base_integer_power_and_huge_power():
    assert value("(-2) ^ 3;") == -8
    with pytest.raises(AttncertError, match="t.rasp:1:1: .*not a real number"):
        value("(-2) ^ 0.5;")
    with pytest.raises(AttncertError, match="digits, over the limit"):
        value("2 ^ (10 ^ 9);")
    with pytest.raises(LimitExceeded):
        QQ.power(fmpq(3), fmpq(10**8))


def test_sequence_powers_go_up_the_tower_only_when_they_must():
    it = Interpreter("t.rasp")
    it.run("half = tokens ^ 0.5; sq = tokens ^ 2; mixed = tokens ^ (tokens / 2); twos = 2 ^ indices;")
    env = it.env.values
    xs = [fmpq(4), fmpq(9), fmpq(1, 4)]
    exact_half = evaluate(env["half"], xs, it)
    assert relation(exact_half) == "exact" and exact_half == [2, 3, fmpq(1, 2)]  # perfect squares
    assert evaluate(env["sq"], xs, it) == [16, 81, fmpq(1, 16)]
    assert evaluate(env["mixed"], [fmpq(2), fmpq(4)], it) == [2, 16]  # 2^1, 4^2
    assert evaluate(env["twos"], list("abcd"), it) == [1, 2, 4, 8]
    irr = evaluate(env["half"], [fmpq(2), fmpq(4)], it)
    assert relation(irr) == "enclosure" and all(isinstance(x, arb) for x in irr)
    assert irr[1] == 2 and arb(2).sqrt().overlaps(irr[0])
    assert labels(irr)[0].startswith("# enclosure")


E_LITERAL = "2.718281828459045"


def test_e_literal_is_off_by_default_and_then_the_literal_is_a_rational():
    v = value(f"{E_LITERAL} ^ 2;")
    assert frac(v) == Fraction(E_LITERAL) ** 2


@SETTINGS
@given(st.lists(small, min_size=1, max_size=4))
def test_e_literal_makes_exact_exponentials(xs):
    e = frozenset({read_e_literal(E_LITERAL), read_e_literal("2.718")})
    it = Interpreter("t.rasp", e_literals=e)
    it.run(f"ex = {E_LITERAL} ^ tokens; short = 2.718 ^ (tokens * 2); plain = 2.73 ^ 2;")
    env = it.env.values
    got = evaluate(env["ex"], [fmpq(x.numerator, x.denominator) for x in xs], it)
    assert relation(got) == "exact"
    with mpmath.workdps(40):
        for g, x in zip(got, xs):
            assert isinstance(g, (EENumber, fmpq))
            assert mpmath.almosteq(g.to_mpmath(40) if isinstance(g, EENumber) else mpmath.mpf(1), mpmath.exp(mpmath.mpf(x.numerator) / x.denominator), rel_eps=mpmath.mpf(10) ** -35)
    assert evaluate(env["short"], [fmpq(1)], it) == [EE.exp(fmpq(2))]
    assert frac(env["plain"]) == Fraction("2.73") ** 2  # 2.73 is not an e-literal here


def test_e_literal_plain_values_and_labels():
    e = frozenset({read_e_literal(E_LITERAL)})
    assert value(f"{E_LITERAL} ^ (1/2);", e) == EE.exp(fmpq(1, 2))
    assert value(f"{E_LITERAL} ^ 0;", e) == 1
    assert labels([fmpq(1)], (E_LITERAL,)) == [f"# read as the constant e (--e-literal): {E_LITERAL}"]


@pytest.mark.parametrize("text", ["3", "3.0", "2.6", "e", "2.718.1"])
def test_e_literal_refuses_what_is_not_e(text):
    with pytest.raises(ParseError):
        read_e_literal(text)


def test_a_softmax_written_with_the_e_literal_is_exact():
    """softmax(x)_i = e^(x_i) / sum_j e^(x_j), as the paper's files write it; checked against mpmath."""
    e = frozenset({read_e_literal(E_LITERAL)})
    it = Interpreter("t.rasp", e_literals=e)
    it.run(f"ex = {E_LITERAL} ^ tokens; softmax = ex / (aggregate(select(1, 1, ==), ex) * length);")
    xs = [fmpq(0), fmpq(1), fmpq(-1, 2)]
    got = rasp.evaluate(it.env.values["softmax"], xs, EE)
    assert EE.sum(got) == 1  # decided exactly in EE
    with mpmath.workdps(30):
        ex = [mpmath.exp(mpmath.mpf(int(x.p)) / int(x.q)) for x in xs]
        for g, want in zip(got, ex):
            assert mpmath.almosteq(g.to_mpmath(30), want / sum(ex), rel_eps=mpmath.mpf(10) ** -25)


def test_cli_labels_enclosures_and_e_literals(capsys):
    assert main(["rasp", "--eval", "tokens ^ 0.5", "--input", "[2, 4]"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("# enclosure") and out[1].startswith("[[1.41421356237309504") and out[1].endswith(", 2.0000000000000000000]")
    assert main(["rasp", "--eval", f"{E_LITERAL} ^ tokens", "--input", "[1, 0]", "--e-literal", E_LITERAL, "--e-literal", "2.73"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"# read as the constant e (--e-literal): {E_LITERAL}, 2.73", "[e, 1]"]
    assert main(["rasp", "--eval", "1", "--e-literal", "3.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "not within 1/10 of e" in err
    assert main(["rasp", "--eval", "(0 - 8) ^ (1/3)"]) == 2
    assert "not a real number" in capsys.readouterr().err
