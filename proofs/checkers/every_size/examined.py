r"""Every node of the template is examined in each case: the program computes each node at every position.

The regions evaluate the output at their positions and each ``div`` node's divisor at every position; every
``div_const`` is checked at every size. A node no region evaluates is never examined, while the RASP program still
computes it at every position, read or not: a node no other reads, or the values of a gather that selects no key,
computing ``rdiv_const`` (1 / x), ``mod`` or ``mod_const`` by 0, ``radix_affine`` of a real token or ``maxmin_pick``
of a number would make the program raise while the output is right everywhere. So in each case every node must be
evaluated by some region that checks (:func:`unexamined`; a select and its keys count as examined where an
aggregate reads them, as its rule does). Where a node is evaluated, the evaluator refuses any function it has no
semantics for and reads its arguments' kinds (a position, a real value, a pair), which do not depend on the
position; the one failure that does, a division by a value 0 at some positions, has the ``div N`` regions.
"""

from __future__ import annotations

from attncert.proofs.checkers.every_size.graph import Graph


def unexamined(graph: Graph, examined: set[int], case: int) -> list[str]:
    """Problems: the nodes of the template that no region of the case examined, in one line."""
    missing = sorted(set(graph.nodes) - examined)
    if not missing:
        return []
    shown = ", ".join(f"{v} ({str(graph.nodes[v]['op'])[:30]})" for v in missing[:10])
    return [f"case {case}: no region evaluates the nodes {shown}, while the program computes each at every position"]
