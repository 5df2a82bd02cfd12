"""A rasp_program certificate of attncert's own programs names them the same on every machine
(``<attncert>/NAME.rasp``), and verify checks it from the recorded texts alone."""

import json
import subprocess
import sys
from pathlib import Path

from attncert.constructions.rasp.language.programs import DIRECTORY

ROOT = Path(__file__).resolve().parents[3]


def attncert(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attncert", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_the_default_certificate_records_no_path_of_this_machine(tmp_path):
    assert attncert("prove", "rasp_program", "--out", "rp.json", cwd=tmp_path).returncode == 0
    data = (tmp_path / "rp.json").read_text()
    doc = json.loads(data)
    assert doc["params"]["file"] == "<attncert>/classic.rasp"
    assert doc["inputs"]["source"]["text"] == (DIRECTORY / "classic.rasp").read_text()
    for machine_path in (str(DIRECTORY), str(ROOT), str(tmp_path), sys.prefix):
        assert machine_path not in data
    # verify runs the recorded text (it reads nothing from the disk), from anywhere
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = attncert("verify", str(tmp_path / "rp.json"), cwd=elsewhere)
    assert r.returncode == 0 and r.stdout.startswith("OK "), r.stdout + r.stderr


def test_a_shipped_program_given_by_its_installed_path_and_its_loads_are_named_portably(tmp_path):
    installed = str(DIRECTORY / "transpose.rasp")
    r = attncert("prove", "rasp_program", "--file", installed, "--expr", "transpose(tokens, 2, 1)", "--input", "[1, 2]", "--expect", "[1, 2]", "--out", "t.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "t.json").read_text())
    assert doc["params"]["file"] == "<attncert>/transpose.rasp"
    assert [entry["name"] for entry in doc["inputs"]["loaded"]] == ["<attncert>/layout.rasp"]  # transpose.rasp loads "layout"
    assert attncert("verify", "t.json", cwd=tmp_path).returncode == 0
    # the portable name is accepted as --file too, and gives the same certificate's claim fields
    r = attncert("prove", "rasp_program", "--file", "<attncert>/transpose.rasp", "--expr", "transpose(tokens, 2, 1)", "--input", "[1, 2]", "--expect", "[1, 2]", "--out", "u.json", cwd=tmp_path)
    assert r.returncode == 0
    again = json.loads((tmp_path / "u.json").read_text())
    assert {k: again[k] for k in ("params", "inputs", "outputs", "result")} == {k: doc[k] for k in ("params", "inputs", "outputs", "result")}
