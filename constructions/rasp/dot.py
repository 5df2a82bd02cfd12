"""A RASP graph as a Graphviz DOT drawing (:mod:`constructions.drawing`): layers, colours, legend.

The layers are those of :func:`constructions.rasp.size.schedule`, the as-soon-as-possible
schedule that :func:`~constructions.rasp.size.size` counts: the inputs (embedding) at
the bottom, then layer k's attention sublayer (Aggregate, SelectorWidth) and its MLP
sublayer (Map, SequenceMap), k = 1, 2, ... A selector computes nothing by itself and
belongs to no layer. Each box shows the node's name (when it is not just its op, as a
``.rasp`` program's variable or tracr's ``.named``), its op, and its function or
predicate.
"""

from __future__ import annotations

import networkx as nx

from attncert.constructions.drawing import Node, dot_document
from attncert.constructions.rasp.graph import OPS, graph_to_json
from attncert.constructions.rasp.size import schedule

#: Fill colour of each op, in the legend's order: inputs in greens, MLP sublayers in blues, attention in oranges,
#: selectors in yellow (select) and other hues (their combinations), each op its own colour.
PALETTE = {
    "tokens": "#93c47d",
    "indices": "#c5e3b5",
    "length": "#6aa84f",
    "full": "#e2f0d9",
    "constant_sop": "#b6d7a8",
    "map": "#9fc5e8",
    "sequence_map": "#cfe2f3",
    "aggregate": "#f6b26b",
    "selector_width": "#e69138",
    "select": "#ffe599",
    "constant_selector": "#fff2cc",
    "selector_and": "#d5c4ec",
    "selector_or": "#b7e4dc",
    "selector_not": "#f4cccc",
}


def layer_title(slot: int) -> str:
    """The name of a schedule slot: -1 the inputs, 2k layer k + 1's attention, 2k + 1 its MLP."""
    if slot < 0:
        return "inputs (embedding)"
    return f"layer {slot // 2 + 1}: {'MLP' if slot % 2 else 'attention'}"


def graph_to_dot(g: nx.MultiDiGraph) -> str:
    """Graphviz DOT of a RASP graph: one box per node (name, op, function or predicate), coloured by op,
    grouped into the layers of its schedule, edges labelled by argument."""
    data = graph_to_json(g)  # refuses unregistered functions, as every export does
    outs = set(data["outputs"].values())
    nodes = []
    for n in data["nodes"]:
        lines = [n["label"] if n["name"] != n["op"] else "", n["op"]]
        if n["params"].get("fn"):
            lines.append(n["params"]["fn"]["name"])
        if n["op"] == "select":
            lines.append(str(n["params"]["predicate"]))
        nodes.append(Node(n["id"], tuple(lines), n["op"], n["id"] in outs))
    slots: dict[int, list[int]] = {}
    for v, s in sorted(schedule(g).items()):
        if not OPS[g.nodes[v]["op"]][1]:  # selectors are evaluated inside the attention that uses them
            slots.setdefault(s, []).append(v)
    layers = [(layer_title(s), slots[s]) for s in sorted(slots)]
    edges = [(e["source"], e["target"], e["arg"]) for e in data["edges"]]
    return dot_document("rasp", nodes, edges, layers, PALETTE)
