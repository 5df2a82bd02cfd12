"""The classic RASP programs against plain-Python references written here.

Every expected value comes from the reference functions in this file, never from
the code under test.
"""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions import classic as C
from attncert.constructions import rasp
from attncert.exact.testing import rationals

words = st.lists(st.sampled_from("abcde"), min_size=1, max_size=12)
SETTINGS = settings(max_examples=40, deadline=None)


def ref_histogram(xs):
    c = Counter(xs)
    return [c[x] for x in xs]


def ref_double_histogram(xs):
    c = Counter(xs)
    return [sum(1 for v in set(xs) if c[v] == c[x]) for x in xs]


def ref_sort(vals, keys):
    return [v for _, _, v in sorted(zip(keys, range(len(keys)), vals))]


def ref_most_frequent(xs):
    c = Counter(xs)
    best = max(c.values())
    return [next(x for x in xs if c[x] == best)] * len(xs)


def ref_dyck(word, pairs):
    opens = {p[0]: p[1] for p in pairs}
    closes = {p[1] for p in pairs}
    stack = []
    for ch in word:
        if ch in opens:
            stack.append(opens[ch])
        elif ch in closes:
            if not stack or stack.pop() != ch:
                return 0
    return int(not stack)


@SETTINGS
@given(words)
def test_length_reverse_histogram(xs):
    n = len(xs)
    assert C.make_length()(xs) == [n] * n
    assert C.make_reverse(rasp.tokens)(xs) == xs[::-1]
    assert C.make_histogram()(xs) == ref_histogram(xs)


@SETTINGS
@given(words)
def test_double_histogram(xs):
    assert C.make_double_histogram()(xs) == ref_double_histogram(xs)


@SETTINGS
@given(st.lists(rationals(20, 4), min_size=1, max_size=10))
def test_sort_by_rational_keys_is_stable(qs):
    vals = list(range(len(qs)))
    got = C.make_sort(rasp.tokens, rasp.tokens)(qs)
    assert got == sorted(qs)
    # Stability: sort positions by key, ties by position.
    prog = C.make_sort(rasp.indices, rasp.tokens)
    assert prog(qs) == ref_sort(vals, qs)


@SETTINGS
@given(words)
def test_most_frequent(xs):
    assert C.make_most_frequent()(xs) == ref_most_frequent(xs)


def _dyck_words(alphabet):
    balanced = st.recursive(
        st.just(""),
        lambda inner: st.one_of(
            st.builds(lambda a, b: a + b, inner, inner),
            *[st.builds(lambda w, p=p: p[0] + w + p[1], inner) for p in alphabet],
        ),
        max_leaves=6,
    )
    noise = st.text("".join(alphabet) + "x", min_size=1, max_size=10)
    return st.one_of(balanced.filter(bool), noise)


@settings(max_examples=60, deadline=None)
@given(_dyck_words(["()"]))
def test_dyck1(word):
    assert C.make_dyck(["()"])(word) == [ref_dyck(word, ["()"])] * len(word)


@settings(max_examples=60, deadline=None)
@given(_dyck_words(["()", "[]"]))
def test_dyck2(word):
    assert C.make_dyck(["()", "[]"])(word) == [ref_dyck(word, ["()", "[]"])] * len(word)


def test_dyck_examples():
    d = C.make_dyck(["()", "[]"])
    assert d("([])[]")[0] == 1
    assert d("([)]")[0] == 0  # balanced as Dyck-1, wrongly nested as Dyck-2
    assert d("())(")[0] == 0
    assert d(")(")[0] == 0
