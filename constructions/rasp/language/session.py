"""Using the RASP language from the command line: evaluate an expression on an input, or a REPL.

Values print exactly (fractions, EE numbers); ``decimals`` adds a decimal view beside
each, labelled as such. Sequences print as their values on the input; in the REPL, on
the running example (at first the reference's, "hello"), and selectors as the
reference's table (:func:`patterns.table`). The terminal's side of the REPL (line
editing, history, completion, Ctrl-C) is :mod:`.terminal`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TextIO, TypeVar

import mpmath
from flint import arb, fmpq

from attncert.constructions import rasp
from attncert.constructions.rasp import patterns
from attncert.constructions.rasp.expr import RASPExpr
from attncert.constructions.rasp.language.bounds import Budget
from attncert.constructions.rasp.language.interpreter import Builtin, Draw, Function, Interpreter, kind_of
from attncert.constructions.rasp.language.parser import RaspSyntaxError, parse
from attncert.constructions.rasp.language.sources import Files
from attncert.exact import QQ, EENumber, decide
from attncert.exact.certificate import atomic_write_bytes
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
    if isinstance(v, Function):
        return f"function {v.name}({', '.join(v.params)})"
    if isinstance(v, Builtin):
        return f"function {v.name}({', '.join(p for p, _, _ in v.params)})"
    if isinstance(v, RASPExpr):  # a sequence or selector held in a list or dict: its values show where it is used
        return f"<{kind_of(v)[2:]} {patterns.describe(v)}>"
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


def program_value(source: str, name: str, expr: str | None, e_literals: frozenset[fmpq] = frozenset(), files: Files | None = None, expr_option: str = "--eval") -> Any:
    """The value of a program's last statement (or of ``expr`` after running it), sequences not yet
    evaluated (a graph to draw), at the first precision that decides the run's comparisons;
    ``expr_option`` names ``expr`` in messages (the option that gave it)."""
    return at_rising_precision(lambda bits: _program_at(bits, source, name, expr, e_literals, files, expr_option)[0])


def _program_at(bits: int, source: str, name: str, expr: str | None, e_literals: frozenset[fmpq], files: Files | None, expr_option: str = "--eval") -> tuple[Any, Interpreter]:
    """One run at ``bits``: the program's last value, and the interpreter that ran it (its budget and decisions)."""
    if files is not None:
        files.served.clear()  # a run at a higher precision loads its files again
    it = Interpreter(name, e_literals=e_literals, files=files, prec=bits)
    results = it.run(source)
    if expr is not None:
        results = it.derived(expr_option).run(expr.rstrip().rstrip(";") + ";")
    if not results:
        raise ParseError(f"{name} computes nothing to show; give {expr_option} EXPR")
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


#: The running example a session starts with: the reference REPL's.
REFERENCE_EXAMPLE = "hello"
#: Where ``draw`` writes its pictures (made in the working directory when first needed).
DRAW_FOLDER = Path("selections")
#: What leaves the REPL.
EXIT_WORDS = ("exit", "exit()", "quit", "quit()")
#: What draws selection patterns: (patterns, the example's tokens, a title) -> PNG bytes. The command
#: line passes :func:`attncert.proofs.rasp_language.plot.patterns_png`.
DrawPatterns = Callable[[list[patterns.Pattern], list[Any], str], bytes]
HELP = """\
Statements end with ';' and may span lines; values print exactly (a decimal view beside, ≈).
  x = EXPR;                 a name for a value, a sequence or a selector (its value on the example is shown)
  EXPR;                     a value (also kept as out)
  def f(a, b) { ... return EXPR; }    a function;   for x in LIST { ... }   a loop
  set example EXPR          the running example: a string ("hello") or a list ([1, 2.5, "a"])
  show example              the running example
  examples off | examples on   stop (or go back to) showing each sequence's values on the example
  draw(SEQ);  draw(SEQ, EXAMPLE);     a PNG of each attention's selection pattern, in selections/
  load "FILE";              run FILE.rasp here, and list the names it set
  help  |  help NAME        this, or what NAME is (help select, help aggregate: the primitives)
  exit                      leave (also Ctrl-D); Ctrl-C drops the line being typed or run
Tab completes names; the lines typed are kept between sessions.
attncert rasp -i FILE starts the REPL with FILE run in it, as python -i does.
The language, with the library's names: docs/rasp-language.md"""

#: What ``help NAME`` says of the language's primitives (the reference's meaning; docs/rasp-language.md).
PRIMITIVES = {
    "tokens": "tokens: the input sequence, a sequence (its value at position i is the i-th token)",
    "indices": "indices: the positions 0, 1, ..., length - 1, a sequence",
    "length": "length: the input's length at every position, a numerical sequence",
    "select": "select(keys, queries, op): a selector; query position q selects key position k where "
    "keys[k] op queries[q] holds (op: ==, !=, <, <=, >, >=), e.g. select(indices, indices, <=) selects every earlier "
    "position and itself",
    "aggregate": "aggregate(selector, values, default): a sequence; at each query position, the mean of values at "
    "the keys it selects (numerical), or the one value they all hold (categorical); default (None if not given) "
    "where it selects none. Exactly the mean: average-hard attention",
    "selector_width": "selector_width(selector): a numerical sequence; at each query position, how many keys it selects",
    "zip": "zip(list, ...): the lists' items side by side, as tuples (as Python's zip)",
    "range": "range(n), range(a, b): the list of integers a, ..., b - 1 (as Python's range)",
    "len": "len(list): the number of items of a list or string",
    "round": "round(x): x rounded to the nearest integer, elementwise on a sequence (halves to even, as Python)",
    "indicator": "indicator(b): 1 where b is true, 0 where it is false, elementwise on a sequence",
    "draw": "draw(seq), draw(seq, example): a PNG of each attention's selection pattern behind seq, in selections/",
    "load": 'load "FILE";: run FILE.rasp (or FILE) once, and set its public names here',
    "examples": "examples off | examples on: whether an assignment shows a sequence's values on the running example",
    "example": "set example EXPR | show example: the running example, a string or a list",
}


#: Words Tab completes besides names: the REPL's commands and the language's keywords.
WORDS = ("set", "show", "example", "examples", "help", "exit", "draw", "load", "def", "return", "for", "in", "if", "else", "and", "or", "not", "round", "indicator") + tuple(
    f"{w}(" for w in ("select", "aggregate", "range", "zip", "len")
)


class Repl:
    """One REPL session: its interpreter, the statements run so far (run again at a higher precision),
    the running example (at first the reference's, "hello"), and how many statements failed.

    A statement whose comparison on a ball is undecided runs again, after every statement before
    it, at twice the precision (:func:`at_rising_precision`); the session then goes on at that
    precision. Once the session has decided anything from a ball, every value it prints says so:
    values flow between statements through names, so any later value may rest on that decision."""

    def __init__(
        self, out: TextIO, decimals: int | None = None, e_literals: frozenset[fmpq] = frozenset(), draw: DrawPatterns | None = None, name: str = "<repl>"
    ) -> None:
        """``name``: what a message calls the input (``<stdin>`` for piped input, whose lines it counts)."""
        self.out, self.decimals, self.e_literals, self.draw = out, decimals, e_literals, draw
        self.it = Interpreter(name, e_literals=e_literals)
        #: What the session ran, to run again at a higher precision: (the name it ran under, its text).
        self.history: list[tuple[str, str]] = []
        self.example: list[Any] = list(REFERENCE_EXAMPLE)
        #: Whether an assignment shows a sequence's (or selector's) values on the example (examples on/off).
        self.examples = True
        #: Lines read so far: a statement of piped input reports its own line (``numbered``).
        self.lines_read = 0
        self.failed = 0

    def run(self, read: Callable[[str], str], ctrl_c_per_line: bool = True, numbered: bool = False) -> int:
        """Read and run statements until 'exit' or the end of input (``read`` raises EOFError); the
        number of statements that failed. With ``ctrl_c_per_line`` (a person typing), Ctrl-C
        (KeyboardInterrupt) drops the line being read, or stops the statement running, and the session
        goes on; without (piped input), it ends the run. A statement may span lines, as in the
        reference's REPL: while what was read is the start of a statement, the next line is read
        (prompt '.. '). ``numbered`` (piped input, a file): a position in a message is the line of the
        input, not of the statement."""

        def line_of(prompt: str) -> str:
            text = read(prompt)
            self.lines_read += 1
            return text

        while True:
            running = False
            try:
                line = line_of(">> ")
                first = self.lines_read
                if line.strip() in EXIT_WORDS:
                    return self.failed
                if self._command(line.strip()):
                    continue
                while _goes_on(line):
                    try:
                        line += "\n" + line_of(".. ")
                    except EOFError:
                        break
                running = True
                self.statement(line, first - 1 if numbered else 0)
            except KeyboardInterrupt:
                if not ctrl_c_per_line:
                    raise
                # Ctrl-C: the line being typed is dropped (a new line under its ^C, as the reference's REPL
                # does), or the running statement stops, keeping what it had set, as after an error
                print("interrupted" if running else "", file=self.out)
            except EOFError:
                return self.failed

    def names(self) -> list[str]:
        """Every name the session can use (its own, the library's) and the REPL's words: what Tab completes."""
        names: set[str] = set(WORDS)
        env = self.it.env
        while env is not None:
            names.update(env.values)
            env = env.parent
        return sorted(names)

    def statement(self, line: str, line_offset: int = 0, name: str | None = None, quiet: bool = False) -> bool:
        """Run a statement (or several on one line, or a file's text under its ``name``) and print each value
        it names and the names each load set (``quiet``: neither); a failure is one line (a syntax error: the
        line and a caret under it too). ``line_offset``: the lines of the input before it. Whether it ran."""
        examples = self.examples and not quiet
        name = name or self.it.name
        try:
            self.it, shown, drawings, loads = _statement(self.it, self.history, (name, line), self.example, self.e_literals, line_offset, examples)
        except RaspSyntaxError as e:
            self._error(*e.lines())
            return False
        except AttncertError as e:
            self._error(str(e))
            return False
        self.history.append((name, line))
        tag = "  (decided from enclosures)" if self.it.decisions.any else ""
        for target, names in [] if quiet else loads:
            print(f"loaded {target}: {', '.join(names) if names else 'no public name'}", file=self.out)
        for name, v, value in [] if quiet else shown:
            if not self.examples and isinstance(v, RASPExpr):  # examples off: what it is, not its values
                print(f"{name} = {show(v)}", file=self.out)
                continue
            if isinstance(v, rasp.Selector):
                print(f"{name} = selector (query rows, key columns):{tag}", file=self.out)
                for row in patterns.table(value, self.example):
                    print(row, file=self.out)
                continue
            print(f"{name} = {show(value, self.decimals)}{'  (enclosure)' if relation(value) == 'enclosure' else tag}", file=self.out)
        for d, drawn in drawings:
            self._draw(d, drawn)
        return True

    def run_file(self, path: str) -> None:
        """``attncert rasp -i FILE``: FILE's statements run in the session, as ``python -i FILE`` does (its names,
        private ones included, become the session's; its values are not printed), then the names it set listed."""
        from attncert.constructions.rasp.language.sources import read_source

        try:
            text = read_source(path)
        except AttncertError as e:
            self._error(str(e))
            return
        before = dict(self.it.env.values)
        if self.statement(text, name=path, quiet=True):
            set_ = sorted(n for n, v in self.it.env.values.items() if n != "out" and before.get(n) is not v)
            print(f"loaded {path}: {', '.join(set_) if set_ else 'no name'}", file=self.out)

    def _command(self, line: str) -> bool:
        """The REPL's own commands (set example, show example, examples on/off, help): run, and True; otherwise False."""
        if m := re.match(r"set\s+(?:(?:s-op|selector)\s+)?example\b", line):  # the reference's kinds share one example here
            try:
                self.example = read_example(line[m.end() :], self.it)
                print(f"example: {show(self.example)}", file=self.out)
            except AttncertError as e:
                self._error(str(e))
            return True
        if line.rstrip(";").strip() == "show example":
            print(f"example: {show(self.example)}", file=self.out)
            return True
        words = line.rstrip(";").split()
        if words in (["examples", "on"], ["examples", "off"]):
            self.examples = words[1] == "on"
            print(f"examples {words[1]}: assignments show {'the values on the example' if self.examples else 'what a sequence or selector is, not its values'}", file=self.out)
            return True
        if words[-2:] in (["examples", "on"], ["examples", "off"]) or words[:3] == ["full", "seq", "display"]:
            self._error(
                "examples on|off switches every kind at once (attncert has no per-kind switch)"
                if words[-2:] in (["examples", "on"], ["examples", "off"])
                else "full seq display: attncert always shows a sequence in full"
            )
            return True
        if words[:1] == ["help"] and len(words) <= 2:
            print(HELP if len(words) == 1 else self._help(words[1]), file=self.out)
            return True
        return False

    def _help(self, name: str) -> str:
        name = name.rstrip("(")
        if name in PRIMITIVES:
            return PRIMITIVES[name]
        try:
            v = self.it.env.get(name)
        except KeyError:
            return f"{name}: no such name"
        if isinstance(v, Function):
            return f"{name}: a function, def {name}({', '.join(v.params)})"
        if isinstance(v, Builtin):
            return f"{name}: a function, {name}({', '.join(p for p, _, _ in v.params)})"
        if isinstance(v, (rasp.SOp, rasp.Selector)):
            return f"{name}: {kind_of(v)}"
        return f"{name}: {kind_of(v)}, {show(v, self.decimals)}"

    def _draw(self, d: Draw, drawn: list[patterns.Pattern]) -> None:
        """Write the picture of a draw statement's patterns: DRAW_FOLDER/NAME.png."""
        example = self.example if d.example is None else d.example
        where = f"{d.text} on {show(example)}"
        if not drawn:
            print(f"draw: {where} reads no selector; nothing to draw", file=self.out)
            return
        if self.draw is None:
            print(f"draw: {where}: this REPL has no drawing (the command line's does)", file=self.out)
            return
        path = DRAW_FOLDER / f"{re.sub(r'[^A-Za-z0-9_]+', '_', d.text).strip('_')[:60] or 'draw'}.png"
        try:
            atomic_write_bytes(path, self.draw(drawn, example, where), create_folder=True)
        except AttncertError as e:
            self._error(f"draw: {e}")
            return
        print(f"draw: {len(drawn)} selection pattern{'s' if len(drawn) != 1 else ''} of {where} in {path}", file=self.out)

    def _error(self, message: str, *more: str) -> None:
        """One failure: 'error: ' and its message, then any lines that show where (a source line, a caret)."""
        self.failed += 1
        print(f"error: {message}", file=self.out)
        for line in more:
            print(line, file=self.out)


def repl(
    read: Callable[[str], str], out: TextIO, decimals: int | None = None, e_literals: frozenset[fmpq] = frozenset(), draw: DrawPatterns | None = None
) -> int:
    """A read-eval-print loop (:class:`Repl`) on ``read`` (prompt -> line; EOFError at the end) printing
    to ``out``; the number of statements that failed."""
    return Repl(out, decimals, e_literals, draw).run(read)


Shown = list[tuple[str, Any, Any]]
Drawings = list[tuple[Draw, list[patterns.Pattern]]]


def _statement(
    it: Interpreter, history: list[tuple[str, str]], source: tuple[str, str], example: list[Any], e_literals: frozenset[fmpq], line_offset: int = 0, examples: bool = True
) -> tuple[Interpreter, Shown, Drawings, list[tuple[str, list[str]]]]:
    """Run a REPL statement (``source``: the name it runs under, its text): its (name, value, value on the
    example) triples (the value on the example not computed with ``examples`` off), the patterns of its draw
    statements, the files its loads ran and the names each set, and the interpreter the session goes on with
    (a new one at a higher precision if this one's balls did not decide the statement)."""

    def attempt(bits: int) -> tuple[Interpreter, Shown, Drawings, list[tuple[str, list[str]]]]:
        run = it
        if bits != it.prec:  # every earlier statement again, at this precision
            run = Interpreter(it.name, e_literals=e_literals, prec=bits)
            for past_name, past in history:
                run.budget = Budget()
                _under(run, past_name).run(past)
        run.budget = Budget()  # each statement is a run of its own, within the limits
        run.draws.clear()  # the draws and loads of this statement, not of those run again
        run.loads.clear()
        here = _under(run, source[0])
        here.line_offset = line_offset
        results = here.run(source[1])
        shown = [(name, v, evaluate(v, example, run) if examples or not isinstance(v, RASPExpr) else None) for name, v in results]
        names = {v.unique_id: name for name, v in run.env.values.items() if isinstance(v, RASPExpr)}
        drawings = []
        for d in run.draws:
            on = example if d.example is None else d.example
            drawings.append((d, patterns.patterns(d.program, on, names, lambda s, xs: evaluate(s, xs, run))))
        return run, shown, drawings, list(here.loads)

    return at_rising_precision(attempt, it.prec)


def _under(it: Interpreter, name: str) -> Interpreter:
    """The session's interpreter, or for a file's text (``-i FILE``) one in its environment under the file's name
    (its loads found beside it, its errors naming it), whose draws and loads are the session's."""
    if name == it.name:
        return it
    derived = it.derived(name)
    derived.draws, derived.loads = it.draws, it.loads
    return derived


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
