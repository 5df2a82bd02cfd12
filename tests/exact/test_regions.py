"""Region splitting: Motzkin certificates of empty sign regions, and the depth-first search.

Feasibility is checked independently of Fourier–Motzkin: a nonempty region of small integer
forms in two variables contains a point of a fixed candidate set (centroids of three vertices
of the arrangement, and points on its lines), which a brute-force search tries.
"""

import itertools
from fractions import Fraction

from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.exact.symbolic.regions import GroupSearch, farkas, farkas_holds, normal


def form(a: int, b: int, c: int):
    coeffs = tuple((i, fmpq(x)) for i, x in ((0, a), (1, b)) if x)
    return coeffs, fmpq(c)


def _value(f, p):
    return sum(Fraction(int(a.p), int(a.q)) * p[i] for i, a in f[0]) + Fraction(int(f[1].p), int(f[1].q))


def _satisfies(decisions, p) -> bool:
    for f, s in decisions:
        v = _value(f, p)
        if (s > 0 and v <= 0) or (s < 0 and v >= 0) or (s == 0 and v != 0):
            return False
    return True


def _candidates(decisions):
    """Points of every nonempty region of the arrangement: vertices, centroids of vertex triples
    (inside every bounded 2-cell), points along each line beside its vertices, and far points."""
    lines = [f for f, _ in decisions]
    vertices = set()
    for f, g in itertools.combinations(lines, 2):
        (a1, b1), (a2, b2) = ([Fraction(int(dict(h[0]).get(i, fmpq(0)).p), int(dict(h[0]).get(i, fmpq(0)).q)) for i in (0, 1)] for h in (f, g))
        c1, c2 = Fraction(int(f[1].p), int(f[1].q)), Fraction(int(g[1].p), int(g[1].q))
        det = a1 * b2 - a2 * b1
        if det:
            vertices.add(((-c1 * b2 + c2 * b1) / det, (-a1 * c2 + a2 * c1) / det))
    far = [(Fraction(x), Fraction(y)) for x in (-1000, 0, 1000) for y in (-1000, 0, 1000) if x or y]
    base = list(vertices) + far + [(Fraction(x), Fraction(y)) for x in range(-6, 7, 3) for y in range(-6, 7, 3)]
    pts = set(base)
    corners = list(vertices) + far  # a 2-cell has three of these spanning a triangle inside it
    for p, q, r in itertools.combinations(corners, 3):
        pts.add(((p[0] + q[0] + r[0]) / 3, (p[1] + q[1] + r[1]) / 3))
    for p, q in itertools.combinations(corners, 2):
        pts.add(((p[0] + q[0]) / 2, (p[1] + q[1]) / 2))
    for p in list(vertices):
        for dx, dy in itertools.product((Fraction(-1, 97), 0, Fraction(1, 97)), repeat=2):
            pts.add((p[0] + dx, p[1] + dy))
    on_lines = []
    for f in lines:  # points on each line, for regions inside a line, and between parallel lines
        c = dict(f[0])
        a, b = (Fraction(int(c.get(i, fmpq(0)).p), int(c.get(i, fmpq(0)).q)) for i in (0, 1))
        k = Fraction(int(f[1].p), int(f[1].q))
        # the parameter runs past every vertex on both sides, for a ray of the line beyond them all
        ts = set(range(-6, 7)) | {1000, -1000} | {v[0 if b else 1] + d for v in vertices for d in (-1, 1)}
        for t in ts:
            on_lines.append((t, -(k + a * t) / b) if b else (-k / a, t))
    pts.update(on_lines)
    for p, q in itertools.combinations(on_lines, 2):
        pts.add(((p[0] + q[0]) / 2, (p[1] + q[1]) / 2))
    return pts


decision = st.tuples(st.integers(-3, 3), st.integers(-3, 3), st.integers(-4, 4), st.sampled_from((-1, 0, 1))).filter(lambda t: t[0] or t[1])


@settings(max_examples=60, deadline=None)
@given(st.lists(decision, min_size=1, max_size=4))
def test_farkas_certifies_exactly_the_empty_regions(items):
    decisions = [(form(a, b, c), s) for a, b, c, s in items]
    cert = farkas(decisions)
    found = any(_satisfies(decisions, p) for p in _candidates(decisions))
    if cert is None:
        assert found, "a region called nonempty has no point among the candidates"
    else:
        assert farkas_holds(decisions, cert)
        assert not found


def test_farkas_holds_refuses_bad_multipliers():
    x_pos, x_neg = (form(1, 0, 0), 1), (form(1, 0, 0), -1)
    assert farkas_holds([x_pos, x_neg], [fmpq(1), fmpq(1)])
    assert not farkas_holds([x_pos, x_neg], [fmpq(1), fmpq(2)])  # linear part 1 - 2 != 0
    assert not farkas_holds([x_pos, x_neg], [fmpq(-1), fmpq(-1)])  # negative λ
    assert not farkas_holds([x_pos, (form(0, 1, 0), 1)], [fmpq(0), fmpq(0)])  # nothing at all
    # x = 0 and x - 1 = 0: μ = (1, -1) gives the constant 1 != 0 with no strict λ
    assert farkas_holds([(form(1, 0, 0), 0), (form(1, 0, -1), 0)], [fmpq(1), fmpq(-1)])


def test_normal_form_is_one_key_per_question():
    f, s = normal(form(-2, 4, 6))
    assert s == -1 and f == (((0, fmpq(1)), (1, fmpq(-2))), fmpq(-3))
    assert normal(form(1, -2, -3)) == (f, 1)


def test_search_visits_every_sign_pattern_of_two_questions():
    """Questions x and y: 9 leaves; then x and x - 1 on one line: the empty patterns are certified."""
    g = GroupSearch(frozenset({0, 1}))
    seen = []
    while not g.exhausted:
        seen.append((g.decide(form(1, 0, 0)), g.decide(form(0, 1, 0))))
        g.end_pass()
    assert sorted(seen) == sorted(itertools.product((-1, 0, 1), repeat=2))
    g = GroupSearch(frozenset({0}))
    seen = []
    while not g.exhausted:
        seen.append((g.decide(form(1, 0, 0)), g.decide(form(1, 0, -1))))
        g.end_pass()
    # x < 0 forces x - 1 < 0; x = 0 forces x - 1 < 0; x > 0 leaves all three signs of x - 1
    assert sorted(seen) == [(-1, -1), (0, -1), (1, -1), (1, 0), (1, 1)]
    empties = []

    def walk(node):
        for b in node.branches:
            if isinstance(b, tuple) and b[0] == "empty":
                empties.append(b[1])
            elif not isinstance(b, tuple):
                walk(b)

    walk(g.root)
    assert len(empties) == 4
