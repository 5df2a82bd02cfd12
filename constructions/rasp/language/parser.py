"""Parsing RASP-language source into a syntax tree (Lark, LALR), with one-line errors.

The grammar (``rasp.lark`` beside this module) reproduces the reference
interpreter's syntax and precedence, surprises included: unary minus binds tighter
than ``^`` (``-2^2 = 4``), ``^`` groups to the left (``2^3^2 = 64``), ``%`` binds
looser than ``*`` and ``/``, ``and`` and ``or`` share one level and group to the
left, and ``select(`` is one token.

A syntax error is one line: ``file:line:column: unexpected ','; expected an
expression | the line | a caret``, for the command line's one-line errors; the REPL prints
the line and the caret under it on lines of their own (:meth:`RaspSyntaxError.lines`). What was expected is said in words, from the
terminals the parser would have accepted there (Lark's ``accepts``): the grammar's
literal terminals as their text, the others by what they are ("a name", "a
string"), and the many terminals that start an expression or a statement, or
continue one as an operator, as one word each.
"""

from __future__ import annotations

import functools
from pathlib import Path

from lark import Lark, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from attncert.exact.errors import ParseError


class RaspSyntaxError(ParseError):
    """A syntax error, as one line: file:line:column, the message, the line and a caret."""

    def __init__(self, headline: str, text: str = "", column: int = 0) -> None:
        stripped = text.strip()
        caret = f" | {stripped} | {' ' * max(column - 1 - (len(text) - len(text.lstrip())), 0)}^" if stripped else ""
        super().__init__(f"{headline}{caret}")
        self.headline, self.text, self.column = headline, text, column

    def lines(self) -> list[str]:
        """The error as Python shows one: file:line:column and the message, then the source line, then a caret
        under the column (tabs in the line count as the terminal shows them)."""
        if not self.text.strip():
            return [self.headline]
        shown = self.text.expandtabs()
        col = len(self.text[: self.column - 1].expandtabs())
        return [self.headline, f"  {shown}", f"  {' ' * col}^"]


@functools.lru_cache(maxsize=1)
def _parser() -> Lark:
    return Lark((Path(__file__).with_name("rasp.lark")).read_text(), parser="lalr", propagate_positions=True, maybe_placeholders=False)


#: Terminals matched by a pattern, by what they are.
_WORDS = {
    "ID": "a name",
    "INT": "an integer",
    "DECIMAL": "a decimal number",
    "STRING": "a string",
    "SEL_OP": "a comparison (==, !=, <, <=, >, >=)",
    "SUBSET": "'s-op' or 'selector'",
    "SWITCH": "'on' or 'off'",
    "EXIT": "'exit'",
    "$END": "the end of input",
}
#: The terminals that can start an expression: all of them expected is said "an expression".
_EXPRESSION_START = frozenset(
    {"ID", "INT", "DECIMAL", "STRING", "LPAR", "LSQB", "LBRACE", "MINUS", "PLUS", "NOT", "ROUND", "INDICATOR", "_SELECT", "_AGGREGATE", "_RANGE", "_ZIP", "_LEN"}
)
#: Keywords that start a statement (with an expression start, "a statement"), the REPL's commands included.
_STATEMENT_START = frozenset({"DEF", "FOR", "LOAD", "DRAW", "SET", "SHOW", "EXAMPLES", "FULL", "EXIT", "SUBSET"})
#: Binary operators: three or more of them expected are said "an operator".
_OPERATORS = frozenset({"PLUS", "MINUS", "STAR", "SLASH", "PERCENT", "CIRCUMFLEX", "__ANON_0", "__ANON_1", "__ANON_2", "LESSTHAN", "MORETHAN", "AND", "OR", "IN", "IF"})
#: Never worth naming: comments may appear anywhere.
_SILENT = frozenset({"COMMENT", "WS"})


def expected_words(terminals: set[str] | frozenset[str]) -> str:
    """What the parser would have accepted, in words: 'an expression', "';'", "',' or ')'"."""
    left = set(terminals) - _SILENT
    words = []
    if {"ID", "INT"} <= left:
        words.append("a statement" if left & _STATEMENT_START else "an expression")
        left -= _EXPRESSION_START | _STATEMENT_START
    if len(left & _OPERATORS) >= 3:
        words.append("an operator")
        left -= _OPERATORS
    literal = []
    for name in sorted(left):
        if name in _WORDS:
            words.append(_WORDS[name])
            continue
        pattern = _parser().get_terminal(name).pattern
        literal.append(f"'{pattern.value}'" if pattern.type == "str" else name.lower())
    words += sorted(literal)
    if not words:
        return ""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _message(e: UnexpectedInput, source: str) -> str:
    """The words of a syntax error: what was found, and what was expected there."""
    if isinstance(e, UnexpectedEOF):
        found, expected = "unexpected end of input", set(e.expected)
    elif isinstance(e, UnexpectedCharacters):
        char = source[e.pos_in_stream] if e.pos_in_stream < len(source) else ""
        if char == '"':  # a string's terminal did not match: its closing quote is missing
            return "a string that does not end on its line"
        # the lexer's allowed terminals are every one it knows in this state: named only when few
        found, expected = f"unexpected character {char!r}", set(e.allowed) if len(e.allowed) <= 3 else set()
    elif isinstance(e, UnexpectedToken):
        end = e.token.type == "$END"
        found = "unexpected end of input" if end else f"unexpected {e.token.value!r}"
        expected = set(e.accepts or e.expected)
    else:
        found, expected = "syntax error", set()
    words = expected_words(expected)
    return f"{found}; expected {words}" if words else found


def parse(source: str, name: str = "<input>", line_offset: int = 0) -> Tree:
    """The syntax tree of a RASP source text; RaspSyntaxError with its position otherwise (its line counted
    after ``line_offset`` lines that come before the source)."""
    try:
        return _parser().parse(source)
    except UnexpectedInput as e:
        line, col = getattr(e, "line", 0) or 0, getattr(e, "column", 0) or 0
        if isinstance(e, UnexpectedEOF) or (isinstance(e, UnexpectedToken) and e.token.type == "$END"):
            # Lark places the end at the last token; the caret goes just past the source's last character
            lines = source.rstrip().splitlines() or [""]
            line, col = len(lines), len(lines[-1]) + 1
        text = source.splitlines()[line - 1] if 0 < line <= len(source.splitlines()) else ""
        raise RaspSyntaxError(f"{name}:{line + line_offset}:{col}: {_message(e, source)}", text, col) from None
