"""What programs written for the reference RASP interpreter rely on, each checked against plain
Python: indexing sequences, strings and tables; logical and/or on sequences; ``in``; the lazy
conditional; reserved names; and ``load``, which runs a file in its own environment and keeps
its private (``_``-prefixed) names to itself."""

from __future__ import annotations

import pytest
from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions import rasp
from attncert.constructions.rasp.language.interpreter import Interpreter, RaspError
from attncert.exact.errors import AttncertError

WORDS = st.text(alphabet="abc", min_size=1, max_size=8)


def run(src: str, xs: list) -> dict[str, object]:
    out = {}
    for name, v in Interpreter("prog.rasp").run(src):
        out[name] = rasp.evaluate(v, xs) if isinstance(v, (rasp.SOp, rasp.Selector)) else v
    return out


@settings(max_examples=30, deadline=None)
@given(WORDS)
def test_indexing(word):
    n = len(word)
    got = run(
        'd = {"a": 1, "b": 2, "c": 3}; by_token = d[tokens]; s = "qwertyuiop"; letter = s[indices];'
        " first = tokens[0]; last = tokens[-1]; far = tokens[20]; ch = s[2]; li = [5, 8, 2][1];",
        list(word),
    )
    assert got["by_token"] == [{"a": 1, "b": 2, "c": 3}[x] for x in word]
    assert got["letter"] == list("qwertyuiop"[:n])
    assert got["first"] == [word[0]] * n and got["last"] == [word[-1]] * n
    assert got["far"] == [0] * n  # no position 20: the reference's aggregate default, 0
    assert (got["ch"], got["li"]) == ("e", 8)


def test_a_table_fails_on_a_value_that_is_not_its_key():
    it = Interpreter("prog.rasp")
    v = it.run("x = [5, 8, 2][indices];")[-1][1]
    assert rasp.evaluate(v, list("abc")) == [5, 8, 2]
    with pytest.raises(rasp.EvaluationError, match="index 3 is not in"):
        rasp.evaluate(v, list("abcd"))


@settings(max_examples=30, deadline=None)
@given(WORDS)
def test_logical_operators_on_sequences_give_booleans(word):
    got = run(
        'a = indicator(tokens == "a") and not (tokens == "b"); o = indicator(tokens == "a") or False;'
        ' n = not indicator(tokens == "c"); eq = tokens == tokens; neg = -indices; m = 7 % (indices + 1);'
        ' mm = indices % (indices + 1); pre = "<" + tokens; has = "b" in tokens; member = tokens in ["a", "c"];',
        list(word),
    )
    assert got["a"] == [x == "a" for x in word]  # booleans, never the 1 the indicator gave
    assert got["o"] == [x == "a" for x in word] and got["n"] == [x != "c" for x in word]
    assert got["eq"] == [True] * len(word) and got["neg"] == [-i for i in range(len(word))]
    assert got["m"] == [7 % (i + 1) for i in range(len(word))] and got["mm"] == list(range(len(word)))
    assert got["pre"] == ["<" + x for x in word]
    assert got["has"] == ["b" in word] * len(word) and got["member"] == [x in "ac" for x in word]


def test_plain_values():
    got = run('x = 1 if True else undefined; y = 1 and 0; z = 0 or "s"; a, b = [1, 2]; t = "abc"[-1];', ["a"])
    assert (got["x"], got["y"], got["z"], got["a"], got["b"], got["t"]) == (1, 0, "s", 1, 2, "c")


def test_applying_a_sequence_or_selector_to_an_input():
    got = run('r = (indices + 1)("abc"); m = select(indices, indices, <)("ab");', ["a"])
    assert got["r"] == [1, 2, 3] and got["m"] == [[False, False], [True, False]]


@pytest.mark.parametrize("src", ["length = 1;", "sort = 2;", "if = 3;", "indices = 4;", "for full_s in [1] { }", "def f(indices) { return 1; }"])
def test_reserved_names_are_refused_at_the_top_level(src):
    with pytest.raises(RaspError, match=r"^prog\.rasp:1:\d+: '\w+' is reserved"):
        Interpreter("prog.rasp").run(src)


def test_library_names_may_be_local_and_tokens_rebound():
    got = run("def f(length) { max = length + 1; return max; } y = f(2); tokens = tokens_str; z = [sort for sort in [5]];", ["a"])
    assert got["y"] == 3 and got["z"] == [5] and got["tokens"] == ["a"]


def test_load_keeps_private_names_and_does_not_see_the_caller(tmp_path):
    (tmp_path / "inner.rasp").write_text("deep = 7;\n_hidden_inner = 8;")
    (tmp_path / "lib.rasp").write_text('load "inner";\npublic = deep + 1;\n_private = 2;\nuses_private = _private * 10;')
    (tmp_path / "sees.rasp").write_text("z = caller_name;")
    main = tmp_path / "main.rasp"
    it = Interpreter(str(main))
    it.run('load "lib";\nload "lib";\ncaller_name = 1;')
    v = it.env.values
    assert (v["public"], v["uses_private"], v["deep"]) == (8, 20, 7)  # nested loads export through
    assert "_private" not in v and "_hidden_inner" not in v
    with pytest.raises(RaspError, match=r"sees\.rasp:1:5: unknown name 'caller_name'"):
        it.run('load "sees";')


def test_a_second_load_in_another_environment_sets_the_names_there(tmp_path):
    (tmp_path / "base.rasp").write_text("def half(x) { return x / 2; }")
    (tmp_path / "a.rasp").write_text('load "base";\nqa = half(3);')
    (tmp_path / "b.rasp").write_text('load "base";\nqb = half(5);')  # base already ran, for a.rasp
    it = Interpreter(str(tmp_path / "main.rasp"))
    it.run('load "a";\nload "b";')
    assert (it.env.values["qa"], it.env.values["qb"]) == (fmpq(3, 2), fmpq(5, 2))


@settings(max_examples=30, deadline=None)
@given(WORDS)
def test_an_aggregate_passes_a_single_boolean_through(word):
    got = run('nxt = aggregate(select(indices, indices + 1, ==), tokens == "a", False);', list(word))
    assert got["nxt"] == [word[i + 1] == "a" if i + 1 < len(word) else False for i in range(len(word))]
    assert all(type(v) is bool for v in got["nxt"])  # booleans, not the numbers 0 and 1
    # a numerical aggregate (the Python API's, as tracr's) averages booleans as 0 and 1
    frac = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ), rasp.numerical(rasp.tokens == "a"), default=0))
    assert rasp.evaluate(frac, list(word)) == [fmpq(word[: i + 1].count("a"), i + 1) for i in range(len(word))]


def test_the_repl_reads_a_statement_over_several_lines_and_sets_an_example_by_name():
    import io

    from attncert.constructions.rasp.language import session

    lines = iter(["total = 0;", "for i in range(4) {", "  total = total + i;", "}", "word = \"abc\";", "set example word", "def twice(x) {", "return x * 2; }", "twice(indices", ");", "total;", "exit"])
    out = io.StringIO()
    session.repl(lambda prompt: next(lines), out)
    assert out.getvalue().splitlines() == ["total = 0", 'word = "abc"', 'example: ["a", "b", "c"]', "out = [0, 2, 4]", "out = 6"]


def test_out_is_the_last_value():
    got = run("a = 3; a + 1; b = out * 2; c = out;", ["a"])
    assert (got["b"], got["c"]) == (8, 8)


TOKENS = st.lists(
    st.one_of(
        st.fractions(min_value=-50, max_value=50, max_denominator=8),
        st.integers(-99, 99).map(str),
        st.sampled_from(["0.1", "2.50", " 7 ", "-3", "x", ""]),
        st.booleans(),
    ),
    min_size=1,
    max_size=6,
)


def _token(v):
    from fractions import Fraction

    return fmpq(v.numerator, v.denominator) if isinstance(v, Fraction) else v


@settings(max_examples=40, deadline=None)
@given(TOKENS)
def test_token_variants_convert_as_the_reference_does_with_floats_read_exactly(tokens):
    """tokens_int / tokens_float / tokens_bool / tokens_str convert each token as Python's int, float,
    bool and str (the reference's definitions), except that a float is the exact rational of its digits."""
    from fractions import Fraction

    xs = [_token(t) for t in tokens]
    it = Interpreter("prog.rasp")
    it.run("")
    env = it.env

    def value(name):
        return rasp.evaluate(env.get(name), xs)

    assert value("tokens_asis") == xs
    assert value("tokens_bool") == [bool(t) for t in tokens]
    strs = value("tokens_str")
    for s, t in zip(strs, tokens):
        if isinstance(t, Fraction) and t.denominator == 1:
            assert s == str(t.numerator)
        elif isinstance(t, Fraction):  # decimals when the expansion terminates (denominator 2^a 5^b)
            den = t.denominator
            for prime in (2, 5):
                while den % prime == 0:
                    den //= prime
            assert Fraction(s) == t and ("/" in s) == (den != 1)
        else:
            assert s == str(t)
    for kind, convert in (("int", int), ("float", None)):
        try:
            want = [Fraction(convert(t)) if convert else (Fraction(t.strip()) if isinstance(t, str) else Fraction(t)) for t in tokens]
            if not convert:
                [float(t) for t in tokens]  # the reference refuses what float() refuses
        except (ValueError, ArithmeticError):
            with pytest.raises(AttncertError, match="tokens_" + kind):
                value("tokens_" + kind)
            continue
        got = value("tokens_" + kind)
        assert [Fraction(int(g.p), int(g.q)) for g in got] == want
        if kind == "int":
            assert all(g.q == 1 for g in got)


def test_token_str_writes_terminating_rationals_in_decimals():
    xs = [fmpq(3, 2), fmpq(-1, 8), fmpq(1, 3), fmpq(5), fmpq(0), fmpq(-7, 20)]
    got = rasp.evaluate(Interpreter("p.rasp").run("tokens_str;")[-1][1], xs)
    assert got == ["1.5", "-0.125", "1/3", "5", "0", "-0.35"]


def test_input_json_strings_stay_strings_and_numbers_are_exact():
    from attncert.constructions.rasp.language.session import read_input

    assert read_input('[0.1, "0.1", 7, "7", true]') == [fmpq(1, 10), "0.1", 7, "7", True]
    assert [type(x) for x in read_input('[0.1, "0.1"]')] == [fmpq, str]
    with pytest.raises(AttncertError, match="NaN is not a number"):
        read_input("[NaN]")
