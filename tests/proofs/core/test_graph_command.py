"""attncert graph: DOT, JSON and GraphML exports of a claim's construction, and PNG via Graphviz."""

import json
import shutil

import networkx as nx
import pytest

from attncert.constructions import rasp
from attncert.proofs.cli import main
from tests.pictures import assert_picture


def test_dot_to_stdout(capsys):
    assert main(["graph", "transpose", "--r", "2", "--c", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("digraph rasp {") and "radix_affine" in out


def test_json_round_trips_and_matches_the_construction(tmp_path):
    f = tmp_path / "u.json"
    assert main(["graph", "universal", "--n", "3", "--d", "2", "--dv", "1", "--format", "json", "--out", str(f)]) == 0
    g = rasp.graph_from_json(json.loads(f.read_text()))
    assert rasp.size(g).layers == 7


def test_graphml(tmp_path):
    f = tmp_path / "m.graphml"
    assert main(["graph", "matmul", "--format", "graphml", "--out", str(f)]) == 0
    h = nx.read_graphml(f)
    assert h.number_of_nodes() > 5


def test_png_without_graphviz_is_one_clear_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert main(["graph", "relu", "--png", str(tmp_path / "r.png")]) == 2
    assert "Graphviz" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_png_with_graphviz(tmp_path):
    f = tmp_path / "t.png"
    assert main(["graph", "transpose", "--png", str(f)]) == 0
    assert_picture(f, 400, 300)


def test_a_rasp_programs_graph_keeps_its_variable_names(tmp_path, capsys):
    """A .rasp program's assignments name the operations they build (the outermost assignment names a function's
    result); tokens, and a value assigned again, keep their names; an unassigned operation is named by its op."""
    program = tmp_path / "names.rasp"
    program.write_text(
        'def shifted(s) { inner = s + 1; return inner; }\n'
        "earlier = select(indices, indices, <);\n"
        "counted = selector_width(earlier);\n"
        "again = counted;\n"
        "bumped = shifted(again);\n"
        "total = bumped + length;\n"
        "mine = tokens;\n"
    )
    assert main(["graph", "rasp_program", "--file", str(program), "--expr", "aggregate(select(indices, total, ==), mine)", "--format", "json"]) == 0
    nodes = json.loads(capsys.readouterr().out)["nodes"]
    assert sorted((n["name"], n["op"]) for n in nodes) == [
        ("aggregate", "aggregate"), ("bumped", "map"), ("counted", "selector_width"), ("earlier", "select"), ("indices", "indices"),
        ("length", "length"), ("select", "select"), ("tokens", "tokens"), ("total", "sequence_map"),
    ]  # fmt: skip
    assert main(["graph", "rasp_program", "--file", str(program), "--expr", "total"]) == 0
    assert '"total\\nsequence_map\\nadd"' in capsys.readouterr().out
