"""``prove tracr_model --method compositional``: tracr's model on every input of every length, no input enumerated.

The induction is :mod:`proofs.checkers.tracr.every_input` (the checker runs the same code on the recorded
model and tables). At length bound n it proves the model correct on every input of every length 1..n,
or does not (sound, not complete). The verdict is exact about lengths:

* proven at max_seq_len: correct on every input of every length 1..max_seq_len;
* otherwise N* and N* + 1 with the induction proving it at N* (every length <= N*; N* = 0 when not even
  length 1 is proven) and not at N* + 1, found by bisection; then every input of length N* + 1 is run
  through tracr's forward pass in balls against the exact RASP output (the exhaustive method's
  :func:`constructions.tracr.certify.certify_inputs`), or, past ``max_inputs`` of them, the constant
  sequences and a seeded sample: a counterexample found there is real (recorded with the usual
  fields); none among every input says the bound was not sharp at that length; none in a sample
  leaves it undecided.
"""

from __future__ import annotations

import random
from typing import Any

from attncert.exact import ParseError
from attncert.proofs.checkers.compiled.every_input import Unsupported

#: Inputs of the first failing length sampled when all of them are over --max-inputs.
SAMPLE = 2000


def search(model_json: dict[str, Any], program_json: dict[str, Any], vocab_json: list[Any], N: int, tol: Any) -> tuple[int, dict[str, Any] | None, dict[str, Any] | None]:
    """(N*, the run proving it at N* (None when N* = 0), the run failing at N* + 1 (None when N* = N))."""
    from attncert.proofs.checkers.tracr.every_input import prove_every_input

    def at(n: int) -> dict[str, Any]:
        try:
            return prove_every_input(model_json, program_json, vocab_json, n, tol)
        except Unsupported as e:
            raise ParseError(f"the compositional proof does not apply: {e} (use --method exhaustive)") from None

    top = at(N)
    if top["holds"]:
        return N, top, None
    good, bad, runs = 0, N, {N: top}
    while bad - good > 1:
        mid = (good + bad) // 2
        runs[mid] = at(mid)
        if runs[mid]["holds"]:
            good = mid
        else:
            bad = mid
    return good, runs.get(good), runs[bad]


def confirm(model: Any, prog: Any, tokens: list[Any], k: int, tol: Any, precision: int, max_inputs: int) -> tuple[str, list[tuple[Any, ...]], list[Any], list[Any]]:
    """At the first failing length k: ("every" or "sampled", the inputs run, their exact outputs, their
    verdicts)."""
    import itertools

    from attncert.constructions.tracr import certify as C

    count = len(tokens) ** k
    if count <= max_inputs:
        kind, xs = "every", list(itertools.product(tokens, repeat=k))
    else:
        rng = random.Random(k)
        sample = {tuple([t] * k) for t in tokens} | {tuple(rng.choice(tokens) for _ in range(k)) for _ in range(SAMPLE)}
        kind, xs = "sampled", sorted(sample, key=repr)
    outs = C.tabulated(prog, xs, model.causal)
    return kind, xs, outs, C.certify_inputs(model, xs, outs, tol, precision)


def outputs_and_result(N: int, good: int, proven: dict[str, Any] | None, failing: dict[str, Any] | None, confirmation: dict[str, Any] | None, inputs: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The certificate's ``outputs`` and ``result`` of a compositional proof."""
    found = confirmation is not None and confirmation["counts"]["counterexamples"] > 0
    sharp = confirmation is not None and confirmation["inputs"] == "every" and confirmation["counts"]["correct"] == confirmation["counts"]["inputs"]
    verdict = "proven" if good == N else "counterexample" if found else "bound not sharp" if sharp else "undecided"
    undefined = sorted(set((proven or {}).get("may_be_undefined", [])))
    return (
        {"proof": {"method": "compositional", "proven": proven, "failing": failing}, "confirmation": confirmation},
        {
            "relation": "enclosure",
            "holds": good == N and not undefined,
            "statement": STATEMENT,
            "verdict": verdict,
            "proven_up_to": good,
            "first_failing_length": None if good == N else good + 1,
            "inputs": inputs,
            "may_be_undefined": undefined,
        },
    )


STATEMENT = (
    "for every input sequence over the vocabulary of every length 1..result.proven_up_to (on which RASP's evaluation is "
    "defined; every one when result.may_be_undefined is empty), the recorded tracr model's forward pass (float32 weights read "
    "exactly, softmax attention, ReLU MLPs) decodes at every position to the recorded RASP program's output: proven "
    "compositionally (proofs/checkers/tracr/every_input.py: every head's scores, leaks and radii on every pair of query and key "
    "configurations, every MLP block on every configuration of the value sets it reads, carried as a radius per SOp value); "
    "the induction fails at result.first_failing_length, where outputs.confirmation runs the inputs of that length"
)
