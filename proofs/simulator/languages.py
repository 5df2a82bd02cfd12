"""Corollaries: U recognises Match2 and k-PARITY exactly.

For each language (definitions and the attention layers T in
:mod:`constructions.languages`) the proof does two things:

1. T decides the language. The readout at a position depends on the word only
   through a count (Match2: the number k of partners among n positions; PARITY:
   the number c of ones in S), by the algebra in the module docstring of
   :mod:`constructions.languages`. For every length n and every count, the readout
   value is decided exactly in EE and compared with the language.
2. U runs T. For **every** word up to the stated length, T is encoded as
   vec(X) ++ vec(A) ++ vec(V), run through U(n, d, d_v), read out exactly, and
   compared with the language's own definition.

The certificate lists the words covered (all words of each length, in
lexicographic order) with U's readouts and the language's values.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
from concurrent.futures import Executor
from typing import Any, ContextManager

from constructions import rasp
from constructions.languages import LanguageLayer, decide_match2_readout, least_beta_above, match2, parity
from constructions.simulator import universal
from exact import EE, ParseError
from exact.matrices import matrix_to_json
from proofs import cost
from proofs import progress, references, workers
from proofs.certify import certificate, differing_fields
from proofs.lemmas.common import positive_int
from proofs.registry import Claim, Param, register


#: Words per piece of the exhaustive check: one task when it runs in several processes, one step
#: of the progress bar (a few seconds of work at length 8).
CHUNK = 512

_GRAPHS: dict[tuple[int, int, int], Any] = {}


def _layer(spec: tuple) -> LanguageLayer:
    """The attention layer from a picklable description (so that worker processes can rebuild it)."""
    kind, *args = spec
    return match2(*args) if kind == "match2" else parity(args[0], list(args[1]))


def _u_graph(n: int, d: int, dv: int) -> Any:
    """U(n, d, d_v)'s graph, built once per process (its evaluation plan is cached on it)."""
    key = (n, d, dv)
    if key not in _GRAPHS:
        _GRAPHS[key] = universal(n, d, dv).graph()
    return _GRAPHS[key]


def _words(spec: tuple, n: int, alphabet: int, start: int, stop: int) -> tuple[str, str]:
    """U's readouts and the language's values on words start..stop-1 of [alphabet]^n (lexicographic)."""
    layer = _layer(spec)
    d, dv = len(layer.A), len(layer.V[0])
    U, g = universal(n, d, dv), _u_graph(n, d, dv)
    got, want = [], []
    for word in itertools.islice(itertools.product(range(alphabet), repeat=n), start, stop):
        mats = {"X": layer.embed(word), "A": layer.A, "V": layer.V}
        out = U.layout.decode(rasp.evaluate_graph(g, U.layout.encode(mats, EE), EE)["output"])
        got.append("".join(map(str, layer.readout(out, word))))
        want.append("".join(map(str, layer.language(word))))
    return "".join(got), "".join(want)


def _bounds(total: int) -> list[tuple[int, int]]:
    return [(a, min(a + CHUNK, total)) for a in range(0, total, CHUNK)]


def _run_all_words(spec: tuple, n: int, alphabet: int, pool: Executor | None, bar: Any) -> tuple[str, str]:
    """Every word of length n, in pieces, in worker processes when a pool is given; the bar counts words."""
    bounds = _bounds(alphabet**n)
    run = map if pool is None else pool.map  # both lazy, in order
    parts = []
    for (a, b), part in zip(bounds, run(_words, *zip(*[(spec, n, alphabet, a, b) for a, b in bounds]))):
        parts.append(part)
        bar.update(b - a)
    return "".join(p[0] for p in parts), "".join(p[1] for p in parts)


def _pool(jobs: int, layers: dict[str, tuple[tuple, int, int]]) -> ContextManager[Executor | None]:
    """Worker processes for the largest case's pieces (no more: see proofs.workers.cap), or none."""
    processes = workers.cap(jobs, max(len(_bounds(alphabet**n)) for _, n, alphabet in layers.values()))
    return workers.pool(processes) if processes > 1 else contextlib.nullcontext()


def _progress(claim: str, layers: dict[str, tuple[tuple, int, int]]) -> ContextManager[Any]:
    return progress.bar(sum(alphabet**n for _, n, alphabet in layers.values()), "words", desc=claim)


def _verify(doc: dict, layers: dict[str, tuple[tuple, int, int]], language: Any, t_checks: list[dict]) -> list[str]:
    """The recorded language values against proofs.references, and U's recorded readouts against them.

    That the recorded readouts are what U gives, on the recorded graphs, is then
    checked by reproducing the whole certificate (:func:`_reproduces`).
    """
    problems = []
    cases = {c["case"]: c for c in doc["inputs"]["cases"]}
    if set(cases) != set(layers):
        return ["the recorded cases are not the ones these parameters call for"]
    with _progress(f"{doc.get('claim')} (language)", layers) as bar:
        for key, (_, n, alphabet) in layers.items():
            want = "".join("".join(map(str, language(list(w), key))) for w in itertools.product(range(alphabet), repeat=n))
            if want != doc["reference"]["language"].get(key):
                problems.append(f"{key}: the recorded language values are not the language's")
            if want != doc["outputs"]["readouts"].get(key):
                problems.append(f"{key}: U's recorded readout differs from the language")
            bar.update(alphabet**n)
    if doc["reference"].get("T_decides") != t_checks or not all(t["holds"] for t in t_checks):
        problems.append("the checks that T decides the language do not reproduce")
    return problems


def _reproduces(doc: dict, prove: Any) -> list[str]:
    """The inputs are determined by the parameters: every field must reproduce exactly (on all CPUs)."""
    params = {k: doc["params"][k] for k in ("max_M", "max_k", "max_length") if k in doc["params"]}
    return differing_fields(doc, prove(**params, jobs=os.cpu_count() or 1))


def _certificate(claim: str, statement: str, params: dict, cases: list[dict], t_checks: list[dict], graphs: dict) -> dict:
    holds = all(c["readouts"] == c["language"] for c in cases) and all(t["holds"] for t in t_checks)
    return certificate(
        claim=claim,
        params=params,
        inputs={"cases": [{k: c[k] for k in ("case", "length", "alphabet", "words", "A", "V")} for c in cases]},
        construction={"graphs": graphs, "size": rasp.size(rasp.graph_from_json(next(iter(graphs.values())))).to_json()},
        outputs={"readouts": {c["case"]: c["readouts"] for c in cases}},
        reference={"language": {c["case"]: c["language"] for c in cases}, "T_decides": t_checks},
        result={
            "relation": "exact_equal",
            "holds": holds,
            "domain": "EE",
            "statement": statement,
            "words_checked": sum(c["words"] for c in cases),
        },
    )


def _case(spec: tuple, key: str, n: int, alphabet: int, graphs: dict, pool: Executor | None, bar: Any) -> dict:
    layer = _layer(spec)
    d, dv = len(layer.A), len(layer.V[0])
    got, want = _run_all_words(spec, n, alphabet, pool, bar)
    graphs.setdefault(f"n={n},d={d},dv={dv}", rasp.graph_to_json(_u_graph(n, d, dv)))
    return {
        "case": key,
        "length": n,
        "alphabet": alphabet,
        "words": alphabet**n,
        "A": matrix_to_json(layer.A, EE),
        "V": matrix_to_json(layer.V, EE),
        "readouts": got,
        "language": want,
    }


MATCH2 = "for every M <= max_M and every word in [M]^n with n <= max_length, U's exact readout of T_Match2 equals Match2"


def _match2_plan(max_M: int, max_length: int) -> tuple[dict, list[dict], int]:
    if max_M < 2:
        raise ParseError("max_M must be at least 2")
    beta = least_beta_above(max_length)
    t_checks = [
        {"n": n, "k": k, "beta": beta, "holds": (decide_match2_readout(n, k, beta) > EE.convert("1/2")) == (k >= 1)}
        for n in range(1, max_length + 1)
        for k in range(0, n + 1)
    ]
    layers = {f"M={M},n={n}": (("match2", M, max_length), n, M) for M in range(2, max_M + 1) for n in range(1, max_length + 1)}
    return layers, t_checks, beta


def prove_match2(max_M: int = 5, max_length: int = 4, jobs: int = 1) -> dict:
    layers, t_checks, beta = _match2_plan(max_M, max_length)
    graphs: dict = {}
    with _progress("match2", layers) as bar, _pool(jobs, layers) as pool:
        cases = [_case(spec, key, n, M, graphs, pool, bar) for key, (spec, n, M) in layers.items()]
    return _certificate("match2", MATCH2, {"max_M": max_M, "max_length": max_length, "beta": beta}, cases, t_checks, graphs)


def verify_match2(doc: dict) -> list[str]:
    p = doc["params"]
    layers, t_checks, _ = _match2_plan(_small(p.get("max_M")), _small(p.get("max_length")))
    problems = _verify(doc, layers, lambda w, key: references.match2_language(w, int(key.split(",")[0][2:])), t_checks)
    return problems or _reproduces(doc, prove_match2)


PARITY = (
    "for every k <= max_k and n <= max_length with k <= n, S = {floor(j n / k) : j < k}, and every bit string of "
    "length n, U's exact readout of T_PARITY equals the parity of the bits in S"
)


def parity_set(n: int, k: int) -> list[int]:
    return sorted({(j * n) // k for j in range(k)})


def _parity_plan(max_k: int, max_length: int) -> tuple[dict, list[dict]]:
    layers, t_checks = {}, []
    for n in range(1, max_length + 1):
        for k in range(1, min(max_k, n) + 1):
            layers[f"k={k},n={n},S={parity_set(n, k)}"] = (("parity", n, tuple(parity_set(n, k))), n, 2)
            # The readout of a count c, exactly (T(X) itself is checked through U).
            t_checks.append({"n": n, "k": k, "holds": all(_threshold_sum(k, c) == c % 2 for c in range(k + 1))})
    return layers, t_checks


def prove_parity(max_k: int = 4, max_length: int = 6, jobs: int = 1) -> dict:
    layers, t_checks = _parity_plan(max_k, max_length)
    graphs: dict = {}
    with _progress("parity", layers) as bar, _pool(jobs, layers) as pool:
        cases = [_case(spec, key, n, 2, graphs, pool, bar) for key, (spec, n, _) in layers.items()]
    return _certificate("parity", PARITY, {"max_k": max_k, "max_length": max_length}, cases, t_checks, graphs)


def verify_parity(doc: dict) -> list[str]:
    p = doc["params"]
    layers, t_checks = _parity_plan(_small(p.get("max_k")), _small(p.get("max_length")))
    problems = _verify(doc, layers, lambda w, key: references.parity_language(w, json.loads(key.split("S=")[1])), t_checks)
    return problems or _reproduces(doc, prove_parity)


def _small(v: Any) -> int:
    """A positive integer parameter; its size was checked against the limits by the cost model first."""
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise ParseError(f"language parameters must be positive integers, got {v!r:.20}")
    return v


def _threshold_sum(k: int, c: int) -> int:
    """sum_{s=1..k} (-1)^(s+1) [c >= s - 1/2], in integers: [2c >= 2s - 1]."""
    return sum((-1) ** (s + 1) * int(2 * c >= 2 * s - 1) for s in range(1, k + 1))


JOBS = Param("jobs", positive_int, 1, "worker processes for the exhaustive check (not recorded: it changes no result)")

register(
    Claim(
        "match2",
        MATCH2,
        prove_match2,
        verify=verify_match2,
        cost=cost.match2,
        build=lambda max_M=5, max_length=4: universal(max_length, max_M, max_M),  # the largest U it runs
        params=(
            Param("max_M", positive_int, 5, "largest number of residues M (from 2)"),
            Param("max_length", positive_int, 4, "longest word checked (all words up to it)"),
            JOBS,
        ),
    )
)
register(
    Claim(
        "parity",
        PARITY,
        prove_parity,
        verify=verify_parity,
        cost=cost.parity,
        build=lambda max_k=4, max_length=6: universal(max_length, 3, 1),  # the largest U it runs
        params=(
            Param("max_k", positive_int, 4, "largest |S|"),
            Param("max_length", positive_int, 6, "longest bit string checked (all strings up to it)"),
            JOBS,
        ),
    )
)
