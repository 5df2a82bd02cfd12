"""Export a compiled model as float64 arrays (``attncert compile --format npz``), for use elsewhere.

Dense arrays, named by layer (docs/compiler.md, "The npz format"):

* ``embedding``: (N+1) x width, the positional table (token columns zero);
  ``token_columns``: the columns that receive token components;
* ``L{l}_H{h}_qk``, ``L{l}_H{h}_ov``: width x width, s = x_i^T qk x_j and
  out_i = mean_{j in argmax} x_j^T ov;
* ``L{l}_S{k}_kind``: the kind of each unit (0 relu, 1 exp, 2 reciprocal, 3 product;
  one stage may mix kinds);
  ``L{l}_S{k}_A``, ``_B``: pre-activation weights of the first and second
  argument (inputs x units; ``B`` is used by products only), ``_a``, ``_b``
  their biases;
* ``L{l}_out``: last-stage units x width, ``L{l}_out_bias``: width;
* ``outputs``: the output columns.

Floats lose exactness; the JSON form keeps it. Average-hard attention in floats
needs a tolerance for ties (scores are exact integers here for the compiled
constructions, so ties are exact in float64 while |scores| < 2^53). An exp unit
computes e^a itself, which overflows float64 past a = 709.78: the model forms no
row maximum to subtract first, so a float forward pass must report the overflow
(docs/compiler.md, "Overflow"). Categorical models are refused: the arrays do not
record the vocabulary (the JSON form does).
"""

from __future__ import annotations

import io

import numpy as np

from attncert.constructions.compiler.model import UNITS, Affine, Model
from attncert.exact.errors import AttncertError


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


def to_npz(m: Model) -> bytes:
    """The float64 arrays of the module docstring, as the bytes of an .npz file."""
    if m.tokens == "categorical":
        raise AttncertError("the npz format does not record a vocabulary: write a categorical model as JSON")
    if m.causal or m.lengths != "fixed":
        raise AttncertError("the npz format records neither a causal mask nor a model for every length: write this model as JSON")
    width, N = m.width(), m.length
    arrays: dict[str, np.ndarray] = {"embedding": np.zeros((N + 1, width)), "token_columns": np.array(m.token_columns, dtype=np.int64)}
    for c, vals in m.positional.items():
        arrays["embedding"][:, c] = [float(x) for x in vals]
    arrays["outputs"] = np.array(m.outputs["output"], dtype=np.int64)
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
