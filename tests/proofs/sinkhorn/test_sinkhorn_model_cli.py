"""attncert graph sinkhorn_transformer (the whole model as one graph) and attncert plot sinkhorn_universality."""

import json

import networkx as nx

from attncert.constructions.sinkhorn.graph import graph_from_json
from attncert.exact.certificate import write_certificate
from attncert.proofs.cli import main
from attncert.proofs.core.registry import load_claims


def test_the_model_graph_is_drawn_and_exported_like_every_construction(tmp_path, capsys):
    assert main(["graph", "sinkhorn_transformer", "--layers", "2", "--layer_norm", "1"]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith("digraph sinkhorn_transformer {") and dot.count("\\nattention\\n") == 4 and '"sinkhorn\\neps 1/2' in dot
    f = tmp_path / "m.json"
    assert main(["graph", "sinkhorn_transformer", "--format", "json", "--out", str(f)]) == 0
    g = graph_from_json(json.loads(f.read_text()))
    ops = sorted(g.nodes[v]["op"] for v in g)
    assert ops == sorted(["text"] * 2 + ["embed"] * 2 + ["attention"] * 2 + ["mlp"] * 2 + ["readout"] * 2 + ["cost", "sinkhorn"])
    f = tmp_path / "m.graphml"
    assert main(["graph", "sinkhorn_transformer", "--format", "graphml", "--out", str(f)]) == 0
    assert nx.read_graphml(f).number_of_nodes() == 12


def test_the_recorded_model_is_the_drawn_one():
    claim = load_claims()["sinkhorn_transformer"]
    doc = claim.prove(**{**claim.defaults(), "n": 2, "m": 2})
    assert doc["construction"]["model"] == claim.build().to_json()


def test_plot_writes_a_png_from_a_verified_certificate(tmp_path, capsys):
    claim = load_claims()["sinkhorn_universality"]
    cert = write_certificate(tmp_path / "u.json", claim.prove(**{**claim.defaults(), "pairs": 2, "held_out": 1, "max_n": 3, "widths": "1,2"}))
    out = tmp_path / "u.png"
    assert main(["plot", "sinkhorn_universality", "--certificate", str(cert), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    doc = json.loads(cert.read_text())
    doc["outputs"]["summary"]["entropic"]["fit_max"][0] = "0"
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    assert main(["plot", "sinkhorn_universality", "--certificate", str(tmp_path / "bad.json"), "--out", str(tmp_path / "b.png")]) == 2
    assert "does not verify" in capsys.readouterr().err
