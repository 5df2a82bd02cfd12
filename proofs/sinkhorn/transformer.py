"""Claim sinkhorn_transformer: the coupling of a Sinkhorn Transformer with in-context encoders (softmax
attention, ReLU MLPs, residuals, optional layer norm; rational weights) is enclosed to a certified bound;
the cost -<Q, K> is exact in EE while the encoders are."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from typing import Any

from flint import fmpq

from attncert.constructions.sinkhorn.encoder import MLP, Attention, Encoder, LayerNorm, forward_balls
from attncert.constructions.sinkhorn.inner_cost import inner_cost
from attncert.constructions.sinkhorn.graph import SinkhornLayer
from attncert.constructions.sinkhorn.inner_cost import ExactCost
from attncert.constructions.sinkhorn.texts import Text
from attncert.constructions.sinkhorn.transformer import SinkhornTransformer
from attncert.exact import EE, QQ, ParseError
from attncert.exact.matrices import Rows, from_fmpq_mat, matrix_to_json, to_fmpq_mat
from attncert.proofs.checkers import references
from attncert.proofs.core.certify import certificate
from attncert.proofs.checkers.sinkhorn.claims import check_transformer
from attncert.proofs.core.params import positive_int, positive_rational
from attncert.proofs.core.rebuild import recorded_params
from attncert.proofs.core.registry import Claim, Param, register
from attncert.proofs.core.cost import Cost, krawczyk_bits, over_limits, sinkhorn_cost
from attncert.proofs.sinkhorn.common import PREC, SEED, TOL, bmat, bvec, contains, marginal_balls, marginals_contain, mp_sinkhorn, reference_dps, run_figure, run_json
from attncert.proofs.sinkhorn.texts import read_file, text_from, text_json

NAME = "sinkhorn_transformer"
STATEMENT = (
    "a Sinkhorn Transformer's coupling is enclosed to a certified bound: in-context encoders Q(mu), K(nu) (softmax "
    "attention with W_O, ReLU MLPs, residuals, optional layer norm; rational weights), cost -<Q, K> exact in EE while "
    "the encoders are, kernel exp(-C/eps) enclosed from it, certified Sinkhorn"
)
#: Layer norm's delta (a variance floor; any delta > 0 keeps the square root away from 0).
LN_DELTA = fmpq(1, 100)


def _rand(rng: random.Random, rows: int, cols: int) -> Rows:
    return [[fmpq(rng.randint(-10, 10), 10) for _ in range(cols)] for _ in range(rows)]


def random_encoder(rng: random.Random, d: int, k: int, heads: int, layers: int, layer_norm: int) -> Encoder:
    """Tokens (x, a, 1) in Q^(d+2) on a residual stream of width d + 2: ``layers`` blocks of multi-head
    attention then a ReLU MLP (hidden 2(d + 2)), each followed by a layer norm if ``layer_norm``; readout to k."""
    w = d + 2
    dv = max(1, w // heads)
    blocks: list = []
    for _ in range(layers):
        blocks.append(Attention(tuple((_rand(rng, w, w), _rand(rng, w, dv)) for _ in range(heads)), _rand(rng, heads * dv, w)))
        blocks.append(MLP(_rand(rng, w, 2 * w), _rand(rng, 1, 2 * w)[0], _rand(rng, 2 * w, w), _rand(rng, 1, w)[0]))
        if layer_norm:
            blocks.append(LayerNorm([fmpq(1)] * w, [fmpq(0)] * w, LN_DELTA))
    return Encoder(_rand(rng, d + 2, w), tuple(blocks), _rand(rng, w, k))


def build(d: int = 2, k: int = 2, heads: int = 2, layers: int = 1, layer_norm: int = 0, seed: int = 0, eps: str = "1/2", tol: str = "1e-30", prec: int = 128) -> SinkhornTransformer:
    """The model of the claim (its weights from the seed), for ``attncert graph``."""
    rng = random.Random(seed)
    enc = [random_encoder(rng, d, k, heads, layers, layer_norm) for _ in range(2)]
    return SinkhornTransformer.build(enc[0], enc[1], SinkhornLayer(positive_rational(eps), positive_rational(tol, "tol"), "auto", prec))


def random_text(rng: random.Random, n: int, d: int) -> Text:
    """n points with coordinates k/10 in [-1, 1]^d and weights k_i / sum k, k_i in 1..9."""
    w = [rng.randint(1, 9) for _ in range(n)]
    return Text(_rand(rng, n, d), [fmpq(x, sum(w)) for x in w])


def reference_features(enc: Encoder, t: Text) -> Rows | None:
    """The features by proofs.checkers.references (encoder_layer, matmul), independent of the constructions; None where that
    reference does not apply (more than one block, or a layer norm: the forward pass leaves EE)."""
    if len(enc.layers) != 2 or not isinstance(enc.layers[0], Attention) or not isinstance(enc.layers[1], MLP):
        return None
    att, mlp = enc.layers
    X = from_fmpq_mat(to_fmpq_mat([list(p) + [w, fmpq(1)] for p, w in zip(t.points, t.weights)]) * to_fmpq_mat(enc.embed))
    Z = references.encoder_layer(X, list(att.heads), att.wo, mlp.w1, [mlp.b1], mlp.w2, [mlp.b2])
    return references.matmul(Z, [[EE.convert(q) for q in row] for row in enc.readout], EE)


#: Precision of the cost model's dry run of the encoders.
DRY_RUN_BITS = 64


def transformer_cost(n: int, m: int, d: int, k: int, heads: int, layers: int, layer_norm: int, seed: int, eps: str, prec: int, texts: str = "", **_: Any) -> Cost:
    """The precision a run climbs to, from the spread of its actual cost: the model of these parameters on its texts,
    run in arb at DRY_RUN_BITS bits (a forward pass of the encoders, no Sinkhorn; milliseconds). A priori bounds on
    the features of random weights are orders of magnitude too large to decide anything."""
    if layer_norm not in (0, 1):
        raise ParseError(f"layer_norm must be 0 or 1, got {layer_norm}")
    w = d + 2  # the residual stream; per encoder: embedding, per block heads (Q K^T, V), W_O, the MLP, readout
    weights = 2 * (w * w + w * k + layers * (heads * (w * w + 2 * w * max(1, w // heads)) + 4 * w * w + 3 * w))
    sizes = Cost(entries=max(n * m, (n + m) * d, weights))
    if over_limits(sizes):
        return sizes  # refused on its sizes: the dry run below would build them first
    model = build(d, k, heads, layers, layer_norm, seed, eps, "1e-30", prec)
    # A certificate's "file" names texts it records, not a path: random texts of the same sizes stand in for them.
    mu, nu = _texts(texts) if texts and texts != "file" else _random_texts(seed, n, m, d)
    C = inner_cost(forward_balls(model.query, mu.points, mu.weights, DRY_RUN_BITS), forward_balls(model.key, nu.points, nu.weights, DRY_RUN_BITS), DRY_RUN_BITS)
    spread = max(c.upper() for row in C for c in row) - min(c.lower() for row in C for c in row)
    cost = sinkhorn_cost(mu.n, nu.n, 1, krawczyk_bits(spread.upper().fmpq(), positive_rational(eps), prec))
    return replace(cost, entries=max(cost.entries, sizes.entries))


def _texts(path: str) -> tuple[Text, Text]:
    obj = read_file(path)
    if not isinstance(obj, dict) or set(obj) != {"mu", "nu"}:
        raise ParseError(f'{path} must be an object {{"mu": text, "nu": text}}')
    return text_from(obj["mu"], "text mu"), text_from(obj["nu"], "text nu")


def _random_texts(seed: int, n: int, m: int, d: int) -> tuple[Text, Text]:
    rng = random.Random(seed + 1)
    return random_text(rng, n, d), random_text(rng, m, d)


def prove(n: int = 4, m: int = 5, d: int = 2, k: int = 2, heads: int = 2, layers: int = 1, layer_norm: int = 0, seed: int = 0, eps: str = "1/2", tol: str = "1e-30", prec: int = 128, texts: str = "") -> dict:
    given = _texts(texts) if texts else None
    return _prove(dict(n=n, m=m, d=d, k=k, heads=heads, layers=layers, layer_norm=layer_norm, seed=seed, eps=eps, tol=tol, prec=prec), given)


def _prove(params: dict[str, Any], given: tuple[Text, Text] | None) -> dict:
    """The certificate for these parameters, on the given texts (None: random texts from the seed)."""
    d = params["d"]
    if params["layer_norm"] not in (0, 1):
        raise ParseError(f"layer_norm must be 0 or 1, got {params['layer_norm']}")
    model = build(d, params["k"], params["heads"], params["layers"], params["layer_norm"], params["seed"], params["eps"], params["tol"], params["prec"])
    mu, nu = given or _random_texts(params["seed"], params["n"], params["m"], d)
    for name, t, size in (("mu", mu, "n"), ("nu", nu, "m")):
        if t.n != params[size] or len(t.points[0]) != d:
            raise ParseError(f"text {name} has {t.n} points of dimension {len(t.points[0])}; the parameters say {size} = {params[size]}, d = {d}")
    run = model(mu, nu)
    r, prec = run.result, params["prec"]
    work = r.details.get("prec", prec)
    exact = isinstance(run.cost, ExactCost)
    refs = [reference_features(model.query, mu), reference_features(model.key, nu)]
    same = [None if R is None else R == F.rows for R, F in zip(refs, (run.Q, run.K))]
    dps = reference_dps(work)
    bits = max(256, math.ceil(dps / math.log10(2)))  # the cost's midpoints as fine as the reference's digits
    C_mid = [[c.mid().fmpq() for c in row] for row in run.cost.balls(bits)]
    ref, its = mp_sinkhorn(C_mid, mu.weights, nu.weights, model.layer.eps, dps, 5000)
    ref_ok = ref is not None and r.plan is not None and contains(r.plan, ref, work)
    rows, cols = marginal_balls(r.plan, work) if r.plan is not None else ([], [])
    marg_ok = r.plan is not None and marginals_contain(r.plan, mu.weights, nu.weights, work)
    sink = run_json(r, prec)
    return certificate(
        NAME,
        {**params, "eps": QQ.to_json(model.layer.eps), "texts": "" if given is None else "file"},
        {"mu": text_json(mu), "nu": text_json(nu), "eps": QQ.to_json(model.layer.eps)},
        {
            "model": model.to_json(),
            "cost": {
                "rule": "C_ij = -<Q(mu)_i, K(nu)_j>",
                "exact": exact,
                "C": matrix_to_json(run.cost.rows, EE) if exact else None,
                "left_EE_at": None if exact else (run.Q.enclosed_from or run.K.enclosed_from),
            },
            "sinkhorn": sink,
            "size": {"iterations": r.iterations, "n": mu.n, "m": nu.n, "features": params["k"], "encoder_blocks": params["layers"], "heads_per_block": params["heads"]},
        },
        {
            "coupling": None if r.plan is None else bmat(r.plan, prec),
            "coupling_marginals": {"rows": bvec(rows, prec), "cols": bvec(cols, prec)},
            "iterate": bmat(r.iterate, prec),
            "iterate_row_error": bvec(r.row_error, prec),
            "iterate_col_error": bvec(r.col_error, prec),
            "bound": sink["bound"],
        },
        {
            "features_by_references": {
                side: ("not applicable: one attention + MLP block without layer norm is what proofs.checkers.references computes in EE" if s is None else s)
                for side, s in zip(("Q", "K"), same)
            },
            "mpmath_plan": f"plain Sinkhorn at {dps} digits on the cost's {bits}-bit midpoints, {its} iterations; inside the enclosure: {ref_ok}",
        },
        {
            "relation": "enclosure",
            "holds": r.certified and marg_ok and ref_ok and all(s is not False for s in same),
            "meaning": "coupling: balls containing the exact Sinkhorn plan of the exact cost -<Q, K> (an EE number when "
            "cost.exact); iterate errors: balls containing P^1 - a and P^T1 - b of the computed plan P^",
        },
    )


def rebuild(doc: dict[str, Any]) -> dict:
    """Prove again from the recorded parameters; texts read from a file are taken from the certificate."""
    params = recorded_params(CLAIM, doc)
    if params.pop("texts") != "file":
        return _prove(params, None)
    inputs = doc.get("inputs") if isinstance(doc.get("inputs"), dict) else {}
    return _prove(params, (text_from(inputs.get("mu"), "text mu"), text_from(inputs.get("nu"), "text nu")))


def summary(doc: dict[str, Any]) -> str:
    """The coupling's certified bound, and what fails where the claim does not hold."""
    line = f"coupling enclosed: max |log P^ - log P*| {run_figure(doc['construction']['sinkhorn'])}"
    if doc["result"]["holds"]:
        return line
    why = [] if doc["reference"]["mpmath_plan"].endswith("inside the enclosure: True") else ["the mpmath plan lies outside the enclosure"]
    why += [f"the encoder {side} differs from proofs.checkers.references" for side, same in doc["reference"]["features_by_references"].items() if same is False]
    return "does not hold: " + "; ".join([line, *why])


CLAIM = register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        (
            Param("n", positive_int, 4, "support points of the text mu"),
            Param("m", positive_int, 5, "support points of the text nu"),
            Param("d", positive_int, 2, "dimension of the support points"),
            Param("k", positive_int, 2, "feature width of Q and K"),
            Param("heads", positive_int, 2, "attention heads per block"),
            Param("layers", positive_int, 1, "encoder blocks (attention + MLP); the second attention leaves EE"),
            Param("layer_norm", int, 0, "1: a layer norm after each block (enclosed in arb: its square root leaves EE)"),
            SEED,
            Param("eps", str, "1/2", "temperature eps > 0 (rational)"),
            TOL,
            PREC,
            Param("texts", str, "", 'JSON file {"mu": {"x": [[...]], "a": [...]}, "nu": {...}} (default: random texts from the seed)'),
        ),
        check=check_transformer,
        cost=transformer_cost,
        summary=summary,
        build=build,
        rebuild=rebuild,
    )
)
