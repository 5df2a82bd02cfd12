"""The RASP language: the reference's syntax and precedence (surprises included), exact values,
programs equal to their Python-API versions, and one-line errors with positions."""

from __future__ import annotations

import pytest
from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions import rasp
from attncert.constructions.rasp.language.interpreter import Interpreter, RaspError
from attncert.constructions.rasp.language.parser import RaspSyntaxError, parse



def value(src: str):
    return Interpreter().run(src)[-1][1]


@pytest.mark.parametrize(
    "src, expected",
    [
        ("-2^2;", 4),  # unary minus binds tighter than ^
        ("2^3^2;", 64),  # ^ groups to the left
        ("7 % 3 * 2;", 1),  # % binds looser than *: 7 % 6
        ("8 / 2 % 3;", 1),  # (8/2) % 3
        ("True or False and False;", False),  # one level, left: (True or False) and False
        ("False and True or True;", True),
        ("not 1 == 2;", False),  # (not 1) == 2 is False == 2
        ("round(2.5);", 2),  # half to even
        ("round(3.5);", 4),
        ("round(-2.5);", -2),
        ("1 if False else 2 if True else 3;", 2),
        ("2 in [1, 2];", True),
        ("1 + 2 in [3];", True),  # in is the loosest
    ],
)
def test_precedence_and_rounding_as_in_the_reference(src, expected):
    assert value(src) == expected


def test_numbers_are_exact():
    assert value("0.1 + 0.2 == 3/10;") is True
    assert value("0.1 + 0.2;") == fmpq(3, 10)
    assert value("2^-2;") == fmpq(1, 4)
    assert value("1/3 + 1/6;") == fmpq(1, 2)


def test_select_is_one_token():
    assert isinstance(value("select(indices, indices, ==);"), rasp.Select)
    with pytest.raises(RaspSyntaxError, match=r"<input>:1:\d+: unexpected"):
        parse("select (indices, indices, ==);")


def test_functions_closures_multiple_returns_loops_and_comprehensions():
    it = Interpreter()
    it.run(
        """
        k = 10;
        def add_k(x) { return x + k; }
        def both(a, b) { s = a + b; return s, a * b; }
        p, q = both(3, 4);
        total = 0;
        for i in range(5) { total = total + add_k(i); }
        squares = {i: i * i for i in range(3)};
        pairs = [a + b for a, b in zip([1, 2], [10, 20])];
        """
    )
    v = it.env.values
    assert (v["p"], v["q"], v["total"]) == (7, 12, 60)
    assert v["squares"] == {0: 0, 1: 1, 2: 4} and v["pairs"] == [11, 22]


SRC = """
flip = select(indices, length - indices - 1, ==);
reverse = aggregate(flip, tokens);
hist = selector_width(select(tokens, tokens, ==));
frac_a = aggregate(select(indices, indices, <=), indicator(tokens == "a"), 0);
"""


def python_api():
    opp = rasp.numerical(rasp.length - rasp.indices - 1)
    return {
        "reverse": rasp.Aggregate(rasp.Select(rasp.indices, opp, rasp.Comparison.EQ), rasp.tokens),
        "hist": rasp.numerical(rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ))),
        "frac_a": rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ), rasp.numerical(rasp.tokens == "a"), default=0)),
    }


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet="abc", min_size=1, max_size=7))
def test_rasp_programs_equal_their_python_api_versions(word):
    it = Interpreter()
    it.run(SRC)
    for name, program in python_api().items():
        assert rasp.evaluate(it.env.values[name], list(word)) == rasp.evaluate(program, list(word)), name


def test_a_hand_checked_run():
    it = Interpreter()
    it.run(SRC)
    assert rasp.evaluate(it.env.values["frac_a"], list("abca")) == [1, fmpq(1, 2), fmpq(1, 3), fmpq(1, 2)]
    assert rasp.evaluate(it.env.values["reverse"], list("abc")) == list("cba")


@pytest.mark.parametrize(
    "src, match",
    [
        ("x = 1 +;", r"^prog\.rasp:1:8: unexpected ';'; expected an expression \| x = 1 \+; \| +\^$"),
        ("y = 1;\nz = w + 1;", r"^prog\.rasp:2:5: unknown name 'w'$"),
        ("q = 1 / 0;", r"^prog\.rasp:1:5: division by zero$"),
        ("q = 1 % 0;", r"^prog\.rasp:1:5: division by zero$"),
        ("r = [1][5];", r"^prog\.rasp:1:5: index 5 is out of range for a list of length 1$"),
        ('d = {"a": 1}["b"];', r"^prog\.rasp:1:5: the dict has no key 'b'$"),
    ],
)
def test_errors_are_one_line_with_the_position(src, match):
    with pytest.raises((RaspSyntaxError, RaspError), match=match) as e:
        Interpreter("prog.rasp").run(src)
    assert "\n" not in str(e.value)


# -- the command line and the REPL -------------------------------------------------------------

import io  # noqa: E402

from attncert.constructions.rasp.language import session  # noqa: E402
from attncert.proofs.cli import main  # noqa: E402


def test_attncert_rasp_file_eval_and_input(tmp_path, capsys):
    f = tmp_path / "prog.rasp"
    f.write_text(SRC)
    assert main(["rasp", str(f), "--eval", "frac_a", "--input", "abca", "--decimals", "3"]) == 0
    assert capsys.readouterr().out.strip() == "[1, 1/2 (≈ 0.5), 1/3 (≈ 0.333), 1/2 (≈ 0.5)]"
    assert main(["rasp", "--eval", "0.1 + 0.2"]) == 0 and capsys.readouterr().out.strip() == "3/10"
    assert main(["rasp", str(f), "--eval", "hist", "--input", "[1, 2.5, 1]"]) == 0
    assert capsys.readouterr().out.strip() == "[2, 1, 2]"


@pytest.mark.parametrize("args, match", [(["rasp", "--eval", "nope"], "unknown name 'nope'"), (["rasp", "--eval", "1 +"], "unexpected"), (["rasp", "--eval", "reverse_me"], "unknown name")])
def test_attncert_rasp_errors_are_one_line_exit_2(args, match, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert match in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_a_golden_repl_transcript():
    lines = iter(['frac = aggregate(select(indices, indices, <=), indicator(tokens == "a"), 0);', 'set example "aab"', "frac;", "round(5/2);", "w + 1;", "exit"])
    out = io.StringIO()
    session.repl(lambda prompt: next(lines), out, decimals=3)
    assert out.getvalue().splitlines() == [
        "frac = [0, 0, 0, 0, 0]",  # on the running example the session starts with, "hello"
        'example: ["a", "a", "b"]',
        "out = [1, 1, 2/3 (≈ 0.667)]",
        "out = 2",
        "error: <repl>:1:1: unknown name 'w'",
    ]


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet="abc", min_size=1, max_size=8))
def test_the_prelude_library(word):
    it = Interpreter()
    it.run('c = count(tokens, "a"); h = contains(tokens, "b"); m = max(indices, 2); lf = load_from_location(tokens, 0);'
           ' av = average(indicator(tokens == "a")); f = has_focus(select(tokens, tokens, <));')
    ev = {k: rasp.evaluate(it.env.values[k], list(word)) for k in ("c", "h", "m", "lf", "av", "f")}
    n = len(word)
    assert ev["c"] == [word.count("a")] * n and ev["h"] == ["b" in word] * n
    assert ev["m"] == [max(i, 2) for i in range(n)] and ev["lf"] == [word[0]] * n
    assert ev["av"] == [fmpq(word.count("a"), n)] * n
    assert ev["f"] == [any(k < q for k in word) for q in word]


def test_load_runs_a_file_once_into_the_same_environment(tmp_path):
    (tmp_path / "lib.rasp").write_text('load "main";\ndef twice(x) { return x * 2; }\nflag = 1;')
    (tmp_path / "main.rasp").write_text('load "lib";\nload "lib.rasp";\ny = twice(21);')
    it = Interpreter(str(tmp_path / "main.rasp"))
    it.run((tmp_path / "main.rasp").read_text())
    assert it.env.values["y"] == 42 and it.env.values["flag"] == 1  # the cycle main -> lib -> main ends
    with pytest.raises(RaspError, match="cannot load 'nowhere': no such file"):
        Interpreter(str(tmp_path / "main.rasp")).run('load "nowhere";')


BAD = "x = tokens + 1;\ny = aggregate(select(indices, indices, <=), tokens);\nz = x * 2;\n"


@pytest.mark.parametrize(
    "expr, where",
    [
        ("x", 'written at {f}:1:5): \'+\' is not defined between the string "a" and the number 1 (at position 0)'),  # a type error in a map
        ("y", "written at {f}:2:5): aggregate of non-numeric values selects 2 different values"),
        ("z", "written at {f}:3:5 (fused with the map at {f}:1:5))"),  # x * 2 and x's map are one map
    ],
)
def test_evaluation_errors_name_where_the_operation_was_written(tmp_path, capsys, expr, where):
    f = tmp_path / "bad.rasp"
    f.write_text(BAD)
    assert main(["rasp", str(f), "--eval", expr, "--input", '["a", 1, "b"]']) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert where.format(f=f) in err


def test_the_repl_from_the_command_line_shows_decimals_beside_fractions(monkeypatch, capsys):
    lines = iter(["x = 1/3;", "y = 2.718 ^ 2;", "exit"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(lines))
    assert main(["rasp", "--e-literal", "2.718"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == ["x = 1/3 (≈ 0.333333)", "y = e^2 (≈ 7.38906)"]
    assert "# read as the constant e (--e-literal): 2.718" in captured.err
