"""Claim ``rasp_program``: a program in the RASP language, run exactly, gives this output on this input.

``attncert prove rasp_program --file F.rasp --expr E --input I [--expect X] [--e-literal L]``
runs F with attncert's interpreter (:mod:`constructions.rasp.language`), evaluates E
after it on the input I (read as ``attncert rasp --input`` reads it) and records the
source text and its sha256, the name, text and sha256 of every file the run loads
(in load order), the expression, the input as read, and the output, exactly. With
--expect, X is a RASP expression (``[1, 1/2, "a"]``) evaluated by the same
interpreter, and ``result.holds`` says whether the output equals it; without it,
the claim is that the output is the recorded one.

A value that leaves the exact fields (``2 ^ (1/2)``) is a ball, and every comparison on
one is decided from the ball or not at all (:mod:`exact.decide`): the program runs again
at twice the precision, from 128 bits up to --max-precision, until the balls decide every
comparison it makes, or the claim is refused with the undecided expression. The relation
is ``exact_equal`` only when no ball was formed into the output and no comparison was
decided from one; otherwise it is ``enclosure``, with the precision and whether
comparisons were decided from enclosures recorded in the result.

``attncert verify`` never reads the disk for such a certificate: it runs the
recorded source again, serving every ``load`` from the recorded texts only
(:class:`~constructions.rasp.language.sources.RecordedFiles`), within the RASP
limits in force (:mod:`constructions.rasp.language.bounds`), and requires the
whole document to be its recomputation. Nothing from the certificate is executed
except by that bounded interpreter.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any

from flint import arb, fmpq

from attncert.constructions import rasp
from attncert.constructions.rasp.language import session
from attncert.constructions.rasp.language.interpreter import Builtin, Function, Interpreter, read_e_literal
from attncert.constructions.rasp.language.programs import portable as shipped_program
from attncert.constructions.rasp.language.sources import DiskFiles, Files, RecordedFiles, portable_name, read_source
from attncert.constructions.rasp.values import decode_value, encode_value
from attncert.exact import Ball, EENumber, ParseError
from attncert.exact.domains import ENCLOSURE_BITS
from attncert.exact.errors import LimitExceeded, UndecidedError
from attncert.exact.limits import current as current_limits
from attncert.proofs.core import cost as costs
from attncert.proofs.core import figures
from attncert.proofs.core.certify import certificate, differing_fields
from attncert.proofs.core.registry import Claim, Param, register

NAME = "rasp_program"
STATEMENT = (
    "running the recorded RASP program (its source and every file it loads, with their sha256) in attncert's exact "
    "semantics and evaluating the expression on the input gives the recorded output (exact in QQ/EE, or enclosed in "
    "balls where a value leaves them, its comparisons on balls decided from the enclosures); with an expected value, "
    "the output equals it"
)
PARAMS = (
    Param("file", str, shipped_program("classic"), "the .rasp program (<attncert>/NAME.rasp: attncert's own, e.g. the default)"),
    Param("expr", str, "make_histogram(tokens)", "the expression whose value is certified, evaluated after the program"),
    Param("input", str, "hello", "the input: a JSON list (numbers read exactly) or a string of tokens"),
    Param("expect", str, None, "the expected value, a RASP expression such as [1, 1/2, \"a\"]; the claim holds iff the output equals it"),
    Param("e_literal", str, None, "decimal literals read as the constant e, comma-separated (as attncert rasp --e-literal)"),
)
#: Parameters that must be recorded; the others are recorded only when given.
REQUIRED = ("file", "expr")


def prove(file: str, expr: str, input: str | None, expect: str | None, e_literal: str | None) -> dict:
    """Run ``file`` from the disk (loads too) and certify the value of ``expr`` on ``input``; the program
    is recorded under its portable name (attncert's own programs as ``<attncert>/NAME.rasp``)."""
    name = portable_name(file)
    return certify(name, read_source(name), DiskFiles(), expr, input, expect, e_literal)


@dataclass(frozen=True)
class Program:
    """A RASP-language expression's sequence operation, for ``attncert graph rasp_program``."""

    value: Any

    def graph(self) -> Any:
        return rasp.to_graph(self.value)


def build(file: str, expr: str, e_literal: str | None = None) -> Program:
    """The graph of ``expr`` after running ``file`` (loads from the disk): the same graph the Python API
    builds, so ``attncert graph`` draws and exports .rasp programs like every construction."""
    name = portable_name(file)
    program = session.program_value(read_source(name), name, expr, e_literals(e_literal), DiskFiles())
    if not isinstance(program, (rasp.SOp, rasp.Selector)):
        raise ParseError(f"{expr!r} is {kind(program)!s:.20}, not a sequence or selector: it has no graph")
    return Program(program)


def certify(file: str, source: str, files: Files, expr: str, input: str | None, expect: str | None, e_literal: str | None) -> dict:
    """The certificate of running ``source`` under the name ``file``, loads served by ``files``."""
    lits = e_literals(e_literal)
    example = session.read_input(input) if input is not None else None
    run = session.run_program(source, file, expr, example, lits, files)
    program, value = run.program, run.value
    output = value_to_json(value)
    balls = session.relation(value) == "enclosure"
    relation = "exact_equal" if run.exact else "enclosure"
    reference, detail = {}, {}
    if not run.exact:
        detail = {"precision": run.bits, "decided_from_enclosures": run.decided}
    if expect is not None:
        if balls:
            raise ParseError("--expect compares exactly, but the output is an enclosure (a value left the exact fields)")
        reference = {"expected": value_to_json(expected_value(expect, lits))}
        detail["equals_expected"] = reference["expected"] == output
    construction: dict[str, Any] = {"kind": kind(program)}
    if isinstance(program, rasp.SOp) and example is not None:
        construction["size"] = rasp.size(program).to_json(length=len(example))
    params = {"file": file, "expr": expr, "input": input, "expect": expect, "e_literal": e_literal}
    return certificate(
        NAME,
        {k: v for k, v in params.items() if v is not None},
        {
            "source": {"text": source, "sha256": sha256_text(source)},
            "loaded": [{"name": n, "text": t, "sha256": sha256_text(t)} for n, t in files.served.items()],
            "tokens": None if example is None else [encode_value(x) for x in example],
        },
        construction,
        {"value": output},
        reference,
        {
            "relation": relation,
            "holds": detail.get("equals_expected", True),
            "statement": statement(file, source, len(files.served), expr, input, expect, e_literal, run, detail.get("equals_expected")),
            **detail,
        },
    )


def statement(
    file: str,
    source: str,
    loads: int,
    expr: str,
    input: str | None,
    expect: str | None,
    e_literal: str | None,
    run: session.Outcome,
    equal: bool | None,
) -> str:
    """What this certificate states, in words."""
    loaded = f", and the {loads} file(s) it loads as recorded" if loads else ""
    lits = f", reading the decimal literal(s) {e_literal} as the constant e" if e_literal is not None else ""
    on = f"on the input {input!r}" if input is not None else "without an input"
    if run.exact:
        what = "is exactly the recorded output"
    else:
        what = "lies in the recorded balls (an enclosure)" if session.relation(run.value) == "enclosure" else "is the recorded output"
        if run.decided:
            what += f", its comparisons on values that left the exact fields decided from rigorous {run.bits}-bit balls, not exactly"
        else:
            what += f", at {run.bits} bits"
    text = f"after running {file} (UTF-8 source of sha256 {sha256_text(source)}{loaded}) in attncert's exact RASP semantics{lits}, the value of {expr!r} {on} {what}"
    if expect is not None:
        text += f", which {'equals' if equal else 'does NOT equal'} the expected value {expect!r}"
    return text


def sha256_text(text: str) -> str:
    """The sha256 of a text's UTF-8 bytes (for a source file read as UTF-8: the file's own sha256)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def e_literals(e_literal: str | None) -> frozenset[fmpq]:
    """'2.718,2.73' -> the values of the decimal literals read as e (none without the option)."""
    return frozenset(read_e_literal(t.strip()) for t in e_literal.split(",")) if e_literal is not None else frozenset()


def expected_value(expect: str, lits: frozenset[fmpq]) -> Any:
    """The value of the --expect expression, run alone (over the library, no loads) by a bounded interpreter;
    exact, since the output is compared with it exactly (nothing in it may rest on a ball)."""
    it = Interpreter("--expect", e_literals=lits, files=RecordedFiles({}))
    results = it.run(expect.rstrip().rstrip(";") + ";")
    if not results or isinstance(results[-1][1], (rasp.SOp, rasp.Selector)):
        raise ParseError("--expect must be a value (a number, string, boolean or list of them), not a sequence")
    if it.decisions.any or session.relation(results[-1][1]) == "enclosure":
        raise ParseError("--expect must be exact: its value rests on balls (a value that left the exact fields)")
    return results[-1][1]


def kind(v: Any) -> str:
    """What the expression's value is: a sequence, a selector, or a plain value."""
    return "sequence" if isinstance(v, rasp.SOp) else "selector" if isinstance(v, rasp.Selector) else "value"


def value_to_json(v: Any) -> Any:
    """A RASP value, exactly: scalars tagged as in graphs (``{"q": "1/2"}``, ``{"s": "a"}``, ``{"b": true}``,
    null, ``{"ee": ...}``), balls as ``{"ball": {"mid", "rad"}}``, lists as lists, tuples and dicts tagged."""
    if isinstance(v, list):
        return [value_to_json(x) for x in v]
    if isinstance(v, tuple):
        return {"tuple": [value_to_json(x) for x in v]}
    if isinstance(v, dict):
        return {"dict": [[value_to_json(k), value_to_json(x)] for k, x in v.items()]}
    if isinstance(v, arb):
        return {"ball": Ball(ENCLOSURE_BITS).to_json(v)}
    if v is None or isinstance(v, (bool, str, int, fmpq, EENumber)):
        return encode_value(v)
    what = "a function" if isinstance(v, (Function, Builtin)) else f"a value of type {type(v).__name__}"
    raise ParseError(f"the expression's value is {what}, which a certificate cannot record; certify a value or a sequence")


def verify(doc: dict[str, Any]) -> list[str]:
    """Run the recorded source again, loads served from the recorded texts only, and compare the whole document."""
    params = _params(doc)
    source, files = recorded_program(doc)
    inputs = doc["inputs"]
    problems = []
    for name, entry in [("the program", inputs["source"])] + [(e["name"], e) for e in inputs["loaded"]]:
        if entry.get("sha256") != sha256_text(entry["text"]):
            problems.append(f"the recorded sha256 of {name:.60} is not the sha256 of its recorded text")
    result = doc.get("result")
    recorded = result.get("precision") if isinstance(result, dict) else None
    cap = current_limits().max_precision
    if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded > max(cap, ENCLOSURE_BITS):
        raise LimitExceeded(f"the certificate's balls have {recorded:,} bits, over the limit of {cap:,} (raise it with --max-precision)")
    try:
        rebuilt = certify(params["file"], source, files, **{k: params.get(k) for k in ("expr", "input", "expect", "e_literal")})
    except UndecidedError as e:  # balls up to --max-precision do not decide the program's comparisons: no output is established
        return problems + [f"running the recorded program again does not establish its output: {e}"]
    return problems + differing_fields(doc, rebuilt)


def recorded_program(doc: dict[str, Any]) -> tuple[str, RecordedFiles]:
    """The recorded source and the files a run of it may load: the recorded texts only, under their names."""
    params = _params(doc)
    inputs = doc.get("inputs")
    if not isinstance(inputs, dict) or not isinstance(inputs.get("source"), dict) or not isinstance(inputs.get("loaded"), list):
        raise ParseError('a rasp_program certificate records "source" and "loaded" in its inputs')
    source = _text(inputs["source"], "source")
    main = os.path.normpath(params["file"])
    texts: dict[str, str] = {}
    for entry in inputs["loaded"]:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or name in texts or name == main:
            raise ParseError(f"loaded files must have distinct string names other than the program's, got {name!r:.60}")
        texts[name] = _text(entry, name)
    return source, RecordedFiles({main: source, **texts})


def selections_png(doc: dict[str, Any]) -> bytes:
    """``attncert plot rasp_program``: the selection pattern of every attention of the certified expression on
    the certified input, a heatmap each (:mod:`proofs.rasp_language.plot`, the REPL's ``draw``). The program is the
    recorded source, run again with its loads served from the recorded texts only, as verify runs it."""
    from attncert.proofs.rasp_language.plot import program_selections_png

    params = _params(doc)
    source, files = recorded_program(doc)
    program = session.program_value(source, params["file"], params["expr"], e_literals(params.get("e_literal")), files)
    if not isinstance(program, (rasp.SOp, rasp.Selector)):
        raise ParseError(f"{params['expr']!r} is {kind(program)}, not a sequence or selector: it reads no selection")
    # a certified sequence was evaluated on an input (certify refuses one without), so the input is recorded
    return program_selections_png(program, session.read_input(params["input"]), f"{params['expr']} on {params['input']!r}")


def _params(doc: dict[str, Any]) -> dict[str, str]:
    params = doc.get("params")
    if not isinstance(params, dict):
        raise ParseError('certificate field "params" must be an object')
    unknown = sorted(set(params) - {p.name for p in PARAMS})
    if unknown:
        raise ParseError(f"unknown parameter {unknown[0]!r:.40} for claim {NAME}")
    for name in REQUIRED:
        if name not in params:
            raise ParseError(f"the certificate lacks the parameter {name!r} of claim {NAME}")
    if not all(isinstance(v, str) for v in params.values()):
        raise ParseError(f"the parameters of claim {NAME} are strings")
    return params


def _text(entry: Any, what: str) -> str:
    text = entry.get("text") if isinstance(entry, dict) else None
    if not isinstance(text, str):
        raise ParseError(f"the recorded text of {what:.60} must be a string")
    return text


def summary(doc: dict[str, Any]) -> str:
    """The certified output, or, with --expect, the expected and the actual output where they differ."""
    output = shown(doc["outputs"]["value"])
    expected = doc["reference"].get("expected")
    if expected is None:
        return f"output: {output}"
    if doc["result"]["holds"]:
        return f"output equals the expected value: {output}"
    return f"does not hold: expected {shown(expected)}, got {output}"


def shown(v: Any, width: int = 80) -> str:
    """A recorded value (:func:`value_to_json`) as ``attncert rasp`` prints it, a ball as an interval of decimals
    that contains it, cut at ``width`` characters."""

    def text(j: Any) -> str:
        if isinstance(j, list):
            return "[" + ", ".join(map(text, j)) + "]"
        if isinstance(j, dict) and set(j) == {"tuple"}:
            return "(" + ", ".join(map(text, j["tuple"])) + ")"
        if isinstance(j, dict) and set(j) == {"dict"}:
            return "{" + ", ".join(f"{text(k)}: {text(x)}" for k, x in j["dict"]) + "}"
        if isinstance(j, dict) and set(j) == {"ball"}:
            return figures.ball(j["ball"]["mid"], j["ball"]["rad"])
        return session.show(decode_value(j))

    return figures.cut(text(v), width)


def cost(input: str | None = None, **_: Any) -> costs.Cost:
    """One evaluation on the input's positions; a selection may pair every position with every other.
    The program's own steps are bounded while it runs (--max-steps), not predicted."""
    n = len(session.read_input(input)) if input is not None else 0
    return costs.rasp_cost(n, n)


register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        PARAMS,
        verify=verify,
        cost=cost,
        build=build,
        interprets=True,
        summary=summary,
    )
)
