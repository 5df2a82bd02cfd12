"""Every install line that the docs print or the code says works from a clone (issue 35): attncert is not on a
package index, so no line may ask pip for ``attncert`` by name; its extras are installed from the clone
(``pip install '.[tracr]'``), and each extra named exists in pyproject.toml; any other package named is one
the project itself declares (so it is a distribution pip resolves), spelled with extras it has."""

import itertools
import re
import shlex
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS = set(PROJECT["optional-dependencies"])
DECLARED = {canonicalize_name(Requirement(r).name): Requirement(r) for r in PROJECT["dependencies"] + [r for rs in PROJECT["optional-dependencies"].values() for r in rs]}

#: ``pip install`` and what follows it on the line, up to a backquote, a closing bracket or quote that ends the
#: text around it, or a comment.
LINE = re.compile(r"pip3? install((?:\s+(?:'[^'\n]*'|\"[^\"\n]*\"|[^\s`'\")#]+))+)")


def sources() -> list[Path]:
    found = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for folder in ("attncert", "proofs", "constructions", "exact", "bench", "tests"):
        found += sorted(p for p in (ROOT / folder).rglob("*.py") if ".venv" not in p.parts)
    return [p for p in found if p.is_file()]


def install_lines() -> list[tuple[str, list[str]]]:
    """(where, the requirement words) of every install command in the docs and the code."""
    out = []
    for path in sources():
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for m in LINE.finditer(text):
                # the command ends at a shell separator, or where the prose goes on ("... in attncert's folder")
                words = list(itertools.takewhile(lambda w: w not in ("&&", "||", ";", "|", "in"), shlex.split(m.group(1))))
                # a template's placeholder ({...}) is checked where it is filled: prove-all's line, below
                words = [w for w in words if not w.startswith("-") and "{" not in w]
                out.append((f"{path.relative_to(ROOT)}:{number}", words))
    return out


def problem(word: str) -> str | None:
    """Why pip would not install this requirement from a clone, or None."""
    if word.startswith("."):  # the clone itself, with extras
        extras = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", word)
        if extras is None:
            return f"{word!r} is not the clone with extras, '.[extra,...]'"
        unknown = set((extras.group(1) or "").split(",")) - EXTRAS - {""}
        return f"pyproject.toml has no extra {sorted(unknown)}" if unknown else None
    req = Requirement(word)
    name = canonicalize_name(req.name)
    if name == "attncert":
        return "attncert is not on a package index: install it, with its extras, from the clone ('.[tracr]')"
    if name not in DECLARED:
        return f"{req.name} is not a dependency pyproject.toml declares"
    if not req.extras <= DECLARED[name].extras:
        return f"pyproject.toml declares {DECLARED[name]}, not the extras {sorted(req.extras)}"
    return None


def test_every_install_line_works_from_a_clone():
    lines = install_lines()
    # the lines this issue is about are found: the README's, docs/tracr.md's, prove-all's and the tracr claim's
    where = {w.split(":")[0] for w, _ in lines}
    assert {"README.md", "docs/tracr.md", "proofs/cli/prove_all.py", "proofs/tracr/model.py", "exact/testing.py"} <= where, where
    bad = [f"{w}: {word}: {why}" for w, words in lines for word in words if (why := problem(word))]
    assert not bad, "\n".join(bad)


def test_the_check_refuses_what_does_not_install():
    assert problem("attncert[tracr]") and problem("attncert") and problem(".[jax]") and problem("./attncert[tracr]")
    assert problem("tracr") and problem("dask[dataframe]")
    assert problem(".[tracr]") is None and problem(".[tracr,test]") is None and problem("dask[distributed]") is None


def test_prove_all_prints_the_clone_install_line(monkeypatch, capsys, tmp_path):
    """prove-all's skip line for a claim whose extra is missing is the clone's install line."""
    import importlib.util

    from attncert.proofs.cli import main, prove_all

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "tracr" else real(name, *a))
    monkeypatch.setattr(prove_all, "claim_names", lambda: ["transpose", "tracr_model"])
    assert main(["prove-all", "--out-dir", str(tmp_path), "--jobs", "1"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("tracr_model: skipped"))
    assert line == "tracr_model: skipped, it needs tracr (pip install '.[tracr]' in attncert's folder)"
    assert not problem(".[tracr]")
