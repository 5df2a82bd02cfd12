"""Stage 4: layer allocation, from the RASP schedule (:func:`constructions.rasp.size.schedule`).

An Aggregate at slot 2l is a head of layer l; a Map at slot 2l + 1 belongs to the
MLP of layer l. Data-independent SOps live in the embedding, whatever their slot.
The compiled model has exactly the RASP program's number of layers, unless a
SelectorWidth of a data-dependent selection needs its decoding MLP first.
"""

from __future__ import annotations

import networkx as nx

from attncert.constructions.compiler.values import NodeInfo
from attncert.constructions.rasp.size import schedule, size


def allocate(g: nx.MultiDiGraph, info: dict[int, NodeInfo]) -> tuple[int, list[list[int]], list[list[int]], dict[int, int], frozenset[int]]:
    """(layers, heads of each layer, maps of each layer's MLP, slot of every node, decoded SelectorWidths).

    A SelectorWidth of a data-dependent selection is a head at slot 2l whose output
    1/(w + 1) the MLP at slot 2l + 1 decodes; its dependents start after that (tracr
    counts the same attention + MLP pair). Without such nodes the depth is the RASP
    program's exactly."""
    decoded = frozenset(v for v in g.nodes if g.nodes[v]["op"] == "selector_width" and not info[v].static)
    slot = schedule(g, decoded)
    computed = [v for v in g.nodes if not info[v].static and g.nodes[v]["op"] not in ("tokens", "select")]
    layers = max([size(g).layers] + [(slot[v] + (v in decoded)) // 2 + 1 for v in computed])
    heads: list[list[int]] = [[] for _ in range(layers)]
    maps: list[list[int]] = [[] for _ in range(layers)]
    for v in nx.topological_sort(g):
        if info[v].static or g.nodes[v]["op"] in ("tokens", "select"):
            continue
        (heads if slot[v] % 2 == 0 else maps)[slot[v] // 2].append(v)
        if v in decoded:
            maps[slot[v] // 2].append(v)  # its value is decoded in the MLP right after its head
    return layers, heads, maps, slot, decoded
