"""An assembled tracr model, read as exact rationals: its weights, residual space, encoders and shape.

tracr's ``compile_rasp_to_model`` returns an ``AssembledTransformerModel``: haiku parameters
(float32 arrays), the residual space's labels, a categorical input encoder (token -> embedding
row, with a BOS and a PAD token) and an output encoder (class index -> value, or the identity for
a numerical output), and a config (heads, key size, layers, causal, ReLU MLPs, no layer norm).
Its forward pass (``tracr/transformer/model.py``, ``attention.py``, ``assemble.py``) is:

* x_t = token_embed[token_t] + pos_embed[t], position 0 holding BOS;
* per layer, attention: for each head, logits (x W_Q + b_Q)(x W_K + b_K)^T / s with
  s = sqrt(key_size) rounded to float32 (``np.sqrt(key_size).astype(float32)``), a causal model
  replacing the logits above the diagonal by float32(-1e30); softmax over the keys; the heads'
  outputs (weights times x W_V + b_V) concatenated and projected by W_O, b_O, added to x;
* then the MLP x + relu(x W_1 + b_1) W_2 + b_2;
* unembedding: the output SOp's columns of the residual; a categorical output decodes to the
  value of the largest column (argmax over *every* column of the output space, those labelled
  ``OUTPUT:VALUE``), a numerical one is the value of the column labelled ``OUTPUT``. The decoder is
  derived from the labels (:func:`check_decoder`); a record whose classes leave a column of the
  output space out, or read another, is refused.

Every float32 weight is a dyadic rational m 2^e, read here exactly (:func:`exact_weights`), as
are s and the mask logit. The record (:func:`model_to_json`) keeps nonzero weights only; the
checker reads it with its own code (:mod:`proofs.checkers.tracr.model`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from flint import fmpq

from attncert.constructions.rasp.values import decode_value, encode_value
from attncert.constructions.tracr.program import key
from attncert.exact import ParseError, parse_rational
from attncert.exact.errors import AttncertError
from attncert.exact.rationals import rational_from_json, rational_to_json

#: The parameter groups of one layer, in the order of the forward pass.
ATTENTION = ("query", "key", "value", "linear")
MLP = ("linear_1", "linear_2")


class ModelError(AttncertError):
    """A tracr model that does not fit what is certified (layer norm, a residual space the program does not match)."""


@dataclass
class Matrix:
    """A weight matrix (rows x cols) and its bias (cols), exact rationals as sparse entries."""

    rows: int
    cols: int
    w: dict[tuple[int, int], fmpq]
    b: dict[int, fmpq]

    def dense(self) -> list[list[fmpq]]:
        out = [[fmpq(0)] * self.cols for _ in range(self.rows)]
        for (i, j), v in self.w.items():
            out[i][j] = v
        return out


@dataclass
class TracrModel:
    """What the forward pass needs, exactly: see the module docstring."""

    labels: list[str]
    token_rows: list[tuple[Any, int]]  # (token, its row of token_embed), BOS and PAD included
    bos: Any
    pad: Any
    max_seq_len: int
    causal: bool
    heads: int
    key_size: int
    scale: fmpq  # float32(sqrt(key_size))
    mask_logit: fmpq  # float32(-1e30)
    token_embed: Matrix
    pos_embed: Matrix
    layers: list[dict[str, Matrix]]  # query, key, value, linear, linear_1, linear_2
    output: str  # the output SOp's label
    categorical: bool
    classes: list[tuple[Any, int]]  # categorical: (value, residual column) in argmax order; numerical: [(None, column)]

    @property
    def width(self) -> int:
        return len(self.labels)

    def vocab(self) -> list[Any]:
        return [t for t, _ in self.token_rows if t != self.bos and t != self.pad]


def float32_scale(key_size: int) -> fmpq:
    """tracr's divisor of the logits: ``np.sqrt(key_size).astype(float32)``, as the rational it is."""
    return exact(np.sqrt(key_size).astype(np.float32))


def float32_mask() -> fmpq:
    """The logit tracr puts above the diagonal of a causal model: -1e30 as a float32."""
    return exact(np.float32(-1e30))


def exact(x: Any) -> fmpq:
    """A float (a float32 or float64 value) as the rational it is."""
    f = Fraction(float(x))
    return fmpq(f.numerator, f.denominator)


@dataclass(frozen=True)
class FloatClass:
    """A class of a categorical output whose value tracr holds as a float (its value sets are computed
    in floats: 1/3 is 0.3333333333333333): it stands for the exact values whose double is this one.
    ``value`` is the double's exact binary value."""

    value: fmpq

    def matches(self, v: Any) -> bool:
        """Whether the exact RASP value v rounds to this double (v a number, not a bool)."""
        if isinstance(v, (bool, str, tuple)) or v is None:
            return False
        q = v if isinstance(v, fmpq) else fmpq(v)
        return exact(float(Fraction(int(q.p), int(q.q)))) == self.value


def class_json(v: Any) -> Any:
    """A class's value in a certificate: ``{"f": "p/q"}`` for a :class:`FloatClass` (the double's exact
    value), the tagged RASP value otherwise."""
    return {"f": rational_to_json(v.value)} if isinstance(v, FloatClass) else encode_value(v)


def class_value(v: Any) -> Any:
    """An output class's value: a float is a :class:`FloatClass`; the others as :func:`exact_value`."""
    if isinstance(v, (float, np.floating)):
        return FloatClass(exact(v))
    return exact_value(v)


def exact_value(v: Any) -> Any:
    """A value of tracr's (a token, a class of the output) as an exact RASP value: a float is the
    decimal it prints as (its residual label, ``repr``), read exactly; ints, strings and booleans stay."""
    if isinstance(v, (bool, str)) or v is None:
        return v
    if isinstance(v, (float, np.floating)):
        return parse_rational(repr(float(v)))
    if isinstance(v, (int, np.integer)):
        return int(v)
    raise ModelError(f"a value of type {type(v).__name__} in the model's encoders ({v!r:.40}) has no exact form")


def spells(suffix: str, v: Any) -> bool:
    """Whether a residual label's value part (tracr writes ``f"{name}:{value}"``) spells the value v: the
    same token, or number; a float's spelling (``0.3333333333333333``) spells a :class:`FloatClass` of
    that double and every exact number that rounds to it."""
    if isinstance(v, FloatClass):
        return _double(suffix) == v.value
    if isinstance(v, (bool, str)):
        return suffix == str(v)
    if v is None or isinstance(v, tuple):
        return False
    if any(c in suffix for c in ".eE") and (d := _double(suffix)) is not None:
        return FloatClass(d).matches(v)
    try:
        return parse_rational(suffix) == v
    except (ParseError, ValueError):
        return False


def _double(spelling: str) -> fmpq | None:
    """The exact value of the double a float's spelling denotes, or None."""
    try:
        return exact(float(spelling))
    except ValueError:
        return None


def read_assembled(assembled: Any, output: str) -> TracrModel:
    """The exact record of tracr's assembled model whose output SOp is labelled ``output``.

    ModelError when the model is outside what the forward pass computes (layer norm, an activation
    other than ReLU) or when its residual space has no column for the output."""
    cfg = assembled.model_config
    if cfg.layer_norm:
        raise ModelError("the model uses layer norm, which tracr's compiler never sets and this forward pass does not compute")
    act = getattr(cfg.activation_function, "__name__", "") or getattr(getattr(cfg.activation_function, "fun", None), "__name__", "")
    if act != "relu":
        raise ModelError(f"the model's MLP activation is {act or cfg.activation_function!r:.40}, not ReLU")
    params = {k: {kk: np.asarray(vv) for kk, vv in v.items()} for k, v in assembled.params.items()}
    enc = assembled.input_encoder
    labels = [str(s) for s in assembled.residual_labels]
    if len(set(labels)) != len(labels):
        raise ModelError("the residual space has two columns with the same label")
    layers = []
    for layer in range(cfg.num_layers):
        group = {}
        for part in ATTENTION:
            group[part] = _matrix(params[f"transformer/layer_{layer}/attn/{part}"])
        for part in MLP:
            group[part] = _matrix(params[f"transformer/layer_{layer}/mlp/{part}"])
        layers.append(group)
    categorical = type(assembled.output_encoder).__name__ == "CategoricalEncoder"
    if categorical:
        order = sorted(assembled.output_encoder.encoding_map.items(), key=lambda kv: kv[1])
        classes = [(class_value(v), _column(labels, output, class_value(v))) for v, _ in order]
    else:
        if output not in labels:
            raise ModelError(f"the residual space has no column {output!r} for the program's numerical output")
        classes = [(None, labels.index(output))]
    pos = params["pos_embed"]["embeddings"]
    return check_decoder(TracrModel(
        labels=labels,
        token_rows=[(exact_value(t), int(i)) for t, i in sorted(enc.encoding_map.items(), key=lambda kv: kv[1])],
        bos=exact_value(enc.bos_token),
        pad=exact_value(enc.pad_token),
        max_seq_len=int(pos.shape[0]) - 1,
        causal=bool(cfg.causal),
        heads=int(cfg.num_heads),
        key_size=int(cfg.key_size),
        scale=float32_scale(int(cfg.key_size)),
        mask_logit=float32_mask(),
        token_embed=_matrix({"w": params["token_embed"]["embeddings"]}),
        pos_embed=_matrix({"w": pos}),
        layers=layers,
        output=output,
        categorical=categorical,
        classes=classes,
    ))


def check_decoder(m: TracrModel) -> TracrModel:
    """The model if its classes are the decoder tracr's unembedding computes from its residual labels:
    categorical, one class per column labelled ``OUTPUT:VALUE`` (every one: the argmax reads the whole
    output space), its value spelled by the label, no value twice; numerical, the one column labelled
    ``OUTPUT``. ModelError otherwise."""
    cols = [c for _, c in m.classes]
    if any(not 0 <= c < m.width for c in cols) or len(set(cols)) != len(cols):
        raise ModelError("the output classes must read distinct residual columns")
    if not m.categorical:
        if len(m.classes) != 1 or m.classes[0][0] is not None or m.labels[cols[0]] != m.output:
            raise ModelError(f"a numerical output reads the one column labelled {m.output!r:.40}")
        return m
    space = {c for c, label in enumerate(m.labels) if label.startswith(m.output + ":")}
    if set(cols) != space:
        raise ModelError(f"the decoder reads {len(cols)} of the {len(space)} columns labelled {m.output!r:.40}:VALUE; tracr's argmax reads every one")
    for v, c in m.classes:
        if not spells(m.labels[c][len(m.output) + 1 :], v):
            raise ModelError(f"the output class {v!r:.30} reads column {m.labels[c]!r:.40}, which does not spell it")
    if len({_class_key(v) for v, _ in m.classes}) != len(m.classes):
        raise ModelError("two output classes have the same value")
    return m


def _class_key(v: Any) -> Any:
    return ("f", v.value) if isinstance(v, FloatClass) else key(v)


def _column(labels: list[str], sop: str, v: Any) -> int:
    found = [i for i, s in enumerate(labels) if s.startswith(sop + ":") and spells(s[len(sop) + 1 :], v)]
    if len(found) != 1:
        raise ModelError(f"the residual space has {'no' if not found else 'more than one'} column for the output value {v!r:.40} of {sop!r}")
    return found[0]


def _matrix(p: dict[str, np.ndarray]) -> Matrix:
    w = np.asarray(p["w"], dtype=np.float32)
    b = np.asarray(p.get("b", np.zeros(w.shape[1])), dtype=np.float32)
    rows, cols = np.nonzero(w)
    return Matrix(
        int(w.shape[0]), int(w.shape[1]),
        {(int(i), int(j)): exact(w[i, j]) for i, j in zip(rows.tolist(), cols.tolist())},
        {int(j): exact(b[j]) for j in np.nonzero(b)[0].tolist()},
    )


def model_to_json(m: TracrModel) -> dict[str, Any]:
    """The record in a certificate: labels, encoders, shape, constants, nonzero weights (``"p/q"``)."""

    def mat(x: Matrix) -> dict[str, Any]:
        return {
            "shape": [x.rows, x.cols],
            "w": [[i, j, rational_to_json(v)] for (i, j), v in sorted(x.w.items())],
            "b": [[j, rational_to_json(v)] for j, v in sorted(x.b.items())],
        }

    return {
        "residual": list(m.labels),
        "tokens": [[encode_value(t), i] for t, i in m.token_rows],
        "bos": encode_value(m.bos),
        "pad": encode_value(m.pad),
        "max_seq_len": m.max_seq_len,
        "causal": m.causal,
        "heads": m.heads,
        "key_size": m.key_size,
        "scale": rational_to_json(m.scale),
        "mask_logit": rational_to_json(m.mask_logit),
        "token_embed": mat(m.token_embed),
        "pos_embed": mat(m.pos_embed),
        "layers": [{part: mat(layer[part]) for part in ATTENTION + MLP} for layer in m.layers],
        "output": {
            "label": m.output,
            "encoding": "categorical" if m.categorical else "numerical",
            "classes": [[class_json(v), c] for v, c in m.classes],
        },
    }


def model_from_json(obj: Any) -> TracrModel:
    """The recorded model read back (ParseError if malformed; the checker has its own reader)."""
    try:
        def mat(x: dict[str, Any]) -> Matrix:
            rows, cols = x["shape"]
            w = {(int(i), int(j)): rational_from_json(v) for i, j, v in x["w"]}
            b = {int(j): rational_from_json(v) for j, v in x["b"]}
            if any(not (0 <= i < rows and 0 <= j < cols) for i, j in w) or any(not 0 <= j < cols for j in b):
                raise ParseError("a weight outside its matrix")
            return Matrix(int(rows), int(cols), w, b)

        out = obj["output"]
        return check_decoder(TracrModel(
            labels=[str(s) for s in obj["residual"]],
            token_rows=[(decode_value(t), int(i)) for t, i in obj["tokens"]],
            bos=decode_value(obj["bos"]),
            pad=decode_value(obj["pad"]),
            max_seq_len=int(obj["max_seq_len"]),
            causal=bool(obj["causal"]),
            heads=int(obj["heads"]),
            key_size=int(obj["key_size"]),
            scale=rational_from_json(obj["scale"]),
            mask_logit=rational_from_json(obj["mask_logit"]),
            token_embed=mat(obj["token_embed"]),
            pos_embed=mat(obj["pos_embed"]),
            layers=[{part: mat(layer[part]) for part in ATTENTION + MLP} for layer in obj["layers"]],
            output=str(out["label"]),
            categorical=out["encoding"] == "categorical",
            classes=[(FloatClass(rational_from_json(v["f"])) if isinstance(v, dict) and set(v) == {"f"} else decode_value(v), int(c)) for v, c in out["classes"]],
        ))
    except ModelError as e:
        raise ParseError(f"the recorded tracr model: {e}") from None
    except (KeyError, TypeError, ValueError) as e:
        raise ParseError(f"malformed tracr model record ({type(e).__name__}: {str(e)[:80]})") from None
