r"""The McShane-type extension as a max of mins of affine pieces, in closed form and as one RASP program.

With grid points x_i, samples y_i and slope L > 0,

    g(x) = max_i min_{k, s} (y_i - s L (x_k - x_{i,k}))      (s = +1, -1; k = 1..d)
         = max_i (y_i - L ||x - x_i||_inf),

since min_{k, s} (-s L t_k) = -L max_k |t_k|. Every piece is affine with
gradient -s L e_k, so g is Lipschitz with constant max |slope| = L in the
max-norm (a max of mins of L-Lipschitz functions), exactly the network's
Lipschitz constant computed from its weights by :meth:`McShane.lipschitz`.

**The RASP program.** Input x as a 1 x d matrix from position 0 (padding 0
after it). Position t = i P + 2k + s holds piece (i, k, s), with P = the power of
two >= 2d pieces per grid point and the grid padded to G' = the power of two >= G
groups: N = G' P positions.

* Three constant sequences (position tables, the embedding): source(t) = k,
  slope(t) = -s' L (s' = +1 for s = 0, -1 for s = 1) and intercept(t) = y_i + s' L x_{i,k},
  so that piece(t) = intercept(t) + slope(t) x_k. A padding piece (k >= d) has
  slope 0 and intercept y_i, which never lowers the min (the min over the real
  pieces is <= y_i); a padding group (i >= G) repeats group 0, which never
  changes the max.
* Layer 0: one head gathers x_{source(t)}; the MLP multiplies by slope(t).
  Layer 1: the MLP adds intercept(t).
* Then log2 N butterfly stages r = 0, 1, ...: one head gathers the value at the
  partner t XOR 2^r (an index map), and the MLP takes min(v_t, v_partner) while
  2^r < P (within a group of pieces) and max afterwards (across groups). After
  stage r every position holds the min (or max) over its block of 2^(r+1)
  positions, so at the end every position holds g(x).

Depth 2 + log2 N layers, one head per layer but layer 1, width N. All maps are
exact in QQ (min and max decide signs exactly).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from flint import fmpq

from attncert.constructions import rasp
from attncert.constructions.approximation.grid import Grid
from attncert.constructions.layout import Construction, Layout
from attncert.constructions.linalg import gather, index_map


def power_of_two(n: int) -> int:
    """The least power of two >= n (n >= 1)."""
    return 1 << (n - 1).bit_length()


def pieces_per_point(d: int) -> int:
    return power_of_two(2 * d)


def sequence_length(d: int, m: int) -> int:
    """N = G' P: the padded number of grid points times the padded number of pieces per point."""
    return power_of_two((m + 1) ** d) * pieces_per_point(d)


@dataclass(frozen=True)
class McShane:
    """g(x) = max_i (y_i - slope ||x - x_i||_inf) with y_i = Y_i / 2^bits on the grid."""

    grid: Grid
    Y: tuple[int, ...]
    bits: int
    slope: fmpq

    def y(self, i: int) -> fmpq:
        return fmpq(self.Y[i], 2**self.bits)

    def value(self, x: Sequence[fmpq]) -> fmpq:
        """g(x) in closed form, exactly."""
        m = self.grid.m
        return max(self.y(i) - self.slope * max(abs(xk - fmpq(int(j), m)) for xk, j in zip(x, p)) for i, p in enumerate(self.grid.points()))

    @property
    def length(self) -> int:
        return sequence_length(self.grid.d, self.grid.m)

    def tables(self) -> tuple[list[int], list[fmpq], list[fmpq]]:
        """source(t), slope(t), intercept(t) at every position t (module docstring)."""
        d, m, P = self.grid.d, self.grid.m, pieces_per_point(self.grid.d)
        points = self.grid.points()
        source, slopes, intercepts = [], [], []
        for t in range(self.length):
            i, j = divmod(t, P)
            i = i if i < self.grid.size else 0
            k, s = divmod(j, 2)
            sign = 1 if s == 0 else -1
            source.append(k)
            if k < d:
                slopes.append(-sign * self.slope)
                intercepts.append(self.y(i) + sign * self.slope * fmpq(int(points[i][k]), m))
            else:
                slopes.append(fmpq(0))
                intercepts.append(self.y(i))
        return source, slopes, intercepts

    def lipschitz(self) -> fmpq:
        """The network's Lipschitz constant in the max-norm from its weights: max over pieces of
        the l1 norm of the piece's gradient slope(t) e_source(t), i.e. max_t |slope(t)|."""
        return max(abs(a) for a in self.tables()[1])

    def construction(self) -> Construction:
        """One RASP program computing g(x) at every position (module docstring)."""
        d, N, P = self.grid.d, self.length, pieces_per_point(self.grid.d)
        source, slopes, intercepts = self.tables()
        x_k = gather(rasp.numerical(rasp.ConstantSOp(source)).named("piece_coordinate")).named("x_k")
        slope = rasp.numerical(rasp.ConstantSOp(slopes)).named("piece_slope")
        intercept = rasp.numerical(rasp.ConstantSOp(intercepts)).named("piece_intercept")
        scaled = rasp.numerical(rasp.SequenceMap(rasp.fn("mul"), slope, x_k)).named("slope_times_x_k")
        v = rasp.numerical(rasp.SequenceMap(rasp.fn("add"), scaled, intercept)).named("piece")
        for r in range(N.bit_length() - 1):
            step = 1 << r
            # t = (hi, bit, lo) in radix (., 2, 2^r): the partner flips bit, t + 2^r - 2 bit 2^r.
            partner = index_map((0, 2, step), (2 * step, -step, 1), const=step).named(f"partner_{r}")
            other = gather(partner, v).named(f"partner_value_{r}")
            v = rasp.numerical(rasp.SequenceMap(rasp.fn("min" if step < P else "max"), v, other)).named(f"{'min' if step < P else 'max'}_{r}")
        return Construction("mcshane", v.named("g"), Layout((("x", 1, d),), (1, 1), N))
