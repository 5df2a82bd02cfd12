"""Claim ``compiled_program``: your own RASP program, compiled exactly, computes it on every input.

``attncert prove compiled --file F.rasp [--expr NAME]`` or ``--program MODULE:FUNCTION``, with
``--vocab a,b,c --max-seq-len N`` (and ``--lengths every``, ``--causal``), compiles the program
(:func:`constructions.compiler.compile_graph`, categorical tokens) and proves, **for every input
sequence over the vocabulary** of length N (``--lengths fixed``, a model for exactly N tokens) or
of every length 1..N (``--lengths every``, one model for all of them), that the model's exact
forward pass (QQ, or EE where an MLP has exp units) decodes at every position to the program's
output as attncert's RASP evaluator computes it exactly (with tracr's causal semantics under
``--causal``). Inputs the RASP evaluation refuses (outside the program's domain) are counted as
undefined; the claim holds when every input is correct.

The program is recorded without code, in one of three forms:

- ``rasp``: a RASP-language program: its source, the expression and every file it loads; the rebuild
  runs it again in attncert's bounded interpreter, serving loads from the recorded texts.
- ``graph``: an attncert program of registered functions (``constructions.rasp.register_function``)
  and Comparison predicates: its graph JSON. One with a Python lambda is refused in one line.
- ``tables``: a tracr program: its nodes with each callable replaced by the table of every call the
  proof made (:mod:`constructions.tracr.program`): the compile, its check and the evaluations call
  them on finitely many arguments, and the rebuild makes the same calls, so a table lookup returns
  what the callable returned.

``--method compositional`` (any of the three: a tracr program's record is its tables; for the other
two, the program's registered functions are tabulated the same way and recorded beside it, as
``construction.tables``) proves the same statement without
enumerating the inputs (:mod:`proofs.checkers.compiled.every_input`): each head's selection on every pair of
query and key configurations and each sublayer's output on every configuration of the finite value
sets it reads, so every input of every length is covered at the cost of one pass over the value
sets (tracr's make_sort_unique over five tokens to length 8: 488,280 inputs, proven in well under a
second); it is sound but not complete, and refuses in one line a program outside the class it covers.

``attncert verify`` runs the recorded weights through the checker's own forward pass
(:mod:`proofs.checkers.compiled.program`, which never imports the compiler) on every input, then
rebuilds the whole document from the recorded program: recompiles it, compares the weights, and
evaluates the program again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

from attncert.exact import ParseError
from attncert.proofs.core.certify import certificate
from attncert.proofs.checkers.compiled.program import check_compiled_program, model_sha256
from attncert.proofs.core.params import nonnegative_int, positive_int
from attncert.proofs.core.rebuild import recorded_params
from attncert.proofs.core.registry import Claim, Param, flag, register
from attncert.proofs.core.user_programs import attncert_program, call_program, check_sources, file_program, parse_vocab, refuse_input_count

NAME = "compiled_program"
STATEMENT = (
    "for every input sequence over the vocabulary of the lengths checked, the exact forward pass of the compiled model "
    "(rational weights, average-hard attention) decodes at every position to the recorded RASP program's output as "
    "attncert evaluates it exactly; the counts and the listed counterexamples are the others"
)
LENGTHS = ("fixed", "every")
METHODS = ("exhaustive", "compositional")
#: The program compiled when none is given: attncert's shipped make_reverse.
DEFAULT_FILE, DEFAULT_EXPR = "<attncert>/classic.rasp", "make_reverse(tokens)"


def method_option(s: str) -> str:
    if s not in METHODS:
        raise ParseError(f"--method is exhaustive (every input through the forward pass) or compositional (every configuration of the value sets), got {s!r:.30}")
    return s


def lengths_option(s: str) -> str:
    if s not in LENGTHS:
        raise ParseError(f"--lengths is fixed (a model for exactly max_seq_len tokens) or every (one model for every length 1..max_seq_len), got {s!r:.30}")
    return s


@dataclass
class Source:
    """A program as compiled (its graph) and as recorded; ``record()`` is called after the proof."""

    graph: Any
    record: Callable[[], dict[str, Any]]


def _from_file(file: str, expr: str | None, files: Any, source: str | None = None) -> Source:
    from attncert.constructions import rasp
    from attncert.constructions.rasp.language.sources import portable_name, read_source

    name = portable_name(file)
    text = read_source(name) if source is None else source
    graph = rasp.to_graph(file_program(name, expr, text, files))
    loaded = [{"name": n, "text": t} for n, t in files.served.items()]
    return Source(graph, lambda: {"kind": "rasp", "file": name, "source": text, "expr": expr, "loaded": loaded})


def _from_python(spec: str) -> Source:
    from attncert.constructions import rasp

    program = call_program(spec)
    if isinstance(program, rasp.SOp):
        from attncert.constructions.rasp.graph import graph_to_json

        graph = rasp.to_graph(program)
        recorded = graph_to_json(graph)  # refuses a Python lambda in one line, before the work
        return Source(graph, lambda: {"kind": "graph", "graph": recorded})
    from attncert.constructions.tracr.certify import recorded
    from attncert.constructions.tracr.program import from_tracr, program_to_json, record_calls, to_rasp

    attncert_program(program, spec)  # one line for what is neither attncert's nor tracr's
    prog = record_calls(from_tracr(program))
    graph = rasp.to_graph(to_rasp(prog))
    return Source(graph, lambda: {"kind": "tables", "program": program_to_json(recorded(prog))})


def _from_record(obj: Any, kw: dict[str, Any]) -> Source:
    """The recorded program again, for the rebuild: nothing of the user's is imported or executed. Its
    kind follows the recorded parameters (--program: graph or tables; else a RASP-language file), and a
    RASP-language program runs under the name and expression the parameters give, so the record's own
    name and expression are recomputed, not read."""
    from attncert.constructions import rasp

    kinds = ("graph", "tables") if kw.get("program") is not None else ("rasp",)
    if not isinstance(obj, dict) or obj.get("kind") not in kinds:
        raise ParseError(f'"construction.program" must be a recorded program of kind {" or ".join(kinds)}')
    if obj["kind"] == "rasp":
        from attncert.constructions.rasp.language.sources import RecordedFiles

        loaded = obj.get("loaded")
        if not isinstance(loaded, list) or not all(isinstance(f, dict) and isinstance(f.get("name"), str) and isinstance(f.get("text"), str) for f in loaded):
            raise ParseError('"construction.program.loaded" must list {name, text}')
        if not isinstance(obj.get("source"), str):
            raise ParseError("a recorded RASP-language program has a source text")
        file, expr = _file_and_expr(kw.get("file"), kw.get("expr"))
        return _from_file(file, expr, RecordedFiles({f["name"]: f["text"] for f in loaded}), obj["source"])
    if obj["kind"] == "graph":
        from attncert.constructions.rasp.graph import graph_from_json, graph_to_json

        graph = graph_from_json(obj.get("graph"))
        return Source(graph, lambda: {"kind": "graph", "graph": graph_to_json(graph)})
    from attncert.constructions.tracr.program import program_from_json, program_to_json, to_rasp

    prog = program_from_json(obj.get("program"))
    return Source(rasp.to_graph(to_rasp(prog)), lambda: {"kind": "tables", "program": program_to_json(prog)})


def _file_and_expr(file: str | None, expr: str | None) -> tuple[str, str | None]:
    """The RASP-language file and expression compiled: the given ones, or attncert's reverse by default."""
    return (file, expr) if file is not None else (DEFAULT_FILE, expr or DEFAULT_EXPR)


def _inputs(vocab: list[Any], n: int, lengths: str) -> Iterator[tuple[int, list[tuple[Any, ...]]]]:
    from attncert.constructions.tracr.program import inputs

    for length, xs in inputs(vocab, n):
        if lengths == "every" or length == n:
            yield length, xs


def input_count(vocab: int, n: int, lengths: str) -> int:
    """The inputs an exhaustive proof runs: every length 1..n, or n alone."""
    from attncert.constructions.tracr.program import input_count as count

    return count(vocab, n, every=lengths == "every")


def prove(
    vocab: str, max_seq_len: int, lengths: str, causal: bool, max_inputs: int, listed: int,
    file: str | None = None, expr: str | None = None, program: str | None = None, method: str = "exhaustive",
) -> dict[str, Any]:
    """Compile the user's program and check the model on every input (module docstring)."""
    from attncert.constructions.rasp.language.sources import DiskFiles

    check_sources(file, expr, program)
    tokens = _tokens(vocab)
    if method != "compositional":
        refuse_input_count(input_count(len(tokens), max_seq_len, lengths), max_inputs)
    if program is not None:
        src = _from_python(program)
    else:  # attncert's own reverse over a, b, c when no program is given (prove-all's default)
        src = _from_file(*_file_and_expr(file, expr), DiskFiles())
    return _certify(src, tokens, max_seq_len, lengths, causal, max_inputs, listed, file=file, expr=expr, program=program, method=_method(method))


def _tokens(vocab: str) -> list[Any]:
    """The vocabulary in the order of the model's one-hot token columns (the compiler's
    :func:`~constructions.compiler.values.symbols`, each token as attncert's evaluator holds it): the inputs are
    enumerated, and the vocabulary recorded, in that order, which the checker compares with the model's."""
    from attncert.constructions.compiler.values import symbols

    return list(symbols(parse_vocab(vocab)))


def _method(method: str) -> str | None:
    """The method as recorded: only a compositional proof records it (exhaustive certificates are as before)."""
    return method if method == "compositional" else None


def _certify(src: Source, tokens: list[Any], n: int, lengths: str, causal: bool, max_inputs: int, listed: int, **given: Any) -> dict[str, Any]:
    from attncert.constructions.compiler import compile_graph
    from attncert.constructions.compiler.check import REFUSED, check_domain, compare
    from attncert.constructions.compiler.model import model_to_json
    from attncert.constructions.tracr.program import intern
    from attncert.constructions.tracr.program import value_json as encode_value
    from attncert.proofs.core.progress import bar

    # the compiler's own check samples inputs; a compositional proof covers every input, so it is not run then
    model = compile_graph(src.graph, n, "categorical", tokens, lengths=lengths, causal=causal, check=given.get("method") != "compositional")
    if given.get("method") == "compositional":
        return _compositional(src, model, tokens, n, lengths, causal, max_inputs, listed, given)
    dom = check_domain(model)
    out_label = next(iter(model.outputs))
    out_node = src.graph.graph["outputs"][out_label]
    index: dict[Any, int] = {}
    values: list[Any] = []
    counts = {"correct": 0, "counterexample": 0, "undefined": 0}
    found: dict[str, list[dict[str, Any]]] = {"counterexample": [], "undefined": []}
    by_length: list[list[Any]] = []
    total = input_count(len(tokens), n, lengths)
    with bar(total, "inputs") as progress:
        for _, xs in _inputs(tokens, n, lengths):
            row: list[Any] = []
            for x in xs:
                try:
                    c = compare(model, src.graph, list(x), dom)
                except REFUSED as e:
                    counts["undefined"] += 1
                    row.append(None)
                    if len(found["undefined"]) < listed:
                        found["undefined"].append({"input": [encode_value(t) for t in x], "why": str(e).splitlines()[0][:200] if str(e) else type(e).__name__})
                    continue
                want = c.rasp[out_node]
                row.append([intern(index, values, u) for u in want])
                wrong = [d for d in c.disagreements if d.label == out_label]
                if wrong:
                    counts["counterexample"] += 1
                    if len(found["counterexample"]) < listed:
                        found["counterexample"].append({"input": [encode_value(t) for t in x], "rasp": [encode_value(u) for u in want], "position": wrong[0].position + 1})
                else:
                    counts["correct"] += 1
            by_length.append(row)
            progress.update(len(xs))
    mj = model_to_json(model)
    return certificate(
        NAME,
        *_params_and_inputs(tokens, n, lengths, causal, max_inputs, listed, given, total),
        {"program": src.record(), "model": mj, "model_sha256": model_sha256(mj), "output": out_label},
        {"counts": {"inputs": total, "correct": counts["correct"], "counterexamples": counts["counterexample"], "undefined": counts["undefined"]}, "counterexamples": found["counterexample"], "undefined": found["undefined"]},
        {"rasp": {"values": values, "outputs": by_length}},
        {
            "relation": "exact_equal",
            "domain": dom.name,
            "holds": counts["correct"] == total,
            "statement": STATEMENT,
            "inputs": total,
            "correct": counts["correct"],
            "counterexamples": counts["counterexample"],
            "undefined": counts["undefined"],
        },
    )


def _params_and_inputs(tokens: list[Any], n: int, lengths: str, causal: bool, max_inputs: int, listed: int, given: dict[str, Any], count: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The certificate's ``params`` (those given, the program's source among them) and ``inputs``, the
    same for both methods."""
    from attncert.constructions.tracr.program import value_json

    params = {
        "vocab": ",".join(str(t) for t in tokens), "max_seq_len": n, "lengths": lengths, "causal": int(causal),
        "max_inputs": max_inputs, "listed": listed, **{k: v for k, v in given.items() if v is not None},
    }
    return params, {"vocab": [value_json(t) for t in tokens], "max_seq_len": n, "lengths": lengths, "count": count}


def _compositional(src: Source, model: Any, tokens: list[Any], n: int, lengths: str, causal: bool, max_inputs: int, listed: int, given: dict[str, Any]) -> dict[str, Any]:
    """The certificate of the compositional proof (:mod:`proofs.checkers.compiled.every_input`) for the compile of the
    program, read as tables (a tracr program's record, or :func:`_tables` of the others); one line for a
    program or model outside the class it covers."""
    from attncert.constructions.compiler.model import model_to_json
    from attncert.proofs.checkers.compiled.every_input import result_of
    from attncert.proofs.checkers.programs import Unsupported

    record = src.record()
    tables = record["program"] if record.get("kind") == "tables" else None
    try:
        if tables is None:
            tables = _tables(src.graph, tokens, n, lengths, causal)
        mj = model_to_json(model)
        outputs, result = result_of(mj, tables, len(tokens))
    except Unsupported as e:
        raise ParseError(f"the compositional proof does not apply: {e} (use --method exhaustive)") from None
    return certificate(
        NAME,
        *_params_and_inputs(tokens, n, lengths, causal, max_inputs, listed, given, result["inputs"]),
        {"program": record, "model": mj, "model_sha256": model_sha256(mj), "output": next(iter(model.outputs)), **({} if tables is record.get("program") else {"tables": tables})},
        outputs,
        {"semantics": "tracr's causal evaluation (every selector masked to the keys k <= q)" if causal else "RASP evaluation"},
        result,
    )


def _tables(graph: Any, tokens: list[Any], n: int, lengths: str, causal: bool) -> dict[str, Any]:
    """A RASP-language or registered-function program as the compositional proof reads it: its nodes
    (:func:`constructions.tracr.program.from_graph`), each function tabulated on every argument the
    compiler applies it to while compiling the program so (its value sets), as a tracr program's calls are."""
    from attncert.constructions import rasp
    from attncert.constructions.compiler import NotCompilable, compile_graph
    from attncert.constructions.tracr.certify import recorded
    from attncert.constructions.tracr.program import ProgramError, from_graph, program_to_json, record_calls, to_rasp
    from attncert.proofs.checkers.programs import Unsupported

    try:
        prog = record_calls(from_graph(graph))
        compile_graph(rasp.to_graph(to_rasp(prog)), n, "categorical", tokens, check=False, lengths=lengths, causal=causal)
        return program_to_json(recorded(prog))
    except (ProgramError, NotCompilable) as e:
        raise Unsupported(f"its functions cannot be tabulated on finite value sets: {e}") from None


def rebuild(doc: dict[str, Any]) -> dict[str, Any]:
    """The document again from the recorded program and parameters: no file read, no user code run."""
    kw = recorded_params(CLAIM, doc, optional=("file", "expr", "program", "method"))
    cons = doc.get("construction")
    if not isinstance(cons, dict):
        raise ParseError("the certificate lacks the recorded program")
    tokens = _tokens(kw["vocab"])
    if kw["method"] != "compositional":
        refuse_input_count(input_count(len(tokens), kw["max_seq_len"], kw["lengths"]), kw["max_inputs"])
    src = _from_record(cons.get("program"), kw)
    given = {k: kw.get(k) for k in ("file", "expr", "program")} | {"method": _method(kw["method"])}
    return _certify(src, tokens, kw["max_seq_len"], kw["lengths"], bool(kw["causal"]), kw["max_inputs"], kw["listed"], **given)


def summary(doc: dict[str, Any]) -> str | None:
    """One line, naming the model certified: attncert's exact compile of the program (not the model tracr
    compiles from a tracr program, which ``prove tracr_model`` certifies)."""
    line = _summary(doc)
    return None if line is None else f"attncert's exact compile{_of(doc)}: {line}"


def _of(doc: dict[str, Any]) -> str:
    """ " of NAME": the program's output SOp as recorded (a tracr program's label, a RASP-language
    expression), or nothing."""
    rec = (doc.get("construction") or {}).get("program") or {}
    name = (rec.get("program") or {}).get("output") if rec.get("kind") == "tables" else rec.get("expr") if rec.get("kind") == "rasp" else None
    return f" of {name}" if isinstance(name, str) and name else ""


def _summary(doc: dict[str, Any]) -> str | None:
    res, out = doc["result"], doc["outputs"]
    if doc["params"].get("method") == "compositional":
        lengths = res["lengths"]
        span = f"{lengths[0]}..{lengths[-1]}" if len(lengths) > 1 else f"{lengths[0]}"
        if res["holds"] and res["may_be_undefined"]:
            return (
                f"proven compositionally on the inputs of lengths {span} where RASP's evaluation is defined, not shown to be "
                f"all {res['inputs']:,}: {res['may_be_undefined'][0]}"
            )
        if res["holds"]:
            return f"proven compositionally for all {res['inputs']:,} inputs of lengths {span}"
        # the proof is sound, not complete: what it could not establish leaves the claim not proven (verify's NOT-PROVEN)
        return f"not proven: the compositional proof does not go through: {res['problems'][0] if res['problems'] else 'see result'}"
    if res["holds"]:
        return f"all {res['inputs']:,} inputs: the model equals the RASP program exactly ({res['domain']})"
    head = f"{res['correct']:,} of {res['inputs']:,} inputs correct, {res['counterexamples']:,} counterexamples, {res['undefined']:,} undefined"
    if out["counterexamples"]:
        c = out["counterexamples"][0]
        return f"{head}; first: input {c['input']}, position {c['position']}"
    return head


#: Bytes one configuration row of a head's side holds (measured: about 800).
BYTES_PER_ROW = 1024


def cost(vocab: str, max_seq_len: int, lengths: str, method: str = "exhaustive", **_: Any) -> Any:
    """Every input of the lengths checked: an exact forward pass and a RASP evaluation each (compositional:
    the compile, then configurations of the value sets, a few per position pair for tracr's library; the
    proof counts them from the value sets before it builds any and bounds them, whatever the program, by
    MAX_CONFIGURATIONS in all (about 8 s at 8 us each) and MAX_ROWS held on a head's side, whose memory is
    added: an upper bound of that part)."""
    from attncert.proofs.checkers.compiled.every_input import MAX_ROWS
    from attncert.proofs.core.cost import Cost

    count = input_count(len(parse_vocab(vocab)), max_seq_len, lengths_option(lengths))
    n = max_seq_len + 1
    if method_option(method) == "compositional":
        return Cost(
            positions=n, pairs=n * n, evaluations=n * len(parse_vocab(vocab)), seconds=1 + 1e-3 * n * n, memory=(1 << 27) + 2 * MAX_ROWS * BYTES_PER_ROW
        )
    return Cost(positions=n, pairs=n * n, evaluations=count, seconds=1 + 2e-3 * count * n, memory=(1 << 27) + 512 * count * n)


CLAIM = register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        (
            Param("file", str, None, "a program in the RASP language (docs/rasp-language.md)"),
            Param("expr", str, None, "the SOp of --file to compile (default: its last statement)"),
            Param("program", str, None, "MODULE:FUNCTION or 'MODULE:FUNCTION(ARGS)' (ARGS: tokens, indices, length, literals; docs/tracr.md): returns an attncert or tracr RASP program (runs your code)"),
            Param("vocab", str, "a,b,c", "the tokens, categorical, comma-separated (an item spelled as an integer is the integer)"),
            Param("max_seq_len", positive_int, 4, "the sequence length (the longest, with --lengths every)"),
            Param("lengths", lengths_option, "fixed", "fixed: a model for exactly max_seq_len tokens; every: one model for every length 1..max_seq_len"),
            Param("causal", flag, False, "causal attention, tracr's causal semantics (every selector masked to keys k <= q)"),
            Param("max_inputs", positive_int, 100_000, "refuse more input sequences than this"),
            Param("listed", nonnegative_int, 10, "list at most this many counterexamples (and undefined inputs) in full"),
            Param("method", method_option, "exhaustive", "exhaustive: every input through the forward pass; compositional: every configuration of the value sets, no input enumerated"),
        ),
        check=check_compiled_program,
        cost=cost,
        rebuild=rebuild,
        summary=summary,
    )
)
