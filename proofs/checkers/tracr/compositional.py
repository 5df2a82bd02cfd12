"""The check of a compositional ``tracr_model`` certificate (``params.method`` compositional).

From the recorded model (its sha256 and hypotheses checked by :class:`.model.Model`), the recorded
program's tables and the vocabulary, with no import of the prover nor of the constructions:

1. the induction (:mod:`.every_input`) is run again at the recorded N* (``result.proven_up_to``): it must
   prove it (N* = 0 needs nothing), and every recorded margin, leak, spread and radius of that run must
   be the one recomputed; for a program counting every key (``by_length``) the runs are of one length each,
   and every length 1..N* is run again and must be proven;
2. when N* < max_seq_len, it is run at N* + 1 (``result.first_failing_length``): it must fail, with the
   recorded steps and problems; so N* is exactly the largest bound the induction proves below N* + 1;
3. the confirmation (``outputs.confirmation``) is a run per length from N* + 1 on, lengths in order, only
   its last run listing counterexamples; every counterexample listed is run through this package's own
   forward pass (:func:`.model.run`) and decided against its recorded RASP output: the listed positions
   must be the ones that are not correct, one a counterexample (the RASP output itself, and which inputs
   the prover ran, are recomputed by the rebuild, attncert's evaluator on the recorded tables);
4. ``result`` must state what these give (``counterexample_length`` the length of the run listing one).
"""

from __future__ import annotations

from typing import Any

from flint import ctx

from attncert.exact import ParseError
from attncert.exact.canonical import canonical_json
from attncert.exact.rationals import parse_rational
from attncert.proofs.checkers.programs import Unsupported
from attncert.proofs.checkers.reading import integer, obj
from attncert.proofs.checkers.tracr.every_input import by_length, charge, prove_every_input
from attncert.proofs.checkers.tracr.model import METHODS, Model, position_status, run
from attncert.proofs.checkers.values import same, value


def check_compositional(doc: dict[str, Any], model: Model) -> list[str]:
    """Problems with a compositional certificate whose model record the caller has read and hashed."""
    params, given, cons = obj(doc, "params"), obj(doc, "inputs"), obj(doc, "construction")
    res, out = obj(doc, "result"), obj(doc, "outputs")
    vocab = given.get("vocab")
    if not isinstance(vocab, list) or not vocab:
        raise ParseError('"inputs.vocab" must be a non-empty list')
    N = integer(given, "max_seq_len", 1, model.max_seq_len)
    tol = parse_rational(params.get("tolerance"))
    good = integer(res, "proven_up_to", 0, N)
    proof = obj(out, "proof")
    problems: list[str] = []
    program = obj(cons, "program")

    try:
        exact = by_length(program, model.causal)
    except Unsupported as e:
        return [f"the compositional proof does not apply: {e}"]

    spent = [0]

    def again(n: int) -> dict[str, Any] | None:
        try:
            run = prove_every_input(model, program, vocab, n, tol, exact=exact)
            spent[0] = charge(spent[0], run)
            return run
        except Unsupported as e:
            problems.append(f"the compositional proof does not apply at length {n}: {e}")
            return None

    # length by length, every length up to N* is run again; otherwise the run at N* covers them all
    shorter = [again(n) for n in range(1, good)] if exact else []
    proven = again(good) if good else None
    if good and (proven is None or not proven["holds"] or any(r is None or not r["holds"] for r in shorter)):
        problems.append(f"the induction does not prove every length up to the recorded N* = {good}")
    if proof.get("proven") != proven:
        problems.append("the recorded run at N* is not the one the induction gives (a margin, leak, spread or radius differs)")
    failing = again(good + 1) if good < N else None
    if good < N and (failing is None or failing["holds"]):
        problems.append(f"the induction proves length {good + 1} too: N* = {good} is not where it stops")
    if proof.get("failing") != failing:
        problems.append("the recorded run at N* + 1 is not the one the induction gives")
    if proof.get("method") != "compositional":
        problems.append('"outputs.proof.method" must be "compositional"')
    conf = out.get("confirmation")
    found = None
    if (good < N) != (isinstance(conf, list) and bool(conf)):
        problems.append("a confirmation from the first failing length on is recorded exactly when N* < max_seq_len")
    elif isinstance(conf, list):
        precision = integer(params, "precision", 16, 4096)
        most = integer(params, "listed", 0, 1 << 20)
        for k, run in enumerate(conf):
            if not isinstance(run, dict) or run.get("length") != good + 1 + k or good + 1 + k > N:
                problems.append(f'"outputs.confirmation" must run the lengths {good + 1}, {good + 2}, ... in order, up to max_seq_len')
                break
            listed = _counterexamples(model, run, run["length"], tol, precision, most)
            problems += listed
            if run.get("counterexamples") and k != len(conf) - 1:
                problems.append("the confirmation goes on past a length where it lists a counterexample")
            if run.get("counterexamples") and not listed:
                found = run["length"]
    undefined = sorted({u for r in shorter + [proven] if r for u in r["may_be_undefined"]})
    stated = {
        "relation": "enclosure", "holds": good == N and not undefined, "proven_up_to": good,
        "first_failing_length": None if good == N else good + 1, "may_be_undefined": undefined,
        "inputs": sum(len(vocab) ** n for n in range(1, N + 1)), "counterexample_length": found,
    }
    for k, v in stated.items():
        if res.get(k) != v or isinstance(res.get(k), bool) != isinstance(v, bool):
            problems.append(f'"result.{k}" must be {v!r:.60}')
    if (found is not None) != (res.get("verdict") == "counterexample"):
        problems.append('"result.verdict" is "counterexample" exactly when one is listed and confirmed')
    if good == N and res.get("verdict") != "proven":
        problems.append('"result.verdict" must be "proven"')
    return problems


def _counterexamples(model: Model, conf: dict[str, Any], k: int, tol: Any, precision: int, most: int) -> list[str]:
    """Each listed counterexample of length k, through this package's forward pass against its recorded RASP output.

    Before any pass: at most ``params.listed`` of them (the prover lists no more), no input twice; and the first
    one that is not what it says ends the check. So the passes run are at most the real counterexamples listed:
    thousands of copies of one, or of inputs the model gets right, cost one pass, not one each."""
    listed = conf.get("counterexamples")
    if not isinstance(listed, list):
        raise ParseError('"outputs.confirmation.counterexamples" must be a list')
    counts = conf.get("counts")
    if not isinstance(counts, dict):
        raise ParseError('"outputs.confirmation" runs have counts')
    if len(listed) > (counts.get("counterexamples") or 0):
        return ["more counterexamples are listed than counted"]
    if len(listed) > most:
        return [f"more counterexamples are listed than params.listed = {most}"]
    inputs = [canonical_json(e.get("input")) if isinstance(e, dict) else b"" for e in listed]
    if len(set(inputs)) != len(inputs):
        return ["a counterexample is listed twice"]
    problems: list[str] = []
    for entry in listed:
        if problems:
            break
        if not isinstance(entry, dict) or not isinstance(entry.get("input"), list) or not isinstance(entry.get("rasp"), list):
            raise ParseError("a listed counterexample has an input and a RASP output")
        xs, exact = [value(t) for t in entry["input"]], [value(v) for v in entry["rasp"]]
        if len(xs) != k or len(exact) != k or any(not any(same(t, u) for u, _ in model.row_of) for t in xs):
            problems.append(f"a listed counterexample is not an input of length {k} over the model's tokens")
            continue
        bad = None
        for step in range(3):
            with ctx.workprec(precision << step):
                (stream,) = run(model, [xs])
            seen: dict[Any, str] = {}
            pos = [(t, position_status(model, stream[t], v, tol, seen)) for t, v in enumerate(exact, start=1)]
            bad = [(t, s) for t, s in pos if s != "correct"]
            if not any(s == "undecided" for _, s in bad):
                break
        positions = entry.get("positions")
        if not any(s == "counterexample" for _, s in bad or []):
            problems.append(f"the listed input {entry['input']!r:.60} is no counterexample: the forward pass decodes it to its RASP output")
        elif not isinstance(positions, list) or [(p.get("position"), p.get("status")) for p in positions if isinstance(p, dict)] != bad:
            problems.append(f"the positions listed for {entry['input']!r:.60} are not those the forward pass decides")
    return problems


METHODS["compositional"] = check_compositional
