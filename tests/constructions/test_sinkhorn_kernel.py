"""The Gibbs kernel in balls: kernel_entries against exp(-C/eps) evaluated entry by entry, far more precisely."""

import mpmath
from flint import arb, ctx, fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions.sinkhorn.kernel import ball_kernel, kernel_entries
from attncert.constructions.sinkhorn.problem import read_problem

#: Costs k / den with k of either sign, repeated values among them (shared powers), and huge k (Python integers).
costs = st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 50), st.sampled_from([1, 10, 2**70])).flatmap(
    lambda s: st.tuples(
        st.lists(st.lists(st.integers(-5, 40).map(lambda k: k * s[3] // 10 if s[3] > 10 else k), min_size=s[1], max_size=s[1]), min_size=s[0], max_size=s[0]),
        st.just(s[2]),
    )
)


@settings(deadline=None, max_examples=60)
@given(costs, st.integers(1, 9))
def test_kernel_entries_contain_the_kernel_and_share_equal_entries(cost, k):
    K_int, den = cost
    C = [[fmpq(x, den) for x in row] for row in K_int]
    n, m = len(C), len(C[0])
    eps = fmpq(k, 7)
    p = read_problem(C, [fmpq(1, n)] * n, [fmpq(1, m)] * m, eps)
    K = kernel_entries(p, 128)
    assert K.shape == (n, m)
    with mpmath.workprec(400):
        for i in range(n):
            for j in range(m):
                c = C[i][j] / eps
                exact = mpmath.exp(-mpmath.mpf(int(c.p)) / int(c.q))
                ball = K[i, j]
                assert ball.rel_accuracy_bits() >= 120
                lo, hi = (mpmath.mpf(x.mid().str(130, radius=False)) for x in (ball.lower(), ball.upper()))
                assert lo <= exact * (1 + mpmath.mpf(2) ** -125) and exact * (1 - mpmath.mpf(2) ** -125) <= hi
                for i2 in range(n):
                    for j2 in range(m):
                        if C[i2][j2] == C[i][j]:
                            assert K[i2, j2] is ball  # one ball per distinct exponent
    with ctx.workprec(128):
        B = ball_kernel(p, 128)
        assert all(B[i, j].overlaps(K[i, j]) and B[i, j].rad() <= 2 * K[i, j].rad() for i in range(n) for j in range(m))
