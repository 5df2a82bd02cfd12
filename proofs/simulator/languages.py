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

The words are cut into chunks of :data:`CHUNK`; a chunk is one batched evaluation
of U (:mod:`constructions.rasp.batch`, identical to evaluating word by word) and
one batched readout (``readout_batch``, tested equal to ``readout``). The chunks of
all cases run through a runner of :mod:`proofs.core.execute`: here, over ``jobs``
processes, or on the Dask cluster at ``scheduler``. With a ``chunks`` folder each
finished chunk is written there (:mod:`proofs.simulator.chunks`) and a later run
resumes from the valid ones; the verifier never reads them.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from attncert.constructions import rasp
from attncert.constructions.batch_layout import encode_batch
from attncert.constructions.languages import LanguageLayer, decide_match2_readout, least_beta_above, match2, parity
from attncert.constructions.rasp import batch
from attncert.constructions.rasp.batch_values import Numbers
from attncert.constructions.simulator import universal
from attncert.exact import EE, ParseError
from attncert.exact.matrices import matrix_to_json
from attncert.exact.ratarray import Overflow
from attncert.proofs.core import cost
from attncert.proofs.core import execute, progress
from attncert.proofs.checkers import references
from attncert.proofs.core.certify import certificate, differing_fields, package_version
from attncert.proofs.core.inputs import positive_int
from attncert.proofs.core.registry import Claim, Param, register
from attncert.proofs.simulator.chunks import ChunkStore, digest

#: Words per chunk: one batched evaluation, one task when it runs in several processes or on a
#: cluster, one chunk file when the run is resumable, one step of the progress bar.
CHUNK = cost.WORDS_PER_BATCH

_U: dict[tuple[int, int, int], tuple[Any, Any]] = {}


def _layer(spec: tuple) -> LanguageLayer:
    """The attention layer from a picklable description (so that worker processes can rebuild it)."""
    kind, *args = spec
    return match2(*args) if kind == "match2" else parity(args[0], list(args[1]))


def _u(n: int, d: int, dv: int) -> tuple[Any, Any]:
    """U(n, d, d_v) and its graph, built once per process (its evaluation plan is cached on the graph)."""
    key = (n, d, dv)
    if key not in _U:
        U = universal(n, d, dv)
        _U[key] = (U, U.graph())
    return _U[key]


@dataclass(frozen=True)
class Chunk:
    """Words start..stop-1 of [alphabet]^n, in lexicographic order, for one case of a claim."""

    case: str
    spec: tuple
    n: int
    alphabet: int
    start: int
    stop: int

    def words(self) -> np.ndarray:
        """The words, one row each: word i is the base-``alphabet`` digits of i, most significant first."""
        i = np.arange(self.start, self.stop, dtype=np.int64)[:, None]
        return (i // self.alphabet ** np.arange(self.n - 1, -1, -1, dtype=np.int64)) % self.alphabet

    def key(self) -> dict[str, Any]:
        return {"case": self.case, "length": self.n, "alphabet": self.alphabet, "start": self.start, "stop": self.stop}


def _readouts(spec: tuple, n: int, words: np.ndarray) -> list[list[int]]:
    """U's exact readout of T on each word: U run on the whole batch at once (constructions.rasp.batch)."""
    layer = _layer(spec)
    d, dv = len(layer.A), len(layer.V[0])
    U, g = _u(n, d, dv)
    word_lists = words.tolist()
    out = batch.run_batch(g, encode_batch(U.layout, [{"X": layer.embed(w), "A": layer.A, "V": layer.V} for w in word_lists], EE), EE)["output"]
    if isinstance(out, Numbers):
        num, den = out.fraction()
        block = np.arange(n * dv)
        try:
            return layer.readout_batch(num.take(block), den.take(block), words).tolist()
        except Overflow:
            pass
    # Some stage did not fit the arrays (int64, or too many exponents): the single-input readout.
    return [layer.readout(U.layout.decode(seq), w) for seq, w in zip(batch.rows(out, len(word_lists), EE), word_lists)]


def _text(bits: list[list[int]]) -> str:
    return "".join("".join(map(str, b)) for b in bits)


def _run_chunk(chunk: Chunk) -> tuple[Chunk, str, str]:
    """U's readouts and the language's values on the chunk's words (what a worker computes)."""
    words = chunk.words()
    language = _layer(chunk.spec).language
    return chunk, _text(_readouts(chunk.spec, chunk.n, words)), _text([language(w) for w in words.tolist()])


def _bounds(total: int) -> list[tuple[int, int]]:
    return [(a, min(a + CHUNK, total)) for a in range(0, total, CHUNK)]


def _setup_digest(spec: tuple, n: int) -> str:
    """What a chunk's words are run through: U's graph, the layer, and this attncert."""
    layer = _layer(spec)
    _, g = _u(n, len(layer.A), len(layer.V[0]))
    return digest({"attncert": package_version(), "graph": rasp.graph_to_json(g), "A": matrix_to_json(layer.A, EE), "V": matrix_to_json(layer.V, EE)})


def _resumed(store: ChunkStore, chunks: list[Chunk], setup: str) -> dict[Chunk, tuple[str, str]]:
    """The results of those chunks (all of one case) whose files are theirs and re-derive.

    A file must pass the store's tests and record the language's values on its words;
    then U's readouts of three of its words (first, middle, last) are evaluated again,
    those of all the case's files together, in batches of CHUNK words.
    """
    found: dict[Chunk, tuple[str, str]] = {}
    for chunk in chunks:
        words, language = chunk.words(), _layer(chunk.spec).language

        def check(results: dict[str, Any], words=words, language=language, n=chunk.n) -> bool:
            got, want = results.get("readouts"), results.get("language")
            if not (isinstance(got, str) and isinstance(want, str) and len(got) == len(want) == len(words) * n):
                return False
            return want == _text([language(w) for w in words.tolist()])

        results = store.load(chunk.key(), digest(words.tobytes()), setup, check)
        if results is not None:
            found[chunk] = (results["readouts"], results["language"])
    samples = [(chunk, i) for chunk in found for i in sorted({0, (chunk.stop - chunk.start) // 2, chunk.stop - chunk.start - 1})]
    for at in range(0, len(samples), CHUNK):
        part = samples[at : at + CHUNK]
        chunk = part[0][0]
        words = np.stack([c.words()[i] for c, i in part])
        for (c, i), bits in zip(part, _readouts(chunk.spec, chunk.n, words)):
            if c in found and found[c][0][i * c.n : (i + 1) * c.n] != _text([bits]):
                del found[c]  # the recorded readout is not U's: the chunk runs again
    return found


def _note(message: str) -> None:
    print(f"attncert: note: {message}", file=sys.stderr)


def _run_all(claim: str, layers: dict[str, tuple[tuple, int, int]], jobs: int, scheduler: str | None, chunks: str | None) -> dict[str, tuple[str, str]]:
    """Every word of every case: (U's readouts, the language's values), as strings in word order.

    The chunks run through a runner of proofs.core.execute (this process, ``jobs`` local processes, or
    the Dask cluster at ``scheduler``); with a chunk folder, finished chunks are written there and
    valid ones found there are not run again.
    """
    store = ChunkStore(chunks, claim) if chunks else None
    todo, done = [], {}
    with progress.bar(sum(alphabet**n for _, n, alphabet in layers.values()), "words", desc=claim) as bar:
        for key, (spec, n, alphabet) in layers.items():
            chunks = [Chunk(key, spec, n, alphabet, a, b) for a, b in _bounds(alphabet**n)]
            setup = _setup_digest(spec, n) if store else ""
            found = _resumed(store, chunks, setup) if store else {}
            done.update(found)
            bar.update(sum(c.stop - c.start for c in found))
            todo += [(c, setup) for c in chunks if c not in found]
        setups = dict(todo)
        for chunk, got, want in execute.runner_for(jobs, scheduler, _note)(_run_chunk, [c for c, _ in todo]):
            if store:
                store.save(chunk.key(), digest(chunk.words().tobytes()), setups[chunk], {"readouts": got, "language": want})
            done[chunk] = (got, want)
            bar.update(chunk.stop - chunk.start)
    out = {}
    for key in layers:
        parts = sorted((c.start, r) for c, r in done.items() if c.case == key)
        out[key] = ("".join(r[0] for _, r in parts), "".join(r[1] for _, r in parts))
    return out


def _verify(doc: dict, stated: dict[str, tuple[int, int]], language: Any, t_checks: list[dict]) -> list[str]:
    """The recorded cases against the statement, the recorded language values against
    proofs.checkers.references, and U's recorded readouts against them.

    ``stated`` maps each case the statement names to (length n, alphabet size a): the
    verifier restates it from the parameters, not from the prover's plan, so a prover
    that skipped a case (Match2 at M = 1, say) cannot certify the statement. The
    recorded cases must be exactly these, each once, with all a^n words of its length.
    That the recorded readouts are what U gives, on the recorded graphs, is then
    checked by reproducing the whole certificate (:func:`_reproduces`).
    """
    recorded = [(c.get("case"), c.get("length"), c.get("alphabet"), c.get("words")) for c in doc["inputs"]["cases"]]
    if sorted(recorded, key=repr) != sorted(((key, n, a, a**n) for key, (n, a) in stated.items()), key=repr):
        return ["the recorded cases are not every case the statement names, each once with all its words"]
    problems = []
    with progress.bar(sum(a**n for n, a in stated.values()), "words", desc=f"{doc.get('claim')} (language)") as bar:
        for key, (n, alphabet) in stated.items():
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


def _cases(claim: str, layers: dict[str, tuple[tuple, int, int]], jobs: int, scheduler: str | None, chunks: str | None) -> tuple[list[dict], dict]:
    results = _run_all(claim, layers, jobs, scheduler, chunks)
    cases, graphs = [], {}
    for key, (spec, n, alphabet) in layers.items():
        layer = _layer(spec)
        d, dv = len(layer.A), len(layer.V[0])
        graphs.setdefault(f"n={n},d={d},dv={dv}", rasp.graph_to_json(_u(n, d, dv)[1]))
        got, want = results[key]
        cases.append(
            {
                "case": key,
                "length": n,
                "alphabet": alphabet,
                "words": alphabet**n,
                "A": matrix_to_json(layer.A, EE),
                "V": matrix_to_json(layer.V, EE),
                "readouts": got,
                "language": want,
            }
        )
    return cases, graphs


MATCH2 = (
    "for every M with 1 <= M <= max_M and every word in [M]^n with 1 <= n <= max_length, "
    "U's exact readout of T_Match2 equals Match2"
)


def _match2_plan(max_M: int, max_length: int) -> tuple[dict, list[dict], int]:
    beta = least_beta_above(max_length)
    t_checks = [
        {"n": n, "k": k, "beta": beta, "holds": (decide_match2_readout(n, k, beta) > EE.convert("1/2")) == (k >= 1)}
        for n in range(1, max_length + 1)
        for k in range(0, n + 1)
    ]
    layers = {f"M={M},n={n}": (("match2", M, max_length), n, M) for M in range(1, max_M + 1) for n in range(1, max_length + 1)}
    return layers, t_checks, beta


def prove_match2(max_M: int = 5, max_length: int = 4, jobs: int = 1, scheduler: str | None = None, chunks: str | None = None) -> dict:
    layers, t_checks, beta = _match2_plan(max_M, max_length)
    cases, graphs = _cases("match2", layers, jobs, scheduler, chunks)
    return _certificate("match2", MATCH2, {"max_M": max_M, "max_length": max_length, "beta": beta}, cases, t_checks, graphs)


def verify_match2(doc: dict) -> list[str]:
    p = doc["params"]
    max_M, max_length = _small(p.get("max_M")), _small(p.get("max_length"))
    _, t_checks, _ = _match2_plan(max_M, max_length)
    stated = {f"M={M},n={n}": (n, M) for M in range(1, max_M + 1) for n in range(1, max_length + 1)}
    problems = _verify(doc, stated, lambda w, key: references.match2_language(w, int(key.split(",")[0][2:])), t_checks)
    return problems or _reproduces(doc, prove_match2)


PARITY = (
    "for every k and n with 1 <= k <= max_k, 1 <= n <= max_length and k <= n, S = {floor(j n / k) : j < k}, and every bit string of "
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


def prove_parity(max_k: int = 4, max_length: int = 6, jobs: int = 1, scheduler: str | None = None, chunks: str | None = None) -> dict:
    layers, t_checks = _parity_plan(max_k, max_length)
    cases, graphs = _cases("parity", layers, jobs, scheduler, chunks)
    return _certificate("parity", PARITY, {"max_k": max_k, "max_length": max_length}, cases, t_checks, graphs)


def verify_parity(doc: dict) -> list[str]:
    p = doc["params"]
    max_k, max_length = _small(p.get("max_k")), _small(p.get("max_length"))
    _, t_checks = _parity_plan(max_k, max_length)
    stated = {
        f"k={k},n={n},S={references.parity_positions(n, k)}": (n, 2) for n in range(1, max_length + 1) for k in range(1, min(max_k, n) + 1)
    }
    problems = _verify(doc, stated, lambda w, key: references.parity_language(w, json.loads(key.split("S=")[1])), t_checks)
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
SCHEDULER = Param("scheduler", str, None, "run the chunks of words on the Dask cluster at this address instead (not recorded)")
CHUNKS = Param(
    "chunks", str, None, "folder for one resumable result per chunk of words; a run resumes from the valid ones found there (not recorded)"
)

register(
    Claim(
        "match2",
        MATCH2,
        prove_match2,
        verify=verify_match2,
        cost=cost.match2,
        build=lambda max_M=5, max_length=4: universal(max_length, max_M, max_M),  # the largest U it runs
        params=(
            Param("max_M", positive_int, 5, "largest number of residues M (every M from 1 is checked)"),
            Param("max_length", positive_int, 4, "longest word checked (all words up to it)"),
            JOBS,
            SCHEDULER,
            CHUNKS,
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
            SCHEDULER,
            CHUNKS,
        ),
    )
)
