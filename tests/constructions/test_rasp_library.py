"""The RASP language's standard library (prelude.rasp and the builtins length and selector_width),
each function evaluated exactly on generated inputs and compared with a plain-Python statement of
what the reference library's function of the same name computes."""

from __future__ import annotations

from fractions import Fraction

from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions import rasp
from attncert.constructions.rasp.language.interpreter import Interpreter

WORDS = st.text(alphabet="abc", min_size=1, max_size=8)
NUMBERS = st.lists(st.integers(-3, 3), min_size=1, max_size=8)


def run(src: str, xs: list) -> dict[str, object]:
    """Each name the program assigns, evaluated on xs (sequences and selectors) or as it is."""
    it = Interpreter()
    out = {}
    for name, v in it.run(src):
        out[name] = rasp.evaluate(v, xs) if isinstance(v, (rasp.SOp, rasp.Selector)) else v
    return out


def exact(values: list) -> bool:
    """Every number is an exact rational (no float ever enters)."""
    return all(isinstance(v, (fmpq, str, bool)) for v in values)


def fractions(values: list) -> list[Fraction]:
    return [Fraction(int(v.p), int(v.q)) for v in values]


# -- plain-Python statements of the library ------------------------------------------------


def py_shift(xs: list, n: int, filler) -> list:
    return [xs[i - n] if 0 <= i - n < len(xs) else filler for i in range(len(xs))]


def py_mark_last(xs: list, v) -> list[bool]:
    return [x == v and v not in xs[i + 1 :] for i, x in enumerate(xs)]


def py_mark_first(xs: list, v) -> list[bool]:
    return [x == v and v not in xs[:i] for i, x in enumerate(xs)]


def py_every_query_selects(marks: list[bool]) -> list[list[bool]]:
    return [list(marks) for _ in marks]


def py_sort(values: list, keys: list) -> list:
    """A stable sort of values by keys (equal keys keep their order)."""
    return [values[i] for i in sorted(range(len(keys)), key=lambda i: (keys[i], i))]


def py_next_identical(xs: list) -> list[list[bool]]:
    """M[q][k]: k is the first position after q holding the value at q."""
    n = len(xs)
    nxt = [next((k for k in range(q + 1, n) if xs[k] == xs[q]), None) for q in range(n)]
    return [[k == nxt[q] for k in range(n)] for q in range(n)]


# -- the tests ---------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(WORDS, st.sampled_from("abcd"))
def test_counting_and_searching(word, atom):
    got = run(
        f'c = count(tokens, "{atom}"); h = contains(tokens, "{atom}"); n = length;'
        ' w = selector_width(select(tokens, tokens, ==)); f = has_focus(select(tokens, tokens, <));'
        f' av = average(indicator(tokens == "{atom}"));',
        list(word),
    )
    n = len(word)
    assert got["c"] == [word.count(atom)] * n and got["h"] == [atom in word] * n
    assert got["n"] == [n] * n and got["w"] == [word.count(x) for x in word]
    assert got["f"] == [any(k < q for k in word) for q in word]
    assert exact(got["av"]) and fractions(got["av"]) == [Fraction(word.count(atom), n)] * n


@settings(max_examples=40, deadline=None)
@given(NUMBERS, st.integers(-3, 3))
def test_max_min_and_averages_of_numbers(xs, c):
    got = run(f"hi = max(tokens, {c}); lo = min(tokens, {c}); av = average(tokens); m = max({c}, 1);", [fmpq(x) for x in xs])
    assert got["hi"] == [max(x, c) for x in xs] and got["lo"] == [min(x, c) for x in xs]
    assert exact(got["av"]) and fractions(got["av"]) == [Fraction(sum(xs), len(xs))] * len(xs)
    assert got["m"] == max(c, 1)


@settings(max_examples=40, deadline=None)
@given(WORDS, st.integers(-2, 9))
def test_load_from_location(word, loc):
    got = run(f"x = load_from_location(tokens, {loc});", list(word))
    # a query that selects nothing takes the reference's default, 0
    assert got["x"] == [word[loc] if 0 <= loc < len(word) else 0] * len(word)


@settings(max_examples=40, deadline=None)
@given(WORDS, st.integers(-4, 4))
def test_shift(word, n):
    got = run(f'x = shift(tokens, {n}, "_");', list(word))
    assert got["x"] == py_shift(list(word), n, "_")


@settings(max_examples=40, deadline=None)
@given(NUMBERS, st.integers(-3, 3))
def test_shift_of_numbers_passes_values_through_exactly(xs, n):
    got = run(f"x = shift(tokens, {n}, 0);", [fmpq(x) for x in xs])
    assert got["x"] == py_shift(xs, n, 0) and exact(got["x"])


@settings(max_examples=40, deadline=None)
@given(WORDS, st.sampled_from("abcd"))
def test_first_and_last_instances(word, atom):
    got = run(
        f'l = mark_last_instance(tokens, "{atom}"); f = mark_first_instance(tokens, "{atom}");'
        f' sl = select_from_last(tokens, "{atom}"); sf = select_from_first(tokens, "{atom}");',
        list(word),
    )
    xs = list(word)
    assert got["l"] == py_mark_last(xs, atom) and got["f"] == py_mark_first(xs, atom)
    assert got["sl"] == py_every_query_selects(py_mark_last(xs, atom))
    assert got["sf"] == py_every_query_selects(py_mark_first(xs, atom))


@settings(max_examples=40, deadline=None)
@given(WORDS)
def test_sort_words(word):
    got = run("s = sort(tokens, tokens); order = sort(indices, tokens);", list(word))
    assert got["s"] == sorted(word)
    assert got["order"] == py_sort(list(range(len(word))), list(word))  # stable: equal letters keep their order


@settings(max_examples=40, deadline=None)
@given(NUMBERS)
def test_sort_numbers_by_a_computed_key(xs):
    got = run("s = sort(tokens, tokens); by_size = sort(tokens, tokens * tokens);", [fmpq(x) for x in xs])
    assert got["s"] == sorted(xs) and exact(got["s"])
    assert got["by_size"] == py_sort(xs, [x * x for x in xs])


@settings(max_examples=40, deadline=None)
@given(WORDS)
def test_select_next_identical(word):
    got = run("s = select_next_identical(tokens);", list(word))
    assert got["s"] == py_next_identical(list(word))
