"""Run the reference RASP interpreter's own example programs in it and in attncert's, and compare.

    python -m bench.rasp_reference --reference /tmp/refrasp --reference-python /tmp/raspref/bin/python

The reference (tech-srl/RASP, "Thinking Like Transformers", Weiss et al. 2021) is not a
dependency and nothing of it is part of attncert: this script reads its example programs
from the checkout you give, runs each one in attncert's interpreter, and drives the
reference's REPL on stdin (``load "program";`` then ``name("input");`` for every named
sequence and selector on every input), parsing what it prints. It does the same for the
library's functions (LIBRARY) and a few arithmetic expressions (ARITHMETIC), and replays
the reference's test transcripts (``tests/in/*.txt``) statement by statement in both
REPLs. It prints a markdown table: program, sequence, inputs, and whether the two agree.

What agreement means. attncert's values are exact rationals; the reference computes means
in floating point and prints a float rounded to 3 digits. A sequence *agrees* when, on every
input and at every position, the reference's printed value equals our exact value; where our
exact value has no 3-digit decimal (1/3), the reference cannot print it, and the sequence
*agrees up to the reference's printing* when its printed value is our exact value rounded as
the reference rounds (Python's ``round(x, 3)``). Anything else *differs*, with the reason.
Plain values (numbers, strings) named by a program are compared in one row per program, the
reference printing those in full.

Without the reference (no ``RASP_support`` under ``--reference``, or no interpreter at
``--reference-python``) it prints one line saying so and exits 0.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator

from flint import fmpq

from attncert.constructions import rasp
from attncert.constructions.rasp.language.interpreter import Interpreter, public
from attncert.constructions.rasp.language.session import _goes_on, read_example
from attncert.exact.errors import AttncertError

#: Each program (its path in the reference checkout, without .rasp) and the inputs its sequences run on.
#: None: the program's own example strings (rover names them example0, example1, ...).
PROGRAMS: list[tuple[str, list[str] | None]] = [
    ("paper_examples", ["§hello", "§abcabca", "§(()())", "§{(})[]", "§(()", "§a", "hello"]),
    ("long_addition", ["12+34", "999+1", "5+5", "0+0", "123+987", "19+81"]),
    ("rover", None),
    ("tests/rasps/eval", ["hello", "ab"]),
    ("tests/rasps/multi_assigns1", []),
    ("tests/rasps/multi_assigns2", []),
    ("tests/rasps/multi_assigns3", []),
    ("tests/rasps/loadA", []),
    ("tests/rasps/loadB", []),
]
#: The library's functions, called as a program would call them (in the reference, its rasplib;
#: here, prelude.rasp and the builtins), on LIBRARY_INPUTS.
LIBRARY = [
    "length",
    "selector_width(select(tokens, tokens, ==))",
    "has_focus(select(tokens, tokens, <))",
    'count(tokens, "a")',
    'contains(tokens, "b")',
    'average(indicator(tokens == "a"))',
    "average(indices)",
    "max(indices, 2)",
    "min(indices, 2)",
    "load_from_location(tokens, 1)",
    'shift(tokens, 2, "_")',
    "shift(indices, 1, 0)",
    'mark_last_instance(tokens, "a")',
    'mark_first_instance(tokens, "a")',
    'select_from_last(tokens, "a")',
    'select_from_first(tokens, "a")',
    "sort(tokens, tokens)",
    "sort(indices, tokens)",
    "select_next_identical(tokens)",
    'aggregate(select(indices, indices, <=), indicator(tokens == "a"))',
]
LIBRARY_INPUTS = ["hello", "abcab", "banana", "aaa", "b", "cabbage"]
#: Arithmetic where the reference's floats are not the exact values: (expression, input or None for
#: a plain value, why the two differ). Ours stays exact; these rows are expected to differ.
ARITHMETIC = [
    ("0.1 + 0.2", None, "the reference adds the floats nearest 1/10 and 2/10, giving 0.30000000000000004; ours is 3/10"),
    ("0.1 + 0.2 == 0.3", None, "the same float sum is not the float nearest 3/10"),
    ("2 ^ -1", None, "both are 1/2, printed 0.5 by the reference"),
    (
        'length * aggregate(full_s, indicator(tokens == "a")) == 1',
        "a" + "b" * 48,
        "the mean 1/49 in floating point, times 49, is 0.9999999999999999 in the reference; exactly 1 here",
    ),
    ('aggregate(full_s, indicator(tokens == "a")) * 3', "abbbbbbbbb", "3/10 exactly; the reference's float 0.30000000000000004 prints as 0.3"),
]
#: A statement whose printed message marks the end of the previous statement's output: the load of
#: a file that is not there evaluates no expression, so ``out`` (the last value) is not the marker.
MARK = 'load "@@attncert-mark-{}@@";'
MARK_LINE = re.compile(r"!!ignoring input:\s*could not find file: @@attncert-mark-(\d+)@@\.rasp")
#: A printed sequence: '\t =  [1, 2] (ints)' for an application, 'Example: name("hello") = [...] (ints)' for a name.
SEQUENCE = re.compile(r"^(?:\s*|.*Example: .*\) )=\s+(\[.*\](?:\*\d+)?) \((\w+)s\)\s*$")
VALUE = re.compile(r"^\s*value: \w+ =\s+(.*)$")
FAILURE = ("!!", "evaluation failed", "EVALUATION FAILURE", "something went wrong", "antlr exception", "not implemented")
EXIT = ("exit", "exit()", "quit", "quit()")


@contextmanager
def working_directory(path: Path) -> Iterator[None]:
    """Programs load others by paths relative to the reference's root, as its REPL runs there."""
    here = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(here)


# -- the reference, through its REPL ------------------------------------------------------------


def reference_outputs(root: Path, python: str, statements: list[str]) -> list[str]:
    """What the reference's REPL prints for each statement (each is followed by a marker statement)."""
    script = "".join(f"{s}\n{MARK.format(i)}\n" for i, s in enumerate(statements))
    out = subprocess.run([python, "-m", "RASP_support"], input=script, cwd=root, capture_output=True, text=True, timeout=1800).stdout
    chunks: list[str] = [""] * len(statements)
    start = 0
    for m in MARK_LINE.finditer(out):
        chunks[int(m.group(1))] = out[start : m.start()]
        start = m.end()
    return chunks


def failure(chunk: str) -> str | None:
    """The reference's error message in a chunk of output, if it printed one."""
    lines = [ln.strip() for ln in chunk.splitlines()]
    for i, ln in enumerate(lines):
        if any(f in ln for f in FAILURE):
            detail = next((x for x in lines[i + 1 :] if x and not x.startswith(">>")), "") if ln.endswith("ignoring input:") else ""
            return (ln.replace(">>", "").strip() + " " + detail).strip()
    return None


def printed_sequences(chunk: str) -> list[tuple[list[str], str]]:
    """The items and type ('int', 'float', 'string', 'bool') of each sequence the reference printed."""
    out = []
    for ln in chunk.splitlines():
        m = SEQUENCE.match(ln.replace(">>", "", 1))
        if m:
            text, kind = m.groups()
            if "]*" in text:
                body, times = text.rsplit("*", 1)
                out.append(([body[1:-1]] * int(times), kind))
            else:
                out.append((_split(text[1:-1], kind), kind))
    return out


def printed_sequence(chunk: str) -> tuple[list[str], str] | None:
    found = printed_sequences(chunk)
    return found[0] if found else None


def printed_selector(chunk: str, n: int) -> list[list[bool]] | None:
    """The matrix of a selector the reference printed: a row 'token | 1   1' per query."""
    rows = []
    for ln in chunk.splitlines():
        if " | " in ln or ln.rstrip().endswith(" |"):
            cells = (ln.split(" | ", 1)[1] if " | " in ln else "").ljust(2 * n - 1)
            rows.append([c == "1" for c in cells[::2][:n]])
    return rows if len(rows) == n else None


def _split(body: str, kind: str) -> list[str]:
    # Items print without quotes; a string item "," prints as ",", so split on ", " only
    # (a string item that itself contains ", " cannot be told apart: inputs here have none).
    return body.split(", ") if body else []


# -- attncert's side --------------------------------------------------------------------------


@dataclass
class Program:
    name: str
    sequences: dict[str, rasp.SOp | rasp.Selector]
    values: dict[str, Any]
    stopped: str | None  # our error, if the program stops on one


def run_ours(root: Path, name: str) -> Program:
    path = root / f"{name}.rasp"
    it = Interpreter(str(path))
    stopped = None
    with working_directory(root):
        try:
            it.run(path.read_text())
        except AttncertError as e:
            stopped = str(e)
    named = {k: v for k, v in it.env.values.items() if public(k)}
    sequences = {k: v for k, v in named.items() if isinstance(v, (rasp.SOp, rasp.Selector))}
    values = {k: v for k, v in named.items() if isinstance(v, (fmpq, str, bool))}
    return Program(name, sequences, values, stopped)


def ours_on(seq: rasp.SOp | rasp.Selector, xs: str | list[Any]) -> list[Any] | str:
    """The sequence (or selector) on the input (a string is its characters), or our error message."""
    try:
        return rasp.evaluate(seq, list(xs))
    except AttncertError as e:
        return f"error: {e}"


# -- comparing ---------------------------------------------------------------------------------


def _as_fraction(text: str) -> Fraction | None:
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        return None


def _reference_print(v: Any) -> str:
    """How the reference prints one item of a sequence (floats to 3 digits, booleans as T/F)."""
    if isinstance(v, bool):
        return "T" if v else "F"
    if isinstance(v, fmpq):
        return str(v.p) if v.q == 1 else str(round(int(v.p) / int(v.q), 3))
    return str(v)


def compare_items(ref: list[str], kind: str, ours: list[Any]) -> tuple[str, str]:
    """('exact' | 'printing' | 'differ', why) for one sequence on one input."""
    if len(ref) != len(ours):
        return "differ", f"lengths {len(ref)} and {len(ours)}"
    printing = False
    for i, (r, q) in enumerate(zip(ref, ours)):
        if kind in ("int", "float"):
            if not isinstance(q, fmpq):
                return "differ", f"position {i}: the reference prints the number {r}, ours is {q!r}"
            exact_value = Fraction(int(q.p), int(q.q))
            if _as_fraction(r) == exact_value:
                continue
            if _reference_print(q) == r:
                printing = True  # our exact value has no 3-digit decimal; the reference printed it rounded
                continue
            return "differ", f"position {i}: the reference prints {r}, ours is exactly {q}"
        elif _reference_print(q) != r:
            return "differ", f"position {i}: the reference prints {r!r}, ours is {q!r}"
    return ("printing", "") if printing else ("exact", "")


@dataclass
class Row:
    program: str
    sequence: str
    inputs: int
    result: str
    note: str


def compare_program(root: Path, python: str, name: str, inputs: list[str] | None) -> list[Row]:
    """Every named sequence of the program on every input, and its plain values, in both interpreters."""
    ours = run_ours(root, name)
    if inputs is None:  # the program's own examples
        inputs = [v for k, v in sorted(ours.values.items(), key=lambda kv: _natural(kv[0])) if k.startswith("example") and isinstance(v, str)]
    atoms = sorted(ours.values)
    # rover turns the verbose display on; the one-line display is the one parsed here
    rows, chunks = compare_on_inputs(root, python, name, f'load "{name}";\nfull seq display off', ours.sequences, inputs, [f"{a};" for a in atoms])
    if ours.stopped is not None:
        rows.insert(0, Row(name, "(the program)", 0, "ours stops", f"at the first failing statement: {ours.stopped}"))
    if atoms:
        results = [_compare_value(a, ours.values[a], chunk) for a, chunk in zip(atoms, chunks)]
        rows.append(_summarise(name, f"plain values ({len(atoms)})", len(atoms), results))
    return rows


def compare_library(root: Path, python: str) -> list[Row]:
    """The library's functions, called in the same expressions in both interpreters."""
    it = Interpreter("library")
    exprs = {e: it.run(f"{e};")[-1][1] for e in LIBRARY}
    return compare_on_inputs(root, python, "library", "", exprs, LIBRARY_INPUTS, [])[0]


def compare_on_inputs(
    root: Path, python: str, program: str, preamble: str, exprs: dict[str, Any], inputs: list[str], after: list[str]
) -> tuple[list[Row], list[str]]:
    """Each expression (a sequence or selector) applied to each input, after the preamble, in the
    reference's REPL and here; the rows, and the reference's outputs for the statements ``after``."""
    labels = sorted(exprs)
    statements = [preamble] + [f'({e})("{x}");' for x in inputs for e in labels] + after
    chunks = reference_outputs(root, python, statements)
    rows = []
    for j, label in enumerate(labels):
        results = []
        for i, x in enumerate(inputs):
            chunk = chunks[1 + i * len(labels) + j]
            results.append(_compare_one(exprs[label], x, chunk))
        rows.append(_summarise(program, label, len(inputs), results))
    return rows, chunks[1 + len(inputs) * len(labels) :]


def _compare_one(v: Any, x: str, chunk: str) -> tuple[str, str]:
    """One sequence or selector on one input: ours against what the reference printed."""
    mine, problem = ours_on(v, x), failure(chunk)
    theirs = printed_selector(chunk, len(x)) if isinstance(v, rasp.Selector) else printed_sequence(chunk)
    if isinstance(mine, str) or theirs is None:
        if isinstance(mine, str) and theirs is None:
            return "both fail", f"{x!r}: ours {mine}; the reference: {problem}"
        return "differ", f"{x!r}: " + (mine if isinstance(mine, str) else f"the reference fails: {problem}")
    if isinstance(v, rasp.Selector):
        return ("exact", "") if theirs == mine else ("differ", f"{x!r}: the selection matrices differ")
    verdict, why = compare_items(theirs[0], theirs[1], mine)
    return verdict, f"{x!r}: {why}" if why else ""


def compare_arithmetic(root: Path, python: str) -> list[Row]:
    """The ARITHMETIC expressions in both interpreters; each row says why a difference is expected."""
    statements = [f"{e};" if x is None else f'({e})("{x}");' for e, x, _ in ARITHMETIC]
    chunks = reference_outputs(root, python, [""] + statements)[1:]
    rows = []
    for (e, x, why), chunk in zip(ARITHMETIC, chunks):
        v = Interpreter("arithmetic").run(f"{e};")[-1][1]
        verdict, detail = _compare_value(e, v, chunk) if x is None else _compare_one(v, x, chunk)
        result = {"exact": "agree", "printing": "agree (3-digit printing)"}.get(verdict, verdict)
        rows.append(Row("arithmetic", e if x is None else f"{e} on {x[:12]}{'…' if len(x) > 12 else ''}", 1, result, why if verdict != "exact" or "prints" in why else ""))
    return rows


def statements_of(text: str) -> list[str]:
    """A REPL transcript cut into statements as the REPLs read it (a statement may span lines); blank
    and comment lines are left out, and so is everything after exit or quit."""
    out, buf = [], ""
    for line in text.splitlines():
        if not buf and line.strip() in EXIT:
            return out + [line.strip()]
        buf = f"{buf}\n{line}" if buf else line
        if _goes_on(buf):
            continue
        if buf.strip() and not buf.strip().startswith("#"):
            out.append(buf)
        buf = ""
    return out


def compare_transcript(root: Path, python: str, path: Path) -> Row:
    """A transcript of the reference's tests, statement by statement, in both REPLs (attncert's with
    the reference's starting example "hello"): what each prints, where both print values."""
    statements = statements_of(path.read_text())
    chunks = reference_outputs(root, python, statements)
    it, example = Interpreter("<repl>"), list("hello")
    results: list[tuple[str, str]] = []
    with working_directory(root):
        for k, (st, chunk) in enumerate(zip(statements, chunks)):
            line = st.strip()
            if line in EXIT:
                break
            if line.startswith("set example"):
                try:
                    example = read_example(line[len("set example") :], it)
                except AttncertError:
                    pass  # the reference keeps its example too when the new one fails
                continue
            try:
                named, refused = it.run(st), None
            except AttncertError as e:
                named, refused = [], str(e)
            if not re.sub(r"^(>>|\.\.|\s)*", "", chunk, flags=re.M).strip():
                results.append(("not compared", ""))  # the reference printed nothing for it (it read on into the next line)
            elif refused is not None:
                results.append(("both fail", "") if failure(chunk) else ("differ", f"statement {k + 1}: ours refuses ({refused}), the reference does not"))
            else:
                results.append(_compare_printed(named, example, chunk, k + 1))
    compared = [r for r in results if r[0] != "not compared"]
    row = _summarise("transcript", path.name, len(compared), compared)
    row.note = (row.note + "; " if row.note else "") + f"{len(statements)} statements, {len(results) - len(compared)} not compared (definitions, loads, lists)"
    return row


def _compare_printed(named: list[tuple[str, Any]], example: list[Any], chunk: str, k: int) -> tuple[str, str]:
    """Our values of one statement against the values the reference printed for it, in order."""
    seqs, values = printed_sequences(chunk), [m.group(1).strip() for ln in chunk.splitlines() if (m := VALUE.match(ln.replace(">>", "", 1)))]
    problem = failure(chunk)
    verdicts = []
    for name, v in named:
        if isinstance(v, rasp.Selector):
            mine = ours_on(v, example)
            theirs = printed_selector(chunk, len(example))
            verdicts.append(("exact", "") if theirs == mine else ("differ", f"statement {k}: {name}: the selection matrices differ"))
        elif isinstance(v, (rasp.SOp, list)) and not (isinstance(v, list) and not seqs):
            mine = ours_on(v, example) if isinstance(v, rasp.SOp) else v
            if isinstance(mine, str) or not seqs:
                verdicts.append(("both fail", "") if problem and isinstance(mine, str) else ("differ", f"statement {k}: {name}: ours {mine!s:.80}; the reference: {problem}"))
                continue
            items, kind = seqs.pop(0)
            verdict, why = compare_items(items, kind, mine)
            verdicts.append((verdict, f"statement {k}: {name}: {why}" if why else ""))
        elif isinstance(v, (fmpq, str, bool)) and values:
            verdicts.append(_compare_value(name, v, f"value: {name} = {values.pop(0)}"))
    if not verdicts:
        return ("both fail", "") if problem and not named else ("not compared", "")
    worst = next((x for x in verdicts if x[0] == "differ"), None) or next((x for x in verdicts if x[0] == "printing"), verdicts[0])
    return worst


def _compare_value(name: str, v: Any, chunk: str) -> tuple[str, str]:
    m = next((VALUE.match(ln.replace(">>", "", 1)) for ln in chunk.splitlines() if VALUE.match(ln.replace(">>", "", 1))), None)
    if m is None:
        return "differ", f"{name}: the reference prints no value ({failure(chunk)})"
    text = m.group(1).strip()
    if isinstance(v, str):
        return ("exact", "") if text == f'"{v}"' else ("differ", f"{name}: {text} and {v!r}")
    if isinstance(v, bool):
        return ("exact", "") if text == str(v) else ("differ", f"{name}: {text} and {v}")
    ref = _as_fraction(text)
    return ("exact", "") if ref == Fraction(int(v.p), int(v.q)) else ("differ", f"{name}: the reference prints {text}, ours is exactly {v}")


def _summarise(program: str, sequence: str, n: int, results: list[tuple[str, str]]) -> Row:
    verdicts = {v for v, _ in results}
    notes = [why for v, why in results if v not in ("exact", "printing") and why]
    if verdicts <= {"exact"}:
        return Row(program, sequence, n, "agree", "")
    if verdicts <= {"exact", "printing"}:
        k = sum(v == "printing" for v, _ in results)
        return Row(program, sequence, n, "agree (3-digit printing)", f"on {k} input(s) our exact value has no 3-digit decimal; the reference prints it rounded")
    if verdicts <= {"exact", "printing", "both fail"}:
        return Row(program, sequence, n, "agree (both fail on some inputs)", notes[0][:160] if notes else "")
    return Row(program, sequence, n, "differ", "; ".join(notes)[:300])


def _natural(name: str) -> tuple[str, int]:
    m = re.match(r"(\D*)(\d*)$", name)
    return (m.group(1), int(m.group(2) or 0)) if m else (name, 0)


# -- the report --------------------------------------------------------------------------------


def table(rows: list[Row]) -> str:
    lines = ["| program | sequence | inputs | result | note |", "|---|---|---|---|---|"]
    lines += [f"| {r.program} | {r.sequence} | {r.inputs} | {r.result} | {r.note.replace('|', '¦')} |" for r in rows]
    return "\n".join(lines)


def summary(rows: list[Row]) -> str:
    seqs = [r for r in rows if r.program not in ("arithmetic", "transcript") and r.sequence != "(the program)" and not r.sequence.startswith("plain values")]
    sums = [r for r in rows if r.program == "arithmetic"]
    transcripts = [r for r in rows if r.program == "transcript"]
    count = lambda rs, pred: sum(1 for r in rs if pred(r.result))  # noqa: E731
    return (
        f"{len(seqs)} named sequences and library calls: {count(seqs, lambda s: s == 'agree')} agree exactly, "
        f"{count(seqs, lambda s: s == 'agree (3-digit printing)')} agree up to the reference's 3-digit printing, "
        f"{count(seqs, lambda s: s.startswith('agree (both fail'))} agree where both run and both fail elsewhere, "
        f"{count(seqs, lambda s: s == 'differ')} differ. Arithmetic: {count(sums, lambda s: s == 'differ')} of {len(sums)} "
        "expressions differ, each where the reference's float is not the exact value. "
        f"Transcripts: {count(transcripts, lambda s: s.startswith('agree'))} of {len(transcripts)} agree on every statement compared. "
        f"Programs we stop early: {', '.join(r.program for r in rows if r.result == 'ours stops') or 'none'}."
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", type=Path, required=True, help="a checkout of tech-srl/RASP")
    ap.add_argument("--reference-python", default="python3", help="a Python with the reference's requirements (antlr4, termcolor)")
    args = ap.parse_args(argv)
    root = args.reference.resolve()
    if not (root / "RASP_support").is_dir():
        print(f"skipped: no reference interpreter at {root} (expected {root / 'RASP_support'})")
        return 0
    try:
        subprocess.run([args.reference_python, "-c", "import antlr4, termcolor"], cwd=root, check=True, capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        print(f"skipped: {args.reference_python} cannot run the reference interpreter (needs antlr4 and termcolor)")
        return 0
    rows = compare_library(root, args.reference_python) + compare_arithmetic(root, args.reference_python)
    for name, inputs in PROGRAMS:
        if (root / f"{name}.rasp").is_file():
            rows += compare_program(root, args.reference_python, name, inputs)
    rows += [compare_transcript(root, args.reference_python, p) for p in sorted((root / "tests" / "in").glob("*.txt"))]
    print(table(rows))
    print()
    print(summary(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
