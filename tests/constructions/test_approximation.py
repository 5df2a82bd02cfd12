"""The McShane construction (constructions/approximation): targets, samples, the RASP program, exact
bounds on boxes, and the branch-and-bound.

References are computed here from the definitions (brute-force maxima over the grid in fmpq), never
taken from the code under test.
"""

from __future__ import annotations

import math
import random

import pytest
from flint import ctx, fmpq

from attncert.constructions import rasp
from attncert.constructions.approximation.boxes import UNIT, Box, Pieces
from attncert.constructions.approximation.branch_bound import search
from attncert.constructions.approximation.grid import Grid, network_slope, samples
from attncert.constructions.approximation.mcshane import McShane, sequence_length
from attncert.constructions.approximation.targets import LIBRARY, target
from attncert.constructions.compiler import compile_graph
from attncert.exact import QQ, ParseError
from attncert.exact.expressions import compile_enclosure, point, variables


def mcshane(name: str, d: int, m: int, bits: int = 24) -> McShane:
    t = target(name, d)
    grid = Grid(d, m)
    return McShane(grid, tuple(samples(t, grid, bits, 64)), bits, network_slope(t, m))


def g_by_definition(ms: McShane, x: list[fmpq]) -> fmpq:
    """max_i min_{k, s} (y_i - s L (x_k - x_ik)), the max of mins of the affine pieces, by brute force."""
    pts = ms.grid.points()
    return max(
        min(ms.y(i) - s * ms.slope * (x[k] - fmpq(int(pts[i][k]), ms.grid.m)) for k in range(ms.grid.d) for s in (1, -1))
        for i in range(ms.grid.size)
    )


@pytest.mark.parametrize("name, d, m", [("three_cones", 1, 5), ("minmax", 2, 3), ("cone", 3, 2), ("sqrt", 1, 4)])
def test_the_rasp_program_is_the_max_of_mins_exactly(name, d, m):
    ms = mcshane(name, d, m)
    cons = ms.construction()
    g = cons.graph()
    rng = random.Random(d * 100 + m)
    for _ in range(4):
        x = [fmpq(rng.randint(-20, 120), rng.randint(1, 97)) for _ in range(d)]  # also outside the cube
        out = rasp.evaluate_graph(g, cons.layout.encode({"x": [x]}, QQ), QQ)["output"]
        want = g_by_definition(ms, x)
        assert all(v == want for v in out)
        assert ms.value(x) == want


@pytest.mark.parametrize("d, m", [(1, 2), (1, 7), (2, 4), (3, 3)])
def test_width_and_depth(d, m):
    ms = mcshane("cone", d, m)
    N = 1 << ((m + 1) ** d - 1).bit_length()
    N *= 1 << (2 * d - 1).bit_length()
    size = rasp.size(ms.construction().graph())
    assert ms.length == sequence_length(d, m) == N
    assert size.layers == 2 + N.bit_length() - 1
    assert size.heads == [1, 0] + [1] * (N.bit_length() - 1)


def test_the_network_lipschitz_constant_is_the_slope():
    for name, d, m in [("three_cones", 2, 4), ("sqrt", 1, 16), ("cbrt", 1, 8)]:
        ms = mcshane(name, d, m)
        assert ms.lipschitz() == ms.slope


def test_holder_slope_is_h_to_alpha_minus_one_or_rounded_up():
    assert network_slope(target("sqrt", 1), 16) == 4  # 16^(1/2)
    assert network_slope(target("cbrt", 1), 8) == 4  # 8^(2/3)
    s = network_slope(target("sqrt", 1), 8)  # sqrt(8), irrational: the next multiple of 2^-16 above it
    assert s**2 > 8 and (s - fmpq(1, 2**16)) ** 2 < 8 and (s * 2**16).q == 1


def test_samples_are_within_the_rounding():
    t = target("sin", 1)
    grid = Grid(1, 7)
    Y = samples(t, grid, 20, 64)
    for j, v in enumerate(Y):
        assert abs(fmpq(v, 2**20) - fmpq(round(math.sin(math.pi * j / 7) * 2**40), 2**40)) <= fmpq(1, 2**20)


def test_a_small_compiled_model_equals_the_program():
    ms = mcshane("three_cones", 1, 4)
    cons = ms.construction()
    g = cons.graph()
    model = compile_graph(g, cons.layout.length, "scalar")
    x = [fmpq(2, 7)]
    out, _ = model.forward(cons.layout.encode({"x": [x]}, QQ), QQ)
    assert set(out["output"]) == {g_by_definition(ms, x)}


@pytest.mark.parametrize("d", [1, 2, 3])
def test_box_bounds_are_exact(d):
    """sup_B g is attained at the point of B nearest the maximising grid point; inf bound is below g on B."""
    ms = mcshane("three_cones", d, 3)
    pieces = Pieces(ms.grid.points(), ms.grid.m, ms.Y, ms.bits, ms.slope)
    rng = random.Random(d)
    boxes = [UNIT(d)]
    for _ in range(12):
        boxes.append(boxes[rng.randrange(len(boxes))].children()[rng.randrange(2)])
    sups, infs = pieces.on_boxes(boxes)
    for bx, s, i in zip(boxes, sups, infs):
        sides = bx.sides()
        clamp = lambda p: [min(max(fmpq(int(c), 3), lo), hi) for c, (lo, hi) in zip(p, sides)]  # noqa: E731
        candidates = [clamp(p) for p in ms.grid.points()]
        assert max(g_by_definition(ms, x) for x in candidates) == s
        inside = [[lo + (hi - lo) * fmpq(rng.randint(0, 8), 8) for lo, hi in sides] for _ in range(6)]
        assert all(i <= g_by_definition(ms, x) <= s for x in inside + candidates)


def test_boxes_tile_as_they_split():
    b = Box(0, (0, 0))
    left, right = b.children()
    assert left.sides() == [(0, fmpq(1, 2)), (0, 1)] and right.sides() == [(fmpq(1, 2), 1), (0, 1)]
    assert [c.sides() for c in left.children()] == [[(0, fmpq(1, 2)), (0, fmpq(1, 2))], [(0, fmpq(1, 2)), (fmpq(1, 2), 1)]]


@pytest.mark.parametrize("name, d, m", [("three_cones", 1, 16), ("three_cones", 2, 8), ("sin", 1, 12), ("sqrt", 1, 16), ("cbrt", 1, 8)])
def test_certified_error_brackets_the_theory(name, d, m):
    """lower <= sup |f - g| <= eps, and sup |f - g| <= C h^alpha (2^-alpha + 1/2) + 2^-bits (docs/approximation.md),
    which for alpha = 1 is L h + 2^-bits."""
    ms = mcshane(name, d, m)
    t = target(name, d)
    pieces = Pieces(ms.grid.points(), m, ms.Y, ms.bits, ms.slope)
    f = compile_enclosure(t.expr, variables(d))
    res = search(f, pieces, d, fmpq(5, 4), 20_000, 64)
    assert 0 < res.lower <= res.eps <= fmpq(5, 4) * res.lower
    h = fmpq(1, m)
    if t.lipschitz:
        assert res.lower <= t.constant * h + fmpq(1, 2**ms.bits)
    else:
        assert float(res.lower) <= float(t.constant) * float(h) ** float(t.alpha) * (2 ** -float(t.alpha) + 0.5) + 2**-ms.bits + 1e-12
    with ctx.workprec(64):  # the lower bound is attained: |f - g| at the worst point
        lo, hi = f([point(c) for c in res.worst_point])
    gx = ms.value(list(res.worst_point))
    assert max(lo.fmpq() - gx, gx - hi.fmpq()) == res.lower
    total = sum(fmpq(1, 2**bx.depth) for bx in res.leaves)
    assert total == 1 and len(set(res.leaves)) == len(res.leaves)


def test_a_budget_stops_the_search_with_a_proven_bound():
    ms = mcshane("three_cones", 2, 8)
    pieces = Pieces(ms.grid.points(), 8, ms.Y, ms.bits, ms.slope)
    res = search(compile_enclosure(target("three_cones", 2).expr, variables(2)), pieces, 2, fmpq(101, 100), 40, 64)
    assert len(res.leaves) <= 40 and res.eps > fmpq(101, 100) * res.lower


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"name": "nope", "d": 1}, "unknown target"),
        ({"name": "cone", "d": 2, "constant": "0"}, "L must be > 0"),
        ({"name": "cone", "d": 2, "constant": "-1"}, "L must be > 0"),
        ({"name": "sqrt", "d": 1, "alpha": "3/2"}, "alpha must be in (0, 1]"),
        ({"name": "sqrt", "d": 1, "alpha": "0"}, "alpha must be in (0, 1]"),
        ({"name": "expr", "d": 1, "expr": "x1 + x2", "constant": "1"}, "function of d = 1"),
        ({"name": "expr", "d": 1, "expr": "x1"}, "needs its Lipschitz"),
    ],
)
def test_bad_targets_are_refused(kwargs, fragment):
    name = kwargs.pop("name")
    with pytest.raises(ParseError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        target(name, **kwargs)


def test_the_library_parses_at_every_dimension():
    for name in LIBRARY:
        for d in (1, 2, 3, 4):
            t = target(name, d)
            assert t.expr.free_symbols <= set(variables(d)) and t.constant > 0 and 0 < t.alpha <= 1
