"""The size table of docs/lemmas.md: depth and heads are constant in the sizes."""

import pytest

from attncert.constructions import activations, linalg, rasp

CASES = {
    "transpose": ([linalg.transpose(r, c) for r, c in [(1, 1), (1, 7), (7, 1), (5, 3), (16, 16)]], 2, [0, 1]),
    "matmul": ([linalg.matmul(*s) for s in [(1, 1, 1), (2, 3, 4), (7, 1, 5), (16, 16, 16)]], 3, [0, 2, 1]),
    "softmax": ([activations.softmax_rows(r, c) for r, c in [(1, 1), (3, 4), (16, 16)]], 2, [0, 1]),
    "relu": ([activations.relu(n) for n in (1, 8, 64)], 1, [0]),
    "maxmin": ([activations.maxmin(n) for n in (1, 2, 9, 64)], 2, [0, 1]),
    "inverse3": ([linalg.inverse3()], 5, [0, 5, 0, 0, 1]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_documented_depth_and_heads(name):
    constructions, layers, heads = CASES[name]
    for c in constructions:
        s = rasp.size(c.graph())
        assert (s.layers, s.heads) == (layers, heads), (name, c.layout)


def test_matmul_length_grows_as_documented():
    for r, k, c in [(1, 1, 1), (2, 3, 4), (4, 1, 1)]:
        assert linalg.matmul(r, k, c).layout.length == max(r * k + k * c, r * c * k)
