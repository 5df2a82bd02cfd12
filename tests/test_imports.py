"""The import graph: dependencies point one way (proofs -> constructions -> exact), with no cycle,
counting every import in a module that can run, at its top or inside a function."""

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("exact", "constructions", "proofs")
LAYER = {"exact": 0, "constructions": 1, "proofs": 2}


def _modules() -> dict[str, Path]:
    found = {}
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(("attncert",) + (parts[:-1] if parts[-1] == "__init__" else parts))
            found[name] = path
    return found


def _executed(tree: ast.AST):
    """Every node that can run: the body of ``if TYPE_CHECKING:`` (imports for type hints only) is left out."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
                stack.extend(child.orelse)
            else:
                stack.append(child)


def _import_graph() -> nx.DiGraph:
    modules = _modules()
    g = nx.DiGraph()
    g.add_nodes_from(modules)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in _executed(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package, up level - 1 folders
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                # `from pkg import sub` depends on the submodule when there is one, else on the package
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            for t in targets:
                while t and t not in modules:  # `import a.b.c` loads a.b.c; an attribute path is cut back to its module
                    t = t.rpartition(".")[0]
                if t and t != name:
                    g.add_edge(name, t)
    return g


def test_no_import_cycle():
    g = _import_graph()
    cycles = [c for c in nx.simple_cycles(g) if len(c) > 1]
    assert not cycles, f"import cycles: {sorted(cycles, key=len)[:5]}"


def test_dependencies_point_one_way():
    g = _import_graph()
    layer = lambda m: LAYER[m.split(".")[1]]  # noqa: E731
    upward = [(a, b) for a, b in g.edges if layer(a) < layer(b)]
    assert not upward, f"imports against proofs -> constructions -> exact: {upward[:5]}"


def test_no_checker_family_imports_another():
    """docs/design.md: machinery two checker families need lives at the top of proofs/checkers/ (reading, result,
    references, forward, programs, values, marginals), never in one family's package imported by another."""
    g = _import_graph()
    prefix = "attncert.proofs.checkers."
    family = lambda m: m[len(prefix):].split(".")[0] if m.startswith(prefix) and m[len(prefix):].count(".") >= 1 else None  # noqa: E731
    crossing = [(a, b) for a, b in g.edges if family(a) and family(b) and family(a) != family(b)]
    assert not crossing, f"a checker family imports another's package: {crossing[:5]}"


def test_every_folder_of_modules_is_a_package_that_a_wheel_installs():
    """setup.py installs what find_packages finds: a folder of modules without __init__.py works in a
    checkout (a namespace package) and is missing from `pip install .` (proofs/identity once was)."""
    from setuptools import find_packages

    found = set(find_packages(str(ROOT), include=[f"{f}*" for f in FOLDERS]))
    folders = {".".join(p.parent.relative_to(ROOT).parts) for f in FOLDERS for p in (ROOT / f).rglob("*.py")}
    assert folders - found == set()
