"""Export a compiled model as float64 arrays (``attncert compile --format npz``), and run the export.

Dense arrays, named by layer (docs/compiler.md, "The npz format"):

* ``embedding``: (N+1) x width, the positional table (token columns zero);
  ``token_columns``: the columns that receive token components;
* ``tokens``: how a token enters them: ``scalar`` (its value in ``token_columns[0]``), ``pair`` (value and
  tag), ``categorical`` (one-hot: ``token_columns[k]`` is 1 where the token is ``vocab[k]``);
  ``vocab``: the symbols, each as the JSON encoding of its value (``{"s": "a"}``, ``{"q": "1/2"}``,
  ``{"b": true}``), categorical models only;
* ``mode`` (``fixed``: exactly N = ``max_seq_len`` tokens; ``every_length``: any n = 1..N, the first n + 1
  rows of ``embedding``), ``causal`` (a query attends to the keys at or before it), ``max_seq_len``;
* ``L{l}_H{h}_qk``, ``L{l}_H{h}_ov``: width x width, s = x_i^T qk x_j and
  out_i = mean_{j in argmax} x_j^T ov;
* ``L{l}_S{k}_kind``: the kind of each unit (0 relu, 1 exp, 2 reciprocal, 3 product;
  one stage may mix kinds);
  ``L{l}_S{k}_A``, ``_B``: pre-activation weights of the first and second
  argument (inputs x units; ``B`` is used by products only), ``_a``, ``_b``
  their biases;
* ``L{l}_out``: last-stage units x width, ``L{l}_out_bias``: width;
* ``outputs``: the output columns; ``output_values``: for a categorical output, the value of each
  output column (JSON-encoded, as ``vocab``): the decoder.

:func:`float_forward` and :func:`run_npz` run the file with numpy alone (no attncert import beyond this
module's): the float model, for use. The exact JSON model and its certificates are for proof; floats lose
exactness. Average-hard attention in floats takes the keys within 1e-9 of the best score (the compiled
constructions' scores are integers or halves, so ties are found while |scores| < 2^53). An exp unit
computes e^a itself, which overflows float64 past a = 709.78: the model forms no row maximum to subtract
first, so the float pass reports the overflow (FloatingPointError) instead of returning inf or NaN
(docs/compiler.md, "Overflow").
"""

from __future__ import annotations

import io
import json
import os
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from attncert.constructions.compiler.model import UNITS, Affine, Model
from attncert.constructions.rasp.values import encode_value
from attncert.exact.rationals import parse_rational

#: Keys of maximal score, in float64: within this of the best (scores of compiled programs are exact small
#: rationals, so rounding separates no tie and joins no two distinct scores).
TIE = 1e-9


def _dense(triples, rows: int, cols: int) -> np.ndarray:
    m = np.zeros((rows, cols))
    for a, b, w in triples:
        m[a, b] += float(w)
    return m


def _affines(affs: list[Affine], inputs: int) -> tuple[np.ndarray, np.ndarray]:
    A = np.zeros((inputs, len(affs)))
    b = np.zeros(len(affs))
    for u, (terms, bias) in enumerate(affs):
        for i, w in terms:
            A[i, u] += float(w)
        b[u] = float(bias)
    return A, b


def _encoded(values: Sequence[Any]) -> np.ndarray:
    """Values as an array of strings, each the JSON encoding of the value (no pickled objects in the file)."""
    return np.array([json.dumps(encode_value(v), sort_keys=True) for v in values], dtype=str)


def to_npz(m: Model) -> bytes:
    """The float64 arrays of the module docstring, as the bytes of an .npz file."""
    width, N = m.width(), m.length
    arrays: dict[str, np.ndarray] = {
        "embedding": np.zeros((N + 1, width)),
        "token_columns": np.array(m.token_columns, dtype=np.int64),
        "tokens": np.array(m.tokens),
        "mode": np.array("every_length" if m.lengths == "every" else "fixed"),
        "causal": np.array(m.causal),
        "max_seq_len": np.array(N),
    }
    if m.tokens == "categorical":
        arrays["vocab"] = _encoded(m.vocab or ())
    for c, vals in m.positional.items():
        arrays["embedding"][:, c] = [float(x) for x in vals]
    arrays["outputs"] = np.array(m.outputs["output"], dtype=np.int64)
    if m.output_values.get("output") is not None:
        arrays["output_values"] = _encoded(m.output_values["output"])
    for l, layer in enumerate(m.layers):
        for h, head in enumerate(layer.heads):
            arrays[f"L{l}_H{h}_qk"] = _dense(head.qk, width, width)
            arrays[f"L{l}_H{h}_ov"] = _dense(head.ov, width, width)
        if layer.mlp is None:
            continue
        inputs = width
        for k, stage in enumerate(layer.mlp.stages):
            arrays[f"L{l}_S{k}_kind"] = np.array([UNITS.index(u.kind) for u in stage], dtype=np.int64)
            arrays[f"L{l}_S{k}_A"], arrays[f"L{l}_S{k}_a"] = _affines([u.args[0] for u in stage], inputs)
            arrays[f"L{l}_S{k}_B"], arrays[f"L{l}_S{k}_b"] = _affines([u.args[1] if len(u.args) > 1 else ((), 0) for u in stage], inputs)
            inputs = len(stage)
        out = np.zeros((inputs, width))
        bias = np.zeros(width)
        for c, (terms, b) in layer.mlp.out:
            for i, w in terms:
                out[i, c] += float(w)
            bias[c] += float(b)
        arrays[f"L{l}_out"], arrays[f"L{l}_out_bias"] = out, bias
    buf = io.BytesIO()
    np.savez(buf, layers=np.array(len(m.layers)), **arrays)
    return buf.getvalue()


# -- running the export: numpy alone ------------------------------------------------------------


def _value(text: str) -> Any:
    """A value from its JSON encoding: {"s": "a"} is "a", {"q": "1/2"} is Fraction(1, 2) (an int when whole),
    {"b": true} is True, {"t": [...]} a tuple. A number is read by the project's bounded parser
    (exact.rationals.parse_rational: digits and decimal exponent within --max-digits, exact/limits.py), so that
    {"q": "1e99999999"} is refused in one line instead of building 10^99999999."""

    def decode(obj: Any) -> Any:
        ((tag, body),) = obj.items()
        if tag == "q":
            q = parse_rational(str(body), where="an npz model's value")
            return int(q.p) if q.q == 1 else Fraction(int(q.p), int(q.q))
        return tuple(map(decode, body)) if tag == "t" else body

    return decode(json.loads(text))


def _same(a: Any, b: Any) -> bool:
    """Equal as RASP values: a boolean is not the number 1, a string is not a number."""
    return isinstance(a, bool) == isinstance(b, bool) and isinstance(a, str) == isinstance(b, str) and a == b


def float_forward(npz: str | os.PathLike | dict, tokens: Sequence[Any]) -> np.ndarray:
    """The residual stream, positions 0..n (row 0 BOS) by width, after the last layer of the exported model
    run in float64 on ``tokens`` (n of them; categorical: the symbols themselves, e.g. "a" or 1; scalar:
    numbers; pair: (value, tag) tuples). ``npz``: the file, or what :func:`numpy.load` read from it."""
    z = np.load(npz) if not isinstance(npz, dict) and not hasattr(npz, "files") else npz
    n, N = len(tokens), int(z["max_seq_len"])
    if not (n == N or str(z["mode"]) == "every_length" and 1 <= n <= N):
        raise ValueError(f"the model takes {'1..' if str(z['mode']) == 'every_length' else ''}{N} tokens, not {n}")
    x = z["embedding"][: n + 1].copy()
    cols, kind = z["token_columns"], str(z["tokens"])
    if kind == "categorical":
        vocab = [_value(v) for v in z["vocab"]]
        for t, token in enumerate(tokens, start=1):
            k = next((k for k, v in enumerate(vocab) if _same(v, token)), None)
            if k is None:
                raise ValueError(f"token {token!r} is not in the model's vocabulary {vocab}")
            x[t, cols[k]] += 1
    else:
        parts = [t if isinstance(t, tuple) else (t, 1) for t in tokens]
        for k, c in enumerate(cols):  # scalar: the value; pair: value and tag
            x[1:, c] += [float(p[k]) for p in parts]
    mask = np.tril(np.ones((n + 1, n + 1), dtype=bool)) if bool(z["causal"]) else np.ones((n + 1, n + 1), dtype=bool)
    for l in range(int(z["layers"])):
        adds, h = [], 0
        while f"L{l}_H{h}_qk" in z:  # every head reads the residual before the layer
            s = np.where(mask, x @ z[f"L{l}_H{h}_qk"] @ x.T, -np.inf)  # scores s_ij; a causal query sees j <= i
            top = s >= s.max(axis=1, keepdims=True) - TIE  # average-hard: the keys of maximal score
            adds.append((top / top.sum(axis=1, keepdims=True)) @ (x @ z[f"L{l}_H{h}_ov"]))
            h += 1
        x = x + sum(adds) if adds else x
        if f"L{l}_out" in z:  # then the MLP
            u, k = x, 0
            while f"L{l}_S{k}_kind" in z:
                a = u @ z[f"L{l}_S{k}_A"] + z[f"L{l}_S{k}_a"]
                b = u @ z[f"L{l}_S{k}_B"] + z[f"L{l}_S{k}_b"]
                unit = z[f"L{l}_S{k}_kind"]
                with np.errstate(over="raise"):  # e^a overflows float64 past a = 709.78: say so, not inf or NaN
                    u = a * b  # products (a product with the constant 1 is the identity)
                    u[:, unit == 0] = np.maximum(a[:, unit == 0], 0)
                    u[:, unit == 1] = np.exp(a[:, unit == 1])
                    u[:, unit == 2] = 1 / a[:, unit == 2]
                k += 1
            x = x + u @ z[f"L{l}_out"] + z[f"L{l}_out_bias"]
    return x


def run_npz(npz: str | os.PathLike | dict, tokens: Sequence[Any]) -> list[Any]:
    """The exported model's output at positions 1..n, decoded: a categorical output's value at each position is
    the value of its largest output column where that column is above 1/2 (None where no column is: RASP's
    None), a numerical output its column's float."""
    z = np.load(npz) if not isinstance(npz, dict) and not hasattr(npz, "files") else npz
    out = float_forward(z, tokens)[1:, z["outputs"]]
    if "output_values" not in z:
        return [float(v) for v in out[:, 0]]
    values = [_value(v) for v in z["output_values"]]
    return [values[int(row.argmax())] if row.max() > 0.5 else None for row in out]
