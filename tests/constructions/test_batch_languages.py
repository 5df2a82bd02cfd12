"""The batched paths of the language proofs against their single-input references.

* ``readout_batch`` of each language layer gives, word by word, what ``readout`` gives,
  on U's outputs and on random EE fractions (equal denominators along a row or not);
* ``encode_batch`` holds exactly the token sequences ``Layout.encode`` gives (values and types).
"""

import itertools

import numpy as np
from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions import rasp
from attncert.constructions.batch_layout import encode_batch
from attncert.constructions.languages import match2, parity
from attncert.constructions.rasp.batch import rows, run_batch
from attncert.constructions.simulator import universal
from attncert.exact import EE, QQ, EENumber
from attncert.exact.expsum import ExpSum, exponent
from attncert.exact.exparray import ExpArray
from attncert.exact.ratarray import RatArray
from attncert.proofs.checkers import references
from attncert.proofs.simulator.languages import parity_set


def _u_batch(layer, n, words):
    """U's output on every word, as arrays (run_batch) and as the single-input evaluator's lists."""
    d, dv = len(layer.A), len(layer.V[0])
    U = universal(n, d, dv)
    mats = [{"X": layer.embed(w), "A": layer.A, "V": layer.V} for w in words]
    out = run_batch(U.graph(), encode_batch(U.layout, mats, EE), EE)["output"]
    singles = [rasp.evaluate_graph(U.graph(), U.layout.encode(m, EE), EE)["output"] for m in mats]
    return U, out, singles


def test_match2_batch_readout_on_every_short_word():
    for M, n in [(1, 4), (2, 3), (3, 3), (4, 2), (5, 2)]:
        layer = match2(M, n)
        words = [list(w) for w in itertools.product(range(M), repeat=n)]
        U, out, singles = _u_batch(layer, n, words)
        assert rows(out, len(words), EE) == singles
        num, den = out.fraction()
        block = np.arange(n * M)
        got = layer.readout_batch(num.take(block), den.take(block), np.array(words)).tolist()
        assert got == [layer.readout(U.layout.decode(seq), w) for seq, w in zip(singles, words)]
        assert got == [references.match2_language(w, M) for w in words]


def test_parity_batch_readout_on_every_short_string():
    for n in range(1, 6):
        for k in range(1, min(4, n) + 1):
            S = parity_set(n, k)
            layer = parity(n, S)
            words = [list(w) for w in itertools.product((0, 1), repeat=n)]
            U, out, singles = _u_batch(layer, n, words)
            num, den = out.fraction()
            got = layer.readout_batch(num.take(np.arange(n)), den.take(np.arange(n)), np.array(words)).tolist()
            assert got == [layer.readout(U.layout.decode(seq), w) for seq, w in zip(singles, words)]
            assert got == [references.parity_language(w, S) for w in words]


coefficient = st.integers(-6, 6)


@st.composite
def fractions(draw, shape, exponents):
    """Random EE fractions num/den (den nonzero) as arrays over the exponents, and as EENumbers."""
    def arrays():
        return {q: draw(st.lists(coefficient, min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))) for q in exponents}

    num, den = arrays(), arrays()
    for i in range(int(np.prod(shape))):
        if all(den[q][i] == 0 for q in exponents):
            den[exponents[0]][i] = 1
    to_array = lambda c: ExpArray({exponent(q): RatArray.integers(np.array(v).reshape(shape)) for q, v in c.items()}, shape)  # noqa: E731
    objects = [
        EENumber(ExpSum({exponent(q): fmpq(num[q][i]) for q in exponents if num[q][i]}), ExpSum({exponent(q): fmpq(den[q][i]) for q in exponents if den[q][i]}))
        for i in range(int(np.prod(shape)))
    ]
    return to_array(num), to_array(den), objects


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.data())
def test_match2_batch_readout_on_random_fractions(M, n, size, data):
    layer = match2(M, 4)
    num, den, objects = data.draw(fractions((size, n * M), [fmpq(0), fmpq(3), fmpq(-1, 2)]))
    words = data.draw(st.lists(st.lists(st.integers(0, M - 1), min_size=n, max_size=n), min_size=size, max_size=size))
    got = layer.readout_batch(num, den, np.array(words)).tolist()
    T = [[objects[b * n * M + i * M : b * n * M + (i + 1) * M] for i in range(n)] for b in range(size)]
    assert got == [layer.readout(t, w) for t, w in zip(T, words)]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 3), st.data())
def test_parity_batch_readout_on_random_fractions(n, size, data):
    S = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    layer = parity(n, S)
    num, den, objects = data.draw(fractions((size, n), [fmpq(0), fmpq(1), fmpq(2)]))
    words = data.draw(st.lists(st.lists(st.integers(0, 1), min_size=n, max_size=n), min_size=size, max_size=size))
    got = layer.readout_batch(num, den, np.array(words)).tolist()
    assert got == [layer.readout([[v] for v in objects[b * n : (b + 1) * n]], w) for b, w in enumerate(words)]


def test_encode_batch_is_encode_input_by_input():
    U = universal(3, 2, 2)
    A, V = [[fmpq(1), fmpq(-2, 3)], [fmpq(0), fmpq(5)]], [[fmpq(1, 2), fmpq(1)], [fmpq(7), fmpq(0)]]
    xs = [[[fmpq(i), fmpq(1, i + 1)] for i in range(3)], [[fmpq(-1, 4), fmpq(0)], [fmpq(2), fmpq(3)], [fmpq(1), fmpq(1)]]]
    for domain in (EE, QQ):
        for mats in ([{"X": x, "A": A, "V": V} for x in xs], [{"X": xs[0], "A": A, "V": V}, {"X": xs[1], "A": V, "V": A}]):
            want = [U.layout.encode(m, domain) for m in mats]
            got = encode_batch(U.layout, mats, domain).value.rows()
            assert [[(type(v), v) for v in row] for row in got] == [[(type(v), v) for v in row] for row in want]
