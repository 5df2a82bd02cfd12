"""Run tracr's own example library on tracr's evaluator and on ours, and compare; compile tracr's test cases.

    python -m bench.tracr_compat --tracr PATH_TO_TRACR_CHECKOUT
    python -m bench.tracr_compat --tracr PATH_TO_TRACR_CHECKOUT --compile

With ``--compile`` it loads ``tracr/compiler/test_cases.py`` with our ``rasp``
substituted, compiles every test program with attncert's compiler
(:mod:`constructions.compiler`) at the test input's length, and runs the compiled
model exactly against our RASP evaluator; programs outside the compilable class
are listed with the reason the compiler gives (the node, the feature, why).
With ``--tracr-models`` (an environment with JAX, dm-haiku and chex installed;
never a dependency of attncert) it also compiles every test case with tracr's own
compiler, runs tracr's float model, and reports where it deviates from the exact
value, plus a sweep of tracr's numerical ``selector_width`` over widths 1..12.

tracr is not a dependency and none of its code is part of attncert: this script
loads ``tracr/compiler/lib.py`` from a checkout you provide, once with tracr's
``rasp`` module and once with ``constructions.rasp`` substituted for it (the
"change one import" promise), and prints both outputs. tracr's ``rasp.py``
needs ``absl-py`` and ``typing_extensions`` installed.

Outputs are compared as numbers: ours are exact rationals, tracr's are floats,
so tracr's 0.6000000000000001 and our 3/5 count as agreeing when they are equal
to within 1e-12.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import types
from pathlib import Path

from attncert.constructions import rasp as ours

CASES = [
    ("make_length", [], "abcde"),
    ("make_reverse", ["tokens"], "hello"),
    ("make_hist", [], "abbcca"),
    ("make_sort_unique", ["tokens", "tokens"], [3, 1, 2, 5]),
    ("make_frac_prevs", ["tokens_eq_x"], "xaxxb"),
    ("make_pair_balance", ["tokens", "(", ")"], "(()(()"),
    ("make_shuffle_dyck", [["()", "{}"]], "({)}"),
    ("make_shuffle_dyck2", [], "({)}("),
    ("make_count_less_freq", [2], "abbccc"),
    ("make_count", ["tokens", "a"], "abaca"),
]


def _load(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _agree(a, b) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, str) or isinstance(y, str):
            if x != y:
                return False
        elif not math.isclose(float(x), float(y), rel_tol=1e-12, abs_tol=1e-12):
            return False
    return True


def compile_cases(root: Path, floats: dict[str, list] | None = None) -> None:
    """tracr's compiler test cases through attncert's compiler: compiled and exact, or why not."""
    from collections import Counter

    from attncert.constructions.compiler import NotCompilable, compile_graph
    from attncert.exact import QQ

    sys.modules["tracr.compiler"] = types.ModuleType("tracr.compiler")
    sys.modules["tracr.compiler"].__path__ = []
    sys.modules["tracr.rasp"].rasp = ours
    sys.modules["tracr.rasp.rasp"] = ours
    lib = _load(root / "tracr/compiler/lib.py", "tracr.compiler.lib")
    sys.modules["tracr.compiler"].lib = lib
    cases = _load(root / "tracr/compiler/test_cases.py", "tracr_test_cases").TEST_CASES
    reasons: Counter = Counter()
    ok = 0
    for case in cases:
        name, xs = case["testcase_name"], case["test_input"]
        try:
            g = ours.to_graph(case["program"])
            model = compile_graph(g, len(xs), "categorical", sorted(case["vocab"], key=repr))
            got = model.forward(xs, QQ)[0]["output"]
            want = ours.evaluate_graph(g, xs, QQ)["output"]
            same = len(got) == len(want) and all(QQ.eq(a, b) for a, b in zip(got, want))
            ok += same
            tracr_says = f"; tracr's float model: {_deviation(floats[name], want)}" if floats and name in floats else ""
            print(f"{name:32} compiled, width {model.width()}: {'exact' if same else 'DIFFERS'}{tracr_says}")
        except NotCompilable as e:
            why = str(e).split(": ", 1)[1]
            reasons[why.split(":")[0]] += 1
            print(f"{name:32} not in the class: {why}")
        except Exception as e:  # a bench reports, it does not stop
            reasons[type(e).__name__] += 1
            print(f"{name:32} not run: {type(e).__name__}: {str(e)[:100]}")
    print(f"\n{ok} of {len(cases)} test cases compiled and equal to the RASP evaluation exactly; the others, by reason:")
    for why, n in reasons.most_common():
        print(f"  {n:3}  {why}")


def tracr_models(root: Path) -> dict[str, list]:
    """tracr's own compiled float models on its test cases, and its numerical selector_width by width.

    Runs tracr as it is (its own rasp), before our rasp is substituted; returns the decoded outputs."""
    sys.path.insert(0, str(root))
    from tracr.compiler import compiling, test_cases  # noqa: E402  (needs JAX, dm-haiku, chex)
    from tracr.rasp import rasp as theirs  # noqa: E402

    got: dict[str, list] = {}
    for case in test_cases.TEST_CASES:
        try:
            model = compiling.compile_rasp_to_model(case["program"], vocab=case["vocab"], max_seq_len=case["max_seq_len"], compiler_bos="BOS")
            got[case["testcase_name"]] = list(model.apply(["BOS"] + list(case["test_input"])).decoded[1:])
        except Exception as e:  # tracr refuses some of its own cases at some sizes; report, do not stop
            got[case["testcase_name"]] = [f"tracr failed: {type(e).__name__}"]
    width = theirs.numerical(theirs.SelectorWidth(theirs.Select(theirs.tokens, theirs.tokens, theirs.Comparison.EQ)))
    model = compiling.compile_rasp_to_model(width, vocab={"a"}, max_seq_len=12, compiler_bos="BOS")
    print("tracr's numerical selector_width on a^n (exact value n):")
    for n in range(1, 13):
        w = model.apply(["BOS"] + ["a"] * n).decoded[1]
        print(f"  n = {n:2}: tracr {float(w):.4f}   error {abs(float(w) - n):.3g}")
    for name in [m for m in sys.modules if m == "tracr" or m.startswith("tracr.")]:
        del sys.modules[name]
    sys.path.remove(str(root))
    return got


def _deviation(theirs: list, exact: list) -> str:
    if len(theirs) != len(exact):
        return f"{theirs[:1]}"
    worst = 0.0
    for t, e in zip(theirs, exact):
        if isinstance(e, (str, bool)) or e is None or isinstance(t, str):
            if t != e and not (isinstance(e, bool) and t == e):
                return f"differs: {t!r} for {e!r}"
        else:
            worst = max(worst, abs(float(t) - float(e)))
    return f"max |float - exact| = {worst:.3g}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tracr", required=True, type=Path, help="path to a tracr checkout (the folder holding tracr/)")
    ap.add_argument("--compile", action="store_true", help="compile tracr's compiler test cases with attncert's compiler")
    ap.add_argument("--tracr-models", action="store_true", help="with --compile: also run tracr's own compiled float models (needs JAX)")
    parsed = ap.parse_args()
    root = parsed.tracr
    floats = tracr_models(root) if parsed.tracr_models else {}
    for pkg in ("tracr", "tracr.rasp"):
        m = types.ModuleType(pkg)
        m.__path__ = []
        sys.modules[pkg] = m
    theirs = _load(root / "tracr/rasp/rasp.py", "tracr.rasp.rasp")
    sys.modules["tracr.rasp"].rasp = theirs
    lib_theirs = _load(root / "tracr/compiler/lib.py", "lib_theirs")
    sys.modules["tracr.rasp"].rasp = ours
    sys.modules["tracr.rasp.rasp"] = ours
    lib_ours = _load(root / "tracr/compiler/lib.py", "lib_ours")
    if parsed.compile:
        compile_cases(root, floats)
        return

    def args_for(r, spec):
        conv = {"tokens": r.tokens, "tokens_eq_x": r.numerical(r.tokens == "x")}
        return [conv.get(a, a) if isinstance(a, str) else a for a in spec]

    for name, spec, xs in CASES:
        vt = getattr(lib_theirs, name)(*args_for(theirs, spec))(xs)
        vo = getattr(lib_ours, name)(*args_for(ours, spec))(xs)
        print(f"{name:22} {'agree' if _agree(vt, vo) else 'DIFFER':6}  tracr={vt}  attncert={[str(v) for v in vo]}")


if __name__ == "__main__":
    main()
