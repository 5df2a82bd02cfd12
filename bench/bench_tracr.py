"""tracr_model: whole-process prove and verify of tracr's models, and the ball forward pass against tracr's JAX one."""

from __future__ import annotations

import itertools
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.timing import best_of, fmt_seconds

ROOT = Path(__file__).resolve().parents[1]
#: (program, vocab, max_seq_len, target of prove in seconds): the issue's targets.
CASES = [
    ("tracr.compiler.lib:make_length", "a,b,c", 8, 30.0),
    ("tests.proofs.tracr.programs:sort_unique", "1,2,3,4,5", 5, 60.0),
]


def _process(args: list[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the child, exit code) of one attncert command in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "attncert", *args], cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), done.returncode


def whole_process() -> dict:
    rows = []
    for program, vocab, n, target in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            cert = str(Path(tmp) / "c.json")
            pw, pc, pcode = _process(["prove", "tracr_model", "--program", program, "--vocab", vocab, "--max-seq-len", str(n), "--out", cert])
            vw, vc, vcode = _process(["verify", cert])
        count = sum(len(vocab.split(",")) ** k for k in range(1, n + 1))
        rows.append([
            program.split(":")[1], vocab, str(n), f"{count:,}", f"{fmt_seconds(pw)} ({pc:.1f} s CPU), exit {pcode}",
            f"{fmt_seconds(vw)} ({vc:.1f} s CPU), exit {vcode}", f"{vc / pc:.2f}", f"{target:.0f} s",
        ])
    return {
        "title": "attncert prove tracr_model and attncert verify, each a fresh process (tracr compiles inside prove)",
        "header": ["program", "vocab", "max_seq_len", "inputs", "prove", "verify", "verify / prove (CPU)", "prove target"],
        "rows": rows,
        "note": "prove includes importing JAX and tracr and tracr's own compile (about 10 s of CPU here); verify imports neither: "
        "it runs the checker's plain forward pass on every input, then rebuilds the document from the recorded model and program.",
    }


#: (program, vocab, max_seq_len, extra options, target in seconds): --method compositional, every input of every
#: length (issue 33), at the sizes tracr's users run (tracr's own test cases for pair_balance and shuffle_dyck).
COMPOSITIONAL = [
    ("tracr.compiler.lib:make_length", "a,b,c", 64, [], 60.0),
    ("tracr.compiler.lib:make_sort(tokens, tokens, max_seq_len=16, min_key=1)", "0,1,2,3,4,5,6,7,8,9", 16, [], 60.0),
    ("tracr.compiler.lib:make_sort_unique(tokens, tokens)", "1,2,3,4,5", 8, [], 60.0),
    ("tracr.compiler.lib:make_hist", "a,b,c", 16, [], 60.0),
    ('tracr.compiler.lib:make_frac_prevs(tokens == "a")', "a,b,c", 8, [], 60.0),
    ('tracr.compiler.lib:make_frac_prevs(tokens == "a")', "a,b,c", 8, ["--causal"], 60.0),
    ('tracr.compiler.lib:make_pair_balance(tokens, "(", ")")', "(,),a,b,c", 6, [], 60.0),
    ('tracr.compiler.lib:make_pair_balance(tokens, "(", ")")', "(,),a,b,c", 10, [], 60.0),
    ("tracr.compiler.lib:make_shuffle_dyck2", "(,),{,}", 10, [], 60.0),
    ('tracr.compiler.lib:make_shuffle_dyck(["()", "{}", "[]"])', "(,),[,],{,}", 6, [], 60.0),
]


def compositional() -> dict:
    """prove tracr_model --method compositional and verify, each a fresh process, with the verdict line."""
    rows = []
    for program, vocab, n, extra, target in COMPOSITIONAL:
        with tempfile.TemporaryDirectory() as tmp:
            cert = str(Path(tmp) / "c.json")
            args = ["prove", "tracr_model", "--method", "compositional", "--program", program, "--vocab", vocab, "--max-seq-len", str(n), *extra, "--out", cert]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "attncert", *args], cwd=ROOT, capture_output=True, text=True)
            pw = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            pc = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
            verdict = next((ln for ln in done.stdout.splitlines() if ln.startswith("tracr's compiled model")), done.stderr.strip()[-200:])
            vw, vc, vcode = _process(["verify", cert]) if Path(cert).exists() else (0.0, 0.0, -1)
        name = program.split(":")[1] + (" (causal)" if "--causal" in extra else "")
        rows.append([name, vocab, str(n), f"{fmt_seconds(pw)} ({pc:.1f} s CPU), exit {done.returncode}", f"{fmt_seconds(vw)} ({vc:.1f} s CPU)", f"{target:.0f} s", verdict])
    return {
        "title": "attncert prove tracr_model --method compositional and verify, each a fresh process",
        "header": ["program", "vocab", "max_seq_len", "prove", "verify", "target", "verdict"],
        "rows": rows,
        "note": "prove includes JAX's import and tracr's own compile; verify re-runs the induction at N* and N* + 1 (every length "
        "up to N* + 1 for a program counting every key) and the listed counterexamples through its own forward pass, then "
        "rebuilds the document (the inputs built past N* included).",
    }


def forward_against_jax() -> dict:
    """The interned ball pass and tracr's JAX pass (its model.forward, warm) on the same batch, in this run."""
    import numpy as np
    from flint import ctx
    from tracr.compiler import compiling

    from attncert.constructions.tracr.forward import forward
    from attncert.constructions.tracr.model import read_assembled
    from attncert.proofs.core.user_programs import load_program, parse_vocab, program_spec

    rows = []
    for program, vocab, n, _ in CASES:
        tokens = parse_vocab(vocab)
        p = load_program(*program_spec(program))()
        model = compiling.compile_rasp_to_model(p, vocab=set(tokens), max_seq_len=n, compiler_bos="BOS")
        exact = read_assembled(model, p.label)
        batch = list(itertools.product(tokens, repeat=n))
        enc = model.input_encoder.encoding_map
        ids = np.array([[enc["BOS"]] + [enc[t] for t in xs] for xs in batch])
        model.forward(model.params, ids).unembedded_output.block_until_ready()  # traced once

        def ball() -> None:
            with ctx.workprec(64):
                forward(exact, batch)

        jax_t = best_of(lambda: model.forward(model.params, ids).unembedded_output.block_until_ready())
        ball_t = best_of(ball)
        rows.append([program.split(":")[1], f"{len(batch):,} x {n + 1}", fmt_seconds(jax_t), fmt_seconds(ball_t), f"{ball_t / jax_t:.1f}x"])
    return {
        "title": "One batch (every input of the longest length) through tracr's JAX forward pass (float32) and attncert's ball pass (64 bits)",
        "header": ["program", "batch", "tracr's JAX pass", "ball pass (interned rows)", "ratio (target <= 20x)"],
        "rows": rows,
        "note": "Both in this process, best of three; JAX's pass after one call that traced it.",
    }


def library() -> dict:
    """Every case of tracr's compiler/test_cases.py, the model tracr compiles certified by both methods in this process
    (CPU seconds of certify_tracr alone; tracr's compile apart): the exhaustive method at max_seq_len lowered to 20,000
    inputs (as bench/tracr_library.py), the compositional one there and at tracr's own max_seq_len."""
    from tracr.compiler import compiling, test_cases

    from attncert.constructions.tracr.program import input_count
    from attncert.exact.errors import AttncertError
    from attncert.proofs.tracr.model import certify_tracr

    def certify(program: object, vocab: list, n: int, causal: bool, method: str) -> str:
        model = compiling.compile_rasp_to_model(program, vocab=set(vocab), max_seq_len=n, causal=causal, compiler_bos="BOS")
        t0 = time.process_time()
        try:
            doc = certify_tracr(program, model, vocab, n, method=method, max_inputs=20_000)
        except AttncertError as e:
            return f"refused: {str(e)[:60]} ({time.process_time() - t0:.1f} s)"
        res, took = doc["result"], time.process_time() - t0
        if method == "exhaustive":
            verdict = "correct" if res["holds"] else f"{res['counterexamples']:,} counterexamples"
            return f"{verdict} ({res['inputs']:,} inputs, {took:.1f} s)"
        verdict = {"proven": "proven", "counterexample": f"N* = {res['proven_up_to']}, counterexample at {res['counterexample_length']}"}.get(res["verdict"], f"N* = {res['proven_up_to']}, {res['verdict']}")
        return f"{verdict} ({took:.1f} s)"

    universal = len(test_cases.UNIVERSAL_TEST_CASES)
    rows = []
    for case, causal in [(c, False) for c in test_cases.TEST_CASES] + [(c, True) for c in test_cases.CAUSAL_TEST_CASES[universal:]]:
        vocab, top = sorted(case["vocab"], key=repr), case["max_seq_len"]
        n = top
        while n > 1 and input_count(len(vocab), n) > 20_000:
            n -= 1
        full = certify(case["program"], vocab, top, causal, "compositional") if n < top else "(the same)"
        rows.append([
            case["testcase_name"] + (" (causal)" if causal else ""), ",".join(map(str, vocab)), f"{n} (tracr's {top})" if n < top else str(n),
            certify(case["program"], vocab, n, causal, "exhaustive"), certify(case["program"], vocab, n, causal, "compositional"), full,
        ])
    return {
        "title": "tracr's library (compiler/test_cases.py): both methods on the model tracr compiles",
        "header": ["case", "vocab", "max_seq_len", "exhaustive (CPU)", "compositional (CPU)", "compositional at tracr's max_seq_len"],
        "rows": rows,
        "note": "CPU seconds of certify_tracr in this process, tracr's compile apart; the exhaustive method runs every input of "
        "every length, the compositional one no input where it proves the model.",
    }


def run() -> list[dict]:
    import importlib.util

    if importlib.util.find_spec("tracr") is None:
        return [{"title": "tracr_model", "header": ["skipped"], "rows": [["the tracr extra is not installed: pip install '.[tracr]' in attncert's folder"]]}]
    return [whole_process(), forward_against_jax(), compositional()]


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--section", choices=["all", "compositional", "library"], default="all", help="one section alone (library: tracr's test cases by both methods, minutes)")
    chosen = ap.parse_args().section
    for section in run() if chosen == "all" else [compositional()] if chosen == "compositional" else [library()]:
        print(section["title"])
        print(" | ".join(section["header"]))
        for r in section["rows"]:
            print(" | ".join(r))
