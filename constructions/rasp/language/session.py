"""Using the RASP language from the command line: evaluate an expression on an input, or a REPL.

Values print exactly (fractions, EE numbers); ``decimals`` adds a decimal view beside
each, labelled as such. Sequences print as their values on the input (or on the
example set with ``set example``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, TextIO, TypeVar

import mpmath
from flint import arb, fmpq

from attncert.constructions import rasp
from attncert.constructions.rasp.language.bounds import Budget
from attncert.constructions.rasp.language.interpreter import Interpreter
from attncert.constructions.rasp.language.parser import RaspSyntaxError, parse
from attncert.constructions.rasp.language.sources import Files
from attncert.exact import QQ, EENumber, decide
from attncert.exact.domains import ENCLOSURE_BITS
from attncert.exact.errors import AttncertError, ParseError, UndecidedError
from attncert.exact.limits import current as current_limits


#: Significant digits shown of an enclosure's midpoint (its radius is always shown).
ENCLOSURE_DIGITS = 20
#: Significant digits of the decimal view the REPL prints beside each fraction.
REPL_DECIMALS = 6
T = TypeVar("T")


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
        return json.dumps(v, ensure_ascii=False)  # a non-ASCII token prints as itself ("§", not "\\u00a7")
    if isinstance(v, fmpq) and v.q == 1:
        return str(v)
    if isinstance(v, arb):
        return v.str(decimals if decimals is not None else ENCLOSURE_DIGITS, radius=True)
    if isinstance(v, (fmpq, EENumber)) and decimals is not None:
        approx = mpmath.nstr(v.to_mpmath(decimals + 5) if isinstance(v, EENumber) else mpmath.mpf(int(v.p)) / int(v.q), decimals)
        return f"{v} (≈ {approx})" if str(v) != approx else str(v)
    return str(v)


@dataclass(frozen=True)
class Outcome:
    """A program's value on its input, and what it rests on."""

    #: The expression's value before it meets the input: a sequence, a selector or a plain value.
    program: Any
    #: Its value on the input (a sequence's or selector's values; a plain value as it is).
    value: Any
    #: The bits of the balls of the run that gave it (the first precision that decided every comparison).
    bits: int
    #: Whether a comparison, truth test, floor or choice was decided from a ball, or a sequence was
    #: evaluated in Ball: then the value rests on enclosures even where it holds no ball.
    decided: bool

    @property
    def exact(self) -> bool:
        """Decided in QQ and EE alone: no ball in the value and no decision taken from one."""
        return relation(self.value) == "exact" and not self.decided

    def labels(self, e_literals: tuple[str, ...] = ()) -> list[str]:
        return labels(self.value, e_literals, self.bits, self.decided)


def evaluate(v: Any, example: list[Any] | None, it: Interpreter) -> Any:
    """A sequence or selector on the example, in the smallest domain that holds it (QQ, then EE, then
    Ball at the run's precision: a non-integer power leaves the exact fields), paid from the run's
    budget and its decisions counted in the run's record; any other value as it is."""
    if isinstance(v, (rasp.SOp, rasp.Selector)):
        if example is None:
            raise ParseError("a sequence needs an input (--input, or set example in the REPL)")
        with decide.recording(it.decisions):
            return it.budget.evaluate(v, example, it.prec)
    return v


def at_rising_precision(attempt: Callable[[int], T], start: int = ENCLOSURE_BITS) -> T:
    """``attempt(bits)`` for bits = start (128), 2 start, 4 start, ... (up to --max-precision): the first run
    in which the balls decide every comparison. Past the limit, the last run's undecided comparison, in one line."""
    cap = current_limits().max_precision
    bits = start
    while True:
        try:
            return attempt(bits)
        except UndecidedError as e:
            if 2 * bits > cap:
                tried = f", nor at {start:,} to {bits // 2:,} bits" if bits > start else ""
                raise type(e)(f"{e}{tried} (--max-precision {cap:,} bits allows no more)") from None
            bits *= 2


def run_program(
    source: str, name: str, expr: str | None, example: list[Any] | None, e_literals: frozenset[fmpq] = frozenset(), files: Files | None = None
) -> Outcome:
    """The value of a program's last statement (or of ``expr`` after running it) on ``example``, run again
    at twice the precision while a comparison on a ball is undecided (:func:`at_rising_precision`), each
    run within the limits in force; ``files``: where loads are read (default: the disk). What ``files``
    served is what the last run loaded."""

    def attempt(bits: int) -> Outcome:
        program, it = _program_at(bits, source, name, expr, e_literals, files)
        value = evaluate(program, example, it)
        return Outcome(program, value, bits, it.decisions.any)

    return at_rising_precision(attempt)


def program_value(source: str, name: str, expr: str | None, e_literals: frozenset[fmpq] = frozenset(), files: Files | None = None) -> Any:
    """The value of a program's last statement (or of ``expr`` after running it), sequences not yet
    evaluated (a graph to draw), at the first precision that decides the run's comparisons."""
    return at_rising_precision(lambda bits: _program_at(bits, source, name, expr, e_literals, files)[0])


def _program_at(bits: int, source: str, name: str, expr: str | None, e_literals: frozenset[fmpq], files: Files | None) -> tuple[Any, Interpreter]:
    """One run at ``bits``: the program's last value, and the interpreter that ran it (its budget and decisions)."""
    if files is not None:
        files.served.clear()  # a run at a higher precision loads its files again
    it = Interpreter(name, e_literals=e_literals, files=files, prec=bits)
    results = it.run(source)
    if expr is not None:
        results = it.derived("--eval").run(expr.rstrip().rstrip(";") + ";")
    if not results:
        raise ParseError(f"{name} computes nothing to show; give --eval EXPR")
    return results[-1][1], it


def relation(v: Any) -> str:
    """'enclosure' if any number in v is a ball (it left the exact fields), else 'exact'."""
    if isinstance(v, arb):
        return "enclosure"
    if isinstance(v, (list, tuple)):
        return "enclosure" if any(relation(x) == "enclosure" for x in v) else "exact"
    if isinstance(v, dict):
        return relation(list(v.keys()) + list(v.values()))
    return "exact"


def labels(v: Any, e_literals: tuple[str, ...] = (), bits: int = ENCLOSURE_BITS, decided: bool = False) -> list[str]:
    """What an output must say beside its value: that it is an enclosure, that it was decided from
    enclosures (a comparison on a value that left the exact fields), which literals were read as e."""
    out = []
    if relation(v) == "enclosure":
        out.append(f"# enclosure: a value left the exact fields (a non-integer power); rigorous balls at {bits} bits")
    if decided:
        out.append(f"# decided from enclosures: comparisons on values that left the exact fields were decided by rigorous balls at {bits} bits, not exactly")
    if e_literals:
        out.append("# read as the constant e (--e-literal): " + ", ".join(e_literals))
    return out


def repl(read: Callable[[str], str], out: TextIO, decimals: int | None = None, e_literals: frozenset[fmpq] = frozenset()) -> None:
    """A read-eval-print loop: '>> ' prompt; statements run in one environment; 'exit' ends it. A
    statement may span lines, as in the reference's REPL: while what was read is the start of a
    statement, the next line is read (prompt '.. ').

    A statement whose comparison on a ball is undecided runs again, after every statement before
    it, at twice the precision (:func:`at_rising_precision`); the session then goes on at that
    precision. Once the session has decided anything from a ball, every value it prints says so:
    values flow between statements through names, so any later value may rest on that decision."""
    it = Interpreter("<repl>", e_literals=e_literals)
    history: list[str] = []  # the statements run so far, replayed at a higher precision
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
        try:
            it, shown = _statement(it, history, line, example, e_literals)
        except AttncertError as e:
            print(f"error: {e}", file=out)
            continue
        history.append(line)
        for name, v, evaluated in shown:
            if evaluated is None:
                print(f"{name} = a {'selector' if isinstance(v, rasp.Selector) else 'sequence'} (set example to see its values)", file=out)
                continue
            (value,) = evaluated
            tag = "  (enclosure)" if relation(value) == "enclosure" else "  (decided from enclosures)" if it.decisions.any else ""
            print(f"{name} = {show(value, decimals)}{tag}", file=out)


def _statement(
    it: Interpreter, history: list[str], line: str, example: list[Any] | None, e_literals: frozenset[fmpq]
) -> tuple[Interpreter, list[tuple[str, Any, tuple[Any] | None]]]:
    """Run a REPL statement; its (name, value, (value on the example,)) triples (None for a sequence
    without an example), and the
    interpreter the session goes on with (a new one at a higher precision if this one's balls did not
    decide the statement)."""

    def attempt(bits: int) -> tuple[Interpreter, list[tuple[str, Any, tuple[Any] | None]]]:
        run = it
        if bits != it.prec:  # every earlier statement again, at this precision
            run = Interpreter("<repl>", e_literals=e_literals, prec=bits)
            for past in history:
                run.budget = Budget()
                run.run(past)
        run.budget = Budget()  # each statement is a run of its own, within the limits
        shown = []
        for name, v in run.run(line):
            missing = isinstance(v, (rasp.SOp, rasp.Selector)) and example is None
            shown.append((name, v, None if missing else (evaluate(v, example, run),)))
        return run, shown

    return at_rising_precision(attempt, it.prec)


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
    value = it.derived("set example", Budget()).run(f"{text};")[-1][1]
    if not isinstance(value, (str, list)):
        raise ParseError(f"set example {text}: the example is a string or a list, not {show(value)}")
    return list(value)
