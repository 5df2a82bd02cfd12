"""The identity checker's region splitting: recorded sign trees, their Motzkin certificates, and the
oracle that replays them (docs/identity.md, "Piecewise maps: regions").

**What a certificate records.** ``outputs.regions`` partitions the input variables into groups;
each group has a *sign tree*. A node is a normalised affine form g (coefficients by increasing
variable index, the first one 1; a constant) and three branches, for g < 0, g = 0 and g > 0; a
branch is a node, ``{"leaf": k}``, or ``{"empty": multipliers}``, one multiplier per decision on
the path from the root to that option (the option itself last).

**Why the leaves cover every input.** A point x follows one path: at each node it takes the
branch of the sign of g(x). The path ends at a leaf, or at an empty option, whose region

    P = { x : s_i f_i(x) > 0 for the strict decisions, f_j(x) = 0 for the zero ones }

contains x. An empty option's multipliers (λ_i for the strict decisions, μ_j for the zero ones)
are checked here (:func:`motzkin_holds`): λ_i >= 0, Σ λ_i s_i f_i + Σ μ_j f_j has linear part 0
and constant c, with c <= 0 if some λ_i > 0, else c != 0. On a point of P the left side is > 0
(some λ_i > 0) or = 0 (none), so c would be > 0, or 0: P is empty (Motzkin 1936, the direction a
checker needs). So every x lies in the region of some leaf.

**The replay** (:class:`RegionOracle`). The evaluation is repeated, pass by pass. In a pass each
group follows one path of its tree: a sign question about an affine form f of the inputs goes to
the group holding f's variables (a form over two groups is refused); if f's normal form g
(f = |c| s g) was decided on the current path, the answer is s times that decision; otherwise
the question must be the node the path has reached, and the answer is s times the branch the
pass follows there. At the end of the pass each group must stand on a leaf, the next in
depth-first order (branches -, 0, + in turn, empties skipped); a group that has visited its last
leaf is exhausted and keeps following its last path. Every non-empty branch is thus visited, and
each leaf once, in the order of its number.

**Why comparing on the leaves proves the identity.** On a pass that ends on leaf L of group k,
every question of group k was answered as it is at each point of L's region P. An output entry
whose data flow (:func:`proofs.checkers.identity.graph.influences`), with the variables its
reference reads, lies in group k depends only on group k's questions, so its value and its
reference on the pass are the functions they are on P; if their difference vanishes on P's
equalities (:meth:`Field.is_zero_on`) it vanishes on P. The regions of the leaves cover R^m.
"""

from __future__ import annotations

from typing import Any, Union

from flint import fmpq

from attncert.exact.errors import ParseError
from attncert.proofs.checkers.identity.field import IdentityFailure
from attncert.proofs.checkers.identity.graph import SignOracle

#: A normalised affine form: (variable, coefficient) pairs by increasing variable, the first coefficient 1; the constant.
Form = tuple[tuple[tuple[int, fmpq], ...], fmpq]
#: A form with a sign (-1, 0 or 1): one decision on a path.
Decision = tuple[Form, int]
SIGNS = (-1, 0, 1)


class Node:
    """A question of a recorded tree and its three branches (-, 0, +)."""

    __slots__ = ("form", "branches")

    def __init__(self, form: Form, branches: list["Branch"]):
        self.form, self.branches = form, branches


class Leaf:
    __slots__ = ("number",)

    def __init__(self, number: int):
        self.number = number


class Empty:
    __slots__ = ()


Branch = Union[Node, Leaf, Empty]


def normal(coefficients: dict[int, fmpq], constant: fmpq) -> tuple[Form, int]:
    """(g, s) with f = |c| s g, g's first coefficient 1 (c the coefficient of f's first variable)."""
    variables = sorted(coefficients)
    c = coefficients[variables[0]]
    return (tuple((v, coefficients[v] / c) for v in variables), constant / c), (1 if c > 0 else -1)


def motzkin_holds(decisions: list[Decision], multipliers: list[fmpq]) -> bool:
    """Whether the multipliers prove the region of ``decisions`` empty (module docstring)."""
    if len(multipliers) != len(decisions):
        return False
    linear: dict[int, fmpq] = {}
    constant = fmpq(0)
    strict_positive = False
    for ((pairs, c), s), lam in zip(decisions, multipliers):
        if s != 0:
            if lam < 0:
                return False
            strict_positive = strict_positive or lam > 0
        weight = lam * s if s else lam
        for v, a in pairs:
            linear[v] = linear.get(v, fmpq(0)) + weight * a
        constant += weight * c
    if any(linear.values()):
        return False
    return constant <= 0 if strict_positive else constant != 0


# -- reading ---------------------------------------------------------------------------------------


def read_regions(obj: Any, m: int, rational: Any) -> tuple[list[frozenset[int]], list[Branch]]:
    """The recorded groups (disjoint, covering the m variables) and their trees, every empty option's
    certificate checked; ``rational`` reads a recorded rational."""
    if not isinstance(obj, list) or not obj:
        raise ParseError("outputs.regions must be a non-empty list of groups")
    groups, trees = [], []
    seen: set[int] = set()
    for g in obj:
        if not isinstance(g, dict) or set(g) != {"variables", "tree"} or not isinstance(g["variables"], list):
            raise ParseError('a region group must be {"variables": [...], "tree": ...}')
        vs = g["variables"]
        if not vs or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < m for v in vs) or vs != sorted(set(vs)):
            raise ParseError(f"a region group's variables must be increasing indices below {m}")
        if seen & set(vs):
            raise IdentityFailure("outputs.regions: two groups share a variable")
        seen |= set(vs)
        group = frozenset(vs)
        groups.append(group)
        trees.append(_branch(g["tree"], group, [], rational, root=True))
    if len(seen) != m:
        raise IdentityFailure(f"outputs.regions: the groups cover {len(seen)} of the {m} variables")
    leaves = [_leaf_numbers(t) for t in trees]
    for k, numbers in enumerate(leaves):
        if sorted(numbers) != list(range(len(numbers))):
            raise IdentityFailure(f"outputs.regions: the leaves of group {k} are not numbered 0, 1, ... once each")
    return groups, trees


def _branch(obj: Any, group: frozenset[int], path: list[Decision], rational: Any, root: bool = False) -> Branch:
    if not isinstance(obj, dict) or len(obj) not in (1, 2):
        raise ParseError("a region tree's branch must be a node, a leaf or an empty option")
    if set(obj) == {"leaf"}:
        k = obj["leaf"]
        if not isinstance(k, int) or isinstance(k, bool) or k < 0:
            raise ParseError("a leaf's number must be a non-negative integer")
        return Leaf(k)
    if set(obj) == {"empty"} and not root:
        ms = obj["empty"]
        if not isinstance(ms, list):
            raise ParseError("an empty option's multipliers must be a list")
        if not motzkin_holds(path, [rational(x) for x in ms]):
            raise IdentityFailure(f"an empty option's multipliers at depth {len(path)} do not certify its region empty (Motzkin)")
        return Empty()
    if set(obj) != {"form", "branches"} or not isinstance(obj["branches"], list) or len(obj["branches"]) != 3:
        raise ParseError('a region tree node must be {"form": ..., "branches": [-, 0, +]}')
    form = _form(obj["form"], group, rational)
    return Node(form, [_branch(b, group, path + [(form, s)], rational) for b, s in zip(obj["branches"], SIGNS)])


def _form(obj: Any, group: frozenset[int], rational: Any) -> Form:
    if not isinstance(obj, dict) or set(obj) != {"coefficients", "constant"} or not isinstance(obj["coefficients"], list):
        raise ParseError('a region form must be {"coefficients": [[variable, q], ...], "constant": q}')
    pairs = []
    for p in obj["coefficients"]:
        if not isinstance(p, list) or len(p) != 2 or not isinstance(p[0], int) or isinstance(p[0], bool):
            raise ParseError("a region form's coefficient must be [variable, rational]")
        a = rational(p[1])
        if p[0] not in group or not a or (pairs and p[0] <= pairs[-1][0]):
            raise IdentityFailure("a region form's coefficients must be nonzero, on increasing variables of its group")
        pairs.append((p[0], a))
    if not pairs or pairs[0][1] != 1:
        raise IdentityFailure("a region form must be normalised: a non-constant form whose first coefficient is 1")
    return tuple(pairs), rational(obj["constant"])


def _leaf_numbers(b: Branch) -> list[int]:
    if isinstance(b, Leaf):
        return [b.number]
    if isinstance(b, Node):
        return [k for c in b.branches for k in _leaf_numbers(c)]
    return []


# -- the replay ------------------------------------------------------------------------------------


class _Walk:
    """One group's depth-first walk through its recorded tree, pass by pass."""

    def __init__(self, index: int, tree: Branch):
        self.index, self.tree = index, tree
        self.visited = 0
        self.exhausted = False
        self._replay: list[int] = []
        self._last: list[int] = []
        self._path: list[tuple[Node, int]] = []
        self._decided: dict[Form, int] = {}

    def _slot(self) -> Branch:
        if not self._path:
            return self.tree
        node, c = self._path[-1]
        return node.branches[c]

    def decide(self, g: Form) -> int:
        """The sign of the normalised form g on this pass's path."""
        known = self._decided.get(g)
        if known is not None:
            return known
        node = self._slot()
        if not isinstance(node, Node) or node.form != g:
            found = "a leaf" if isinstance(node, Leaf) else "an empty option" if isinstance(node, Empty) else "another question"
            raise IdentityFailure(
                f"the evaluation asks the sign of {_show(g)} where group {self.index}'s recorded tree has {found} "
                f"(depth {len(self._path)})"
            )
        depth = len(self._path)
        if depth < len(self._replay):
            c = self._replay[depth]
        else:
            c = next((k for k, b in enumerate(node.branches) if not isinstance(b, Empty)), None)
            if c is None:
                raise IdentityFailure(f"group {self.index}'s recorded tree has a node whose three options are empty")
        self._path.append((node, c))
        self._decided[g] = SIGNS[c]
        return SIGNS[c]

    def end_pass(self) -> list[tuple[dict[int, fmpq], fmpq]] | None:
        """Close the pass: the equalities of the leaf reached (None if exhausted before the pass)."""
        if self.exhausted:
            self._start(self._last)
            return None
        leaf = self._slot()
        if not isinstance(leaf, Leaf):
            raise IdentityFailure(f"a pass ends where group {self.index}'s recorded tree has a question that was not asked")
        if leaf.number != self.visited:
            raise IdentityFailure(f"group {self.index}'s leaves are not numbered in the order of the walk (leaf {leaf.number} is visited {self.visited}th)")
        self.visited += 1
        equalities = [(dict(n.form[0]), n.form[1]) for n, c in self._path if SIGNS[c] == 0]
        self._last = [c for _, c in self._path]
        nxt = None
        for depth in range(len(self._path) - 1, -1, -1):
            node, c = self._path[depth]
            later = [j for j in range(c + 1, 3) if not isinstance(node.branches[j], Empty)]
            if later:
                nxt = [cc for _, cc in self._path[:depth]] + [later[0]]
                break
        if nxt is None:
            self.exhausted = True
            nxt = self._last
        self._start(nxt)
        return equalities

    def _start(self, replay: list[int]) -> None:
        self._replay, self._path, self._decided = replay, [], {}


class RegionOracle(SignOracle):
    """The sign oracle of a certificate with regions: affine forms answered by the groups' walks."""

    def __init__(self, groups: list[frozenset[int]], trees: list[Branch]):
        self.groups = groups
        self._walks = [_Walk(k, t) for k, t in enumerate(trees)]
        self._group_of = {v: k for k, g in enumerate(groups) for v in g}

    def affine_sign(self, form: tuple[dict[int, fmpq], fmpq]) -> int:
        coefficients, constant = form
        owners = {self._group_of[v] for v in coefficients}
        if len(owners) != 1:
            raise IdentityFailure(f"a sign question links the recorded variable groups {sorted(owners)}")
        g, s = normal(coefficients, constant)
        return s * self._walks[owners.pop()].decide(g)

    def end_pass(self) -> dict[int, list[tuple[dict[int, fmpq], fmpq]]]:
        """Group -> the equalities of the leaf it reached, for the groups not exhausted before the pass."""
        out = {}
        for k, walk in enumerate(self._walks):
            equalities = walk.end_pass()
            if equalities is not None:
                out[k] = equalities
        return out

    def exhausted(self) -> bool:
        return all(w.exhausted for w in self._walks)

    def group_of(self, variables: frozenset[int]) -> int | None:
        """The one group holding all these variables (None for none); IdentityFailure if they span two."""
        owners = {self._group_of[v] for v in variables}
        if len(owners) > 1:
            raise IdentityFailure(f"an output entry depends on the recorded variable groups {sorted(owners)}")
        return owners.pop() if owners else None


def _show(g: Form) -> str:
    terms = " + ".join(f"{a}*x{v}" for v, a in g[0])
    return f"{terms} + {g[1]}"[:80]
