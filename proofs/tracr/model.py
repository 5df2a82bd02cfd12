"""Claim ``tracr_model``: a model tracr compiled decodes to its RASP program's output on every input.

For an assembled tracr model (float32 weights read as exact rationals, its residual space, vocab,
max_seq_len, BOS, causal or not) and its RASP program: for every sequence over the vocabulary of
every length 1..max_seq_len, tracr's forward pass computed in arb balls
(:mod:`constructions.tracr.forward`) decodes at every position 1..n to the program's output as
attncert evaluates it exactly; or the certificate lists the counterexamples (input, exact RASP
output, decoded output, the enclosures that decided it, the first residual stream that leaves
the RASP values' encoding). The decision rules are :mod:`constructions.tracr.certify`'s: a
categorical output is decided when the chosen class's ball is separated from the others, a
numerical one when |decoded - exact| <= tol is proven (the largest such bound is reported); an
undecided input is never counted correct.

The RASP side is recorded without code (:mod:`constructions.tracr.program`: callables tabulated
on the arguments they receive over the input set). ``attncert verify`` runs the recorded weights
through the checker's own forward pass on every input (:mod:`proofs.checkers.tracr.model`), then
rebuilds the document from the recorded model and program, with no tracr, no JAX and none of the
user's code.

    attncert prove tracr_model --program tracr.compiler.lib:make_length --vocab a,b,c --max-seq-len 8
"""

from __future__ import annotations

import importlib.util
from fractions import Fraction
from typing import Any, Callable, Sequence

from attncert.exact import ParseError
from attncert.exact.rationals import rational_to_json
from attncert.proofs.core import figures
from attncert.proofs.core.certify import certificate
from attncert.proofs.checkers.tracr import compositional as _compositional_check  # noqa: F401  (installs the check of --method compositional)
from attncert.proofs.checkers.tracr.model import check_tracr_model, model_sha256
from attncert.proofs.core.params import nonnegative_int, positive_int
from attncert.proofs.core.rebuild import recorded_params
from attncert.proofs.core.registry import Claim, Param, flag, register
from attncert.proofs.core.user_programs import call_program, parse_vocab, program_spec, refuse_input_count

NAME = "tracr_model"
STATEMENT = (
    "for every input sequence over the vocabulary of every length 1..max_seq_len, the recorded tracr model's forward pass "
    "(float32 weights read exactly; softmax attention with tracr's scaling, residual adds, ReLU MLPs, unembedding), enclosed "
    "in arb balls, decodes at every position to the recorded RASP program's output evaluated exactly by attncert: categorical "
    "outputs by a separated argmax, numerical ones within tolerance; the counts and the listed counterexamples are the others"
)
INSTALL = "pip install '.[tracr]' in attncert's folder (a clone: attncert is not on a package index)"
#: The default program: tracr's own make_length.
PROGRAM = "tracr.compiler.lib:make_length"
#: The default tolerance of a numerical output: |decoded - exact| <= 10^-6.
TOLERANCE = "1/1000000"


def tolerance(s: str) -> Any:
    from attncert.exact.rationals import parse_rational

    v = parse_rational(s)
    if v < 0:
        raise ParseError(f"the tolerance must be >= 0, got {v}")
    return v


def precision(s: str) -> int:
    v = positive_int(s)
    if not 16 <= v <= 4096:
        raise ParseError(f"the precision is a number of bits in [16, 4096], got {v}")
    return v


def method_option(s: str) -> str:
    if s not in ("exhaustive", "compositional"):
        raise ParseError(f"--method is exhaustive (every input through the forward pass) or compositional (by induction, no input enumerated), got {s!r:.30}")
    return s


def tracr_compiler() -> Any:
    """tracr's ``compiling`` module, or one line saying how to install it."""
    if importlib.util.find_spec("tracr") is None:
        raise ParseError(f"the claim tracr_model needs tracr, JAX and dm-haiku: {INSTALL}")
    from tracr.compiler import compiling

    return compiling


def prove(
    vocab: str, max_seq_len: int, bos: str, causal: bool, tolerance: Any,
    precision: int, max_inputs: int, listed: int, program: str = PROGRAM, method: str = "exhaustive",
) -> dict[str, Any]:
    """Compile FUNCTION() with tracr at these settings and certify the model tracr produced: every input
    through the ball forward pass (exhaustive), or every input of every length by the induction
    (compositional, :mod:`proofs.tracr.compositional`)."""
    from attncert.constructions.tracr.program import input_count

    tokens = parse_vocab(vocab)
    if bos in tokens:
        raise ParseError(f"the vocabulary holds the BOS token {bos!r:.40}")
    if method != "compositional":
        refuse_input_count(input_count(len(tokens), max_seq_len), max_inputs)
    program_spec(program)  # one line for a malformed MODULE:FUNCTION before importing tracr
    compiling = tracr_compiler()
    rasp_program = tracr_sop(call_program(program), program)
    try:
        model = compiling.compile_rasp_to_model(rasp_program, vocab=set(tokens), max_seq_len=max_seq_len, causal=bool(causal), compiler_bos=bos)
    except MemoryError:
        raise
    except Exception as e:  # tracr's refusals, and whatever the user's functions raise on tracr's value sets
        raise ParseError(f"tracr does not compile {program}: {whole_reason(e)}") from None
    return certify_tracr(rasp_program, model, tokens, max_seq_len, tolerance, precision, max_inputs, listed, source=program, method=method)


def tracr_sop(program: Any, where: str) -> Any:
    """The program if it is a tracr SOp (what tracr's compiler takes), else one line saying what it is."""
    from tracr.rasp import rasp

    if not isinstance(program, rasp.SOp):
        kind = "an attncert SOp (prove compiled certifies attncert's own compile of it)" if type(program).__module__.startswith("attncert.") else f"a value of type {type(program).__name__}"
        raise ParseError(f"{where} gives {kind}, not a tracr RASP SOp")
    return program


def whole_reason(e: BaseException) -> str:
    """An exception's type and its whole message on one line (tracr lists every unsupported expression
    on lines of their own): the lines joined by " | ", blank ones dropped."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return f"{type(e).__name__}: {' | '.join(lines)}" if lines else type(e).__name__


def certify_tracr(
    program: Any, assembled_model: Any, vocab: Sequence[Any] | None = None, max_seq_len: int | None = None,
    tolerance: Any = TOLERANCE, precision: int = 64, max_inputs: int = 100_000, listed: int = 10, source: str = "python",
    method: str = "exhaustive",
) -> dict[str, Any]:
    """The certificate document (unsealed) for a tracr program and the model tracr assembled from it.

    ``vocab`` and ``max_seq_len`` default to the model's; ``source`` names where the program came from
    (MODULE:FUNCTION on the command line), recorded in ``side_notes`` with tracr's version (informational:
    the program itself is recorded by its tables). Bad input (a vocabulary holding BOS or a token the model has no row for, a length over the model's, a residual space without the program's output, too many
    inputs) raises ParseError in one line."""
    from attncert.constructions.tracr.certify import relabel
    from attncert.constructions.tracr.model import read_assembled
    from attncert.constructions.tracr.program import from_tracr, input_count
    from attncert.exact.rationals import parse_rational

    prog = from_tracr(program)
    model = read_assembled(assembled_model, str(program.label))
    relabel(prog, model)
    tokens = list(model.vocab() if vocab is None else vocab)
    n = model.max_seq_len if max_seq_len is None else max_seq_len
    if method == "compositional":
        from attncert.constructions.tracr.program import ProgramError, record_calls, tabulate_sets

        _refuse_inputs(model, tokens, n)
        try:
            tabulate_sets(record_calls(prog), tokens, n)
        except ProgramError as e:
            raise ParseError(f"the compositional proof does not apply: {e} (use --method exhaustive)") from None
        return _compositional(model, prog, tokens, n, source, parse_rational(tolerance), precision, max_inputs, listed)
    refuse_input_count(input_count(len(tokens), n), max_inputs)
    return _certify(model, prog, tokens, n, source, parse_rational(tolerance), precision, max_inputs, listed)


def _compositional(model: Any, prog: Any, tokens: list[Any], n: int, source: str, tol: Any, prec: int, max_inputs: int, listed: int) -> dict[str, Any]:
    """The certificate of ``--method compositional`` (:mod:`proofs.tracr.compositional`)."""
    from attncert.constructions.tracr.certify import recorded
    from attncert.constructions.tracr.model import model_to_json
    from attncert.constructions.tracr.program import input_count, program_to_json
    from attncert.constructions.tracr.program import value_json as encode_value
    from attncert.proofs.tracr import compositional as P

    _refuse_inputs(model, tokens, n)
    mj = model_to_json(model)
    vocab_json = [encode_value(t) for t in tokens]
    good, proven, failing, undefined, weak_at = P.search(mj, program_to_json(prog), vocab_json, n, tol)
    confirmation = None
    if good < n:
        confirmation = []
        for length, kind, xs, outs, verdicts in P.confirm(model, prog, tokens, good + 1, n, tol, prec, max_inputs, weak_at):
            counts = {"inputs": len(xs), "correct": 0, "counterexamples": 0, "undecided": 0, "undefined": 0}
            found = []
            for x, out, v in zip(xs, outs, verdicts):
                counts[v.status + ("s" if v.status == "counterexample" else "")] += 1
                if v.status == "counterexample" and len(found) < listed:
                    found.append(_listed(model, prog, x, out, v, tol, encode_value))
            confirmation.append({"length": length, "inputs": kind, "counts": counts, "counterexamples": found})
    recorded(prog)
    outputs, result = P.outputs_and_result(n, good, proven, failing, undefined, confirmation, input_count(len(tokens), n))
    return certificate(
        NAME,
        {
            "vocab": ",".join(str(t) for t in tokens), "max_seq_len": n, "bos": str(model.bos), "causal": int(model.causal),
            "tolerance": rational_to_json(tol), "precision": prec, "max_inputs": max_inputs, "listed": listed, "method": "compositional",
        },
        {"vocab": vocab_json, "max_seq_len": n, "count": result["inputs"]},
        {"model": mj, "model_sha256": model_sha256(mj), "program": program_to_json(prog), "size": _size(model)},
        outputs,
        {"semantics": "tracr's causal evaluation (every selector masked to the keys k <= q)" if model.causal else "RASP evaluation"},
        result,
        side_notes={"tracr": {"version": _tracr_version(), "program": source}},
    )


def _certify(model: Any, prog: Any, tokens: list[Any], n: int, source: str, tol: Any, prec: int, max_inputs: int, listed: int) -> dict[str, Any]:
    from attncert.constructions.tracr import certify as C
    from attncert.constructions.tracr.model import model_to_json
    from attncert.constructions.tracr.program import input_count, inputs, intern, program_to_json
    from attncert.constructions.tracr.program import value_json as encode_value

    from attncert.proofs.core.progress import bar

    _refuse_inputs(model, tokens, n)
    exact_values: dict[Any, int] = {}
    values_json: list[Any] = []
    by_length: list[list[Any]] = []
    found: dict[str, list[tuple[tuple[Any, ...], Any, Any]]] = {"counterexample": [], "undecided": [], "undefined": []}
    counts = {"correct": 0, "counterexample": 0, "undecided": 0, "undefined": 0}
    decided_at: dict[int, int] = {}
    worst = None
    total = input_count(len(tokens), n)
    with bar(total, "inputs") as progress:
        for length, xs in inputs(tokens, n):
            outs = C.tabulated(prog, xs, model.causal)
            verdicts = C.certify_inputs(model, xs, outs, tol, prec)
            row = []
            for x, out, v in zip(xs, outs, verdicts):
                counts[v.status] += 1
                if v.status != "undefined":
                    decided_at[v.precision] = decided_at.get(v.precision, 0) + 1
                    row.append([intern(exact_values, values_json, u) for u in out])
                else:
                    row.append(None)
                if v.status == "correct" and v.error is not None and (worst is None or v.error > worst):
                    worst = v.error
                if v.status in found and len(found[v.status]) < listed:
                    found[v.status].append((x, out, v))
            by_length.append(row)
            progress.update(len(xs))
    C.recorded(prog)
    listed_json = {
        status: [_listed(model, prog, x, out, v, tol, encode_value) for x, out, v in items]
        for status, items in found.items()
    }
    holds = counts["correct"] == total
    return certificate(
        NAME,
        {
            "vocab": ",".join(str(t) for t in tokens), "max_seq_len": n, "bos": str(model.bos),
            "causal": int(model.causal), "tolerance": rational_to_json(tol), "precision": prec, "max_inputs": max_inputs, "listed": listed,
        },
        {"vocab": [encode_value(t) for t in tokens], "max_seq_len": n, "count": total},
        {
            "model": model_to_json(model),
            "model_sha256": model_sha256(model_to_json(model)),
            "program": program_to_json(prog),
            "size": _size(model),
        },
        {
            "counts": {"inputs": total, **{k + ("s" if k == "counterexample" else ""): v for k, v in counts.items()}},
            "counterexamples": listed_json["counterexample"],
            "undecided": listed_json["undecided"],
            "undefined": listed_json["undefined"],
            "max_error": None if worst is None else rational_to_json(worst),
            "decided_at_precision": [[p, c] for p, c in sorted(decided_at.items())],
        },
        {"rasp": {"values": values_json, "outputs": by_length}},
        {
            "relation": "enclosure",
            "holds": holds,
            "statement": STATEMENT,
            "tolerance": rational_to_json(tol),
            "inputs": total,
            "correct": counts["correct"],
            "counterexamples": counts["counterexample"],
            "undecided": counts["undecided"],
            "undefined": counts["undefined"],
        },
        # Where the program came from and which tracr compiled it: informational (verify never imports either).
        side_notes={"tracr": {"version": _tracr_version(), "program": source}},
    )


def _tracr_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tracr-pypi")
    except PackageNotFoundError:
        return None


def _size(model: Any) -> dict[str, Any]:
    """Layers; per layer the heads and MLP hidden units that have nonzero weights; the residual width."""
    k = model.key_size

    def used(m: Any, axis: int) -> set[int]:
        return {ij[axis] for ij in m.w}

    heads = [len({c // k for c in used(layer["query"], 1) | used(layer["value"], 1)}) for layer in model.layers]
    hidden = [len(used(layer["linear_1"], 1)) for layer in model.layers]
    return {"layers": len(model.layers), "heads": heads, "mlp_hidden": hidden, "width": model.width, "key_size": k}


def _refuse_inputs(model: Any, tokens: list[Any], n: int) -> None:
    from attncert.constructions.tracr.program import key

    if n < 1:
        raise ParseError(f"max_seq_len must be at least 1, got {n}")
    if n > model.max_seq_len:
        raise ParseError(f"max_seq_len {n} is over the model's {model.max_seq_len}")
    if any(key(t) == key(model.bos) for t in tokens):
        raise ParseError(f"the vocabulary holds the BOS token {model.bos!r:.40}")
    rows = {key(t) for t, _ in model.token_rows}
    missing = [t for t in tokens if key(t) not in rows or key(t) == key(model.pad)]
    if missing:
        raise ParseError(f"the model has no token {missing[0]!r:.40}: its vocabulary is {model.vocab()!r:.80}")
    if not tokens:
        raise ParseError("the vocabulary is empty")


def _listed(model: Any, prog: Any, x: Sequence[Any], out: Any, v: Any, tol: Any, encode: Callable[[Any], Any]) -> dict[str, Any]:
    """A listed input: its tokens, the exact RASP output, the positions not certified correct with the
    enclosures that decided them, and where the residual stream leaves the encoding."""
    from attncert.constructions.tracr.certify import EvaluationFailed, ball_json, leaves_encoding

    if isinstance(out, EvaluationFailed):
        return {"input": [encode(t) for t in x], "reason": out.reason}
    positions = [
        {
            "position": p.t, "status": p.status, "rasp": encode(p.rasp),
            "decoded": _decoded(p.decoded, ball_json, encode),
            "enclosures": [ball_json(b) for b in p.balls],
            **({"error": rational_to_json(p.error)} if p.error is not None else {}),
        }
        for p in v.positions
    ]
    entry = {"input": [encode(t) for t in x], "rasp": [encode(u) for u in out], "positions": positions, "precision": v.precision}
    if v.status == "counterexample":
        found = leaves_encoding(model, prog, x, tol, v.precision)
        entry["leaves_encoding"] = None if found is None else {
            **{k: found[k] for k in ("stream", "sop", "position")},
            "deviation": [rational_to_json(d) for d in found["deviation"]],
        }
    return entry


def _decoded(d: Any, ball_json: Callable[[Any], Any], encode: Callable[[Any], Any]) -> Any:
    from attncert.constructions.tracr.model import class_json

    if isinstance(d, dict):
        return {"among": [class_json(u) for u in d["among"]]}
    if type(d).__name__ == "arb":
        return ball_json(d)
    return class_json(d)


def rebuild(doc: dict[str, Any]) -> dict[str, Any]:
    """The document again from the recorded model, program and inputs: no tracr, no user code."""
    from attncert.constructions.tracr.model import model_from_json
    from attncert.constructions.tracr.program import input_count, program_from_json
    from attncert.constructions.tracr.program import value_from_json as decode_value

    kw = recorded_params(CLAIM, doc, optional=("program", "method"))  # the program is recorded by its tables; where it came from is a side note
    cons, given = doc.get("construction"), doc.get("inputs")
    if not isinstance(cons, dict) or not isinstance(given, dict) or not isinstance(given.get("vocab"), list):
        raise ParseError("the certificate lacks the recorded model, program or vocabulary")
    model = model_from_json(cons.get("model"))
    prog = program_from_json(cons.get("program"))
    tokens = [decode_value(t) for t in given["vocab"]]
    if kw.get("method") == "compositional":
        return _compositional(model, prog, tokens, kw["max_seq_len"], "", kw["tolerance"], kw["precision"], kw["max_inputs"], kw["listed"])
    refuse_input_count(input_count(len(tokens), kw["max_seq_len"]), kw["max_inputs"])
    return _certify(model, prog, tokens, kw["max_seq_len"], "", kw["tolerance"], kw["precision"], kw["max_inputs"], kw["listed"])


def summary(doc: dict[str, Any]) -> str | None:
    """One line naming the model certified (the one tracr compiled, not attncert's own compile) and its
    output SOp: all inputs certified (with the certified numerical error), or the first counterexample."""
    output = ((doc.get("construction") or {}).get("program") or {}).get("output")
    return f"tracr's compiled model{f' of {output}' if isinstance(output, str) else ''}: {_summary(doc)}"


def _summary(doc: dict[str, Any]) -> str:
    res, out = doc["result"], doc["outputs"]
    if doc["params"].get("method") == "compositional":
        return _compositional_summary(res, out)
    if res["holds"]:
        err = f"; certified |decoded - exact| <= {figures.upper(out['max_error'])}" if out.get("max_error") else ""
        return f"all {res['inputs']:,} inputs decode to the RASP output{err}"
    head = f"{res['correct']:,} of {res['inputs']:,} inputs correct, {res['counterexamples']:,} counterexamples, {res['undecided']:,} undecided, {res['undefined']:,} undefined"
    if out["counterexamples"]:
        c = out["counterexamples"][0]
        p = c["positions"][0]
        where = c.get("leaves_encoding")
        left = f"; the residual leaves the encoding at {where['stream']} ({where['sop']}, position {where['position']})" if where else ""
        return f"{head}; first: input {_shown(c['input'])}, RASP {_shown(c['rasp'])}, position {p['position']} decodes to {_shown([p['decoded']])[1:-1]}{left}"
    return head


def _compositional_summary(res: dict[str, Any], out: dict[str, Any]) -> str:
    N = res["proven_up_to"]
    if res["first_failing_length"] is None:
        undefined = f", where RASP's evaluation is defined ({res['may_be_undefined'][0]})" if res["may_be_undefined"] else ""
        return f"proven compositionally on every input of every length 1..{N} ({res['inputs']:,} inputs){undefined}"
    k, runs = res["first_failing_length"], out["confirmation"]
    head = f"proven compositionally up to length {N} (N* = {N}); the bound fails at length {k}"
    first, last = runs[0], runs[-1]
    if first["inputs"] == "every" and not first["counts"]["counterexamples"]:
        head += f", where every one of its {first['counts']['inputs']:,} inputs is correct: the bound is not sharp there"
    elif len(runs) > 1 or not last["counts"]["counterexamples"]:
        head += f", where {first['counts']['inputs']:,} inputs built from it show no counterexample"
    if last["counts"]["counterexamples"]:
        c = last["counterexamples"][0]
        p = c["positions"][0]
        at = "there" if last["length"] == k else f"at length {last['length']}"
        return f"{head}, and a real counterexample {at}: input {_shown(c['input'])}, RASP {_shown(c['rasp'])}, position {p['position']} decodes to {_shown([p['decoded']])[1:-1]}"
    if first["inputs"] == "every" and len(runs) == 1:
        return head
    return f"{head}; none among {sum(r['counts']['inputs'] for r in runs):,} inputs of lengths {k}..{last['length']}: undecided"


def _shown(values: list[Any]) -> str:
    def one(j: Any) -> str:
        if j is None:
            return "None"
        if isinstance(j, dict) and len(j) == 1:
            ((tag, body),) = j.items()
            if tag == "among":
                return "one of " + "/".join(one(u) for u in body)
            if tag == "f":  # a class tracr holds as a float
                return repr(float(Fraction(body)))
            return repr(body) if tag == "s" else str(body)
        if isinstance(j, dict) and "mid" in j:  # a numerical output: an interval that contains it
            return figures.ball(j["mid"], j["rad"], digits=10)
        return str(j)

    return "[" + ", ".join(one(j) for j in values) + "]"


def cost(vocab: str, max_seq_len: int, precision: int, method: str = "exhaustive", **_: Any) -> Any:
    """Every input of every length up to N, N + 1 positions each (BOS first), balls up to 4 times the
    precision; about 10 s of tracr's own compile and JAX import, then the forward passes."""
    from attncert.constructions.tracr.program import input_count
    from attncert.proofs.core.cost import Cost

    count = input_count(len(parse_vocab(vocab)), max_seq_len)
    n = max_seq_len + 1
    if method_option(method) == "compositional":  # configurations of the value sets, a few runs of the induction
        return Cost(positions=n, pairs=n * n, evaluations=n * len(parse_vocab(vocab)), precision=precision, seconds=10 + 1e-2 * n * n, memory=1 << 28)
    return Cost(positions=n, pairs=n * n, evaluations=count, precision=4 * precision, seconds=10 + 1e-4 * count * n, memory=(1 << 28) + 256 * count * n)


CLAIM = register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        (
            Param("program", str, PROGRAM, "MODULE:FUNCTION or 'MODULE:FUNCTION(ARGS)' (ARGS: tokens, indices, length, literals, comparisons, calls; docs/tracr.md): returns a tracr RASP program"),
            Param("vocab", str, "a,b,c", "the vocabulary, comma-separated (an item spelled as an integer is the integer)"),
            Param("max_seq_len", positive_int, 4, "the longest input; tracr compiles the model for it and every length 1..max_seq_len is checked"),
            Param("bos", str, "BOS", "tracr's BOS token (compiler_bos)"),
            Param("causal", flag, False, "compile a causal model (tracr's causal=True)"),
            Param("tolerance", tolerance, TOLERANCE, "a numerical output is correct when |decoded - exact| <= this is proven"),
            Param("precision", precision, 64, "bits of the balls; undecided inputs are run again at 2 and 4 times this"),
            Param("max_inputs", positive_int, 100_000, "refuse more input sequences than this"),
            Param("listed", nonnegative_int, 10, "list at most this many counterexamples (and undecided, undefined inputs) in full"),
            Param("method", method_option, "exhaustive", "exhaustive: every input through the forward pass; compositional: every input of every length by induction over the sublayers, no input enumerated (docs/tracr.md)"),
        ),
        check=check_tracr_model,
        cost=cost,
        rebuild=rebuild,
        summary=summary,
    )
)
