"""Stage 4: layer allocation, from the RASP schedule (:func:`constructions.rasp.size.schedule`).

An Aggregate at slot 2l is a head of layer l; a Map at slot 2l + 1 belongs to the
MLP of layer l. Data-independent SOps live in the embedding, whatever their slot.
The compiled model has exactly the RASP program's number of layers.
"""

from __future__ import annotations

import networkx as nx

from constructions.compiler.values import NodeInfo
from constructions.rasp.size import schedule, size


def allocate(g: nx.MultiDiGraph, info: dict[int, NodeInfo]) -> tuple[int, list[list[int]], list[list[int]], dict[int, int]]:
    """(layers, heads of each layer, maps of each layer's MLP, slot of every node)."""
    slot = schedule(g)
    layers = size(g).layers
    heads: list[list[int]] = [[] for _ in range(layers)]
    maps: list[list[int]] = [[] for _ in range(layers)]
    for v in nx.topological_sort(g):
        if info[v].static or g.nodes[v]["op"] in ("tokens", "select"):
            continue
        (heads if slot[v] % 2 == 0 else maps)[slot[v] // 2].append(v)
    return layers, heads, maps, slot
