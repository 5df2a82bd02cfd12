"""The Sinkhorn Transformer: in-context encoders, the exact cost, the model graph, texts, and the uniform fit."""

import random

import mpmath
import pytest
from flint import arb, ctx, fmpq

from attncert.constructions.sinkhorn import SinkhornInputError, sinkhorn
from attncert.constructions.sinkhorn.encoder import MLP, Attention, Encoder, LayerNorm
from attncert.constructions.sinkhorn.graph import SinkhornLayer, graph_from_json
from attncert.constructions.sinkhorn.hilbert import projective_diameter
from attncert.constructions.sinkhorn.inner_cost import ExactCost, inner_cost
from attncert.constructions.sinkhorn.problem import read_problem
from attncert.constructions.sinkhorn.systems import target_plans
from attncert.constructions.sinkhorn.texts import Text, random_family, read_text
from attncert.constructions.sinkhorn.transformer import SinkhornTransformer
from attncert.constructions.sinkhorn.universality import fit_weights, width_row
from attncert.exact import EE, ParseError
from attncert.proofs.checkers import references


def _rand(rng, r, c, den=10):
    return [[fmpq(rng.randint(-den, den), den) for _ in range(c)] for _ in range(r)]


def encoder(rng, blocks=1, norm=False, heads=2, d=3, k=2):
    layers = []
    for _ in range(blocks):
        layers.append(Attention(tuple((_rand(rng, d, d), _rand(rng, d, 2)) for _ in range(heads)), _rand(rng, 2 * heads, d)))
        layers.append(MLP(_rand(rng, d, 4), _rand(rng, 1, 4)[0], _rand(rng, 4, d), _rand(rng, 1, d)[0]))
        if norm:
            layers.append(LayerNorm(_rand(rng, 1, d)[0], _rand(rng, 1, d)[0], fmpq(1, 50)))
    return Encoder(_rand(rng, 3, d), tuple(layers), _rand(rng, d, k))


def text(rng, n):
    w = [rng.randint(1, 9) for _ in range(n)]
    return Text([[fmpq(rng.randint(-20, 20), 20)] for _ in range(n)], [fmpq(x, sum(w)) for x in w])


def model(rng, **kw):
    layer = SinkhornLayer(fmpq(1, 2), **{k: kw.pop(k) for k in ("method",) if k in kw})
    return SinkhornTransformer.build(encoder(rng, **kw), encoder(rng, **kw), layer)


# -- mpmath restatement of the forward pass (the definitions, at 80 digits, for containment tests) --


def _mp(M):
    return [[mpmath.mpf(int(x.p)) / int(x.q) for x in row] for row in M]


def _mp_mul(X, W):
    return [[mpmath.fsum(X[i][t] * W[t][c] for t in range(len(W))) for c in range(len(W[0]))] for i in range(len(X))]


def mp_features(enc: Encoder, t: Text):
    with mpmath.workdps(80):
        X = _mp_mul(_mp([p + [w, fmpq(1)] for p, w in zip(t.points, t.weights)]), _mp(enc.embed))
        for lay in enc.layers:
            if isinstance(lay, Attention):
                outs = []
                for A, V in lay.heads:
                    XA, XV = _mp_mul(X, _mp(A)), _mp_mul(X, _mp(V))
                    S = [[mpmath.fsum(a * b for a, b in zip(xa, xk)) for xk in X] for xa in XA]
                    P = [[mpmath.exp(s) / mpmath.fsum(mpmath.exp(u) for u in row) for s in row] for row in S]
                    outs.append(_mp_mul(P, XV))
                mha = _mp_mul([sum((o[i] for o in outs), []) for i in range(len(X))], _mp(lay.wo))
                X = [[x + y for x, y in zip(r, s)] for r, s in zip(X, mha)]
            elif isinstance(lay, MLP):
                H = [[max(h + b, 0) for h, b in zip(row, _mp([lay.b1])[0])] for row in _mp_mul(X, _mp(lay.w1))]
                X = [[x + o + b for x, o, b in zip(r, s, _mp([lay.b2])[0])] for r, s in zip(X, _mp_mul(H, _mp(lay.w2)))]
            else:
                g, b = _mp([lay.gamma])[0], _mp([lay.beta])[0]
                new = []
                for row in X:
                    mean = mpmath.fsum(row) / len(row)
                    var = mpmath.fsum((x - mean) ** 2 for x in row) / len(row)
                    new.append([gi * (x - mean) / mpmath.sqrt(var + mpmath.mpf(int(lay.delta.p)) / int(lay.delta.q)) + bi for gi, x, bi in zip(g, row, b)])
                X = new
        return _mp_mul(X, _mp(enc.readout))


def contains(balls, values):
    with ctx.workprec(300):
        return all(b.contains(arb(mpmath.nstr(v, 70))) for br, vr in zip(balls, values) for b, v in zip(br, vr))


# -- encoders ----------------------------------------------------------------------------------------


def test_one_block_is_exact_and_equals_the_reference_encoder_layer():
    rng = random.Random(1)
    m, t = model(rng), text(rng, 4)
    F = m.features("mu", t, 128)
    assert F.exact
    X = [[sum((tok[i] * m.query.embed[i][c] for i in range(3)), fmpq(0)) for c in range(3)] for tok in ([p[0], w, fmpq(1)] for p, w in zip(t.points, t.weights))]
    att, mlp = m.query.layers
    Z = references.encoder_layer(X, list(att.heads), att.wo, mlp.w1, [mlp.b1], mlp.w2, [mlp.b2])
    assert F.rows == references.matmul(Z, [[EE.convert(q) for q in r] for r in m.query.readout], EE)


@pytest.mark.parametrize("blocks, norm, where", [(2, False, "Q.2.attention"), (1, True, "Q.2.layer_norm")])
def test_leaving_ee_is_named_and_the_balls_contain_the_true_features(blocks, norm, where):
    rng = random.Random(2)
    m, t = model(rng, blocks=blocks, norm=norm), text(rng, 3)
    F = m.features("mu", t, 200)
    assert not F.exact and F.enclosed_from == where
    assert contains(F.rows, mp_features(m.query, t))


def test_the_exact_cost_is_the_generic_ee_inner_product():
    rng = random.Random(3)
    m, mu, nu = model(rng), text(rng, 3), text(rng, 4)
    Q, K = m.features("mu", mu, 128).rows, m.features("nu", nu, 128).rows
    C = inner_cost(Q, K, 128)
    assert C == [[-EE.sum([q * k for q, k in zip(qi, kj)]) for kj in K] for qi in Q]
    with pytest.raises(SinkhornInputError, match="width"):
        inner_cost(Q, [r[:1] for r in K], 128)


@pytest.mark.parametrize("norm, method", [(False, "auto"), (True, "krawczyk")])
def test_the_coupling_encloses_plain_sinkhorn_of_the_true_cost(norm, method):
    rng = random.Random(4)
    m, mu, nu = model(rng, norm=norm, method=method), text(rng, 3), text(rng, 4)
    run = m(mu, nu)
    assert run.result.certified and isinstance(run.cost, ExactCost) is not norm
    with mpmath.workdps(80):
        Q, K = mp_features(m.query, mu), mp_features(m.key, nu)
        Kern = [[mpmath.exp(mpmath.fsum(q * k for q, k in zip(qi, kj)) * 2) for kj in K] for qi in Q]  # exp(-C/eps), eps = 1/2
        a, b = _mp([mu.weights])[0], _mp([nu.weights])[0]
        u = [mpmath.mpf(1)] * 3
        for _ in range(3000):
            v = [b[j] / mpmath.fsum(Kern[i][j] * u[i] for i in range(3)) for j in range(4)]
            u = [a[i] / mpmath.fsum(Kern[i][j] * v[j] for j in range(4)) for i in range(3)]
        v = [b[j] / mpmath.fsum(Kern[i][j] * u[i] for i in range(3)) for j in range(4)]
        assert contains(run.result.plan, [[u[i] * Kern[i][j] * v[j] for j in range(4)] for i in range(3)])


def test_an_enclosed_cost_has_an_upper_bound_on_delta_and_no_exact_iterates():
    rng = random.Random(5)
    m, mu, nu = model(rng, norm=True), text(rng, 3), text(rng, 3)
    C = m.cost(mu, nu)
    p = read_problem(C, mu.weights, nu.weights, "1/2")
    with mpmath.workdps(60):
        Q, K = mp_features(m.query, mu), mp_features(m.key, nu)
        c = [[-mpmath.fsum(q * k for q, k in zip(qi, kj)) for kj in K] for qi in Q]
        true = max(c[j][k] + c[i][l] - c[i][k] - c[j][l] for i in range(3) for j in range(3) for k in range(3) for l in range(3)) * 2
        delta = mpmath.mpf(int(projective_diameter(p).p)) / int(projective_diameter(p).q)
        assert delta >= true > delta - mpmath.mpf(10) ** -20
    with pytest.raises(SinkhornInputError, match="rational cost"):
        sinkhorn(C, mu.weights, nu.weights, "1/2", EE)


# -- the model graph ---------------------------------------------------------------------------------


def test_the_graph_is_the_model_and_round_trips():
    rng = random.Random(6)
    m = model(rng, blocks=2, norm=True)
    g = m.graph()
    ops = [g.nodes[v]["op"] for v in sorted(g.nodes)]
    assert ops.count("attention") == 4 and ops.count("layer_norm") == 4 and ops.count("cost") == ops.count("sinkhorn") == 1
    again = SinkhornTransformer.from_json(m.to_json())
    assert again.to_json() == m.to_json() and again.query == m.query and again.layer == m.layer


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda j: j["nodes"][2].update(op="convolution"), "unknown op"),
        (lambda j: j["nodes"][-1]["params"].update(eps="-1"), "eps > 0"),
        (lambda j: j["nodes"][3]["params"].update(W_O=[["1"]]), "W_O"),
        (lambda j: j["nodes"][2]["params"].update(W_O=[["1"]]), "exactly the parameters"),
        (lambda j: j["edges"].pop(), "argument"),
        (lambda j: j["nodes"][-2]["params"].update(rule="C = <Q, K>"), "rule"),
        (lambda j: next(e for e in j["edges"] if e["target"] == 3).update(source=4), "cycle"),  # attention <- its own MLP
    ],
)
def test_a_malformed_graph_is_refused(edit, match):
    j = model(random.Random(7)).to_json()
    edit(j)
    with pytest.raises(ParseError, match=match):
        graph_from_json(j)


# -- texts and families --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "points, weights, match",
    [
        ([], [], "length 0"),
        (["0", "1/2"], ["1", "0"], "positive"),
        (["0", "1/2"], ["1/2", "1/3"], "sum to 1"),
        (["0", "3/2"], ["1/2", "1/2"], "outside the declared domain"),
        ([["0"], ["1", "0"]], ["1/2", "1/2"], "dimensions"),
    ],
)
def test_bad_texts_are_one_clear_error(points, weights, match):
    with pytest.raises(SinkhornInputError, match=match):
        read_text(points, weights)


def test_a_random_family_has_unseen_held_out_pairs_of_varying_lengths():
    f = random_family(20, 10, 6, 3)
    keys = {(mu.key(), nu.key()) for mu, nu in f.fit}
    assert len(keys) == 20 and not any((mu.key(), nu.key()) in keys for mu, nu in f.held_out)
    lengths = {t.n for p in f.fit + f.held_out for t in p}
    assert min(lengths) >= 2 and max(lengths) <= 6 and len(lengths) > 1


# -- one fit for the whole family ------------------------------------------------------------------------


def test_one_network_per_width_bounds_every_pair_and_the_error_falls():
    fam = random_family(6, 3, 4, 0)
    targets = [target_plans(mu, nu, fmpq(1, 2), 128) for mu, nu in fam.fit + fam.held_out]
    layer = SinkhornLayer(fmpq(1, 2))
    rows = {}
    for system in ("independent", "entropic"):
        F = [t[system] for t in targets]
        for w in (1, 4):
            M = fit_weights(w, fam.fit, F[:6], fmpq(1, 2))
            rows[system, w] = width_row(w, M, layer, list(zip(fam.fit, F[:6])), list(zip(fam.held_out, F[6:])))
    assert rows["independent", 4].fit_max < fmpq(1, 10**15)  # a b^T needs no width: only the enclosures' slack
    low, high = rows["entropic", 1], rows["entropic", 4]
    assert all(p.w1.lo <= p.w1.hi for p in low.fit + low.held_out)
    assert max(p.w1.lo for p in low.fit) > high.fit_max  # a certified decrease of the family maximum
    assert len(high.held_out) == 3 and high.held_out_max is not None
