"""tracr's own test cases (compiler/test_cases.py, which cover lib.py) through the claim tracr_model.

    python -m bench.tracr_library [--max-inputs 20000] [--only NAME ...] [--out FILE.md]

For each case of ``TEST_CASES`` (and ``CAUSAL_TEST_CASES`` compiled causal), at the case's vocabulary
and max_seq_len: tracr compiles it (``compile_rasp_to_model``, BOS "BOS"), then
``certify_tracr`` runs every input of every length 1..max_seq_len through the model in balls against
attncert's exact RASP evaluation. Where the input count is over ``--max-inputs`` the largest
max_seq_len within it is used (the row says so). Beside each row, attncert's own compile of the same
program (``compile_graph``, categorical tokens over the same vocabulary, at the case's length):
layers, residual width, and whether it compiled exactly (its check is exact) or why not.
Prints a markdown table (the one in docs/tracr.md). Needs the tracr extra.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from attncert.exact.errors import AttncertError


def certify_case(case: dict[str, Any], causal: bool, max_inputs: int) -> tuple[str, int, int, float]:
    """(verdict, inputs, max_seq_len used, seconds of CPU) of one case through tracr_model."""
    from tracr.compiler import compiling

    from attncert.constructions.tracr.program import input_count
    from attncert.proofs.tracr.model import certify_tracr, summary

    vocab = sorted(case["vocab"], key=repr)
    n = case["max_seq_len"]
    while n > 1 and input_count(len(vocab), n) > max_inputs:
        n -= 1
    t0 = time.process_time()
    try:
        model = compiling.compile_rasp_to_model(case["program"], vocab=set(vocab), max_seq_len=n, causal=causal, compiler_bos="BOS")
    except Exception as e:  # tracr refuses some of its own cases: report, do not stop
        return f"tracr does not compile it ({type(e).__name__})", 0, n, time.process_time() - t0
    try:
        doc = certify_tracr(case["program"], model, vocab, n, max_inputs=max_inputs)
    except AttncertError as e:
        return f"refused: {str(e)[:90]}", input_count(len(vocab), n), n, time.process_time() - t0
    res = doc["result"]
    line = summary(doc) or ""
    if res["holds"]:
        verdict = "certified correct" + (f" (error <= {line.split('<= ')[1]})" if "<=" in line else "")
    else:
        verdict = line.split("; first: ")[1] if "; first: " in line else line
        verdict = f"{res['counterexamples']:,} counterexamples, {res['undecided']:,} undecided, {res['undefined']:,} undefined; first: {verdict}"
    return verdict, res["inputs"], n, time.process_time() - t0


def attncert_compile(case: dict[str, Any]) -> str:
    """attncert's exact compile of the same program: layers, width, or why not."""
    from attncert.constructions import rasp
    from attncert.constructions.compiler import NotCompilable, compile_graph
    from attncert.constructions.tracr.program import from_tracr, to_rasp

    try:
        g = rasp.to_graph(to_rasp(from_tracr(case["program"])))
        model = compile_graph(g, case["max_seq_len"], "categorical", sorted(case["vocab"], key=repr))
    except NotCompilable as e:
        return "not in the class: " + str(e).split(": ", 2)[-1][:60]
    except AttncertError as e:
        return f"refused: {str(e)[:60]}"
    return f"{len(model.layers)} layers, width {model.width()}, exact"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-inputs", type=int, default=20_000)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--out")
    args = ap.parse_args()
    from tracr.compiler import test_cases

    rows = ["| case | vocab | max_seq_len | inputs | tracr's model, certified | time (CPU) | attncert's compile |", "|---|---|---|---|---|---|---|"]
    cases = [(c, False) for c in test_cases.TEST_CASES] + [(c, True) for c in test_cases.CAUSAL_TEST_CASES[len(test_cases.UNIVERSAL_TEST_CASES):]]
    for case, causal in cases:
        name = case["testcase_name"] + (" (causal)" if causal else "")
        if args.only and case["testcase_name"] not in args.only:
            continue
        verdict, count, n, seconds = certify_case(case, causal, args.max_inputs)
        used = str(n) if n == case["max_seq_len"] else f"{n} (tracr's {case['max_seq_len']})"
        vocab = ",".join(map(str, sorted(case["vocab"], key=repr)))
        row = f"| {name} | {vocab} | {used} | {count:,} | {verdict} | {seconds:.1f} s | {attncert_compile(case)} |"
        rows.append(row)
        print(row, flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
