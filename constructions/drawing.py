"""Graphviz DOT documents of computation graphs, drawn one way for every kind of graph.

A drawing is a DOT text (``dot -Tpng`` renders it) with

* one filled box per node, its colour saying its op, and a legend (the cluster
  ``cluster_legend``, one table) giving the op of each colour used;
* the node's label lines, top to bottom, with every line that repeats an earlier
  one left out (a node named after its op shows the op once);
* the nodes grouped into layers, bottom to top (``rankdir=BT``, data flows up):
  each layer is a ``rank=same`` subgraph holding the layer's title as a plain
  text node, and the titles are chained by invisible edges so that the layers
  keep their order and their titles stand in one column;
* an edge u -> v per argument, labelled by the argument position; outputs have
  a double border.

Nodes of no layer (a RASP selector, evaluated inside the attention that uses
it) are placed by Graphviz between their arguments and their users.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

#: Fill colour of an op that a palette does not name.
OTHER = "#dddddd"


@dataclass(frozen=True)
class Node:
    """One box: its id, label lines (top to bottom), op (its colour) and whether it is an output."""

    id: int
    lines: tuple[str, ...]
    op: str
    output: bool = False


def distinct_lines(lines: Iterable[str]) -> list[str]:
    """The non-empty lines in order, each kept at its first occurrence only."""
    kept: list[str] = []
    for line in lines:
        if line and line not in kept:
            kept.append(line)
    return kept


def escape(s: str) -> str:
    """A string inside a double-quoted DOT id."""
    return s.replace("\\", "\\\\").replace('"', '\\"')


def html_escape(s: str) -> str:
    """A string inside a DOT HTML-like label."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def dot_document(
    name: str,
    nodes: Sequence[Node],
    edges: Iterable[tuple[int, int, int]],
    layers: Sequence[tuple[str, Sequence[int]]],
    palette: Mapping[str, str],
) -> str:
    """The DOT text of a graph: ``edges`` are (source, target, argument position); ``layers`` are
    (title, node ids) from the bottom up; ``palette`` maps ops to fill colours, and its order is the
    legend's (ops it lacks come after, in grey)."""
    lines = [f"digraph {name} {{", "  rankdir=BT;", "  newrank=true;", '  node [shape=box, style=filled, fontname="Helvetica"];', '  edge [fontname="Helvetica", fontsize=10];']
    for n in nodes:
        text = "\\n".join(escape(p) for p in distinct_lines(n.lines))
        extra = ", peripheries=2" if n.output else ""
        lines.append(f'  n{n.id} [label="{text}", fillcolor="{palette.get(n.op, OTHER)}"{extra}];')
    for u, v, arg in edges:
        lines.append(f'  n{u} -> n{v} [label="{arg}"];')
    titles = [f"layer{k}" for k in range(len(layers))]
    for title, (text, members) in zip(titles, layers):
        ids = "".join(f" n{v};" for v in members)
        lines.append(f'  {{ rank=same; {title} [label="{escape(text)}", shape=plaintext, style="", fontcolor="#555555"];{ids} }}')
    lines += [f"  {a} -> {b} [style=invis];" for a, b in zip(titles, titles[1:])]
    used = {n.op for n in nodes}
    ops = [op for op in palette if op in used] + sorted(used - set(palette))
    rows = "".join(f'<tr><td bgcolor="{palette.get(op, OTHER)}">{html_escape(op)}</td></tr>' for op in ops)
    # labelloc=b: the drawing runs bottom to top, so the cluster's "bottom" is drawn at its top
    lines.append('  subgraph cluster_legend { label="colour: op"; labelloc=b; fontname="Helvetica"; style=rounded;')
    lines.append(f'    legend [shape=plaintext, style="", label=<<table border="0" cellborder="1" cellspacing="3" cellpadding="4">{rows}</table>>];')
    lines.append("  }")
    return "\n".join(lines + ["}"]) + "\n"
