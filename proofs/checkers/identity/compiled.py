"""The independent check of a ``compiled_identity`` certificate (docs/identity.md, "compiled weights").

The claim: the recorded compiled model (exact rational weights, the model class of docs/compiler.md)
maps the encoded inputs of a construction (its layout: the matrices' entries row-major, then zeros)
to the construction's reference, and the positions after the output block to 0, for all real
inputs of its sizes.

**Static selection on the weights.** A head attends to the keys j of maximal score x_i^T W_QK x_j.
If every column the score form reads is positional (the same rational values for every input), no
token component is added to it (the embedding is the positional row plus the token's components), and it
is written by no layer (so it keeps those values up to the head's layer), the scores, hence the keys
each query attends to, are the same for every input. This module derives, from the recorded model
alone, per head (layer by layer) the columns its scores read, requires each such column to be
positional and unwritten, and requires the recorded ``static_heads`` to be that list.

The forward pass is then the minimal one of :mod:`proofs.checkers.forward`, run over the identity
checker's field (:class:`FieldDomain`: its arithmetic, ReLU with the region oracle or uninterpreted,
reciprocals recorded as divisors); with static heads its attention takes the rational path, the
argmax decided exactly on positions. Each output entry and the rest are compared by
:func:`proofs.checkers.identity.check.decide` against the reference of the construction
(:mod:`proofs.checkers.identity.references`). The data flow of a model is not read, so a region
split must be one group of all variables.
"""

from __future__ import annotations

from typing import Any, Callable

from attncert.exact import Domain
from attncert.exact.canonical import json_equal
from attncert.exact.errors import ParseError
from attncert.proofs.checkers.forward import check_model_size, forward
from attncert.proofs.checkers.identity.check import Runner, decide, expected_result, guarded, layout_case, result_problems
from attncert.proofs.checkers.identity.field import Field, IdentityFailure, Number, as_number
from attncert.proofs.checkers.identity.graph import SignOracle
from attncert.proofs.checkers.identity.references import CLAIMS
from attncert.proofs.checkers.reading import obj

NAME = "compiled_identity"


class FieldDomain(Domain):
    """The identity checker's field as a number domain for the minimal forward pass."""

    exact = True
    relation = "identity"
    name = "identity-checker"

    def __init__(self, field: Field, oracle: SignOracle):
        self.F, self.S = field, oracle

    def convert(self, x: object) -> Number:
        q = as_number(x)
        if q is None:
            raise IdentityFailure(f"a value of the forward pass that is not a number of the field: {str(x)[:40]}")
        return q

    def exp(self, x: Any) -> Number:
        return self.F.exp(x)

    def sign(self, x: Any) -> int:
        return self.S.sign(x)

    def div(self, a: Any, b: Any) -> Number:
        return self.F.div(a, b)

    def relu(self, x: Any) -> Number:
        return self.S.relu(self.F, x)

    def sum(self, values: Any) -> Number:
        return self.F.total(values)

    def to_json(self, x: Any) -> Any:
        raise IdentityFailure("values of the identity checker's field are not written")

    def from_json(self, obj: Any) -> Any:
        raise IdentityFailure("values of the identity checker's field are not read from a certificate")

    def enclose(self, x: Any, prec: int = 128) -> Any:
        raise IdentityFailure("a value of the identity checker's field is a function of the inputs: it has no enclosure")


def static_heads(model: dict[str, Any]) -> list[dict[str, Any]]:
    """Per head, layer by layer: the layer, its label and the sorted columns its scores read; each must
    be a positional column that no layer writes (module docstring)."""
    layers = model.get("layers")
    positional = model.get("positional")
    if not isinstance(layers, list) or not isinstance(positional, dict):
        raise ParseError("the recorded model needs a list of layers and an object of positional columns")
    try:
        written = {c for layer in layers for h in layer["heads"] for _, c, _ in h["ov"]}
        written |= {c for layer in layers if layer["mlp"] is not None for c, _ in layer["mlp"]["out"]}
        written |= set(model.get("token_columns") or [])  # a token's components are added to the positional row there
        out = []
        for k, layer in enumerate(layers):
            for h in layer["heads"]:
                reads = sorted({a for a, _, _ in h["qk"]} | {b for _, b, _ in h["qk"]})
                bad = [c for c in reads if str(c) not in positional or c in written]
                if bad:
                    raise IdentityFailure(
                        f"head {str(h['aggregate'])[:40]!r} of layer {k} scores column {bad[0]!r:.20}, which is not a positional "
                        "column kept by every layer: its selection may depend on the input"
                    )
                out.append({"layer": k, "head": h["aggregate"], "reads": reads})
    except (KeyError, TypeError, ValueError):
        raise ParseError("malformed layers in the recorded model (heads with qk, ov and aggregate; mlp with out)") from None
    return out


def forward_runner(model: dict[str, Any], length: int) -> Runner:
    """The model's output column at positions 1..N, by the minimal forward pass over the field."""
    check_model_size(model, length)
    if model.get("tokens") not in ("scalar", "pair"):
        raise ParseError("a compiled construction takes numeric tokens (scalar or pair)")
    columns = model.get("outputs", {}).get("output") if isinstance(model.get("outputs"), dict) else None
    if not isinstance(columns, list) or len(columns) != 1:
        raise ParseError("the recorded model must have one output column")

    def runner(field: Field, oracle: SignOracle) -> tuple[Callable[[list[Any]], list[Any]], None]:
        domain = FieldDomain(field, oracle)
        return (lambda tokens: forward(model, tokens, domain)[columns[0]][1:]), None

    return runner


def _recorded_sizes(text: Any, names: tuple[str, ...]) -> dict[str, int]:
    """The recorded sizes, ``name=value`` for every size of the construction, sorted by name (one spelling)."""
    sizes = {}
    for item in str(text).split(",") if text else []:
        name, _, value = item.partition("=")
        if name not in names or name in sizes or not value.isdigit() or int(value) < 1 or value != str(int(value)):
            raise ParseError(f"params.sizes must give {', '.join(names) or 'no sizes'} as name=value, positive integers")
        sizes[name] = int(value)
    if set(sizes) != set(names) or list(sizes) != sorted(sizes) or not isinstance(text, str):
        raise ParseError(f"params.sizes must give every size of the construction ({', '.join(names) or 'none'}), sorted by name")
    return sizes


@guarded
def check_compiled_identity(doc: dict[str, Any]) -> list[str]:
    """Problems found in a compiled_identity certificate (empty: it holds as recorded)."""
    params = obj(doc, "params")
    of = params.get("of")
    if of not in CLAIMS or CLAIMS[of].rationals:  # compiled_identity takes sizes only
        raise IdentityFailure(f"the identity checker has no reference for the construction {str(of)[:40]!r}")
    if set(params) != {"of", "sizes"}:
        raise ParseError("the parameters of compiled_identity are of and sizes")
    sizes = _recorded_sizes(params.get("sizes"), CLAIMS[of].sizes)
    construction = obj(doc, "construction")
    model = obj(construction, "model")
    if not json_equal(construction.get("static_heads"), static_heads(model)):
        raise IdentityFailure("construction.static_heads is not the list of the recorded model's heads and the columns their scores read")
    layout = obj(construction, "layout")
    length = layout.get("length")
    if not isinstance(length, int) or isinstance(length, bool) or model.get("length") != length:
        raise ParseError("the recorded model and layout must have one sequence length")
    case = layout_case(doc, of, sizes, forward_runner(model, length))
    verdict = decide(case, obj(doc, "outputs"))
    return verdict.problems + result_problems(obj(doc, "result"), expected_result(verdict, len(case.compared)))
