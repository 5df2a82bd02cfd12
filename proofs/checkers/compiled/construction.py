"""Independent check of a ``compiled`` certificate: the recorded weights, run by the minimal forward
pass of :mod:`proofs.checkers.forward`, map the encoded inputs to the reference, exactly.

The tokens are re-encoded from the recorded matrices by the layout rule (the
matrices row-major, one after the other, then zeros up to the sequence length),
the reference is recomputed by :data:`proofs.checkers.references.BY_CLAIM`, and the model
output is read at positions 1..r c (row-major) with zeros after it.
"""

from __future__ import annotations

import hashlib
from typing import Any

from flint import ctx, fmpq

from attncert.exact import QQ, Ball, EENumber, ParseError, domain_from_name
from attncert.exact.canonical import canonical_json
from attncert.exact.limits import current as current_limits
from attncert.exact.matrices import matrix_from_json
from attncert.proofs.checkers.forward import check_model_size, forward
from attncert.proofs.checkers.reading import integer, items, obj
from attncert.proofs.checkers.result import conclude
from attncert.proofs.core.params import positive_rational, rational_list
from attncert.proofs.checkers.references import BY_CLAIM, language_instance


def check_compiled(doc: dict[str, Any]) -> list[str]:
    params, result = obj(doc, "params"), obj(doc, "result")
    of = params.get("of")
    if of not in BY_CLAIM and of not in LANGUAGES:
        raise ParseError(f"no reference for the construction {of!r:.30}")
    if result.get("domain") not in ("QQ", "EE"):
        raise ParseError("a compiled claim is decided in QQ or EE")
    dom = domain_from_name(result["domain"])
    model, tokens, mats, layout = _model_and_tokens(doc, dom)
    length = len(tokens)
    out_cols = model.get("outputs", {}).get("output")
    if not isinstance(out_cols, list) or len(out_cols) != 1:
        raise ParseError("the model must have one output column")
    seq = forward(model, tokens, dom)[out_cols[0]][1:]
    r, c = integer(obj(layout, "output"), "rows", 1, length), integer(obj(layout, "output"), "cols", 1, length)
    block = [seq[i * c : (i + 1) * c] for i in range(r)]
    problems = []
    if obj(doc, "construction").get("model_sha256") != model_sha256(model):
        problems.append("the recorded model_sha256 is not the sha256 of the recorded model's JSON")
    if of in LANGUAGES:
        word, sizes = _word(doc, of, params), _sizes(params, LANGUAGES[of])
        expected, bits = language_instance(of, sizes, word)
        if any([[dom.convert(x) for x in r] for r in expected[k]] != [[dom.convert(x) for x in r] for r in mats[k]] for k in expected):
            problems.append("the recorded X, A, V are not the encoding of the recorded word for this language")
        ref = [[dom.convert(b) for b in bits]]
    else:
        ref = BY_CLAIM[of](mats, dom)
    same = lambda a, b: len(a) == len(b) and all(len(x) == len(y) and all(dom.eq(u, v) for u, v in zip(x, y)) for x, y in zip(a, b))  # noqa: E731
    # why the claim does not hold (the weights compute something else), as against a recorded value that is not
    # the recomputed one
    failures = []
    if not same(block, ref):
        failures.append("the compiled weights do not map the inputs to the reference")
    if not all(dom.sign(v) == 0 for v in seq[r * c :]):
        failures.append("the compiled model's output is not zero after the output block")
    if not same(matrix_from_json(obj(doc, "outputs").get("output"), dom), block):
        problems.append("the recorded output is not the forward pass of the recorded weights")
    if not same(matrix_from_json(obj(doc, "reference").get("output"), dom), ref):
        problems.append("the recorded reference differs from the reference recomputed from the inputs")
    return conclude(doc, "exact_equal", problems, failures)


def model_sha256(model: dict[str, Any]) -> str:
    """The sha256 of a model's file as ``attncert compile`` writes it: its canonical JSON and a newline."""
    return hashlib.sha256(canonical_json(model) + b"\n").hexdigest()


#: The language readouts and the names of their sizes.
LANGUAGES = {"match2": ("M", "n"), "parity": ("n", "k")}


def _sizes(params: dict[str, Any], names: tuple[str, ...]) -> dict[str, int]:
    """'M=3,n=4' -> {'M': 3, 'n': 4}, exactly the names given, each a positive integer up to 64."""
    out = {}
    for item in str(params.get("sizes", "")).split(","):
        name, _, value = item.partition("=")
        if name not in names or not value.isdigit() or not 1 <= int(value) <= 64:
            raise ParseError(f"the sizes must be {', '.join(names)} as name=value")
        out[name] = int(value)
    if set(out) != set(names):
        raise ParseError(f"the sizes must give {', '.join(names)}")
    return out


def _word(doc: dict[str, Any], of: str, params: dict[str, Any]) -> list[int]:
    word = obj(doc, "inputs").get("word")
    sizes = _sizes(params, LANGUAGES[of])
    letters = sizes["M"] if of == "match2" else 2
    if not isinstance(word, list) or len(word) != sizes["n"] or not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < letters for x in word):
        raise ParseError(f"the word must be {sizes['n']} letters in 0..{letters - 1}")
    return word


def _lower(x: Any) -> Any:
    """A rational EE value as fmpq (the form the references take), anything else unchanged."""
    q = x.rational_value() if isinstance(x, EENumber) else None
    return x if q is None else q


#: Bits the checker adds to the prover's precision (its balls are then at least as tight).
EXTRA_BITS = 64


def check_compiled_softmax(doc: dict[str, Any]) -> list[str]:
    """Each recorded B(beta) bounds |softmax_beta model - AHAT model| over the output column, and each
    B_out(beta) over the output block (the layout's r x c result, positions 1..r c), recomputed by the
    minimal forward pass in Ball at 64 more bits and exactly; the least betas within tol are the recorded ones."""
    params, out, result = obj(doc, "params"), obj(doc, "outputs"), obj(doc, "result")
    if result.get("domain") not in ("QQ", "EE"):
        raise ParseError("a compiled claim is decided in QQ or EE")
    dom = domain_from_name(result["domain"])
    prec = integer(params, "prec", 2, 1 << 16) + EXTRA_BITS
    model, tokens, _, layout = _model_and_tokens(doc, dom)
    block = integer(obj(layout, "output"), "rows", 1, len(tokens)) * integer(obj(layout, "output"), "cols", 1, len(tokens))
    if block > len(tokens):
        raise ParseError("the output block does not fit in the sequence")
    cols = model.get("outputs", {}).get("output")
    if not isinstance(cols, list) or len(cols) != 1:
        raise ParseError("the model must have one output column")
    ahat = forward(model, tokens, dom)[cols[0]][1:]
    problems = []
    recorded_ahat = [dom.from_json(v) for v in items(out, "ahat")]
    if len(recorded_ahat) != len(ahat) or not all(dom.eq(a, b) for a, b in zip(recorded_ahat, ahat)):
        problems.append("the recorded average-hard output is not the forward pass of the recorded weights")
    ball = Ball(prec)
    rows = items(out, "softmax")
    betas = [QQ.from_json(r.get("beta")) if isinstance(r, dict) else None for r in rows]
    if betas != [positive_rational(b, "beta") for b in rational_list(params.get("betas"))]:
        problems.append("the softmax rows are not one per beta of the parameters")
    goal = positive_rational(params.get("tol"), "tol")
    within: dict[str, list[fmpq]] = {"bound": [], "bound_output_block": []}
    for b, row in zip(betas, rows):
        soft = forward(model, [dom.enclose(t, prec) for t in tokens], ball, beta=b)[cols[0]][1:]
        for field, positions in (("bound", len(soft)), ("bound_output_block", block)):
            with ctx.workprec(prec):
                proven = max(((s - dom.enclose(e, prec)).abs_upper() for s, e in zip(soft[:positions], ahat[:positions])), key=lambda t: t.mid()).fmpq()
            recorded = QQ.from_json(row.get(field))
            if recorded < proven:
                problems.append(f"beta {b}: the recorded {field.replace('_', ' ')} is below the recomputed distance")
            if recorded <= goal:
                within[field].append(b)
    for field, key in (("bound", "least_beta_within_tol"), ("bound_output_block", "least_beta_within_tol_output_block")):
        least = result.get(key)
        if (QQ.from_json(least) if least is not None else None) != (min(within[field]) if within[field] else None):
            problems.append(f"the least beta within tol ({field.replace('_', ' ')}) is not the recorded one")
    # B(beta) is an upper bound at the working precision: one above tol does not show the distance above it, so
    # no beta within tol leaves the claim not proven, never disproven
    undecided = [] if within["bound"] else [f"no listed beta has B(beta) <= {goal} at this precision"]
    return conclude(doc, "bound", problems, undecided=undecided)


def _model_and_tokens(doc: dict[str, Any], dom: Any) -> tuple[dict[str, Any], list[Any], dict[str, Any], dict[str, Any]]:
    """The recorded model, the tokens re-encoded from the recorded matrices by the layout rule (row-major,
    one matrix after the other, zeros up to the length), the matrices, and the layout."""
    cons = obj(doc, "construction")
    layout, model = obj(cons, "layout"), obj(cons, "model")
    if model.get("tokens") not in ("scalar", "pair"):
        raise ParseError("a compiled construction takes numeric tokens (scalar or pair)")
    length = integer(layout, "length", 1, current_limits().max_positions)
    check_model_size(model, length)
    mats, tokens = {}, []
    for spec in items(layout, "inputs"):
        name, r, c = spec.get("name"), integer(spec, "rows", 1, length), integer(spec, "cols", 1, length)
        m = [[_lower(x) for x in row] for row in matrix_from_json(obj(doc, "inputs").get(name), dom)]
        if (len(m), len(m[0])) != (r, c):
            raise ParseError(f"input {name} must be {r}x{c}")
        mats[name] = m
        tokens += [x for row in m for x in row]
    if len(tokens) > length:
        raise ParseError("the inputs do not fit in the sequence")
    return model, tokens + [dom.zero()] * (length - len(tokens)), mats, layout
