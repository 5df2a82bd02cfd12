"""The check of ``compiled_program``: the recorded weights on every input, by the checker's own forward pass.

It never imports the compiler or the RASP evaluator. From the certificate alone:

1. **Hypotheses.** ``construction.model_sha256`` is the sha256 of the recorded model; the model is
   for the recorded vocabulary (one-hot tokens in that order), the recorded mode (exactly
   max_seq_len tokens, or every length 1..max_seq_len) and the recorded causality; the output it
   decodes is the one recorded.
2. **Every input.** Each sequence over the vocabulary of each length checked (in the order of
   :func:`inputs`) is run through :func:`proofs.checkers.forward.forward`, exactly (QQ, or EE when an
   MLP has exp units). At positions 1..n the output's columns must decode to the recorded exact RASP
   output: a categorical output is the value whose column holds exactly 1 while every other holds
   exactly 0, or None where every column holds exactly 0 (the indicator of no value, as the compiler's
   check reads it); a numerical one is its column's value, equal exactly (a boolean as 0 or 1).
   With ``params.method = "compositional"`` steps 2 and 3 are the compositional proof instead
   (:mod:`proofs.checkers.compiled.every_input`, every input of every length without enumerating them),
   run again on the recorded model and program (recorded as tables).
3. **Verdicts.** The counts of correct, counterexample and undefined inputs (undefined: the recorded
   RASP output is null, the program has no value there), and the listed inputs, must be what step 2
   found; ``result`` must state them, and holds only if every input is correct.

The rebuild (:func:`proofs.compiled.program.rebuild`) then recompiles the recorded program and
evaluates it again, and the whole document is compared.
"""

from __future__ import annotations

import itertools
from typing import Any, Iterator, Sequence

from attncert.exact import EE, QQ, ParseError
from attncert.exact.canonical import json_equal
from attncert.proofs.checkers.compiled.construction import model_sha256
from attncert.proofs.checkers.compiled.every_input import check_compositional
from attncert.proofs.checkers.forward import forward, model_mode
from attncert.proofs.checkers.reading import integer, obj
from attncert.proofs.checkers.values import same, value


def inputs(vocab: Sequence[Any], n: int, every: bool) -> Iterator[tuple[int, Iterator[tuple[Any, ...]]]]:
    """(length, its sequences) for each length checked: n alone, or 1..n; the sequences in lexicographic order
    of the vocabulary, generated one at a time (never listed: there are len(vocab)^length of them)."""
    for length in range(1 if every else n, n + 1):
        yield length, itertools.product(vocab, repeat=length)


def check_compiled_program(doc: dict[str, Any]) -> list[str]:
    """Problems with a compiled_program certificate (empty: its claim holds as recorded)."""
    given, cons = obj(doc, "inputs"), obj(doc, "construction")
    model = obj(cons, "model")
    if cons.get("model_sha256") != model_sha256(model):
        return ["construction.model_sha256 is not the sha256 of the recorded model"]
    vocab_json = given.get("vocab")
    if not isinstance(vocab_json, list) or not vocab_json:
        raise ParseError('"inputs.vocab" must be a non-empty list')
    every, causal, n = model_mode(model)
    problems = []
    if not json_equal(model.get("vocab"), vocab_json) or model.get("tokens") != "categorical":
        problems.append("the model's one-hot tokens are not the recorded vocabulary")
    if n != given.get("max_seq_len") or every != (given.get("lengths") == "every") or given.get("lengths") not in ("fixed", "every"):
        problems.append("the model's lengths are not the recorded max_seq_len and mode")
    params = obj(doc, "params")
    if causal != bool(params.get("causal")):
        problems.append("the model's causality is not the recorded one")
    # verify's cost limit, checked before this, reads the parameters: the inputs enumerated below are those of the
    # recorded model, so the two must agree (the prover writes params.vocab as the tokens joined by commas)
    if (params.get("vocab"), params.get("max_seq_len"), params.get("lengths")) != (",".join(str(value(t)) for t in vocab_json), n, given.get("lengths")):
        problems.append("the parameters (vocab, max_seq_len, lengths) are not the recorded model's")
    label = cons.get("output")
    outputs, output_values = obj(model, "outputs"), obj(model, "output_values")
    if not isinstance(label, str) or label not in outputs or label not in output_values:
        problems.append("the recorded output is not an output of the model")
    if problems:
        return problems
    if obj(doc, "params").get("method") == "compositional":
        return check_compositional(doc, model, len(vocab_json))
    cols = outputs[label]
    classes = None if output_values[label] is None else [value(v) for v in output_values[label]]
    if not isinstance(cols, list) or (classes is None and len(cols) != 1) or (classes is not None and len(classes) != len(cols)):
        raise ParseError("the model's output columns do not match its output values")
    has_exp = any(u.get("unit") == "exp" for layer in model.get("layers", []) if isinstance(layer, dict) and layer.get("mlp") for stage in layer["mlp"]["stages"] for u in stage)
    dom = EE if has_exp else QQ
    ref = obj(obj(doc, "reference"), "rasp")
    values = [value(v) for v in ref.get("values") or []]
    recorded = ref.get("outputs")
    lengths = range(1 if every else n, n + 1)
    total = sum(len(vocab_json) ** length for length in lengths)  # counted before any input is made
    if total > integer(params, "max_inputs", 1, 1 << 62):
        raise ParseError(f"{total:,} input sequences, over the recorded max_inputs")
    if not isinstance(recorded, list) or len(recorded) != len(lengths):
        raise ParseError('"reference.rasp.outputs" must hold one list per length checked')
    listed = integer(params, "listed", 0, 1 << 20)
    counts = {"correct": 0, "counterexamples": 0, "undefined": 0}
    found: dict[str, list[Any]] = {"counterexamples": [], "undefined": []}
    for (length, xs), rows in zip(inputs([value(t) for t in vocab_json], n, every), recorded):
        if not isinstance(rows, list) or len(rows) != len(vocab_json) ** length:
            raise ParseError("the recorded RASP outputs must be one per input")
        for x, row in zip(xs, rows):
            if row is None:
                counts["undefined"] += 1
                found["undefined"].append(list(x))
                continue
            if not isinstance(row, list) or len(row) != len(x) or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(values) for i in row):
                raise ParseError("a recorded RASP output has the wrong length or an unknown value")
            resid = forward(model, [_token_json(t) for t in x], dom)
            bad = next((p for p in range(1, len(x) + 1) if not _decodes(resid, p, cols, classes, values[row[p - 1]])), None)
            if bad is None:
                counts["correct"] += 1
            else:
                counts["counterexamples"] += 1
                found["counterexamples"].append((list(x), bad))
    return _compare(doc, counts, found, listed, total, dom.name)


def _token_json(t: Any) -> Any:
    return {"s": t} if isinstance(t, str) else {"b": t} if isinstance(t, bool) else {"q": str(t)}


def _decodes(resid: list[list[Any]], p: int, cols: list[int], classes: list[Any] | None, want: Any) -> bool:
    if classes is None:
        # a numerical column holds a boolean as 0 or 1 (docs/compiler.md, "Booleans"), as the compiler's own check
        # and the tracr_model checker read it
        want = int(want) if isinstance(want, bool) else want
        return want is not None and not isinstance(want, (str, tuple)) and resid[cols[0]][p] == want
    # the indicator of the value (docs/compiler.md, "Decoding"): 1 in its column and 0 in the others; RASP's None
    # (a query that selects nothing and has no default) is the indicator of no class, every column 0, as the
    # compiler's check requires it (constructions/compiler/check.py, _first_one_hot_difference)
    if want is None:
        return all(resid[col][p] == 0 for col in cols)
    hot = [c for c, col in zip(classes, cols) if resid[col][p] == 1]
    return len(hot) == 1 and all(resid[col][p] == 0 for col in cols if resid[col][p] != 1) and same(hot[0], want)


def _compare(doc: dict[str, Any], counts: dict[str, int], found: dict[str, list[Any]], listed: int, total: int, domain: str) -> list[str]:
    out, res = obj(doc, "outputs"), obj(doc, "result")
    problems = []
    mine = {"inputs": total, **counts}
    if not json_equal(out.get("counts"), mine):
        problems.append(f"the forward pass finds {mine}, the certificate records {str(out.get('counts'))[:80]}")
    shown = out.get("counterexamples")
    want = [(x, p) for x, p in found["counterexamples"][:listed]]
    if not isinstance(shown, list) or len(shown) != len(want) or any(
        not isinstance(e, dict) or not isinstance(e.get("input"), list) or len(e["input"]) != len(x) or not all(same(value(a), b) for a, b in zip(e["input"], x)) or e.get("position") != p
        for e, (x, p) in zip(shown, want)
    ):
        problems.append(f'"outputs.counterexamples" must list the first {len(want)} inputs the forward pass decodes wrongly, with the first wrong position')
    undefined = out.get("undefined")
    if not isinstance(undefined, list) or len(undefined) != min(listed, len(found["undefined"])):
        problems.append('"outputs.undefined" must list the first inputs the RASP program has no value on')
    stated = {"relation": "exact_equal", "domain": domain, "holds": counts["correct"] == total, "inputs": total, **counts}
    for k, v in stated.items():
        if not json_equal(res.get(k), v):
            problems.append(f'"result.{k}" must be {v!r}')
    return problems
