"""The exponential basis: a Z-basis of the lattice spanned by exp arguments modulo constants.

Every exponential met while evaluating over the symbolic field is e^p for a polynomial
p = c + p' in the input variables, with c its constant term. The non-constant parts p'
span a lattice L in Q[x]; with a Z-basis b_1, ..., b_r of L, each p' = Σ_j a_j b_j with
integer a_j, so e^p = e^c · E_1^{a_1} ... E_r^{a_r} with E_j = e^{b_j}.

**Ax's theorem** (J. Ax, "On Schanuel's conjectures", Ann. of Math. 93 (1971), Cor. 2;
for polynomials already Ostrowski 1946 and Kolchin 1968): if y_1, ..., y_r in C[x] are
Q-linearly independent modulo C, then e^{y_1}, ..., e^{y_r} are algebraically independent
over C(x). A Z-basis of L is Q-linearly independent, so the E_j behave as independent
indeterminates over C(x). The constants e^c are handled apart (:mod:`exact.symbolic.polyexp`).

The basis grows during an evaluation: an argument outside the Q-span of the basis so far
becomes a new basis vector (independent of the others, so the basis stays a Z-basis of the
lattice of the arguments seen). An argument in the span with integer coordinates is a
monomial in the E_j. One in the span with a non-integer coordinate shows a finer lattice:
:class:`RefineBasis` carries a Z-basis of it (FLINT's Hermite normal form of the coordinates
over the old basis) and the caller evaluates again from that basis.

Membership in the span is decided by sparse Gaussian elimination over Q: one row per
basis vector, keyed by its leading monomial (distinct leading monomials make the rows
independent), each remembering the combination of basis vectors it is.
"""

from __future__ import annotations

from math import lcm
from typing import Any, Callable, Iterable

from flint import fmpq, fmpq_mpoly, fmpz_mat
from networkx.utils import UnionFind

from attncert.exact.errors import AttncertError
from attncert.exact.symbolic.terms import terms

#: A sparse vector of Q[x]: monomial (as FLINT prints it) -> nonzero rational coefficient.
Vector = dict[str, fmpq]
#: Integer coordinates in the basis, as sorted (basis index, nonzero exponent) pairs.
Coordinates = tuple[tuple[int, int], ...]


class RefineBasis(AttncertError):
    """The lattice of the arguments is finer than the basis: evaluate again from ``basis``."""

    def __init__(self, basis: list[fmpq_mpoly]):
        super().__init__(f"the exponential basis is refined to {len(basis)} vectors; evaluate again")
        self.basis = basis


def split_constant(p: fmpq_mpoly) -> tuple[fmpq, Vector]:
    """p as its constant term and the sparse vector of its other terms, keyed by monomial."""
    c, v = fmpq(0), {}
    for monomial, a in terms(p):
        if monomial:
            v[monomial] = a
        else:
            c = a
    return c, v


def vector_key(v: Vector) -> str:
    """A hashable key of a sparse vector (FLINT rationals hash through Python's Fraction, slowly)."""
    return ";".join(f"{m}:{a}" for m, a in sorted(v.items()))


class ExpBasis:
    """A Z-basis b_1, ..., b_r of the lattice of exp arguments modulo constants, grown on demand."""

    def __init__(self, seed: Iterable[fmpq_mpoly] = ()):
        #: The basis vectors b_j (non-constant polynomials), in the order they were added.
        self.vectors: list[fmpq_mpoly] = []
        # leading monomial -> (the reduced row, its combination of basis vectors: index -> coefficient)
        self._rows: dict[str, tuple[Vector, dict[int, fmpq]]] = {}
        self._known: dict[str, Coordinates] = {}
        for b in seed:
            before = len(self.vectors)
            self.coordinates(split_constant(b)[1], b)
            if len(self.vectors) != before + 1:
                raise ValueError("a seeded exponential basis must be Q-linearly independent modulo constants")

    def __len__(self) -> int:
        return len(self.vectors)

    def coordinates(self, v: Vector, p: fmpq_mpoly) -> Coordinates:
        """The integer coordinates of the non-constant part v of p, adding it to the basis if independent."""
        if not v:
            return ()
        key = vector_key(v)
        known = self._known.get(key)
        if known is not None:
            return known
        combo: dict[int, fmpq] = {}
        rest = dict(v)
        while rest:
            lead = max(rest)
            row = self._rows.get(lead)
            if row is None:
                break
            vec, comb = row
            f = rest[lead] / vec[lead]
            _axpy(rest, -f, vec)
            _axpy(combo, f, comb)
        if rest:
            j = len(self.vectors)
            self.vectors.append(p - p.context().constant(split_constant(p)[0]))
            comb = {k: -c for k, c in combo.items()}
            comb[j] = fmpq(1)
            self._rows[max(rest)] = (rest, comb)
            coords: Coordinates = ((j, 1),)
        elif any(c.q != 1 for c in combo.values()):
            raise RefineBasis(self._refined(combo))
        else:
            coords = tuple(sorted((k, int(c.p)) for k, c in combo.items()))
        self._known[key] = coords
        return coords

    def _refined(self, combo: dict[int, fmpq]) -> list[fmpq_mpoly]:
        """A Z-basis of the lattice generated by the basis and Σ_j combo_j b_j.

        In coordinates over the basis that lattice is generated by the unit vectors and the
        vector of combo; scaled by the common denominator D it is an integer lattice, whose
        Hermite normal form (FLINT) has r nonzero rows h_i; the new basis is Σ_j (h_ij / D) b_j.
        """
        r = len(self.vectors)
        den = lcm(*(int(c.q) for c in combo.values()))
        rows = [[den if i == j else 0 for j in range(r)] for i in range(r)]
        rows.append([int(combo.get(j, fmpq(0)) * den) for j in range(r)])
        h = fmpz_mat(rows).hnf()
        zero = self.vectors[0] * 0
        basis = []
        for i in range(h.nrows()):
            coeffs = [fmpq(int(h[i, j]), den) for j in range(r)]
            if any(coeffs):
                basis.append(sum((c * b for c, b in zip(coeffs, self.vectors) if c), zero))
        return basis


def _axpy(acc: dict, a: fmpq, x: dict) -> None:
    """acc += a x for sparse vectors, dropping zeros."""
    for k, c in x.items():
        s = acc.get(k, 0) + a * c
        if s:
            acc[k] = s
        else:
            acc.pop(k, None)


def hermite_basis(vectors: list[Vector], order: Callable[[str], Any]) -> tuple[list[Vector], list[Coordinates]]:
    """A Z-basis of the lattice the vectors generate, in Hermite normal form block by block, and
    each vector's integer coordinates over it.

    Vectors that share no monomial, directly or through others, span independent blocks; each
    block's lattice is put in Hermite normal form (FLINT's ``fmpz_mat.hnf`` of the block scaled
    to integers, columns in decreasing ``order``), so every basis row has a distinct leading
    monomial, its pivot, and the rows are Q-linearly independent at a glance. A one-vector
    block is that vector, its leading coefficient made positive. The coordinates are found by
    back-substitution on the pivots; they are integers because every vector is in the lattice.
    """
    keys: dict[str, Any] = {}

    def order_key(m: str) -> Any:
        k = keys.get(m)
        if k is None:
            k = keys[m] = order(m)
        return k

    linked = UnionFind(range(len(vectors)))
    owner: dict[str, int] = {}
    for i, v in enumerate(vectors):
        for m in v:
            linked.union(i, owner.setdefault(m, i))
    rows: list[Vector] = []
    coords: list[Coordinates] = [()] * len(vectors)
    for members in sorted(map(sorted, linked.to_sets())):  # blocks in order of their first vector
        first = len(rows)
        block = [vectors[i] for i in members]
        if len(block) == 1:
            (v,) = block
            lead = max(v, key=order_key)
            rows.append(v if v[lead] > 0 else {m: -a for m, a in v.items()})
        else:
            columns = sorted({m for v in block for m in v}, key=order_key, reverse=True)
            den = lcm(*(int(a.q) for v in block for a in v.values()))
            h = fmpz_mat([[int(v.get(m, 0) * den) for m in columns] for v in block]).hnf()
            for r in range(h.nrows()):
                row = {m: fmpq(int(h[r, c]), den) for c, m in enumerate(columns) if h[r, c] != 0}
                if row:
                    rows.append(row)
        pivots = [(max(rows[k], key=order_key), k) for k in range(first, len(rows))]
        for i in members:
            rest, found = dict(vectors[i]), []
            for lead, k in pivots:  # decreasing pivots: each row's pivot is below the ones before it
                a = rest.get(lead)
                if a is None:
                    continue
                f = a / rows[k][lead]
                if f.q != 1:
                    raise ArithmeticError("a vector has a non-integer coordinate over its lattice's Hermite basis")
                _axpy(rest, -f, rows[k])
                found.append((k, int(f.p)))
            if rest:
                raise ArithmeticError("a vector is outside the span of its block's Hermite basis")
            coords[i] = tuple(sorted(found))
    return rows, coords
