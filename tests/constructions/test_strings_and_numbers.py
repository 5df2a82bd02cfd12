"""One rule for strings (docs/rasp.md, "Numbers and strings").

A string is a number where only a number can stand (conversions, exp, softmax scores,
matrices); a value of a RASP program that is a string is a token; operators and == never
read strings. Expected values are written by hand.
"""

from fractions import Fraction

import pytest
from flint import fmpq

from attncert.constructions import rasp
from attncert.exact import EE, QQ, Ball, Float
from attncert.exact.eenumber import EENumber
from attncert.exact.matrices import convert_rows
from attncert.exact.rationals import parse_rational
from attncert.exact.softmax import softmax_row, softmax_rows

THIRD = Fraction(1, 3)


def test_where_only_a_number_can_stand_a_string_is_that_number():
    assert parse_rational("1/3") == THIRD and parse_rational("0.1") == Fraction(1, 10)
    assert QQ.convert("1/3") == THIRD and EE.convert("1/3") == THIRD and EENumber.rational("-2.5e-3") == Fraction(-1, 400)
    assert Ball(64).to_json(Ball(64).convert("1/2")) == {"mid": "1/2", "rad": "0"} and Float.convert("1/2") == 0.5
    assert EE.exp("1/2") == EE.exp(Fraction(1, 2)) and EE.exp("1/2") * EE.exp("1/2") == EE.exp(1)
    assert QQ.exp("0") == 1 and Float.exp("0") == 1.0  # QQ.exp("0") said "exp(0) is not rational"
    assert softmax_row(["0", "0"], QQ) == [Fraction(1, 2)] * 2  # e^0 / (e^0 + e^0), by hand
    assert softmax_row(["1/3"], EE) == [1] and softmax_rows([["-1", "-1", "-1"]], EE) == [[THIRD] * 3]
    assert convert_rows([["1/3", "0.5"]], QQ) == [[THIRD, Fraction(1, 2)]]
    with pytest.raises(Exception, match="not a rational number: 'a'"):
        softmax_row(["a"], EE)  # not a number, and not taken for a token either


def test_a_program_value_that_is_a_string_is_a_token():
    out = rasp.evaluate(rasp.tokens, ["1/3", THIRD, "0.5"])
    assert out == ["1/3", THIRD, "0.5"] and [type(v) for v in out] == [str, fmpq, str]
    assert rasp.evaluate(rasp.tokens == "1", [1, "1"]) == [False, True]  # the number 1 is not the token "1"
    assert rasp.evaluate(rasp.Full("1/3"), "ab") == ["1/3", "1/3"]
    assert rasp.evaluate(rasp.ConstantSOp(["1", "2"]), "ab") == ["1", "2"]
    assert rasp.evaluate(rasp.Map(lambda x: "1/2", rasp.tokens), "ab") == ["1/2", "1/2"]
    assert rasp.evaluate(rasp.tokens + "x", ["1", "2"]) == ["1x", "2x"]  # a constant string joins tokens
    digits = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ))
    assert rasp.evaluate(digits, list("1011")) == [3, 1, 3, 3]  # "1" and "0" are character tokens


def test_operators_and_equality_never_read_strings():
    assert (EE.exp(0) == "1") is False and (fmpq(1) == "1") is False and (QQ.convert("1") == "1") is False
    for call in (lambda: EE.exp(0) + "1", lambda: fmpq(1) * "2"):
        with pytest.raises(TypeError):
            call()


def test_a_failure_on_a_token_that_reads_as_a_number_names_the_rule():
    with pytest.raises(rasp.EvaluationError, match=r"the string '1/3' is a token: in a RASP program a string is never read as a number"):
        rasp.evaluate(rasp.tokens + 1, ["1/3", "2"])
    mean = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE), rasp.tokens, default=0))
    with pytest.raises(rasp.EvaluationError, match=r"the string '1' is a token"):
        rasp.evaluate(mean, ["1", "2"])
    with pytest.raises(rasp.EvaluationError) as info:
        rasp.evaluate(rasp.tokens + 1, ["a", "b"])  # no string reads as a number: no hint
    assert "is a token" not in str(info.value)
    assert rasp.evaluate(mean, [1, Fraction(2)]) == [Fraction(3, 2)] * 2  # numbers given as numbers
