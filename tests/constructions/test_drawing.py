"""DOT drawings of computation graphs (constructions/drawing.py): layers, colours by op with a legend,
no repeated label lines; the RASP graphs' layers are their schedule's, the Sinkhorn Transformer's its depths."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass

import pytest

from attncert.constructions import rasp
from attncert.constructions.rasp.dot import PALETTE as RASP_PALETTE
from attncert.constructions.sinkhorn import graph as sinkhorn_graph
from attncert.constructions.sinkhorn.graph import PALETTE as SINKHORN_PALETTE
from attncert.proofs.core.registry import load_claim

NODE = re.compile(r'^  n(\d+) \[label="((?:[^"\\]|\\.)*)", fillcolor="(#[0-9a-f]{6})"(, peripheries=2)?\];$', re.M)
EDGE = re.compile(r'^  n(\d+) -> n(\d+) \[label="(\d+)"\];$', re.M)
LAYER = re.compile(r'^  \{ rank=same; (layer\d+) \[label="([^"]*)"[^\]]*\];((?: n\d+;)*) \}$', re.M)
LEGEND_ROW = re.compile(r'<td bgcolor="(#[0-9a-f]{6})">([^<]*)</td>')


@dataclass
class Drawing:
    """What a DOT text draws, read back with the patterns above (one statement per line, as written)."""

    labels: dict[int, list[str]]
    colours: dict[int, str]
    outputs: set[int]
    edges: list[tuple[int, int, int]]
    layers: dict[str, set[int]]
    legend: dict[str, str]


def read(dot: str) -> Drawing:
    nodes = NODE.findall(dot)
    legend = dot[dot.index("subgraph cluster_legend") :]
    assert 'label="colour: op"' in legend
    return Drawing(
        labels={int(v): text.split("\\n") for v, text, _, _ in nodes},
        colours={int(v): colour for v, _, colour, _ in nodes},
        outputs={int(v) for v, _, _, out in nodes if out},
        edges=[(int(u), int(v), int(a)) for u, v, a in EDGE.findall(dot)],
        layers={title: {int(v) for v in re.findall(r"n(\d+)", members)} for _, title, members in LAYER.findall(dot)},
        legend={op: colour for colour, op in LEGEND_ROW.findall(legend)},
    )


def by_name(g, drawing: Drawing) -> dict[str, set[str]]:
    """The layers with their nodes named by label."""
    return {title: {g.nodes[v]["label"] for v in members} for title, members in drawing.layers.items()}


def check_colours_and_labels(g, drawing: Drawing, palette: dict[str, str]) -> None:
    """Every node drawn once, coloured by its op; the legend names exactly the ops drawn; no label line
    repeats within a box; every edge of the graph drawn once."""
    assert set(drawing.labels) == set(g.nodes)
    for v, lines in drawing.labels.items():
        assert drawing.colours[v] == palette[g.nodes[v]["op"]]
        assert len(lines) == len(set(lines)), lines
        assert g.nodes[v]["op"] in lines
    assert drawing.legend == {g.nodes[v]["op"]: palette[g.nodes[v]["op"]] for v in g.nodes}
    assert sorted(drawing.edges) == sorted((u, v, a) for u, v, a in g.edges(data="arg"))
    assert drawing.outputs == set(g.graph["outputs"].values())


def test_transpose_drawn_in_its_layers():
    """transpose(2, 3) by the schedule's rules: indices and tokens are inputs, the source index map is layer 1's
    MLP, the aggregate layer 2's attention; the select belongs to no layer."""
    g = load_claim("transpose").build(r=2, c=3).graph()
    drawing = read(rasp.graph_to_dot(g))
    check_colours_and_labels(g, drawing, RASP_PALETTE)
    assert by_name(g, drawing) == {"inputs (embedding)": {"indices", "tokens"}, "layer 1: MLP": {"transpose_source"}, "layer 2: attention": {"transpose"}}
    assert list(drawing.layers) == ["inputs (embedding)", "layer 1: MLP", "layer 2: attention"]  # bottom up
    names = {g.nodes[v]["label"]: lines for v, lines in drawing.labels.items()}
    assert names["indices"] == ["indices"] and names["tokens"] == ["tokens"]  # not "indices\nindices"
    assert names["select"] == ["select", "EQ"] and names["transpose_source"] == ["transpose_source", "map", "radix_affine"]


def test_universal_layers_match_its_size():
    """U(2, 2, 1): one group per sublayer in use, the attention groups holding the heads that size() counts."""
    g = load_claim("universal").build(n=2, d=2, dv=1).graph()
    drawing = read(rasp.graph_to_dot(g))
    check_colours_and_labels(g, drawing, RASP_PALETTE)
    s = rasp.size(g)
    heads = [len(drawing.layers.get(f"layer {k + 1}: attention", ())) for k in range(s.layers)]
    mlps = [len(drawing.layers.get(f"layer {k + 1}: MLP", ())) for k in range(s.layers)]
    assert heads == s.heads and mlps == s.mlps
    selectors = {v for v in g if rasp.graph.OPS[g.nodes[v]["op"]][1]}
    assert set().union(*drawing.layers.values()) == set(g.nodes) - selectors


def test_sinkhorn_transformer_layers_side_by_side():
    """Two blocks with layer norm: the query and key encoders' k-th sublayers share a layer."""
    g = load_claim("sinkhorn_transformer").build(layers=2, layer_norm=1).graph()
    drawing = read(sinkhorn_graph.graph_to_dot(g))
    check_colours_and_labels(g, drawing, SINKHORN_PALETTE)
    blocks = [(f"{op} {k}", {f"Q.{i}.{op}", f"K.{i}.{op}"}) for k, base in ((1, 0), (2, 3)) for i, op in zip(range(base, base + 3), ("attention", "mlp", "layer_norm"))]
    expected = [("text", {"mu", "nu"}), ("embed", {"Q.embed", "K.embed"}), *blocks, ("readout", {"Q", "K"}), ("cost", {"C"}), ("sinkhorn", {"sinkhorn"})]
    assert list(by_name(g, drawing).items()) == expected
    assert drawing.labels[next(iter(g.graph["outputs"].values()))][0] == "sinkhorn"  # its name is its op: shown once


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed: the layout itself is not checked")
def test_graphviz_puts_each_layer_on_one_row_in_order():
    """Graphviz's own layout (-Tplain: every node's centre): a layer's nodes stand at its title's height,
    and the titles rise layer by layer."""
    g = load_claim("universal").build(n=2, d=2, dv=1).graph()
    dot = rasp.graph_to_dot(g)
    plain = subprocess.run(["dot", "-Tplain"], input=dot, text=True, capture_output=True, check=True).stdout
    y = {name: float(ys) for name, ys in re.findall(r"^node (\S+) \S+ (\S+) ", plain, re.M)}
    rows = []
    for title, members in zip(re.findall(r"rank=same; (layer\d+)", dot), read(dot).layers.values()):
        assert {y[f"n{v}"] for v in members} == {y[title]}
        rows.append(y[title])
    assert rows == sorted(rows) and len(set(rows)) == len(rows)
