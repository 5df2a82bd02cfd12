r"""A minimal forward pass of a compiled model, written apart from the compiler (which it never imports).

It reads the model JSON of docs/compiler.md and runs the model class stated there:
positions 0..n with BOS at 0, n the number of tokens (``attncert-model/1``: n = length; ``/2``:
n = max_seq_len in mode "fixed", any n = 1..max_seq_len in mode "every_length", the positional
rows 0..n); with ``causal``, query i attends only to the keys j <= i; the embedding is the positional table plus the
token components (categorical tokens: one-hot over ``vocab``, tokens given in the
JSON encoding of values, e.g. {"s": "a"}); each layer adds its heads' outputs, all
heads reading the residual before the layer (average-hard attention: the
exact mean of W_OV^T x_j over the keys j of maximal score x_i^T W_QK x_j), then
its MLP's (stages of affine -> relu / exp / reciprocal / product, then affine).
Scores are compared in QQ when every column they read is rational, otherwise in
the domain. Quadratic in N; meant for the sizes certificates record.
"""

from __future__ import annotations

from typing import Any, Sequence

from flint import fmpq

from attncert.exact import QQ, Domain, EENumber, LimitExceeded, ParseError
from attncert.exact.limits import current as current_limits
from attncert.proofs.checkers.reading import integer, items, obj, whole


def model_mode(model: dict[str, Any]) -> tuple[bool, bool, int]:
    """(every length, causal, N) of a model's JSON, read from its format: ``attncert-model/1`` is for
    exactly ``length`` tokens and not causal; ``/2`` gives ``mode``, ``causal`` and ``max_seq_len``."""
    lim = current_limits()
    if model.get("format") == "attncert-model/1":
        return False, False, integer(model, "length", 1, lim.max_positions)
    if model.get("format") != "attncert-model/2":
        raise ParseError("the model's format must be attncert-model/1 or attncert-model/2")
    if model.get("mode") not in ("fixed", "every_length") or not isinstance(model.get("causal"), bool):
        raise ParseError('the model\'s mode must be "fixed" or "every_length", and causal true or false')
    return model["mode"] == "every_length", model["causal"], integer(model, "max_seq_len", 1, lim.max_positions)


def check_model_size(model: dict[str, Any], length: int) -> None:
    """Refuse, before anything is allocated, a forward pass over the limits: it scores every
    (query, key) pair of the N + 1 positions and holds width x (N + 1) values."""
    lim = current_limits()
    every, _, N = model_mode(model)
    if not (length == N or every and 1 <= length <= N):
        raise ParseError(f"the model takes {'1..' if every else ''}{N} tokens, not {length}")
    if (length + 1) ** 2 > lim.max_pairs:
        raise LimitExceeded(f"scoring {(length + 1) ** 2:,} query-key pairs, over the limit of {lim.max_pairs:,} (raise it with --max-pairs)")
    width = len(items(model, "basis"))
    if width * (length + 1) > lim.max_entries:
        raise LimitExceeded(f"a model of width {width} over {length + 1:,} positions has {width * (length + 1):,} entries, over the limit of {lim.max_entries:,} (raise it with --max-entries)")


def forward(model: dict[str, Any], tokens: Sequence[Any], domain: Domain, beta: fmpq | None = None) -> list[list[Any]]:
    """The residual (column-major, positions 0..N) after the last layer.

    ``beta``: softmax attention at inverse temperature beta instead of average-hard
    attention (weights e^{beta (s_ij - max_j s_ij)}, normalised; scores must be rational)."""
    with domain.context():  # Ball arithmetic at the domain's precision
        return _forward(model, tokens, domain, beta)


def _forward(model: dict[str, Any], tokens: Sequence[Any], domain: Domain, beta: fmpq | None) -> list[list[Any]]:
    every, causal, most = model_mode(model)
    N, width = len(tokens), len(items(model, "basis"))
    if not (N == most or every and 1 <= N <= most):
        raise ParseError(f"the model takes {'1..' if every else ''}{most} tokens, the certificate gives {N}")
    zero = domain.zero()
    x = [[zero] * (N + 1) for _ in range(width)]
    fixed: dict[int, list[fmpq]] = {}  # positional columns that no layer writes: their exact values
    for c, entries in obj(model, "positional").items():
        col = fixed.setdefault(_col(int(c), width), [fmpq(0)] * (N + 1))
        for p, v in entries:
            if not whole(p) or not 0 <= p <= most:
                raise ParseError("a positional entry lies outside the positions")
            if p <= N:  # rows 0..N of the table at length N
                col[p] = QQ.from_json(v)
    for c, vals in fixed.items():
        x[c] = [domain.convert(v) for v in vals]
    for layer in model["layers"]:
        for h in layer["heads"]:
            for _, b, _ in h["ov"]:
                fixed.pop(b, None)
        for c, _ in (layer["mlp"] or {}).get("out", []):
            fixed.pop(c, None)
    kind = model.get("tokens")
    if kind not in ("scalar", "pair", "categorical"):
        raise ParseError("tokens must be scalar, pair or categorical")
    token_columns = model.get("token_columns")
    if not isinstance(token_columns, list):
        raise ParseError('"token_columns" must be a list')
    token_columns = [_col(c, width) for c in token_columns]
    if len(set(token_columns)) != len(token_columns):
        raise ParseError("two token components share a column")
    if kind == "categorical":
        # one-hot: token column k is 1 where the token is the k-th symbol (symbols and tokens in the JSON encoding of values)
        vocab = items(model, "vocab")
        if len(vocab) != len(token_columns) and token_columns:
            raise ParseError("a categorical model has one token column per symbol of its vocabulary")
        if any(t not in vocab for t in tokens):
            raise ParseError("a token is not a symbol of the vocabulary")
        parts = [[zero] + [domain.one() if t == vocab[k] else zero for t in tokens] for k in range(len(token_columns))]
    else:  # a plain number in a pair layout is the pair (number, 1)
        parts = [[zero] + [domain.convert(t[k] if isinstance(t, tuple) else (t if k == 0 or kind == "scalar" else 1)) for t in tokens] for k in range(len(token_columns))]
    for c, part in zip(token_columns, parts):
        # the embedding is the positional row plus the token's components; a token column's values depend on the input
        x[c] = [a + b for a, b in zip(x[c], part)]
        fixed.pop(c, None)
    for layer in model["layers"]:
        adds = [_attend(h, x, fixed, domain, N, beta, causal) for h in layer["heads"]]
        for add in adds:
            for c, vals in add.items():
                x[c] = [a + b for a, b in zip(x[c], vals)]
        if layer["mlp"] is not None:
            for c, vals in _mlp(layer["mlp"], x, domain, N, width).items():
                x[c] = [a + b for a, b in zip(x[c], vals)]
    return x


def _col(c: Any, width: int) -> int:
    if not isinstance(c, int) or isinstance(c, bool) or not 0 <= c < width:
        raise ParseError(f"column {c!r:.20} is outside the basis")
    return c


def _rational(v: Any) -> fmpq | None:
    if isinstance(v, fmpq):
        return v
    return v.rational_value() if isinstance(v, EENumber) else None


def _attend(
    head: dict[str, Any], x: list[list[Any]], fixed: dict[int, list[fmpq]], domain: Domain, N: int, beta: fmpq | None, causal: bool = False
) -> dict[int, list[Any]]:
    qk = [(_col(a, len(x)), _col(b, len(x)), QQ.from_json(w)) for a, b, w in head["qk"]]
    ov = _ov(head, x, domain)
    cols = {a for a, _, _ in qk} | {b for _, b, _ in qk}
    exact = {c: fixed[c] if c in fixed else [_rational(v) for v in x[c]] for c in cols}
    rational = all(v is not None for vs in exact.values() for v in vs)
    if beta is not None:
        if not rational:
            raise ParseError("softmax mode needs rational scores")
        return _softmax(head, qk, exact, x, domain, N, beta, causal)
    if rational:
        score = lambda i, j: sum((w * exact[a][i] * exact[b][j] for a, b, w in qk), fmpq(0))  # noqa: E731
        better, same = (lambda s, t: s > t), (lambda s, t: s == t)
    else:
        score = lambda i, j: domain.sum(domain.convert(w) * x[a][i] * x[b][j] for a, b, w in qk)  # noqa: E731
        better, same = (lambda s, t: domain.lt(t, s)), domain.eq
    out: dict[int, list[Any]] = {}
    for i in range(N + 1):
        live = i + 1 if causal else N + 1  # a causal query sees the keys j <= i
        s = [score(i, j) for j in range(live)]
        top = s[0]
        for v in s[1:]:
            top = v if better(v, top) else top
        keys = [j for j in range(live) if same(s[j], top)]
        for a, b, w in ov:
            mean = domain.div(domain.sum(x[a][j] for j in keys), domain.convert(len(keys)))
            out.setdefault(b, [domain.zero()] * (N + 1))[i] += w * mean
    return out


def _ov(head: dict[str, Any], x: list[list[Any]], domain: Domain) -> list[tuple[int, int, Any]]:
    """W_OV's entries (read column, written column, weight in the domain), read once per head."""
    return [(_col(a, len(x)), _col(b, len(x)), domain.convert(QQ.from_json(w))) for a, b, w in head["ov"]]


def _softmax(head: dict[str, Any], qk: list, exact: dict, x: list[list[Any]], domain: Domain, N: int, beta: fmpq, causal: bool = False) -> dict[int, list[Any]]:
    ov = _ov(head, x, domain)
    out: dict[int, list[Any]] = {}
    for i in range(N + 1):
        s = [sum((w * exact[a][i] * exact[b][j] for a, b, w in qk), fmpq(0)) for j in range(i + 1 if causal else N + 1)]
        top = max(s)
        weights = [domain.exp(domain.convert(beta * (v - top))) for v in s]
        total = domain.sum(weights)
        for a, b, w in ov:
            mean = domain.div(domain.sum(wj * x[a][j] for j, wj in enumerate(weights)), total)
            out.setdefault(b, [domain.zero()] * (N + 1))[i] += w * mean
    return out


def _mlp(mlp: dict[str, Any], x: list[list[Any]], domain: Domain, N: int, width: int) -> dict[int, list[Any]]:
    inputs = x
    for stage in mlp["stages"]:
        units = []
        for u in stage:
            z = [_affine(a, inputs, domain, N) for a in u["args"]]
            kind = u["unit"]
            if kind == "relu":
                units.append([domain.relu(v) for v in z[0]])
            elif kind == "exp":
                units.append([domain.exp(v) for v in z[0]])
            elif kind == "reciprocal":
                units.append([domain.div(domain.one(), v) for v in z[0]])
            elif kind == "product" and len(z) == 2:
                units.append([p * q for p, q in zip(z[0], z[1])])
            else:
                raise ParseError(f"unit {kind!r:.20} is not in the model class")
        inputs = units
    return {_col(c, width): _affine(a, inputs, domain, N) for c, a in mlp["out"]}


def _affine(a: dict[str, Any], inputs: list[list[Any]], domain: Domain, N: int) -> list[Any]:
    out = [domain.convert(QQ.from_json(a["bias"]))] * (N + 1)
    for i, w in a["terms"]:
        if not whole(i) or not 0 <= i < len(inputs):
            raise ParseError("an affine form reads outside its inputs")
        wd = domain.convert(QQ.from_json(w))
        out = [o + wd * v for o, v in zip(out, inputs[i])]
    return out
