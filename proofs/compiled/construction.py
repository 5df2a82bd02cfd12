"""Claim ``compiled``: a construction compiled to explicit transformer weights computes it, exactly.

The construction ``of`` (a matrix claim: a lemma, U, multi-head, the encoder
layer) is built at ``sizes`` and compiled (:mod:`constructions.compiler`). On the
claim's random inputs the compiled model's exact forward pass must equal the
independent reference and the RASP evaluation, and, SOp by SOp, the residual
stream decoded after the SOp's sublayer must equal the RASP value of that SOp.
The certificate records the weights; ``attncert verify`` runs them through a
separate minimal forward pass (:mod:`proofs.checkers.forward`), then recompiles
and compares the whole document.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any, Callable

from attncert.constructions import rasp
from attncert.constructions.compiler import MODEL_CLASS, compile_graph
from attncert.constructions.compiler.check import NUMERIC_INPUTS, compare
from attncert.constructions.compiler.model import Model, model_to_json, model_weights, read_model_file
from attncert.constructions.languages import match2, match2_readout, parity, parity_readout
from attncert.exact import EE, QQ, Domain, ParseError
from attncert.exact.canonical import json_equal
from attncert.exact.matrices import matrix_to_json
from attncert.proofs.core import cost as costs
from attncert.proofs.checkers import references
from attncert.proofs.core.certify import certificate
from attncert.proofs.checkers.compiled.construction import check_compiled, model_sha256
from attncert.proofs.core.cost import Cost
from attncert.proofs.core.layout_claims import LAYOUT_CLAIMS, LayoutClaim
from attncert.proofs.core.inputs import SEED, exact_domain
from attncert.proofs.core.params import positive_int, size_values
from attncert.proofs.core.rebuild import recorded_params
from attncert.proofs.core.registry import INDEX, Claim, Param, load_claim, load_claims, register

NAME = "compiled"
STATEMENT = (
    "the compiled transformer (exact rational weights, average-hard attention, MLPs of relu/exp/reciprocal/product units) "
    "maps the encoded inputs of the construction to its reference exactly, equals the RASP program's output, and after every "
    "SOp's sublayer its residual stream holds that SOp's RASP value"
)


#: The language readouts (U, then the readout, as one RASP program) and their default sizes.
LANGUAGES: dict[str, dict[str, int]] = {"match2": {"M": 3, "n": 4}, "parity": {"n": 4, "k": 2}}


def _layout_claim(of: str) -> LayoutClaim:
    if of in INDEX:  # its module alone (every claim's takes a second: sympy, the approximation targets)
        load_claim(of)
    if of not in LAYOUT_CLAIMS:
        load_claims()
        raise ParseError(f"cannot compile {of!r}: choose one of {', '.join(sorted(LAYOUT_CLAIMS) + sorted(LANGUAGES))}")
    return LAYOUT_CLAIMS[of]


def size_params(of: str) -> dict[str, Param]:
    """The sizes of the construction ``of`` (ParseError for one that does not compile), by name."""
    if of in LANGUAGES:
        return {name: Param(name, positive_int, v, f"size {name} of the {of} readout") for name, v in LANGUAGES[of].items()}
    return {p.name: p for p in _layout_claim(of).sizes}


def parse_sizes(of: str, sizes: str) -> dict[str, int]:
    """'n=4,d=3' -> the construction's sizes (its defaults for the rest); ParseError on unknown names."""
    declared = size_params(of)
    out = {name: p.default for name, p in declared.items()}
    for name, values in (size_values(sizes, "sizes") if str(sizes).strip() else {}).items():
        if name not in declared:
            raise ParseError(f"sizes of {of} are {', '.join(declared) or 'none'}; got {name!r}")
        out[name] = declared[name].type(",".join(values))
    if of == "match2" and out["M"] < 2 or of == "parity" and out["k"] > out["n"]:
        raise ParseError(f"{of}: sizes {canonical_sizes(out)} do not define the language (M >= 2, k <= n)")
    return out


def canonical_sizes(sizes: dict[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(sizes.items()))


def compile_construction(of: str, kw: dict[str, int], check: bool = True) -> tuple[Any, Any]:
    """(construction, compiled model) of a layout claim, or of a language readout, at parsed sizes;
    ``check``: the compiler's own check (:mod:`constructions.compiler.check`) on its inputs."""
    if of == "match2":
        cons = match2_readout(kw["M"], kw["n"])
    elif of == "parity":
        cons = parity_readout(kw["n"], kw["k"])
    else:
        cons = _layout_claim(of).build(**kw)
    return cons, compile_graph(cons.graph(), cons.layout.length, "scalar", check=check)


def instance(of: str, size_kw: dict[str, int], seed: int, cons: Any) -> tuple[Domain, dict[str, Any], Any, dict[str, Any]]:
    """(domain, input matrices, reference, extra recorded inputs): random matrices for a layout claim,
    a random word for a language (X, A, V encode it; the reference is the language's bits)."""
    if of not in LANGUAGES:
        lc = _layout_claim(of)
        dom = exact_domain(lc.domain or "EE")
        mats = lc.inputs(seed, None, cons, dom)
        return dom, mats, lc.reference(mats, dom), {}
    rng = random.Random(seed)
    if of == "match2":
        layer = match2(size_kw["M"], size_kw["n"])
        word = [rng.randrange(size_kw["M"]) for _ in range(size_kw["n"])]
    else:
        layer = parity(size_kw["n"], references.parity_positions(size_kw["n"], size_kw["k"]))
        word = [rng.randrange(2) for _ in range(size_kw["n"])]
    mats = {"X": layer.embed(word), "A": layer.A, "V": layer.V}
    _, bits = references.language_instance(of, size_kw, word)
    return EE, mats, [[QQ.convert(b) for b in bits]], {"word": word}


def prove(of: str = "universal", sizes: str = "", seed: int = 0, model: str | None = None) -> dict:
    """The certificate for the construction compiled here, or for the weights of the model file ``model``."""
    return _certify(of, sizes, seed, None if model is None else (model, lambda: read_model_file(model)))


def rebuild(doc: dict[str, Any]) -> dict:
    """Prove again from the recorded parameters; weights that came from a file are the ones the certificate records."""
    kw = recorded_params(CLAIM, doc, optional=("model",))
    source = kw.pop("model")
    if source is None:
        return prove(**kw)
    if source != "file":
        raise ParseError('the parameter model records where the weights came from: "file", or nothing')
    recorded = doc["construction"].get("model") if isinstance(doc.get("construction"), dict) else None
    return _certify(kw["of"], kw["sizes"], kw["seed"], ("the recorded model", lambda: model_weights(recorded, "the recorded model")))


def _certify(of: str, sizes: str, seed: int, given: tuple[str, Callable[[], Model]] | None) -> dict:
    """The certificate for the construction's own compile, or for ``given`` = (where the weights are, their reader)."""
    size_kw = parse_sizes(of, sizes)
    # The compiler's check runs on its own inputs; this claim runs the same comparison on the seed's input.
    cons, compiled = compile_construction(of, size_kw, check=False)
    if given is None:
        return _prove(of, size_kw, seed, cons, compiled, given=False)
    where, read = given
    return _prove(of, size_kw, seed, cons, _fits(read(), cons, compiled, of, size_kw, where), given=True)


#: The members of a model's JSON that describe its residual stream rather than weigh it: the column labels,
#: the token columns, each SOp's columns and sublayer (and a categorical one's values), the outputs, the vocabulary
#: (and, in ``layers``, the SOp each head aggregates).
LAYOUT = ("basis", "token_columns", "nodes", "outputs", "output_values", "vocab")


def _heads(m: Model) -> list[list[str]]:
    """The SOps each layer's heads aggregate, in any order (the heads' outputs are added)."""
    return [sorted(h.label for h in layer.heads) for layer in m.layers]


def _fits(weights: Model, cons: Any, compiled: Model, of: str, size_kw: dict[str, int], where: str) -> Model:
    """Weights given for the construction: the same sequence length, tokens and SOps as its compile, and the very
    residual layout the compiler gives it in the model's mode (:data:`LAYOUT`), so that every SOp's value is read
    where the construction puts it and the record describes nothing the compiler did not derive; only the weights
    are the file's (they are what the claim is about). ParseError otherwise. A model for every length 1..N runs at
    the layout's length N, the only one a matrix layout defines; a causal one is refused."""
    what = f"{of}({canonical_sizes(size_kw)})"
    if weights.length != compiled.length:
        raise ParseError(f"{where} is compiled for sequence length {weights.length}, {what} has length {compiled.length}: give the --of and --sizes it was compiled from")
    if weights.causal:
        raise ParseError(f"{where} is a causal model; {what} is compiled without a causal mask (its layout reads every position)")
    if weights.tokens != compiled.tokens or set(weights.nodes) != set(compiled.nodes):
        raise ParseError(f"{where} does not compile {what}: its tokens or SOps differ from the construction's; give the --of and --sizes it was compiled from")
    own = compiled if weights.lengths == compiled.lengths else compile_graph(cons.graph(), compiled.length, "scalar", check=False, lengths=weights.lengths)
    given, derived = model_to_json(weights), model_to_json(own)
    differing = next((k for k in LAYOUT if not json_equal(given[k], derived[k])), None if _heads(weights) == _heads(own) else "heads' SOps")
    if differing is not None:
        raise ParseError(f"{where} does not compile {what}: its {differing} differ from what the compiler gives the construction (only the weights may be the file's own)")
    return weights


def _prove(of: str, size_kw: dict[str, int], seed: int, cons: Any, model: Model, given: bool) -> dict:
    """The certificate that ``model`` computes the construction ``cons`` on the seed's input (``given``: from a file)."""
    dom, mats, ref, extra = instance(of, size_kw, seed, cons)
    g = cons.graph()
    xs = cons.layout.encode(mats, dom)
    found = compare(model, g, xs, dom)
    differing = sorted(d.label for d in found.disagreements)
    seq = found.outputs["output"]
    out, rest = cons.layout.decode(seq), cons.layout.rest(seq)
    rasp_out = cons.layout.decode(found.rasp[g.graph["outputs"]["output"]])
    equal_ref, equal_rasp = _same(dom, out, ref), _same(dom, out, rasp_out)
    rest_zero = all(dom.sign(v) == 0 for v in rest)
    weights = model_to_json(model)
    return certificate(
        NAME,
        {"of": of, "sizes": canonical_sizes(size_kw), "seed": seed, **({"model": "file"} if given else {})},
        {**extra, **{name: matrix_to_json(m, dom) for name, m in mats.items()}},
        {
            "model_class": MODEL_CLASS,
            "model": weights,
            "model_sha256": model_sha256(weights),
            "layout": cons.layout.to_json(),
            "rasp_size": rasp.size(g).to_json(length=cons.layout.length),
        },
        {"output": matrix_to_json(out, dom), "rest": [dom.to_json(v) for v in rest]},
        {"output": matrix_to_json(ref, dom), "rasp_output": matrix_to_json(rasp_out, dom)},
        {
            "relation": "exact_equal",
            "holds": equal_ref and equal_rasp and rest_zero and not differing,
            "domain": dom.name,
            "statement": STATEMENT,
            "equals_reference": equal_ref,
            "equals_rasp": equal_rasp,
            "rest_is_zero": rest_zero,
            "sops_checked": len(model.nodes),
            "sops_differing": differing,
        },
    )


def _same(dom: Domain, a: list[list[Any]], b: list[list[Any]]) -> bool:
    return len(a) == len(b) and all(len(x) == len(y) and all(dom.eq(u, v) for u, v in zip(x, y)) for x, y in zip(a, b))


def construction_cost(of: str, kw: dict[str, int]) -> Cost:
    """What building and evaluating the construction costs (a language readout costs its U)."""
    if of in LANGUAGES:
        return costs.universal(kw["n"], kw["M"], kw["M"]) if of == "match2" else costs.universal(kw["n"], 3, 1)
    lc = _layout_claim(of)
    return lc.cost(**kw) if lc.cost else Cost()


def cost(of: str, sizes: str, **_: Any) -> Cost:
    """The construction's own cost; the forward pass scores every (query, key) pair of every head. The certificate
    holds the construction's, a third copy of the outputs and the model (:func:`proofs.core.cost.compiled_document`)."""
    own = construction_cost(of, parse_sizes(of, sizes))
    return replace(_with_forward_passes(own, 1), document=costs.compiled_document(of, own))


def compile_cost(of: str, kw: dict[str, int]) -> Cost:
    """``attncert compile``: the construction, then the compiler's check, a forward pass and a RASP
    evaluation on each of its inputs (at most NUMERIC_INPUTS of them, scalar tokens)."""
    return _with_forward_passes(construction_cost(of, kw), NUMERIC_INPUTS)


def _with_forward_passes(own: Cost, runs: int) -> Cost:
    n = own.positions + 1
    return Cost(own.positions, n * n, 2 * runs, 0, (1 + runs) * own.seconds + 1e-6 * n * n * runs, 4 * own.memory + 16 * n)


#: What is compiled: a construction and its sizes (this claim's and compiled_identity's parameters).
CONSTRUCTION_PARAMS = (
    Param("of", str, "universal", "the construction to compile (a matrix claim: transpose ... encoder_layer)"),
    Param("sizes", str, "", "its sizes, e.g. n=4,d=3,dv=2 (the construction's defaults for the rest)"),
)


CLAIM = register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        CONSTRUCTION_PARAMS
        + (
            SEED,
            Param("model", str, None, "certify the model FILE that attncert compile wrote (its exact JSON weights) instead of compiling"),
        ),
        check=check_compiled,
        cost=cost,
        rebuild=rebuild,
    )
)
