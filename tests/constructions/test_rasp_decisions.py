"""Comparisons on values that left the exact fields, in the RASP language and in every evaluator path:
decided from the balls and said so, run again at a higher precision when the balls do not decide,
or one line naming the expression. Never Python's answer on an arb.

Truths come from mpmath at 80 digits or from the definitions by hand, never from the code under test.
"""

from __future__ import annotations

import io

import mpmath
import pytest
from flint import arb, ctx, fmpq

from attncert.constructions import rasp
from attncert.constructions.rasp import Comparison as Cmp
from attncert.constructions.rasp.batch import evaluate_batch
from attncert.constructions.rasp.language import session
from attncert.constructions.rasp.language.interpreter import Interpreter, Undecided
from attncert.exact import Ball, decide
from attncert.exact.errors import UndecidedError

SQRT2 = "r = 2 ^ (1/2);"


def run(expr: str, source: str = SQRT2, example=None) -> session.Outcome:
    return session.run_program(source, "t.rasp", expr, example)


def contains(b: arb, truth: mpmath.mpf) -> bool:
    """Whether the ball b contains the real number truth (mpmath at 80 digits)."""
    with mpmath.workdps(80):
        mid = mpmath.mpf(b.mid().str(70, radius=False))
        rad = mpmath.mpf(b.rad().str(5, radius=False)) * (1 + mpmath.mpf(10) ** -4)
        return abs(mid - truth) <= rad + mpmath.mpf(10) ** -75


# -- plain values ------------------------------------------------------------------------------


def test_an_equality_of_irrational_values_is_one_line_naming_the_expression():
    with pytest.raises(Undecided) as e:
        run("r * r == 2")
    line = str(e.value)
    assert "\n" not in line and line.startswith("--eval:1:1: r * r == 2: ") and "--max-precision" in line


def test_a_comparison_the_balls_decide_is_labelled_as_decided_from_enclosures():
    out = run("r * r < 3")
    assert out.value is True and out.decided and not out.exact and out.bits == 128
    assert any("decided from enclosures" in line for line in out.labels())
    exact = run("1 < 3")
    assert exact.value is True and exact.exact and exact.labels() == []
    unused = run("1 < 3", SQRT2 + " s = r * r;")  # a ball formed but never compared: the output is exact
    assert unused.exact


def test_min_and_max_pick_an_operand_only_when_decided():
    # r^2 = 2 < 2 + 10^-20: the minimum is r*r, a ball around 2 (the old code returned 2 + 10^-20, exactly)
    out = run("min(r*r, 2 + 10^-20)")
    assert isinstance(out.value, arb) and contains(out.value, mpmath.mpf(2)) and out.decided
    assert run("max(r, 3/2)").value == fmpq(3, 2)  # sqrt(2) < 3/2
    assert run("max(r, 7/5)").value is not None and isinstance(run("max(r, 7/5)").value, arb)  # sqrt(2) > 1.4


def test_a_gap_below_the_precision_is_found_at_twice_the_precision():
    # |r*r - (2 + 10^-50)| = 10^-50, below the radius of a 128-bit ball around 2 (about 2^-125): 256 bits decide it
    out = run("min(r*r, 2 + 10^-50)")
    assert out.bits == 256 and isinstance(out.value, arb) and contains(out.value, mpmath.mpf(2))
    # sqrt 2 against its truncation to 200 decimals (from mpmath): a gap below 10^-200, about 2^-664
    with mpmath.workdps(300):
        digits = int(mpmath.floor(mpmath.sqrt(2) * mpmath.mpf(10) ** 200))
    far = run(f"r > {digits} * 10^-200")
    assert far.value is True and far.bits == 1024 and far.decided


@pytest.mark.parametrize(
    "expr,want",
    [
        ("[10, 20, 30][round(r)]", fmpq(20)),  # round(1.414...) = 1, decided
        ("round(r * 7/4)", fmpq(2)),  # 2.474... rounds to 2
        ("1 if r > 7/5 else 0", fmpq(1)),
        ("r > 3/2 or 5", fmpq(5)),
        ("not (r - 1)", False),
        ("r in [1, 3/2, 2]", False),
        ("len([x for x in range(5)]) + round(r)", fmpq(6)),
    ],
)
def test_every_decision_on_a_ball_is_labelled(expr, want):
    out = run(expr)
    assert out.value == want and type(out.value) is type(want) and out.decided and not out.exact


def test_truth_tests_and_floors_that_the_balls_cannot_decide():
    for expr in ("not (r - r)", "1 if r * r - 2 else 0", "(r * r - 2) and 1", "round(r * r * 5/4)", "(r * r) % 2"):
        # r - r, r*r - 2 contain 0; 2.5 is a tie; r*r is on the boundary of floor
        with pytest.raises(Undecided):
            run(expr)


def test_a_ball_is_never_a_dict_key():
    with pytest.raises(Exception, match="cannot be a dict key"):
        run("{r: 1}")
    with pytest.raises(Exception, match="cannot be a dict key"):
        run("{1: 2}[r]")


def test_a_point_ball_decides_exactly():
    # 0 * r is the exact point 0 (arb's product with 0 has radius 0): deciding from it is exact
    out = run("not (0 * r)")
    assert out.value is True and out.exact


def test_the_plain_values_of_a_run_are_computed_at_the_runs_precision():
    it = Interpreter("t.rasp", prec=300)
    r = it.run(SQRT2 + " s = r * r;")[-1][1]
    assert r.rad() < arb(2) ** -290  # not FLINT's default 53 bits


# -- sequences -------------------------------------------------------------------------------


def test_sequence_comparisons_on_balls_are_decided_or_name_their_node():
    out = run("tokens ^ 0.5 < 2", "", [fmpq(2), fmpq(4), fmpq(9)])
    assert out.value == [True, False, False] and out.decided  # sqrt 2 < 2 (ball), 2 < 2 and 3 < 2 (points)
    with pytest.raises(UndecidedError) as e:
        run("tokens ^ 0.5 * tokens ^ 0.5 == tokens", "", [fmpq(2)])
    assert "at node" in str(e.value) and "--eval:1:" in str(e.value) and "\n" not in str(e.value)
    powers = run("tokens ^ 0.5", "", [fmpq(2), fmpq(4)])
    assert not powers.decided and powers.labels()[0].startswith("# enclosure")  # balls, nothing decided


def test_the_selections_and_maps_of_the_ball_domain_decide_or_refuse():
    B = Ball(64)
    with B.context():
        close = [B.convert(2).sqrt(), B.convert(8).sqrt() / 2, B.convert(1)]  # two balls around sqrt 2, and 1
    programs = {
        "select": rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, Cmp.EQ)),
        "lambda map": rasp.numerical(rasp.Map(lambda x: 1 if x * x > 2 else 0, rasp.tokens)),
        "lambda select": rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: k < q)),
        "compare": rasp.Map(rasp.fn("compare_const", op="<=", c=fmpq(2)), rasp.tokens * rasp.tokens),
        "indicator": rasp.Map(rasp.fn("indicator"), rasp.tokens - rasp.tokens),
        "round": rasp.Map(rasp.fn("round_half_even"), rasp.tokens * rasp.tokens * fmpq(5, 4)),
        "in_values": rasp.Map(rasp.fn("in_values", values=(fmpq(2),)), rasp.tokens * rasp.tokens),
        "categorical mean": rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, Cmp.LEQ), rasp.SequenceMap(rasp.fn("pack"), rasp.tokens, rasp.indices * 0)),
    }
    for name, program in programs.items():
        with pytest.raises(UndecidedError):
            rasp.evaluate(program, close, B)
    # apart, the same programs are decided: sqrt 2 and 1 and 3
    with B.context():
        apart = [B.convert(2).sqrt(), B.convert(1), B.convert(3)]
    assert rasp.evaluate(programs["select"], apart, B) == [1, 1, 1]
    above_two = rasp.numerical(rasp.Map(lambda x: 1 if x > 2 else 0, rasp.tokens))
    assert [decide.floor(v) for v in rasp.evaluate(above_two, apart, B)] == [0, 0, 1]
    assert rasp.evaluate(programs["lambda select"], apart, B) == [1, 0, 2]  # keys below sqrt 2, 1, 3


def test_a_python_function_never_rounds_a_ball_to_a_float():
    with pytest.raises(Exception, match="a double is not an enclosure"):
        rasp.evaluate(rasp.numerical(rasp.Map(lambda x: float(x) * 2, rasp.tokens)), [fmpq(1, 3)], Ball(64))


def test_an_exact_domain_refuses_a_ball_from_a_python_function():
    with pytest.raises(rasp.EvaluationError, match="returned a ball"):
        rasp.evaluate(rasp.numerical(rasp.Map(lambda x: arb(2).sqrt(), rasp.tokens)), [fmpq(1)])


def test_the_batched_evaluator_in_ball_is_the_single_input_evaluator():
    B = Ball(64)
    root = rasp.numerical(rasp.Map(rasp.fn("pow_const", k=fmpq(1, 2)), rasp.tokens))
    g = rasp.to_graph(rasp.Map(rasp.fn("compare_const", op="<", c=fmpq(3, 2)), root))
    inputs = [[fmpq(2), fmpq(4)], [fmpq(1), fmpq(3)]]
    assert [r["output"] for r in evaluate_batch(g, inputs, B)] == [[True, False], [True, False]]  # sqrt 2, 2; 1, sqrt 3
    third = rasp.to_graph(rasp.Map(rasp.fn("compare_const", op="==", c=fmpq(1, 3)), root))
    with pytest.raises(UndecidedError):
        evaluate_batch(third, [[fmpq(1, 4)], [fmpq(1, 9)]], B)  # sqrt(1/9) = 1/3, but 1/9 is no dyadic: a ball


def test_static_values_decided_from_balls_count_again_when_read_from_the_cache():
    B = Ball(64)
    # not reachable from tokens: cached per length; sqrt(i) < 3/2 decided from balls at i = 2
    root = rasp.numerical(rasp.Map(rasp.fn("pow_const", k=fmpq(1, 2)), rasp.indices + 2))
    g = rasp.to_graph(rasp.Map(rasp.fn("compare_const", op="<", c=fmpq(3, 2)), root))
    for _ in range(2):
        record = decide.Decisions()
        with decide.recording(record):
            assert rasp.evaluate_graph(g, [0, 0, 0], B)["output"] == [True, False, False]  # sqrt 2, sqrt 3, 2
        assert record.any


# -- the REPL and --eval ---------------------------------------------------------------------


def repl(lines: list[str]) -> list[str]:
    feed = iter(lines)

    def read(prompt: str) -> str:
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    out = io.StringIO()
    session.repl(read, out)
    return out.getvalue().splitlines()


def test_the_repl_raises_the_precision_and_labels_what_rests_on_balls():
    out = repl(["r = 2 ^ (1/2);", "r * r < 3;", "m = min(r*r, 2 + 10^-50);", "m < 2 + 10^-60;", "r * r == 2;", "1 + 1;"])
    assert out[0].startswith("r = [1.41421356") and out[0].endswith("(enclosure)")
    assert out[1] == "out = True  (decided from enclosures)"
    assert out[2].startswith("m = [2.0000") and out[2].endswith("(enclosure)")  # replayed at 256 bits
    assert out[3] == "out = True  (decided from enclosures)"  # 2 < 2 + 10^-60 needs more than 128 bits too
    assert out[4].startswith("error: <repl>:1:1: r * r == 2: ") and "--max-precision" in out[4]
    assert out[5] == "out = 2  (decided from enclosures)"  # the session rests on balls from now on


def test_non_ascii_tokens_print_as_themselves():
    assert session.show(["§", "é", 'a"b']) == '["§", "é", "a\\"b"]'
    out = repl(['set example "§é";', 'x = "§";', "tokens;"])
    assert out == ['example: ["§", "é"]', 'x = "§"', 'out = ["§", "é"]']
