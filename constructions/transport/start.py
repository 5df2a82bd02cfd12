r"""Starting bases for the exact simplex: from a float plan (POT's ``ot.emd``), or a feasible one from scratch.

**From a plan.** A vertex of the transport polytope is supported on a forest (its positive entries are a
subset of a basis; Dantzig 1963, ch. 17), so POT's plan, which comes from a network simplex, names its basis
up to the degenerate arcs (a basis arc with zero flow: n - 1 of them when the plan is a permutation). The
support is completed to a spanning tree by a minimum spanning tree (scipy's ``minimum_spanning_tree``) in
which the support's arcs come first, heaviest mass first, and the other arcs follow by |M~_ij - u_i - v_j|
for POT's float duals (u, v) when they are given (POT's degenerate basis arcs have 0 there), else by M~_ij.
The MST is first taken over the support and each line's few best arcs, and over every arc only if those do
not connect the graph. Nothing here needs to be right: the exact simplex (:mod:`constructions.transport.simplex`)
starts from whatever tree this gives and proves or repairs it.

**From scratch** (:func:`least_cost`): the matrix-minimum rule (Dantzig 1963, §17.3, the least-cost method)
visits the arcs in a given order and gives each the most it can, min(supply left, demand left), removing one
exhausted line per arc (a row while another row is alive, else the column): n + m - 1 arcs, each joining a
removed line to one still alive, so a spanning tree whose flows are >= 0, exactly.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np
from flint import fmpq
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree

from attncert.constructions.transport.problem import TransportProblem
from attncert.constructions.transport.tree import Tree

#: Each row and column offers this many of its best arcs to the first spanning tree.
CANDIDATES = 4
#: Rounds of Bellman-Ford in :func:`plan_duals` (each O(k^2) for k components of the support).
BF_ROUNDS = 200


def from_plan(problem: TransportProblem, G: np.ndarray, u: np.ndarray | None = None, v: np.ndarray | None = None) -> Tree:
    """A spanning tree holding as much of the float plan G's support as has no cycle, completed by the arcs nearest
    to tight for the duals (u, v): POT's, or :func:`plan_duals` of G's support when they are not given."""
    n, m = problem.n, problem.m
    rows, cols = np.nonzero(G > 0)
    mass = G[rows, cols]
    if len(rows) == n + m - 1 and _components(n, m, rows, cols)[0] == 1:
        return Tree(n, m, tuple(rows.tolist()), tuple(cols.tolist()))  # n + m - 1 arcs connecting n + m nodes: a tree
    if u is None or v is None:
        u, v = plan_duals(problem, rows, cols)
    with np.errstate(all="ignore"):
        slack = problem.cost.approx - u[:, None]
        slack -= v[None, :]
        np.abs(slack, out=slack)
    finite = np.isfinite(slack)
    slack[~finite] = np.inf
    support = 0.5 - 0.25 * mass / float(mass.max()) if len(mass) else mass  # in [0.25, 0.5]: heaviest first
    top = float(np.max(slack, where=finite, initial=0.0))
    approx = problem.cost.approx
    usable = np.isfinite(approx)
    scale = max(-float(np.min(approx, where=usable, initial=0.0)), float(np.max(approx, where=usable, initial=0.0))) or 1.0
    del finite, usable
    for extra_r, extra_c in _candidates(slack, TIGHT * scale):
        w = 1.0 + np.minimum(slack[extra_r, extra_c], top) / (2 * top if top > 0 else 1.0)  # in [1, 1.5]: after the support
        T = minimum_spanning_tree(_graph(n, m, np.concatenate([rows, extra_r]), np.concatenate([cols, extra_c]), np.concatenate([support, w]))).tocoo()
        if T.nnz == n + m - 1:
            lo, hi = np.minimum(T.row, T.col), np.maximum(T.row, T.col)
            return Tree(n, m, tuple(lo.tolist()), tuple((hi - n).tolist()))
    raise AssertionError("the complete bipartite graph is connected")  # pragma: no cover


#: Arcs whose float slack |M~ - u - v| is at most TIGHT times the largest |M~| are offered first (a basis arc of
#: POT's has slack at rounding level; others are rarely that close).
TIGHT = 2.0**-36


def _candidates(slack: np.ndarray, tight: float) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Arcs offered to the spanning tree, in growing sets: the tight ones, each row's CANDIDATES best, every arc."""
    yield np.nonzero(slack <= tight)
    k = min(CANDIDATES, slack.shape[1])
    best = np.argpartition(slack, k - 1, axis=1)[:, :k]
    yield np.repeat(np.arange(slack.shape[0]), k), best.ravel()
    yield np.nonzero(np.ones(slack.shape, dtype=bool))


def _grouped_min(X: np.ndarray, labels: np.ndarray, axis: int) -> np.ndarray:
    """The minimum of X's slices along ``axis`` over each label present, in increasing order of label (a reordering
    only, where every label is present once: a permutation plan's components hold one row and one column)."""
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    starts = np.nonzero(np.r_[True, sorted_labels[1:] != sorted_labels[:-1]])[0]
    picked = np.take(X, order, axis=axis)
    return picked if len(starts) == len(labels) else np.minimum.reduceat(picked, starts, axis=axis)


def _components(n: int, m: int, rows: np.ndarray, cols: np.ndarray) -> tuple[int, np.ndarray]:
    """The connected components of the arcs' graph on n + m nodes: their number and each node's label."""
    A = coo_matrix((np.ones(len(rows)), (rows, cols + n)), shape=(n + m, n + m))
    return connected_components(A, directed=False)


def plan_duals(problem: TransportProblem, rows: np.ndarray, cols: np.ndarray, rounds: int = BF_ROUNDS) -> tuple[np.ndarray, np.ndarray]:
    """Float duals (u, v) tight on a plan's support (rows, cols), for choosing the arcs that complete it.

    On each component of the support, u_i + v_j = M~_ij fixes the duals up to one offset per component (a walk
    from the component's first node). Offsets alpha (rows + alpha_p, columns - alpha_q) keep every reduced
    cost >= 0 when alpha_p - alpha_q <= W_pq, W_pq the least reduced cost from the component p's rows to q's
    columns: difference constraints, solved by Bellman-Ford from a virtual source (alpha = 0), vectorised as
    alpha <- min(alpha, min_q (W_pq + alpha_q)), for at most ``rounds`` rounds (Cormen et al., *Introduction to
    Algorithms*, 3rd ed., §24.4). Shortest-path arcs are tight, so they join the components. A heuristic only: the
    exact simplex checks and repairs whatever basis it leads to.
    """
    n, m = problem.n, problem.m
    count, label = _components(n, m, rows, cols)
    pot = np.zeros(n + m)
    adj: list[list[tuple[int, float]]] = [[] for _ in range(n + m)]
    for i, j, c in zip(rows.tolist(), cols.tolist(), problem.cost.approx[rows, cols].tolist()):
        adj[i].append((n + j, c))
        adj[n + j].append((i, c))
    seen = np.zeros(n + m, dtype=bool)
    for root in range(n + m):
        if seen[root]:
            continue
        seen[root] = True
        todo = [root]
        while todo:
            x = todo.pop()
            for y, c in adj[x]:
                if not seen[y]:
                    seen[y] = True
                    pot[y] = c - pot[x]
                    todo.append(y)
    u, v = pot[:n], pot[n:]
    if count == 1:
        return u, v
    with np.errstate(all="ignore"):
        R = problem.cost.approx - u[:, None] - v[None, :]
    R[~np.isfinite(R)] = np.inf
    lr, lc = label[:n], label[n:]
    Wk = np.full((count, count), np.inf)
    Wk[np.ix_(np.unique(lr), np.unique(lc))] = _grouped_min(_grouped_min(R, lr, 0), lc, 1)  # by rows, then columns: W_pq
    del R
    alpha = np.zeros(count)
    changed = np.arange(count)  # only offsets that moved can shorten a path (Bellman-Ford with a queue, as SPFA)
    for _ in range(rounds):
        if not len(changed):
            break
        with np.errstate(invalid="ignore"):
            new = np.minimum(alpha, np.min(Wk[:, changed] + alpha[changed][None, :], axis=1))
        if not np.isfinite(new).all():
            break
        changed = np.nonzero(new < alpha)[0]
        alpha = new
    alpha[~np.isfinite(alpha)] = 0.0
    return u + alpha[lr], v - alpha[lc]


def _graph(n: int, m: int, rows: np.ndarray, cols: np.ndarray, weights: np.ndarray):  # type: ignore[no-untyped-def]
    """The bipartite graph on n + m nodes with these weighted arcs (duplicates keep their smallest weight)."""
    order = np.lexsort((weights, cols, rows))
    rows, cols, weights = rows[order], cols[order], weights[order]
    first = np.ones(len(rows), dtype=bool)
    first[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
    return coo_matrix((weights[first], (rows[first], cols[first] + n)), shape=(n + m, n + m)).tocsr()


def least_cost(a: Sequence[fmpq], b: Sequence[fmpq], order: np.ndarray) -> Tree:
    """The matrix-minimum basis visiting the flat arc indices ``order`` (i m + j) in turn: feasible, exactly."""
    n, m = len(a), len(b)
    left_a, left_b = list(a), list(b)
    alive_r, alive_c = [True] * n, [True] * m
    count_r, count_c = n, m
    rows: list[int] = []
    cols: list[int] = []
    for k in order.tolist():
        i, j = divmod(k, m)
        if not (alive_r[i] and alive_c[j]):
            continue
        t = min(left_a[i], left_b[j])
        left_a[i] -= t
        left_b[j] -= t
        rows.append(i)
        cols.append(j)
        if len(rows) == n + m - 1:
            break
        if left_a[i] == 0 and count_r > 1:
            alive_r[i], count_r = False, count_r - 1
        else:
            alive_c[j], count_c = False, count_c - 1
    return Tree(n, m, tuple(rows), tuple(cols))
