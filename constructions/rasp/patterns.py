"""Selection patterns: the selection matrix each attention of a program reads, on one input.

An attention sublayer (an ``Aggregate`` or a ``SelectorWidth``, :data:`graph.ATTENTION_OPS`)
reads one selector; on an input x_0 … x_{n-1} that selector is the n × n boolean matrix
M[q][k] = "query q selects key k" (for ``Select(keys, queries, p)``, M[q][k] = p(keys_k,
queries_q)). A program's patterns are the matrices of the distinct selectors its
attentions read, in the order the program computes them (children before parents), each
evaluated exactly. They are what the REPL's ``draw`` and ``attncert plot`` draw
(``attncert.proofs.rasp_language.plot``), and what the REPL prints for a selector: the
reference REPL's table, headed by the keys' tokens, a row per query, 1 where selected.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from attncert.constructions.rasp import expr as E
from attncert.constructions.rasp.evaluate import evaluate as exact_evaluate


@dataclass(frozen=True)
class Pattern:
    """One selector on one input: its title and M[q][k], whether query q selects key k."""

    title: str
    matrix: tuple[tuple[bool, ...], ...]


def attended(program: E.RASPExpr) -> list[E.Selector]:
    """The distinct selectors that the attentions of ``program`` read (a selector: itself), children
    before parents, each once."""
    if isinstance(program, E.Selector):
        return [program]
    found: list[E.Selector] = []
    seen: set[int] = set()  # expressions visited
    read: set[int] = set()  # selectors found
    stack: list[tuple[E.RASPExpr, bool]] = [(program, False)]
    while stack:  # iterative post-order: programs may be deeper than Python's recursion
        x, done = stack.pop()
        if done:
            selector = getattr(x, "selector", None)
            if isinstance(x, (E.Aggregate, E.SelectorWidth)) and id(selector) not in read:
                read.add(id(selector))
                found.append(selector)
            continue
        if id(x) in seen:
            continue
        seen.add(id(x))
        stack.append((x, True))
        stack.extend((c, False) for c in reversed(list(x.children)) if id(c) not in seen)
    return found


def describe(x: E.RASPExpr, names: Mapping[int, str] = {}) -> str:
    """A selector or sequence in the language's words: its name where it has one (``names``: unique id ->
    name, or a name it was given), what it is made of otherwise (:func:`structure`)."""
    if x.unique_id in names:
        return names[x.unique_id]
    return x.name if x.name != x.default_name else structure(x, names)


def structure(x: E.RASPExpr, names: Mapping[int, str] = {}) -> str:
    """What x is made of, its parts by :func:`describe`: ``select(keys, queries, <)``, ``(a and b)``, ``not a``."""
    if isinstance(x, E.Select):
        op = x.predicate.value if isinstance(x.predicate, E.Comparison) else getattr(x.predicate, "__name__", "a predicate")
        return f"select({describe(x.keys, names)}, {describe(x.queries, names)}, {op})"
    if isinstance(x, (E.SelectorAnd, E.SelectorOr)):
        word = "and" if isinstance(x, E.SelectorAnd) else "or"
        return f"({describe(x.fst, names)} {word} {describe(x.snd, names)})"
    if isinstance(x, E.SelectorNot):
        return f"not {describe(x.inner, names)}"
    if isinstance(x, E.Full):
        return token_text(x.fill)
    return x.name


def title(selector: E.Selector, names: Mapping[int, str] = {}) -> str:
    """A pattern's title: the selector's name and what it is (``prevs = select(indices, indices, <)``)."""
    name, made = describe(selector, names), structure(selector, names)
    return made if name == made else f"{name} = {made}"


def patterns(
    program: E.RASPExpr, xs: Sequence[Any], names: Mapping[int, str] = {}, evaluate: Callable[[E.RASPExpr, Sequence[Any]], Any] = exact_evaluate
) -> list[Pattern]:
    """The patterns of the selectors ``program``'s attentions read (:func:`attended`) on input ``xs``;
    ``evaluate(selector, xs)`` gives a selector's rows (default: the exact evaluator)."""
    return [Pattern(title(s, names), tuple(tuple(bool(v) for v in row) for row in evaluate(s, xs))) for s in attended(program)]


def token_text(x: Any) -> str:
    """A token as a label: a string as it is (quoted if it is blank or has spaces at its ends), a number exactly."""
    if isinstance(x, str):
        return x if x and x == x.strip() else repr(x)
    return str(x)


def table(matrix: Sequence[Sequence[bool]], tokens: Sequence[Any], indent: str = "    ") -> list[str]:
    """The reference REPL's picture of a selection: a header of the keys' tokens, then a row per query,
    labelled by its token, with 1 under each key it selects (columns as wide as the widest token)."""
    labels = [token_text(x) for x in tokens]
    width = max(map(len, labels))
    head = indent + " " * width + "   " + " ".join(s.rjust(width) for s in labels)
    rows = [indent + label.rjust(width) + " | " + " ".join(("1" if v else "").rjust(width) for v in row) for label, row in zip(labels, matrix)]
    return [line.rstrip() for line in [head] + rows]
