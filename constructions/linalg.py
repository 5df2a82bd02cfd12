"""Matrix lemmas as uniform RASP constructions: transpose, product, 3x3 inverse.

Each builder takes the sizes and returns one RASP program (a
:class:`~constructions.layout.Construction`). Index arithmetic on positions is
done by one MLP map each (``radix_affine``), data moves by EQ-gather heads
(Aggregate over Select(indices, source, EQ), which selects exactly one key),
and sums by a mean over a selected group followed by a multiplication with the
group size. Everything is exact in QQ and EE: the mean is an exact mean.

Layer counts (scheduled by :mod:`constructions.rasp.size`): transpose 2,
product 3, 3x3 inverse 5; the same as the paper's (Dutta et al., "On the
Existence of Universal Simulators of Attention"), for every size.
"""

from __future__ import annotations

from attncert.constructions import rasp
from attncert.constructions.layout import Construction, Layout
from attncert.constructions.rasp import Comparison as Cmp
from attncert.constructions.sizes.expr import SizeLike, smax, symbolic


def index_map(radices: tuple[SizeLike, ...], coeffs: tuple[SizeLike, ...], const: SizeLike = 0, bound: SizeLike | None = None, other: SizeLike = -1) -> rasp.SOp:
    """The position arithmetic t -> const + sum coeffs_i digit_i(t) (see ``radix_affine``), as one map."""
    f = rasp.fn("radix_affine", radices=radices, coeffs=coeffs, const=const, bound=bound, other=other)
    return rasp.numerical(rasp.Map(f, rasp.indices))


def gather(source: rasp.SOp, values: rasp.SOp = rasp.tokens) -> rasp.SOp:
    """out[t] = values[source[t]] (0 where source[t] is not a position): one attention head."""
    return rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, source, Cmp.EQ), rasp.numerical(values), default=0))


def _check_sizes(**sizes: SizeLike) -> None:
    """Each size a positive integer, or a size expression with symbols (a template's: symbols stand for
    positive integers)."""
    for k, v in sizes.items():
        if not symbolic(v) and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
            raise ValueError(f"size {k} must be a positive integer, got {v!r}")


def transpose(r: SizeLike, c: SizeLike) -> Construction:
    """M^T for an r x c matrix M.

    Input vec(M) (length N = r c). Output position t = i r + j (i < c, j < r) holds
    M[j][i], taken from position j c + i: 2 layers (map, then one gather head).
    """
    _check_sizes(r=r, c=c)
    source = index_map((c, r), (1, c)).named("transpose_source")
    return Construction("transpose", gather(source).named("transpose"), Layout((("M", r, c),), (c, r), r * c))


def matmul(r: SizeLike, k: SizeLike, c: SizeLike) -> Construction:
    """A B for A (r x k) and B (k x c), both in one sequence vec(A) ++ vec(B).

    Length N = max(rk + kc, rck). Position t = (i c + j) k + l (i < r, j < c, l < k)
    gathers A[i][l] (position i k + l) and B[l][j] (position r k + l c + j) with two
    heads and multiplies them; a third head averages the k products of group
    g = t // k, and a map multiplies by k. Output position i c + j holds (AB)[i][j];
    positions rc .. N-1 hold 0. 3 layers, 3 heads.
    """
    _check_sizes(r=r, k=k, c=c)
    n = smax(r * k + k * c, r * c * k)
    radices = (r, c, k)  # digits (i, j, l) of t
    a = gather(index_map(radices, (k, 0, 1)).named("A_source")).named("A_il")
    b = gather(index_map(radices, (0, 1, c), const=r * k).named("B_source")).named("B_lj")
    prod = rasp.numerical(rasp.SequenceMap(rasp.fn("mul"), a, b)).named("products")
    group = index_map((0, k), (1, 0), bound=r * c * k, other=-1).named("group")  # t // k, or -1 past the products
    mean = rasp.numerical(rasp.Aggregate(rasp.Select(group, rasp.indices, Cmp.EQ), prod, default=0)).named("group_mean")
    out = rasp.numerical(rasp.Map(rasp.fn("mul_const", c=k), mean)).named("matmul")
    return Construction("matmul", out, Layout((("A", r, k), ("B", k, c)), (r, c), n))


def inverse3() -> Construction:
    """M^{-1} = adj(M) / det(M) for a 3 x 3 matrix M (input vec(M), length 9).

    adj(M)[i][j] = C[j][i] with the cyclic cofactor formula
    C[a][b] = M[a+1][b+1] M[a+2][b+2] - M[a+1][b+2] M[a+2][b+1] (indices mod 3),
    and det(M) = sum_b M[0][b] C[0][b] (expansion along row 0). Four gather heads bring
    the factors of adj(M)[i][j] to position 3i + j, a fifth brings M[0][i] to position
    3i (where adj[i][0] = C[0][i] sits); the mean over positions {0, 3, 6} of
    3 M[0][i] adj[i][0] is det(M). 5 layers, 6 heads. A singular M makes the last map divide by an exact zero.
    """

    def src(f) -> rasp.SOp:
        table = tuple((t, f(t // 3, t % 3)) for t in range(9))
        return rasp.numerical(rasp.Map(rasp.fn("lookup", table=table, other=-1), rasp.indices))

    # adj[i][j] = C[j][i]: a = j, b = i.
    m1 = gather(src(lambda i, j: 3 * ((j + 1) % 3) + (i + 1) % 3))
    m2 = gather(src(lambda i, j: 3 * ((j + 2) % 3) + (i + 2) % 3))
    m3 = gather(src(lambda i, j: 3 * ((j + 1) % 3) + (i + 2) % 3))
    m4 = gather(src(lambda i, j: 3 * ((j + 2) % 3) + (i + 1) % 3))
    row0 = gather(src(lambda i, j: i if j == 0 else -1)).named("M_0i")
    row0_x3 = rasp.numerical(rasp.Map(rasp.fn("mul_const", c=3), row0))
    p1 = rasp.numerical(rasp.SequenceMap(rasp.fn("mul"), m1, m2))
    p2 = rasp.numerical(rasp.SequenceMap(rasp.fn("mul"), m3, m4))
    adj = rasp.numerical(rasp.SequenceMap(rasp.fn("sub"), p1, p2)).named("adjugate")
    term = rasp.numerical(rasp.SequenceMap(rasp.fn("mul"), row0_x3, adj)).named("det_terms_x3")
    first_col = rasp.numerical(rasp.Map(rasp.fn("lookup", table=((0, 1), (3, 1), (6, 1)), other=0), rasp.indices))
    det = rasp.numerical(rasp.Aggregate(rasp.Select(first_col, rasp.Full(1), Cmp.EQ), term, default=0)).named("det")
    inv = rasp.numerical(rasp.SequenceMap(rasp.fn("div"), adj, det)).named("inverse")
    return Construction("inverse3", inv, Layout((("M", 3, 3),), (3, 3), 9))
