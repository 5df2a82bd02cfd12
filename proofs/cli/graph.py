"""``attncert graph CLAIM``: a claim's construction graph exported (dot, json, graphml) or drawn (png)."""

from __future__ import annotations

import argparse
import inspect
import shutil
import subprocess
import sys

from attncert.exact.errors import AttncertError
from attncert.proofs.cli.options import EXIT_HOLDS, limits_of, resolve_sizes
from attncert.proofs.core.registry import Claim, load_claim

GRAPH_FORMATS = {"dot": "graph_to_dot", "json": "graph_to_json", "graphml": "graph_to_graphml"}


def build_params(claim: Claim) -> list:
    """The claim's parameters that its construction builder takes (sizes, not seeds or files)."""
    if claim.build is None:
        return []
    names = set(inspect.signature(claim.build).parameters)
    return [p for p in claim.params if p.name in names]


def cmd_graph(args: argparse.Namespace) -> int:
    from attncert.constructions import rasp
    from attncert.constructions.sinkhorn import graph as sinkhorn_graph
    from attncert.exact.canonical import canonical_json
    from attncert.exact.certificate import atomic_write_bytes, check_target
    from attncert.proofs.core.cost import refuse_over_limits

    claim = load_claim(args.claim)
    if claim.build is None:
        raise AttncertError(f"claim {claim.name} has no RASP construction to export")
    for target in (args.out, args.png):
        if target:
            check_target(target)
    resolve_sizes(args, build_params(claim))
    sizes = {p.name: getattr(args, p.name) for p in build_params(claim)}
    refuse_over_limits(claim, sizes, limits_of(args), writes=False)  # the construction is built only at sizes a run may have
    g = claim.build(**sizes).graph()
    # A Sinkhorn Transformer's graph has its own ops (encoder layers, cost, Sinkhorn) and its own exporters.
    exporter = sinkhorn_graph if g.graph.get("format") == sinkhorn_graph.GRAPH_FORMAT else rasp
    if args.format == "json":
        text = canonical_json(exporter.graph_to_json(g)).decode() + "\n"
    else:
        text = getattr(exporter, GRAPH_FORMATS[args.format])(g)
    if args.png:
        dot = shutil.which("dot")
        if dot is None:
            raise AttncertError("--png needs Graphviz's dot program, which is not installed (apt-get install graphviz)")
        done = subprocess.run([dot, "-Tpng", "-o", args.png], input=exporter.graph_to_dot(g), text=True, capture_output=True)
        if done.returncode != 0:
            raise AttncertError(f"dot failed: {done.stderr.strip().splitlines()[0] if done.stderr.strip() else done.returncode}")
    if args.out:
        atomic_write_bytes(args.out, text.encode())
    elif not args.png:
        sys.stdout.write(text)
    return EXIT_HOLDS
