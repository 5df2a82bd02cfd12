"""``prove tracr_model --method compositional``: tracr's model on every input of every length, no input enumerated.

The induction is :mod:`proofs.checkers.tracr.every_input` (the checker runs the same code on the recorded
model and tables). At length bound n it proves the model correct on every input of every length 1..n,
or does not (sound, not complete). The verdict is exact about lengths:

* proven at max_seq_len: correct on every input of every length 1..max_seq_len;
* otherwise N* and N* + 1 with the induction proving it at N* (every length <= N*; N* = 0 when not even
  length 1 is proven) and not at N* + 1, found by bisection; then inputs are run through tracr's forward
  pass in balls against the exact RASP output (the exhaustive method's
  :func:`constructions.tracr.certify.certify_inputs`), length by length from N* + 1: the inputs
  :mod:`proofs.tracr.witnesses` builds from the configurations where the bound failed (``FIRST`` at
  N* + 1, ``LATER`` at each length after it, ``TOTAL`` in all), and at N* + 1, when they show no
  counterexample and its inputs are at most ``max_inputs``, every input of that length. It stops at the
  first length with a counterexample, which is real (recorded with the usual fields): the claim does not
  hold, and ``result.counterexample_length`` says where. Every input of N* + 1 correct says the bound was
  not sharp there; otherwise the lengths from N* + 1 on stay undecided.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable

from attncert.exact import ParseError
from attncert.proofs.core.progress import bar
from attncert.proofs.checkers.programs import Unsupported

#: Inputs built at the first failing length (when not every input of it is run), and at each length after it.
FIRST = 400
LATER = 200
#: Inputs built past N*, in all.
TOTAL = 2000


def search(model_json: dict[str, Any], program_json: dict[str, Any], vocab_json: list[Any], N: int, tol: Any) -> tuple[int, dict[str, Any] | None, dict[str, Any] | None, list[str], Callable[[int], dict[Any, Any]]]:
    """(N*, the run proving it at N* (None when N* = 0), the run failing at N* + 1 (None when N* = N), what may
    be undefined up to N*, and a function giving the configurations where the bound is largest at a length:
    ``Induction.weak`` of the run at it, run again for a length the search did not visit). A program counting
    every key (:func:`every_input.by_length`) is proven length by length, up to the first failure; any other by
    bisection on the bound n (a run at n covers every length up to n)."""
    from attncert.proofs.checkers.tracr.every_input import by_length, charge, prove_every_input
    from attncert.proofs.checkers.tracr.model import Model

    weak: dict[int, dict[Any, Any]] = {}
    model = Model(model_json)
    try:
        exact = by_length(program_json, model.causal)
    except Unsupported as e:
        raise ParseError(f"the compositional proof does not apply: {e} (use --method exhaustive)") from None

    spent = [0]

    def at(n: int) -> dict[str, Any]:
        try:
            run = prove_every_input(model, program_json, vocab_json, n, tol, weak.setdefault(n, {}), exact)
            spent[0] = charge(spent[0], run)
            return run
        except Unsupported as e:
            raise ParseError(f"the compositional proof does not apply: {e} (use --method exhaustive)") from None

    def weak_at(n: int) -> dict[Any, Any]:
        if n not in weak:
            at(n)
        return weak[n]

    runs: dict[int, dict[str, Any]] = {}
    if exact:
        good = 0
        with bar(N, "lengths", desc="tracr_model") as progress:
            while good < N and (runs.setdefault(good + 1, at(good + 1)))["holds"]:
                good += 1
                progress.update(1)
        undefined = sorted({u for k in range(1, good + 1) for u in runs[k]["may_be_undefined"]})
        return good, runs.get(good), runs.get(good + 1), undefined, weak_at
    with bar(N.bit_length() + 1, "bounds", desc="tracr_model") as progress:  # bisection: at most that many runs
        runs[N] = at(N)
        progress.update(1)
        good, bad = (N, N) if runs[N]["holds"] else (0, N)
        while bad - good > 1:
            mid = (good + bad) // 2
            runs[mid] = at(mid)
            progress.update(1)
            if runs[mid]["holds"]:
                good = mid
            else:
                bad = mid
    return good, runs.get(good), runs.get(good + 1), sorted(runs[good]["may_be_undefined"]) if good else [], weak_at


def confirm(model: Any, prog: Any, tokens: list[Any], k: int, N: int, tol: Any, precision: int, max_inputs: int, weak_at: Callable[[int], dict[Any, Any]]) -> list[tuple[int, str, list[tuple[Any, ...]], list[Any], list[Any]]]:
    """From the first failing length k on (module docstring): per length run, (length, "constructed" or
    "every", the inputs, their exact outputs, their verdicts), the last one holding the first counterexample
    found, if any."""
    from attncert.constructions.tracr import certify as C
    from attncert.proofs.tracr import witnesses as W

    trace = C.tracer(prog, model.causal)
    runs: list[tuple[int, str, list[tuple[Any, ...]], list[Any], list[Any]]] = []
    spent = 0
    for length in range(k, N + 1):
        xs = W.candidates(trace, tokens, length, W.weakest(weak_at(length), prog.output), FIRST if length == k else LATER, seed=length)
        outs = C.tabulated(prog, xs, model.causal)
        verdicts = C.certify_inputs(model, xs, outs, tol, precision)
        kind = "constructed"
        if length == k and not _found(verdicts) and len(tokens) ** k <= max_inputs:
            kind, xs = "every", list(itertools.product(tokens, repeat=k))
            outs = C.tabulated(prog, xs, model.causal)
            verdicts = C.certify_inputs(model, xs, outs, tol, precision)
        runs.append((length, kind, xs, outs, verdicts))
        spent += len(xs) if kind == "constructed" else 0
        if _found(verdicts) or spent >= TOTAL:
            break
    return runs


def _found(verdicts: list[Any]) -> bool:
    return any(v.status == "counterexample" for v in verdicts)


def outputs_and_result(N: int, good: int, proven: dict[str, Any] | None, failing: dict[str, Any] | None, undefined: list[str], confirmation: list[dict[str, Any]] | None, inputs: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The certificate's ``outputs`` and ``result`` of a compositional proof."""
    runs = confirmation or []
    found = next((r["length"] for r in runs if r["counts"]["counterexamples"] > 0), None)
    first = runs[0] if runs else None
    sharp = first is not None and first["inputs"] == "every" and first["counts"]["correct"] == first["counts"]["inputs"]
    verdict = "proven" if good == N else "counterexample" if found is not None else "bound not sharp" if sharp else "undecided"
    return (
        {"proof": {"method": "compositional", "proven": proven, "failing": failing}, "confirmation": confirmation},
        {
            "relation": "enclosure",
            "holds": good == N and not undefined,
            "statement": STATEMENT,
            "verdict": verdict,
            "proven_up_to": good,
            "first_failing_length": None if good == N else good + 1,
            "counterexample_length": found,
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
    "the induction fails at result.first_failing_length, from where outputs.confirmation runs inputs length by length (built "
    "from where the bound failed, or every input of that length), a counterexample at result.counterexample_length"
)
