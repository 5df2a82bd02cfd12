"""The claim index: what the command line knows before loading a claim is what the claims say,
and the start of the command line loads no heavy package."""

import json
import subprocess
import sys

import pytest

from attncert.proofs.core.registry import INDEX, load_claims, unknown_claim


def test_the_index_names_every_registered_claim_and_no_other():
    assert list(load_claims()) == list(INDEX)


@pytest.mark.parametrize("module", sorted({e.module for e in INDEX.values()}))
def test_each_module_alone_registers_its_claims(module):
    names = [n for n, e in INDEX.items() if e.module == module]
    code = (
        "import importlib, json; from attncert.proofs.core import registry; "
        f"importlib.import_module({module!r}); "
        f"print(json.dumps({{n: registry.registered(n).build is not None for n in {names!r}}}))"
    )
    out = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    # the index's graph flag is whether the claim has a construction to export
    assert out == {n: INDEX[n].graph for n in names}


def test_summaries_are_one_line_each():
    for name, entry in INDEX.items():
        assert entry.summary and "\n" not in entry.summary and len(entry.summary) <= 110, name


def test_an_unknown_claim_names_the_nearest():
    assert "did you mean universal" in unknown_claim("univeral")
    assert "attncert list" in unknown_claim("zzzzzz")


HEAVY = ("flint", "numpy", "sympy", "networkx", "mpmath", "matplotlib", "lark", "tqdm", "ot")


@pytest.mark.parametrize("argv", [["--version"], ["-V"], ["list"], ["--help"], ["prove", "--help"], ["verify", "--help"]])
def test_the_command_line_starts_without_the_heavy_packages(argv):
    code = (
        "import contextlib, io, json, sys; from attncert.proofs.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    try: main({argv!r})\n"
        "    except SystemExit: pass\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert not [m for m in loaded if m.split(".")[0] in HEAVY]
    assert not [m for m in loaded if m.startswith("attncert.constructions") or m.startswith("attncert.proofs.lemmas")]
