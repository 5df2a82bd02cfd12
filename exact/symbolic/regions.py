"""Region splitting: the sign of an affine form of the inputs, decided branch by branch.

ReLU, MaxMin and the other piecewise maps ask for the sign of a value that depends on the
inputs. Where that value is an affine form f(x) = a·x + b, the input space splits into the
three regions f < 0, f = 0, f > 0, and a symbolic evaluation can follow each in turn: an
oracle answers every such question from a prescribed sequence of choices, and a depth-first
search over those sequences visits every *sign pattern* of the questions asked. The regions
that a pattern describes,

    P = { x : s_i f_i(x) > 0 for the strict decisions, f_j(x) = 0 for the zero ones },

cover R^m, so an identity proven on every nonempty P holds everywhere.

**Empty regions** are certified by the transposition theorem of Motzkin (1936): P is empty
iff there are multipliers λ_i >= 0 for the strict decisions and μ_j of any sign for the zero
ones with Σ λ_i s_i f_i + Σ μ_j f_j identically equal to a constant c, where either some
λ_i > 0 and c <= 0, or every λ_i = 0 and c != 0. (One direction, the one a checker needs, is
immediate: on a point of P the left side is > 0, or = 0 with every λ_i = 0.) The multipliers
are found by Fourier–Motzkin elimination over the rationals (:func:`farkas`); a checker only
multiplies and adds.

**Independent groups.** Questions about disjoint sets of variables are independent: the
caller partitions the variables into groups such that every output depends on one group
only (:func:`constructions.rasp.static.influences`), and each group runs its own search. One
evaluation advances every group by one leaf, so relu(n) takes 3 evaluations, not 3^n.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from flint import fmpq, fmpq_mpoly

from attncert.exact.errors import AttncertError
from attncert.exact.symbolic.terms import terms

#: An affine form: coefficient by variable index (nonzero), and the constant.
Affine = tuple[tuple[tuple[int, fmpq], ...], fmpq]
SIGNS = (-1, 0, 1)


class MixedGroups(AttncertError):
    """A sign question involves variables of two groups: the groups must be merged."""

    def __init__(self, groups: set[int]):
        super().__init__(f"a sign question links the variable groups {sorted(groups)}")
        self.groups = groups


class NondeterministicQuestion(AttncertError):
    """A replayed evaluation asked a different question than before at the same point of its search."""


def affine_form(p: fmpq_mpoly, index: Mapping[str, int]) -> Affine | None:
    """p as an affine form over the variables numbered by ``index``, or None if p has a term of degree > 1."""
    coeffs, const = {}, fmpq(0)
    for monomial, a in terms(p):
        if not monomial:
            const = a
        elif "*" in monomial or "^" in monomial:
            return None
        else:
            coeffs[index[monomial]] = a
    return tuple(sorted(coeffs.items())), const


def normal(f: Affine) -> tuple[Affine, int]:
    """(g, s) with f = |c| s g and g's first coefficient 1: one key per question, whatever its scale."""
    (first, c), *_ = f[0]
    s = 1 if c > 0 else -1
    return (tuple((i, a / c) for i, a in f[0]), f[1] / c), s


def variables_of(f: Affine) -> set[int]:
    return {i for i, _ in f[0]}


def farkas(decisions: list[tuple[Affine, int]]) -> list[fmpq] | None:
    """Motzkin multipliers (module docstring) proving the region of ``decisions`` empty, one per
    decision in order, or None if the region is nonempty.

    Fourier–Motzkin elimination, exact over Q, each derived constraint carrying the combination of
    decisions it is: the zero decisions eliminate one variable each (Gaussian elimination; one that
    reduces to 0 = c != 0 is a certificate with every λ = 0); then each remaining variable is
    eliminated from the strict ones by adding positive multiples of pairs with opposite signs
    (Fourier 1827, Motzkin 1936). What is left is constants, and a constant c <= 0 is a certificate.
    Region groups have few variables and few decisions, so the quadratic growth of a step stays small.
    (sympy 1.14's exact simplex answered some infeasible systems with points that violate them.)
    """
    rows = []  # (coefficients by variable, constant, strict, combination of decisions)
    for k, (f, s) in enumerate(decisions):
        w = s if s else 1
        rows.append(({i: w * a for i, a in f[0]}, w * f[1], s != 0, {k: fmpq(1)}))
    strict = [r for r in rows if r[2]]
    equalities = [r for r in rows if not r[2]]
    while equalities:
        e, *equalities = equalities
        lin, c, _, combo = e
        if not lin:
            if c:
                return _as_list(combo, len(decisions))
            continue
        v, a = next(iter(lin.items()))
        strict = [_add(r, e, -r[0].get(v, fmpq(0)) / a) for r in strict]
        equalities = [_add(r, e, -r[0].get(v, fmpq(0)) / a) for r in equalities]
    while True:
        variables = {v for r in strict for v in r[0]}
        if not variables:
            break
        v = min(variables)
        pos = [r for r in strict if r[0].get(v, 0) > 0]
        neg = [r for r in strict if r[0].get(v, 0) < 0]
        rest = [r for r in strict if v not in r[0]]
        strict = rest + [_add(_scale(p, -n[0][v]), n, p[0][v]) for p in pos for n in neg]
    for lin, c, _, combo in strict:
        if c <= 0:
            return _as_list(combo, len(decisions))
    return None


def _add(r: tuple, e: tuple, t: fmpq) -> tuple:
    """The constraint r + t e (r's kind), with its combination of decisions."""
    if not t:
        return r
    lin = dict(r[0])
    for i, a in e[0].items():
        x = lin.get(i, fmpq(0)) + t * a
        if x:
            lin[i] = x
        else:
            lin.pop(i, None)
    combo = dict(r[3])
    for k, m in e[3].items():
        combo[k] = combo.get(k, fmpq(0)) + t * m
    return lin, r[1] + t * e[1], r[2], combo


def _scale(r: tuple, t: fmpq) -> tuple:
    return {i: t * a for i, a in r[0].items()}, t * r[1], r[2], {k: t * m for k, m in r[3].items()}


def _as_list(combo: dict[int, fmpq], m: int) -> list[fmpq]:
    return [combo.get(k, fmpq(0)) for k in range(m)]


def farkas_holds(decisions: list[tuple[Affine, int]], multipliers: list[fmpq]) -> bool:
    """Whether the multipliers certify the region of ``decisions`` empty (module docstring)."""
    if len(multipliers) != len(decisions):
        return False
    linear: dict[int, fmpq] = {}
    constant = fmpq(0)
    positive = False
    for (f, s), lam in zip(decisions, multipliers):
        if s and lam < 0:
            return False
        positive = positive or (s != 0 and lam > 0)
        w = lam * (s if s else 1)
        for i, a in f[0]:
            linear[i] = linear.get(i, fmpq(0)) + w * a
        constant += w * f[1]
    if any(linear.values()):
        return False
    return constant <= 0 if positive else constant != 0


@dataclass
class Node:
    """A question of the search: a normalised form, and what each of its signs (-, 0, +) leads to."""

    form: Affine
    #: Per sign: None (not explored yet), a Node, ("leaf", k) or ("empty", multipliers).
    branches: list[Any] = field(default_factory=lambda: [None, None, None])


class GroupSearch:
    """The depth-first search over the sign patterns of one group's questions."""

    def __init__(self, variables: frozenset[int]):
        self.variables = variables
        self.root: Any = None
        self.leaves: list[list[tuple[Affine, int]]] = []  # each leaf's decisions, root first
        self.exhausted = False
        self._replay: list[int] = []
        self._path: list[tuple[Node, int]] = []
        self._decided: dict[Affine, int] = {}

    def decide(self, f: Affine) -> int:
        g, s = normal(f)
        known = self._decided.get(g)
        if known is not None:
            return s * known
        depth = len(self._path)
        slot = self._slot()
        node = slot.get()
        if node is None:
            node = Node(g)
            before = [(n.form, SIGNS[c]) for n, c in self._path]
            for k, sign in enumerate(SIGNS):
                # a non-constant form takes every sign on R^m: only a nonempty path can exclude one
                cert = farkas(before + [(g, sign)]) if before else None
                if cert is not None:
                    node.branches[k] = ("empty", cert)
            slot.set(node)
        elif not isinstance(node, Node) or node.form != g:
            raise NondeterministicQuestion("a replayed evaluation asked another sign question at the same point")
        if depth < len(self._replay):
            c = self._replay[depth]
        else:
            c = next(k for k, b in enumerate(node.branches) if not (isinstance(b, tuple) and b[0] == "empty"))
        self._path.append((node, c))
        self._decided[g] = SIGNS[c]
        return s * SIGNS[c]

    def _slot(self) -> "_Slot":
        if not self._path:
            return _Slot(self, None, 0)
        parent, c = self._path[-1]
        return _Slot(self, parent, c)

    def end_pass(self) -> int | None:
        """Close the current path as a leaf (its number) and prepare the next; None once exhausted."""
        if self.exhausted:
            self._reset(self._last)
            return None
        decisions = [(n.form, SIGNS[c]) for n, c in self._path]
        k = len(self.leaves)
        self.leaves.append(decisions)
        self._slot().set(("leaf", k))
        self._last = [c for _, c in self._path]
        nxt = None
        for depth in range(len(self._path) - 1, -1, -1):
            node, c = self._path[depth]
            later = [j for j in range(c + 1, 3) if node.branches[j] is None]
            if later:
                nxt = [cc for _, cc in self._path[:depth]] + [later[0]]
                break
        if nxt is None:
            self.exhausted = True
            self._reset(self._last)
        else:
            self._reset(nxt)
        return k

    def _reset(self, replay: list[int]) -> None:
        self._replay, self._path, self._decided = replay, [], {}

    def tree_json(self, form_json) -> Any:
        def walk(b: Any) -> Any:
            if isinstance(b, Node):
                return {"form": form_json(b.form), "branches": [walk(x) for x in b.branches]}
            kind, value = b
            return {"leaf": value} if kind == "leaf" else {"empty": [_q(v) for v in value]}

        return walk(self.root)


def _q(v: fmpq) -> str:
    from attncert.exact.rationals import rational_to_json

    return rational_to_json(v)


@dataclass
class _Slot:
    search: GroupSearch
    parent: Node | None
    choice: int

    def get(self) -> Any:
        return self.search.root if self.parent is None else self.parent.branches[self.choice]

    def set(self, value: Any) -> None:
        if self.parent is None:
            self.search.root = value
        else:
            self.parent.branches[self.choice] = value


class Regions:
    """The searches of all groups; the oracle a symbolic ring asks for the sign of an affine form."""

    def __init__(self, groups: list[frozenset[int]]):
        self.groups = [GroupSearch(g) for g in groups]
        self._group_of = {v: k for k, g in enumerate(groups) for v in g}

    def sign(self, f: Affine) -> int:
        owners = {self._group_of.get(v, -1) for v in variables_of(f)}
        if len(owners) != 1 or -1 in owners:
            raise MixedGroups(owners)
        return self.groups[owners.pop()].decide(f)

    def end_pass(self) -> dict[int, int]:
        """Group -> the leaf it reached in this pass, for the groups not exhausted before it."""
        out = {}
        for k, g in enumerate(self.groups):
            leaf = g.end_pass()
            if leaf is not None:
                out[k] = leaf
        return out

    def exhausted(self) -> bool:
        return all(g.exhausted for g in self.groups)
