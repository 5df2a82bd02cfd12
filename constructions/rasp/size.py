"""Size accounting of a RASP graph: layers, heads per layer, maps.

Scheduling rule (how a transformer stacks the operations). Layer k has an
attention sublayer at slot 2k followed by an MLP sublayer at slot 2k+1.

* Inputs (tokens, indices, length, Full, constants) are ready at slot -1: they
  are the embedding.
* A selector computes nothing by itself; it is ready when its keys and queries
  are, and is evaluated inside the attention of the node that uses it.
* An attention node (Aggregate, SelectorWidth) goes to the first attention slot
  strictly after all its arguments (selector and values) are ready.
* A map (Map, SequenceMap) goes to the first MLP slot strictly after its
  arguments are ready. Maps in the same slot run side by side in one MLP; a map
  of a map needs the next layer's MLP (tracr merges Map(f, Map(g, x)) into one
  map when building, as we do).

So layers = 1 + the largest k used, heads in layer k = the attention nodes at
slot 2k, and a chain attention -> map -> attention costs two layers. This is
the as-soon-as-possible schedule; it is optimal for depth, because each node
sits at the earliest slot its dependencies allow.

SelectorWidth is counted as one attention head. (tracr compiles it into an
attention layer plus an MLP that inverts 1/(w+1); that MLP is not counted here,
as in the RASP paper's own counting.)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

import networkx as nx

from attncert.constructions.rasp.expr import RASPExpr
from attncert.constructions.rasp.graph import ATTENTION_OPS, MLP_OPS, arguments, to_graph


@dataclass(frozen=True)
class Size:
    layers: int
    heads: list[int]  # attention heads in each layer
    mlps: list[int]  # maps in each layer's MLP sublayer
    maps: int  # map nodes in the graph
    distinct_maps: int  # distinct elementwise functions (by name and parameters)

    def to_json(self, length: int | None = None) -> dict[str, Any]:
        d = asdict(self)
        if length is not None:
            d["length"] = length
        return d


def schedule(g: nx.MultiDiGraph, decoded: frozenset[int] = frozenset()) -> dict[int, int]:
    """The slot of every node (see the module docstring); selectors get their readiness slot.

    Nodes in ``decoded`` (a compiler's SelectorWidths of data-dependent selections) take their
    attention slot and the MLP slot after it, which then holds their value.
    """
    slot: dict[int, int] = {}
    for v in nx.topological_sort(g):
        op = g.nodes[v]["op"]
        ready = max((slot[u] + (u in decoded) for u in arguments(g, v)), default=-1)
        if op in ATTENTION_OPS:
            slot[v] = ready + 1 if ready % 2 == 1 else ready + 2  # next even slot > ready
        elif op in MLP_OPS:
            slot[v] = ready + 1 if ready % 2 == 0 else ready + 2  # next odd slot > ready
        else:
            slot[v] = ready
    return slot


def size(g: "nx.MultiDiGraph | RASPExpr") -> Size:
    """The size of a graph, or of a program (which is converted to its graph first)."""
    if isinstance(g, RASPExpr):
        g = to_graph(g)
    slot = schedule(g)
    computed = [s for v, s in slot.items() if g.nodes[v]["op"] in ATTENTION_OPS | MLP_OPS]
    layers = max(computed) // 2 + 1 if computed else 0
    heads, mlps = [0] * layers, [0] * layers
    fns: Counter = Counter()
    for v, s in slot.items():
        d = g.nodes[v]
        if d["op"] in ATTENTION_OPS:
            heads[s // 2] += 1
        elif d["op"] in MLP_OPS:
            mlps[s // 2] += 1
            fns[repr(d["params"]["fn"]) if "callable" not in d else id(d["callable"])] += 1
    return Size(layers=layers, heads=heads, mlps=mlps, maps=sum(mlps), distinct_maps=len(fns))
