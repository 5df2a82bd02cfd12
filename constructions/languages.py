"""Match2 and k-PARITY as single-layer softmax attention layers with rational weights.

Each language comes with an explicit attention layer T (matrices A, V), an
embedding of words as X, a readout of T(X) decided exactly in EE, and the
language's own definition, so that the three can be compared word by word.

Match2 (Sanford, Hsu, Telgarsky, "Representational strengths and limitations of
transformers", NeurIPS 2023). For x in [M]^n, Match2(x)_i = 1 iff some j in 1..n
(j = i included) has x_i + x_j = 0 (mod M). So residue 0 always pairs with
itself (and M/2 does for even M); the published RASP program
``select(x % p, p - x % p, ==)`` compares with p instead of 0 and misses this.

* Embedding: X_i = one-hot(x_i) in Q^M (d = M).
* A = beta * Pi with Pi[a][b] = 1 iff a + b = 0 (mod M); V = I_M (d_v = M).
* Readout: r_i = sum_c T(X)[i][c] Pi[x_i][c], output 1 iff r_i > 1/2.

Why T decides Match2: S[i][j] = beta [x_i + x_j = 0], so if x_i has k >= 0
partners among the n positions, r_i = k e^beta / (k e^beta + n - k). If k = 0 then
r_i = 0; if k >= 1 then r_i > 1/2 iff k e^beta > n - k, which holds for every
k >= 1 as soon as e^beta > n - 1. We take beta the least positive integer with
e^beta > N (decided exactly), for all lengths n <= N. M = 1 is the case k = n:
the one letter is the residue 0, Pi = V = [1] and A = [beta], so every position
partners all n, r_i = n e^beta / (n e^beta) = 1 and Match2(x) = 1^n.

k-PARITY. For bits b in {0,1}^n and a fixed index set S of size k,
PARITY_S(b) = (sum_{i in S} b_i) mod 2, the same at every position.

* Embedding: X_j = (1, s_j, s_j b_j) with s_j = [j in S] (d = 3).
* A = beta E_{12} (score beta s_j for every query), V = e_3 (d_v = 1).
* Then T(X)_i = e^beta c / (k e^beta + n - k) with c = sum_{j in S} b_j, so
  c = T(X)_i (k e^beta + n - k) / e^beta exactly, and the readout is
  sum_{t=1..k} (-1)^(t+1) [c >= t - 1/2]: k thresholds with alternating signs
  (one hidden layer of threshold units), each decided exactly in EE.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
from flint import fmpq

from attncert.constructions import rasp
from attncert.constructions.layout import Construction, Layout
from attncert.constructions.linalg import gather, index_map
from attncert.constructions.rasp import Comparison as Cmp
from attncert.constructions.simulator import universal
from attncert.exact import EE
from attncert.exact.exparray import ExpArray, constant, fraction_sum
from attncert.exact.matrices import Rows
from attncert.exact.ratarray import RatArray


@dataclass(frozen=True)
class LanguageLayer:
    """An attention layer T = (A, V) with an embedding and a readout for one language."""

    name: str
    A: Rows
    V: Rows
    embed: Callable[[Sequence[int]], Rows]
    readout: Callable[[Rows, Sequence[int]], list[int]]
    language: Callable[[Sequence[int]], list[int]]
    #: The readout of a whole batch at once: T(X) of every word as fractions num / den of arrays
    #: (batch x row-major entries, :mod:`exact.exparray`) and the words (batch x n) give the readouts
    #: (batch x n), equal to ``readout`` word by word (tests/constructions/test_batch_languages.py).
    readout_batch: Callable[[ExpArray, ExpArray, np.ndarray], np.ndarray]


def least_beta_above(bound: int) -> int:
    """The least positive integer beta with e^beta > bound, decided exactly in EE."""
    beta = 1
    while not EE.exp(beta) > bound:
        beta += 1
    return beta


def match2(M: int, N: int) -> LanguageLayer:
    """Match2 over residues mod M, for words of length at most N (see the module docstring)."""
    if M < 1 or N < 1:
        raise ValueError("Match2 needs M >= 1 residues and length N >= 1")
    beta = least_beta_above(N)
    pi = [[int((a + b) % M == 0) for b in range(M)] for a in range(M)]
    A = [[fmpq(beta * pi[a][b]) for b in range(M)] for a in range(M)]
    V = [[fmpq(int(a == b)) for b in range(M)] for a in range(M)]
    half = fmpq(1, 2)

    def embed(word: Sequence[int]) -> Rows:
        return [[fmpq(int(x == c)) for c in range(M)] for x in word]

    def readout(t: Rows, word: Sequence[int]) -> list[int]:
        return [int(EE.sum(t[i][c] for c in range(M) if pi[x][c]) > half) for i, x in enumerate(word)]

    def language(word: Sequence[int]) -> list[int]:
        return [int(any((x + y) % M == 0 for y in word)) for x in word]

    partners = np.array(pi, dtype=np.int64)

    def readout_batch(num: ExpArray, den: ExpArray, words: np.ndarray) -> np.ndarray:
        # r_i = sum_c T[i][c] Pi[x_i][c] as one fraction per (word, i); r_i > 1/2 iff (2 r_num - r_den) r_den > 0.
        at = np.arange(words.shape[1]) * M
        pi_rows = partners[words]
        parts = [(num.take(at + c).scale(RatArray.integers(pi_rows[..., c])), den.take(at + c)) for c in range(M)]
        r_num, r_den = fraction_sum(parts)
        return ((r_num + r_num - r_den).sign() * r_den.sign() > 0).astype(np.int64)

    return LanguageLayer(f"match2(M={M})", A, V, embed, readout, language, readout_batch)


def parity(n: int, S: Sequence[int]) -> LanguageLayer:
    """k-PARITY on bit strings of length n for the index set S (0-based), k = |S|."""
    S = sorted(set(S))
    if not S or S[0] < 0 or S[-1] >= n:
        raise ValueError(f"index set {S} must be non-empty and inside 0..{n - 1}")
    k, beta = len(S), 1
    A = [[fmpq(0)] * 3 for _ in range(3)]
    A[0][1] = fmpq(beta)
    V = [[fmpq(0)], [fmpq(0)], [fmpq(1)]]
    scale = (EE.exp(beta) * k + (n - k)) / EE.exp(beta)

    def embed(word: Sequence[int]) -> Rows:
        return [[fmpq(1), fmpq(int(j in S)), fmpq(int(j in S) * b)] for j, b in enumerate(word)]

    def readout(t: Rows, word: Sequence[int]) -> list[int]:
        out = []
        for row in t:
            c = row[0] * scale
            out.append(sum((-1) ** (s + 1) * int(c >= fmpq(2 * s - 1, 2)) for s in range(1, k + 1)))
        return out

    def language(word: Sequence[int]) -> list[int]:
        return [sum(word[i] for i in S) % 2] * len(word)

    # scale = (k e^beta + n - k) / e^beta, as a numerator and a denominator.
    scale_num, scale_den = constant({fmpq(beta): fmpq(k), fmpq(0): fmpq(n - k)}), constant({fmpq(beta): fmpq(1)})

    def readout_batch(num: ExpArray, den: ExpArray, words: np.ndarray) -> np.ndarray:
        # c = T_i scale; [c >= s - 1/2] iff (2 c_num - (2s - 1) c_den) c_den >= 0.
        c_num, c_den = num * scale_num, den * scale_den
        twice, sign_den = c_num + c_num, c_den.sign()
        bits = sum(
            (-1) ** (s + 1) * ((twice - c_den.scale(RatArray.constant(fmpq(2 * s - 1), (1, 1)))).sign() * sign_den >= 0)
            for s in range(1, k + 1)
        )
        return np.asarray(bits, dtype=np.int64)

    return LanguageLayer(f"parity(S={S})", A, V, embed, readout, language, readout_batch)


def decide_match2_readout(n: int, k: int, beta: int) -> Any:
    """r = k e^beta / (k e^beta + n - k), the Match2 readout of a position with k partners."""
    e = EE.exp(beta)
    return (e * k) / (e * k + (n - k))


# -- the readouts as RASP, after U (so that they compile to weights with U) --------------------


def match2_readout(M: int, n: int) -> Construction:
    """U(n, M, M) followed by Match2's readout, as one RASP program.

    Inputs X (the one-hot word, n x M), A, V (the layer of :func:`match2`), as for U.
    At t = i M + c: T[i][c] (U's output) times X[i][-c mod M] = Pi[x_i][c] (a gather from
    the input); a head sums each group of M; ``ramp(1/2, n/(2n-1))`` gives the bit.
    Exact: r_i = 0 with no partner, and r_i >= e^beta/(e^beta + n - 1) > n/(2n-1)
    with one (e^beta > n). Output: the n bits (1 x n), zeros after.
    """
    U = universal(n, M, M)
    table = tuple((i * M + c, i * M + (-c) % M) for i in range(n) for c in range(M))
    partner_src = rasp.numerical(rasp.Map(rasp.fn("lookup", table=table, other=-1), rasp.indices)).named("partner_source")
    partner = gather(partner_src).named("Pi_x_c")
    prod = rasp.numerical(rasp.SequenceMap(rasp.fn("mul"), U.program, partner)).named("T_times_Pi")
    group = index_map((0, M), (1, 0), bound=n * M, other=-1).named("row_group")
    mean = rasp.numerical(rasp.Aggregate(rasp.Select(group, rasp.indices, Cmp.EQ), prod, default=0)).named("row_mean")
    r = rasp.numerical(rasp.Map(rasp.fn("mul_const", c=M), mean)).named("r")
    bits = rasp.numerical(rasp.Map(rasp.fn("ramp", a=fmpq(1, 2), b=fmpq(n, 2 * n - 1)), r)).named("match2")
    return Construction("match2_readout", bits, Layout(U.layout.inputs, (1, n), U.layout.length))


def parity_readout(n: int, k: int) -> Construction:
    """U(n, 3, 1) followed by k-PARITY's readout, as one RASP program.

    Inputs X (rows (1, s_j, s_j b_j)), A, V (the layer of :func:`parity`, beta = 1).
    c_i = T_i (k e + n - k) / e = k T_i + (n - k) T_i e^{-1} (an exp unit times T), then
    ``alternating_steps(k)`` = sum_t (-1)^(t+1) ramp(t - 1, t)(c): the parity of the
    count c in 0..k. Output: the n bits (1 x n), zeros after.
    """
    U = universal(n, 3, 1)
    scaled = rasp.numerical(rasp.Map(rasp.fn("mul_exp", c=-1), U.program)).named("T_over_e")
    count = rasp.numerical(rasp.SequenceMap(rasp.fn("linear", a=k, b=n - k), U.program, scaled)).named("count")
    bits = rasp.numerical(rasp.Map(rasp.fn("alternating_steps", k=k), count)).named("parity")
    return Construction("parity_readout", bits, Layout(U.layout.inputs, (1, n), U.layout.length))
