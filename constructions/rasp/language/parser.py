"""Parsing RASP-language source into a syntax tree (Lark, LALR), with one-line errors.

The grammar (``rasp.lark`` beside this module) reproduces the reference
interpreter's syntax and precedence, surprises included: unary minus binds tighter
than ``^`` (``-2^2 = 4``), ``^`` groups to the left (``2^3^2 = 64``), ``%`` binds
looser than ``*`` and ``/``, ``and`` and ``or`` share one level and group to the
left, and ``select(`` is one token.
"""

from __future__ import annotations

import functools
from pathlib import Path

from lark import Lark, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from attncert.exact.errors import ParseError


class RaspSyntaxError(ParseError):
    """A syntax error, as one line: file:line:column, the message, the line and a caret."""


@functools.lru_cache(maxsize=1)
def _parser() -> Lark:
    return Lark((Path(__file__).with_name("rasp.lark")).read_text(), parser="lalr", propagate_positions=True, maybe_placeholders=False)


def parse(source: str, name: str = "<input>") -> Tree:
    """The syntax tree of a RASP source text; RaspSyntaxError with its position otherwise."""
    try:
        return _parser().parse(source)
    except UnexpectedInput as e:
        line, col = getattr(e, "line", 0) or 0, getattr(e, "column", 0) or 0
        if isinstance(e, UnexpectedEOF):
            what = "unexpected end of input"
        elif isinstance(e, UnexpectedCharacters):
            what = f"unexpected character {source[e.pos_in_stream]!r}" if e.pos_in_stream < len(source) else "unexpected character"
        elif isinstance(e, UnexpectedToken):
            what = f"unexpected {e.token!r}" if e.token.type != "$END" else "unexpected end of input"
        else:
            what = "syntax error"
        text = source.splitlines()[line - 1] if 0 < line <= len(source.splitlines()) else ""
        caret = f" | {text.strip()} | {' ' * max(col - 1 - (len(text) - len(text.lstrip())), 0)}^" if text else ""
        raise RaspSyntaxError(f"{name}:{line}:{col}: {what}{caret}") from None
