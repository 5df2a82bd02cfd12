r"""A basis of the transportation problem: a spanning tree of the bipartite graph, its flows and its potentials.

The constraint matrix of P 1 = a, P^T 1 = b is the incidence matrix of the complete bipartite graph on n row
nodes and m column nodes; it has rank n + m - 1, and its bases are exactly the spanning trees (Dantzig,
*Linear Programming and Extensions*, 1963, ch. 17; Ahuja, Magnanti & Orlin, *Network Flows*, 1993, Thm 11.11).
For a tree T (n + m - 1 arcs (i, j), rows numbered 0 .. n-1 and columns n .. n+m-1 as nodes):

* **flows**: the unique x supported on T with row sums a and column sums b, found by peeling leaves: a leaf
  row i has one arc, which must carry what is left of a_i; a leaf column likewise. Exact (fmpq), O(n + m).
  The tree is *primal feasible* when x >= 0.
* **potentials**: the unique (f, g) with f_0 = 0 and f_i + g_j = M_ij on every tree arc, by a walk from row 0.
  The tree is *dual feasible* when every reduced cost r_ij = M_ij - f_i - g_j is >= 0.

Both at once prove x optimal by LP duality: sum_ij M_ij P_ij >= sum_ij (f_i + g_j) P_ij = a.f + b.g for every
plan P, with equality for x (complementary slackness: x lives on arcs with r = 0). The certificate is x, f, g.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

from flint import fmpq

from attncert.constructions.transport.problem import TransportCost


class NotATree(ValueError):
    """The arcs are not a spanning tree of the n + m nodes (wrong count, a cycle, or not connected)."""


@dataclass(frozen=True)
class Tree:
    """n + m - 1 arcs (rows[k], cols[k]) forming a spanning tree of rows 0..n-1 and columns 0..m-1."""

    n: int
    m: int
    rows: tuple[int, ...]
    cols: tuple[int, ...]

    @cached_property
    def adjacency(self) -> list[list[tuple[int, int]]]:
        """For each node (row i: i, column j: n + j), its (neighbour node, arc index) pairs (built once)."""
        adj: list[list[tuple[int, int]]] = [[] for _ in range(self.n + self.m)]
        for k, (i, j) in enumerate(zip(self.rows, self.cols)):
            adj[i].append((self.n + j, k))
            adj[self.n + j].append((i, k))
        return adj

    def replace(self, leaving: int, row: int, col: int) -> Tree:
        """The tree with arc ``leaving`` (an index) swapped for (row, col)."""
        rows, cols = list(self.rows), list(self.cols)
        rows[leaving], cols[leaving] = row, col
        return Tree(self.n, self.m, tuple(rows), tuple(cols))


def spanning_tree(n: int, m: int, rows: Sequence[int], cols: Sequence[int]) -> Tree:
    """The arcs as a Tree, or NotATree: n + m - 1 distinct arcs in range that connect every node."""
    t = Tree(n, m, tuple(int(i) for i in rows), tuple(int(j) for j in cols))
    if len(t.rows) != n + m - 1 or len(t.cols) != len(t.rows):
        raise NotATree(f"a basis has n + m - 1 = {n + m - 1} arcs, not {len(t.rows)}")
    if not all(0 <= i < n for i in t.rows) or not all(0 <= j < m for j in t.cols):
        raise NotATree("an arc is outside the n x m matrix")
    if _reached(t) != n + m:
        raise NotATree("the arcs do not connect every row and column (n + m - 1 arcs that connect n + m nodes form a tree)")
    return t


def _reached(t: Tree) -> int:
    adj, seen, todo = t.adjacency, {0}, [0]
    while todo:
        for v, _ in adj[todo.pop()]:
            if v not in seen:
                seen.add(v)
                todo.append(v)
    return len(seen)


def flows(t: Tree, a: Sequence[fmpq], b: Sequence[fmpq]) -> list[fmpq]:
    """x on the tree's arcs, in their order: the unique flow on T with row sums a and column sums b (sum a = sum b)."""
    adj = t.adjacency
    left = list(a) + list(b)  # what each node still has to send (rows) or receive (columns)
    degree = [len(x) for x in adj]
    done = [False] * len(t.rows)
    x: list[fmpq] = [fmpq(0)] * len(t.rows)
    leaves = [v for v, d in enumerate(degree) if d == 1]
    while leaves:
        v = leaves.pop()
        if degree[v] != 1:  # the last arc's second end: its balance is 0 (sum a = sum b)
            continue
        for w, k in adj[v]:
            if not done[k]:
                break
        x[k] = left[v]
        left[w] -= left[v]
        done[k] = True
        degree[v] = 0
        degree[w] -= 1
        if degree[w] == 1:
            leaves.append(w)
    return x


def potentials(t: Tree, cost: TransportCost) -> tuple[list[fmpq], list[fmpq]]:
    """(f, g) with f_0 = 0 and f_i + g_j = M_ij on every arc of the tree, exactly."""
    M = cost.entries(t.rows, t.cols)
    adj, n = t.adjacency, t.n
    pot: list[fmpq | None] = [None] * (n + t.m)
    pot[0] = fmpq(0)
    todo = [0]
    while todo:
        v = todo.pop()
        for w, k in adj[v]:
            if pot[w] is None:
                pot[w] = M[k] - pot[v]  # type: ignore[operator]
                todo.append(w)
    return pot[:n], pot[n:]  # type: ignore[return-value]


def path(t: Tree, start: int, end: int) -> list[int]:
    """The arcs (indices) of the tree path from node ``start`` to node ``end``, in order."""
    adj = t.adjacency
    via: dict[int, int] = {start: -1}
    todo = [start]
    while todo and end not in via:
        v = todo.pop()
        for w, k in adj[v]:
            if w not in via:
                via[w] = k
                todo.append(w)
    arcs, v = [], end
    while v != start:
        k = via[v]
        arcs.append(k)
        v = t.rows[k] if v != t.rows[k] else t.n + t.cols[k]
    return arcs[::-1]


def side(t: Tree, removed: int) -> tuple[set[int], set[int]]:
    """Removing arc ``removed`` cuts the tree in two: the (rows, columns) of the part holding its row."""
    adj = t.adjacency
    seen, todo = {t.rows[removed]}, [t.rows[removed]]
    while todo:
        v = todo.pop()
        for w, k in adj[v]:
            if k != removed and w not in seen:
                seen.add(w)
                todo.append(w)
    return {v for v in seen if v < t.n}, {v - t.n for v in seen if v >= t.n}
