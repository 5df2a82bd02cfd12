"""Using the RASP language from the command line: evaluate an expression on an input, or a REPL.

Values print exactly (fractions, EE numbers); ``decimals`` adds a decimal view beside
each, labelled as such. Sequences print as their values on the input (or on the
example set with ``set example``).
"""

from __future__ import annotations

import json
from typing import Any, Callable, TextIO

import mpmath
from flint import arb, fmpq

from constructions import rasp
from constructions.rasp.language.bounds import Budget
from constructions.rasp.language.interpreter import Interpreter
from constructions.rasp.language.parser import RaspSyntaxError, parse
from constructions.rasp.language.sources import Files
from exact import QQ, EENumber
from exact.domains import ENCLOSURE_BITS, in_smallest_domain
from exact.errors import AttncertError, ParseError


#: Significant digits shown of an enclosure's midpoint (its radius is always shown).
ENCLOSURE_DIGITS = 20
#: Significant digits of the decimal view the REPL prints beside each fraction.
REPL_DECIMALS = 6


def read_input(text: str) -> list[Any]:
    """'[1, 2.5, "a", "7"]' (JSON: numbers read exactly from their digits, strings stay strings) or
    'hello' (its characters)."""
    text = text.strip()
    if text.startswith("["):
        try:
            # JSON numbers come back as exact rationals, never through a float; a JSON string "7" stays "7"
            items = json.loads(text, parse_float=QQ.convert, parse_int=QQ.convert, parse_constant=_not_a_number)
        except json.JSONDecodeError as e:
            raise ParseError(f"--input is not a JSON list: {e.msg} at column {e.colno}") from None
        except RecursionError:  # [[[[…: json's decoder recurses per level
            raise ParseError("--input is nested too deeply to be a list of tokens") from None
        if not isinstance(items, list):
            raise ParseError("--input is not a JSON list")
        return items
    return list(text)


def _not_a_number(name: str) -> Any:
    raise ParseError(f"--input: {name} is not a number a sequence can hold")


def show(v: Any, decimals: int | None = None) -> str:
    """A value, exactly; with ``decimals`` its decimal approximation beside it (≈)."""
    if isinstance(v, list):
        return "[" + ", ".join(show(x, decimals) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(show(x, decimals) for x in v) + ")"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{show(k, decimals)}: {show(x, decimals)}" for k, x in v.items()) + "}"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, fmpq) and v.q == 1:
        return str(v)
    if isinstance(v, arb):
        return v.str(decimals if decimals is not None else ENCLOSURE_DIGITS, radius=True)
    if isinstance(v, (fmpq, EENumber)) and decimals is not None:
        approx = mpmath.nstr(v.to_mpmath(decimals + 5) if isinstance(v, EENumber) else mpmath.mpf(int(v.p)) / int(v.q), decimals)
        return f"{v} (≈ {approx})" if str(v) != approx else str(v)
    return str(v)


def evaluate(v: Any, example: list[Any] | None, budget: Budget | None = None) -> Any:
    """A sequence or selector on the example, in the smallest domain that holds it (QQ, then EE, then
    Ball: a non-integer power leaves the exact fields), each try paid from the run's budget (default: a
    new one within the limits in force); any other value as it is."""
    if isinstance(v, (rasp.SOp, rasp.Selector)):
        if example is None:
            raise ParseError("a sequence needs an input (--input, or set example in the REPL)")
        paid = Budget() if budget is None else budget
        return in_smallest_domain(lambda d: paid.evaluate(v, example, d))[0]
    return v


def relation(v: Any) -> str:
    """'enclosure' if any number in v is a ball (it left the exact fields), else 'exact'."""
    if isinstance(v, arb):
        return "enclosure"
    if isinstance(v, (list, tuple)):
        return "enclosure" if any(relation(x) == "enclosure" for x in v) else "exact"
    if isinstance(v, dict):
        return relation(list(v.keys()) + list(v.values()))
    return "exact"


def labels(v: Any, e_literals: tuple[str, ...] = ()) -> list[str]:
    """What an output must say beside its value: that it is an enclosure, which literals were read as e."""
    out = []
    if relation(v) == "enclosure":
        out.append(f"# enclosure: a value left the exact fields (a non-integer power); rigorous balls at {ENCLOSURE_BITS} bits")
    if e_literals:
        out.append("# read as the constant e (--e-literal): " + ", ".join(e_literals))
    return out


def run_file(source: str, name: str, expr: str | None, example: list[Any] | None, e_literals: frozenset[fmpq] = frozenset()) -> Any:
    """The value of a program's last statement (or of ``expr`` after running it) on ``example``, in one
    run within the limits in force, loads read from the disk."""
    value, budget = program_value(source, name, expr, e_literals)
    return evaluate(value, example, budget)


def program_value(
    source: str, name: str, expr: str | None, e_literals: frozenset[fmpq] = frozenset(), files: Files | None = None
) -> tuple[Any, Budget]:
    """The value of a program's last statement (or of ``expr`` after running it), sequences not yet
    evaluated, and the run's budget; ``files``: where loads are read (default: the disk)."""
    it = Interpreter(name, e_literals=e_literals, files=files)
    results = it.run(source)
    if expr is not None:
        results = Interpreter("--eval", it.env, it.loaded, e_literals, it.files, it.budget).run(expr.rstrip().rstrip(";") + ";")
    if not results:
        raise ParseError(f"{name} computes nothing to show; give --eval EXPR")
    return results[-1][1], it.budget


def repl(read: Callable[[str], str], out: TextIO, decimals: int | None = None, e_literals: frozenset[fmpq] = frozenset()) -> None:
    """A read-eval-print loop: '>> ' prompt; statements run in one environment; 'exit' ends it. A
    statement may span lines, as in the reference's REPL: while what was read is the start of a
    statement, the next line is read (prompt '.. ')."""
    it = Interpreter("<repl>", e_literals=e_literals)
    example: list[Any] | None = None
    while True:
        try:
            line = read(">> ")
        except EOFError:
            return
        if line.strip() in ("exit", "exit()", "quit", "quit()"):
            return
        if line.strip().startswith("set example"):
            try:
                example = read_example(line.strip()[len("set example"):], it)
                print(f"example: {show(example)}", file=out)
            except AttncertError as e:
                print(f"error: {e}", file=out)
            continue
        while _goes_on(line):
            try:
                line += "\n" + read(".. ")
            except EOFError:
                break
        it.budget = Budget()  # each statement is a run of its own, within the limits
        try:
            for name, v in it.run(line):
                if isinstance(v, (rasp.SOp, rasp.Selector)) and example is None:
                    print(f"{name} = a {'selector' if isinstance(v, rasp.Selector) else 'sequence'} (set example to see its values)", file=out)
                else:
                    value = evaluate(v, example, it.budget)
                    tag = "  (enclosure)" if relation(value) == "enclosure" else ""
                    print(f"{name} = {show(value, decimals)}{tag}", file=out)
        except AttncertError as e:
            print(f"error: {e}", file=out)


def _goes_on(text: str) -> bool:
    """Whether text is an unfinished statement: it parses up to its end, where more is expected."""
    try:
        parse(text)
    except RaspSyntaxError as e:
        return "unexpected end of input" in str(e)
    return False


def read_example(text: str, it: Interpreter | None = None) -> list[Any]:
    """The example of 'set example "hello"' (its characters), 'set example [1, 2.5]' (exact numbers), or,
    with an interpreter, 'set example EXPR' for any expression whose value is a string or a list."""
    text = text.strip().rstrip(";").strip()
    if text.startswith('"') and text.endswith('"') and len(text) >= 2:
        return list(text[1:-1])
    if text.startswith("[") or it is None:
        return read_input(text)
    value = Interpreter("set example", it.env, it.loaded, it.e_literals, it.files, Budget()).run(f"{text};")[-1][1]
    if not isinstance(value, (str, list)):
        raise ParseError(f"set example {text}: the example is a string or a list, not {show(value)}")
    return list(value)
