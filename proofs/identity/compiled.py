"""Theorem (compiled weights, for all inputs): the exact compiled transformer of a construction computes
the construction's function: for all real inputs of its sizes, its forward pass (average-hard attention,
MLPs of relu / exp / reciprocal / product units) maps the encoded inputs to the reference, and the
positions after the output block to 0.

**Static selection on the weights.** A head whose score form x_i^T W_QK x_j reads only positional
columns (rational, the same for every input) and no column a layer writes selects the same keys for
every input. Every head of the model must be such a head; the certificate lists, per head, the columns
its scores read. The forward pass is then evaluated once over the symbolic field (docs/identity.md).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from attncert.constructions.compiler.model import model_to_json
from attncert.exact.errors import AttncertError
from attncert.proofs.checkers import references
from attncert.proofs.core.certify import certificate
from attncert.proofs.checkers.identity.compiled import check_compiled_identity
from attncert.proofs.core import cost as costs
from attncert.proofs.compiled.construction import CONSTRUCTION_PARAMS, LANGUAGES, canonical_sizes, compile_construction, parse_sizes
from attncert.proofs.compiled.construction import cost as compiled_cost
from attncert.proofs.core.cost import Cost
from attncert.proofs.identity.claims import STATEMENTS
from attncert.proofs.identity.prove import SymbolicTask, prove_symbolic, witness_sections
from attncert.proofs.core.registry import Claim, register

NAME = "compiled_identity"
STATEMENT = (
    "for all real inputs of the construction's sizes: the compiled transformer (exact rational weights, average-hard attention "
    "whose scores read positional columns only, MLPs of relu/exp/reciprocal/product units) maps the encoded inputs to the "
    "construction's reference, and the rest to 0; decided exactly as an identity of functions of the entries"
)


class DataDependentHead(AttncertError):
    """A compiled head whose scores read a column the input can change."""


def static_heads(model: Any) -> list[dict[str, Any]]:
    """Per head (layer by layer): its label and the columns its scores read, each positional and never
    written by a layer; DataDependentHead names the first head that reads another column."""
    written = {c for layer in model.layers for h in layer.heads for _, c, _ in h.ov}
    written |= {c for layer in model.layers if layer.mlp for c, _ in layer.mlp.out}
    out = []
    for k, layer in enumerate(model.layers):
        for h in layer.heads:
            reads = sorted({a for a, _, _ in h.qk} | {b for _, b, _ in h.qk})
            bad = [c for c in reads if c not in model.positional or c in written]
            if bad:
                raise DataDependentHead(
                    f"head {h.label!r} of layer {k} scores column {bad[0]}, which the input can change: its selection is "
                    "value-dependent, so a for-all-inputs proof does not apply"
                )
            out.append({"layer": k, "head": h.label, "reads": reads})
    return out


def prove(of: str = "universal", sizes: str = "") -> dict[str, Any]:
    if of not in STATEMENTS:
        raise AttncertError(
            f"compiled_identity covers {', '.join(STATEMENTS)}; {of} is not one"
            + (" (a language readout is about words, a finite set: prove compiled --of it)" if of in LANGUAGES else "")
        )
    size_kw = parse_sizes(of, sizes)
    cons, model = compile_construction(of, size_kw, check=False)
    heads = static_heads(model)
    base = SymbolicTask.of_construction(cons, references.OVER_ANY_FIELD[of])
    task = SymbolicTask(
        f"compiled {of}", base.graph, base.length, base.shapes, base.encode, base.reference, base.compared, base.columns,
        base.zeros, None, lambda tokens, field: model.forward(tokens, field)[0]["output"],
    )
    proof = prove_symbolic(task)
    sections = witness_sections(proof)
    return certificate(
        NAME,
        {"of": of, "sizes": canonical_sizes(size_kw)},
        {"variables": proof.variables},
        {"model": model_to_json(model), "layout": cons.layout.to_json(), "static_heads": heads},
        sections["outputs"],
        {"function": STATEMENTS[of][1]},
        {**sections["result"], "statement": STATEMENT},
    )


def cost(of: str = "universal", sizes: str = "", **_: Any) -> Cost:
    """The construction's symbolic proof (proofs/core/cost.py), with the compiled forward pass scoring every pair of positions."""
    if of not in STATEMENTS:
        return compiled_cost(of, sizes)
    kw = parse_sizes(of, sizes)
    own = compiled_cost(of, sizes)
    # the certificate: the construction's identity certificate (its regions one tree over every variable: the data
    # flow of a model is not read) and the model's weights, as a compiled certificate records them
    document = costs.identity_document(of, kw, regions="tree") + costs.MODEL_BASE + costs.MODEL_BYTES.get(of, costs.MODEL_BYTES_OTHER) * own.positions
    return replace(costs.identity(of, own.positions, **kw), pairs=own.pairs, document=min(document, costs.CAP))


register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        CONSTRUCTION_PARAMS,
        check=check_compiled_identity,
        cost=cost,
    )
)
