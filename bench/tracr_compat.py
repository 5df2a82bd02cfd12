"""Run tracr's own example library on tracr's evaluator and on ours, and compare.

    python -m bench.tracr_compat --tracr PATH_TO_TRACR_CHECKOUT

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

from constructions import rasp as ours

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tracr", required=True, type=Path, help="path to a tracr checkout (the folder holding tracr/)")
    root = ap.parse_args().tracr
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

    def args_for(r, spec):
        conv = {"tokens": r.tokens, "tokens_eq_x": r.numerical(r.tokens == "x")}
        return [conv.get(a, a) if isinstance(a, str) else a for a in spec]

    for name, spec, xs in CASES:
        vt = getattr(lib_theirs, name)(*args_for(theirs, spec))(xs)
        vo = getattr(lib_ours, name)(*args_for(ours, spec))(xs)
        print(f"{name:22} {'agree' if _agree(vt, vo) else 'DIFFER':6}  tracr={vt}  attncert={[str(v) for v in vo]}")


if __name__ == "__main__":
    main()
