r"""Recorded leaf partitions of [0, 1]^d: reading, and an exact check that they tile the cube.

A leaf is [D, a_1, ..., a_d]: the box after D bisections, each splitting the
first of the widest sides, so side k has level l_k = floor(D/d) + [k < D mod d]
and is [a_k / 2^l_k, (a_k + 1) / 2^l_k], 0 <= a_k < 2^l_k. Its two children
split side D mod d.

**Tiling check.** Walk the bisection tree from [0, 1]^d, breadth first: a node
that is a leaf stops its branch; a node with some leaf strictly below it (an
ancestor of a leaf) is split; any other node is covered by nothing (a hole,
reported with its box, the largest such). Every point of the cube lies in one
branch, so if no branch ends in a hole the leaves cover the cube. A leaf the
walk never reaches lies below another leaf (an overlap), and a leaf listed twice
overlaps itself; both are reported. The walk visits fewer than twice as many
nodes as there are leaves.

**Record.** A partition is a set of leaves; a certificate records it one way
only, in strictly increasing order of (D, a_1, ..., a_d), as the search writes
it, so that a reordered or repeated leaf is a malformed record, not another
certificate of the same claim.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from flint import fmpq

from attncert.exact import ParseError

#: Deepest level of one side (boxes narrower than 2^-60 are refused as malformed).
MAX_LEVEL = 60

Leaf = tuple[int, tuple[int, ...]]


def levels(depth: int, d: int) -> list[int]:
    q, r = divmod(depth, d)
    return [q + (k < r) for k in range(d)]


def sides(leaf: Leaf) -> list[tuple[fmpq, fmpq]]:
    depth, corner = leaf
    return [(fmpq(a, 1 << l), fmpq(a + 1, 1 << l)) for a, l in zip(corner, levels(depth, len(corner)))]


def read_leaves(obj: Any, d: int, most: int) -> list[Leaf]:
    """The recorded leaves, each [D, a_1..a_d] with 0 <= a_k < 2^l_k; at most ``most`` of them, in strictly
    increasing order of (D, a_1, ..., a_d). A partition is a set: it has one record, the sorted one."""
    if not isinstance(obj, list) or not obj:
        raise ParseError("the partition must be a non-empty list of leaves")
    if len(obj) > most:
        raise ParseError(f"the partition has {len(obj):,} leaves, more than max_leaves = {most:,}")
    out = []
    for leaf in obj:
        if not isinstance(leaf, list) or len(leaf) != d + 1 or not all(isinstance(v, int) and not isinstance(v, bool) for v in leaf):
            raise ParseError(f"a leaf must be a list of {d + 1} integers [D, a_1, ..., a_d], got {leaf!r:.60}")
        depth, corner = leaf[0], tuple(leaf[1:])
        if not 0 <= depth <= MAX_LEVEL * d or not all(0 <= a < 1 << l for a, l in zip(corner, levels(depth, d))):
            raise ParseError(f"the leaf {leaf!r:.60} is not a box of the bisection of [0, 1]^{d}")
        if out and (depth, corner) <= out[-1]:
            raise ParseError(f"the leaves must be listed once each, in increasing order [D, a_1, ..., a_d]: {leaf!r:.60} follows {[out[-1][0], *out[-1][1]]!r:.60}")
        out.append((depth, corner))
    return out


def tiling_problem(leaves: list[Leaf], d: int) -> str | None:
    """None if the leaves tile [0, 1]^d exactly (module docstring), else what is wrong."""
    listed = set(leaves)
    above: set[Leaf] = set()  # every strict ancestor of a leaf: the nodes with some leaf below them
    for depth, corner in leaves:
        while depth > 0:
            k = (depth - 1) % d
            parent = (depth - 1, tuple(a // 2 if i == k else a for i, a in enumerate(corner)))
            if parent in above:
                break
            above.add(parent)
            depth, corner = parent
    reached = 0
    queue = deque([(0, (0,) * d)])
    while queue:
        node = queue.popleft()
        if node in listed:
            reached += 1
        elif node in above:
            depth, corner = node
            k = depth % d
            for half in (0, 1):
                queue.append((depth + 1, tuple(2 * a + half if i == k else a for i, a in enumerate(corner))))
        else:  # no leaf is this box or below it: a hole (the largest one, its parent has leaves below)
            box = " x ".join(f"[{lo}, {hi}]" for lo, hi in sides(node))
            return f"the partition does not cover the box {box} of [0, 1]^{d}"
    if reached != len(leaves):
        return f"{len(leaves) - reached} leaf(s) of the partition overlap other leaves"
    return None
