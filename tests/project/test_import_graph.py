"""No import loops in src/implicit_bench: neither between packages nor between modules
(docs/architecture.md, "Layers"; the graph: tests/helpers/import_graph.py)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.import_graph import cycles, layers, module_graph, module_imports, package_graph
from tests.helpers.paths import REPO_ROOT


def test_no_module_imports_another_that_imports_it_back():
    """No circle of modules, imports under ``if TYPE_CHECKING:`` included."""
    modules = module_graph(REPO_ROOT)
    assert len(modules) > 100
    assert cycles(modules) == []


def _documented() -> dict[str, int]:
    return documented_layers((REPO_ROOT / "docs/architecture.md").read_text(encoding="utf-8"))


def test_packages_form_layers_without_cycles():
    packages = package_graph(module_graph(REPO_ROOT), _documented())
    loops = cycles(packages)
    edges = {
        a: {b: via for b, via in packages[a].items() if b in loop} for loop in loops for a in loop
    }
    assert loops == [], edges
    assert len(layers(packages)) > 3


def test_the_walker_sees_lazy_imports_registry_strings_and_type_only_imports(tmp_path):
    """The graph's edge rules on a hand-made package: a lazy import, a registry string and an
    ``if TYPE_CHECKING:`` import are edges (the last left out on request), the parent package
    is not."""
    pkg = tmp_path / "src" / "implicit_bench"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("X = 1\n")
    (pkg / "sub" / "__init__.py").write_text('REG = {"b": "implicit_bench.sub.backend:B"}\n')
    (pkg / "sub" / "backend.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from implicit_bench.high import H\n"
        "def f():\n    from implicit_bench.low import X\n    return X\n"
    )
    (pkg / "high.py").write_text("from implicit_bench.sub import backend\n")
    backend = pkg / "sub" / "backend.py"
    assert module_imports(tmp_path, backend) == {"implicit_bench.low", "implicit_bench.high"}
    assert module_imports(tmp_path, backend, type_only=False) == {"implicit_bench.low"}
    assert module_imports(tmp_path, pkg / "sub" / "__init__.py") == {"implicit_bench.sub.backend"}
    # the type-only import closes a circle high -> backend -> high
    assert cycles(module_graph(tmp_path)) == [["implicit_bench.high", "implicit_bench.sub.backend"]]
    graph = module_graph(tmp_path, type_only=False)
    assert graph["implicit_bench.high"] == {"implicit_bench.sub.backend"}
    assert cycles(graph) == []
    graph["implicit_bench.low"] = {"implicit_bench.high"}  # low -> high -> backend -> low
    assert cycles(graph) == [
        ["implicit_bench.high", "implicit_bench.low", "implicit_bench.sub.backend"]
    ]
    assert layers(
        package_graph({"implicit_bench.a.x": {"implicit_bench.b"}, "implicit_bench.b": set()})
    ) == [["implicit_bench.b"], ["implicit_bench.a"]]
    # a sub-package listed as a unit of its own is a node of its own
    nested = {"implicit_bench.a.sub.y": {"implicit_bench.a.x"}, "implicit_bench.a.x": set()}
    assert package_graph(nested) == {"implicit_bench.a": {}}
    assert package_graph(nested, {"implicit_bench.a.sub"}) == {
        "implicit_bench.a.sub": {
            "implicit_bench.a": ["implicit_bench.a.sub.y -> implicit_bench.a.x"]
        },
        "implicit_bench.a": {},
    }


def private_imports(root: Path) -> list[str]:
    """``file:line module.name`` for each import of another package's private name (a name or
    module part starting with ``_``; ``implicit_bench._util`` is the project's private helper
    package, open to every package) by the library or a stage script."""
    import ast

    src = root / "src"
    files = sorted((src / "implicit_bench").rglob("*.py")) + sorted((root / "stages").glob("*.py"))
    found = []
    for path in files:
        inside = path.is_relative_to(src)
        module = ".".join(path.relative_to(src).with_suffix("").parts) if inside else ""
        own = ".".join(module.split(".")[:2])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.module and not node.level):
                continue
            parts = node.module.split(".")
            if parts[0] != "implicit_bench" or ".".join(parts[:2]) == own:
                continue
            names = [a.name for a in node.names if a.name.startswith("_")]
            if any(p.startswith("_") and p not in {"_util", "__init__"} for p in parts[1:]):
                names.append("(private module)")
            found += [f"{path.relative_to(root)}:{node.lineno} {node.module}.{n}" for n in names]
    return found


def test_no_module_imports_another_packages_private_name():
    """A package's ``_private`` names are its own: another package that needs one
    imports a public name."""
    assert private_imports(REPO_ROOT) == []


def test_private_import_finder_on_a_hand_made_package(tmp_path):
    pkg = tmp_path / "src" / "implicit_bench"
    for sub in ("a", "b", "_util"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (tmp_path / "stages").mkdir()
    (pkg / "a" / "m.py").write_text(
        "from implicit_bench.a.n import _own\n"  # same package: allowed
        "from implicit_bench.b.x import _theirs, public\n"  # another's private name
        "from implicit_bench._util.files import write\n"  # the shared private helpers
        "from implicit_bench.b._hidden import thing\n"  # another's private module
    )
    (tmp_path / "stages" / "s.py").write_text("from implicit_bench.a.m import _helper\n")
    assert private_imports(tmp_path) == [
        "src/implicit_bench/a/m.py:2 implicit_bench.b.x._theirs",
        "src/implicit_bench/a/m.py:4 implicit_bench.b._hidden.(private module)",
        "stages/s.py:1 implicit_bench.a.m._helper",
    ]


def documented_layers(text: str) -> dict[str, int]:
    """package -> layer, from the table of docs/architecture.md's "Layers" section."""
    import re

    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    out: dict[str, int] = {}
    for layer, cell in re.findall(r"^\| (\d+) \| (.+?) \|$", section, flags=re.MULTILINE):
        for name in re.findall(r"`([\w.]+)`", cell):
            out[f"implicit_bench.{name}"] = int(layer)
    return out


def test_every_package_imports_only_lower_layers_of_the_documented_table():
    """docs/architecture.md's layer table is the rule: an import of a package of the same or a
    higher layer (an upward import) fails, and so does a package the table does not list."""
    documented = _documented()
    packages = package_graph(module_graph(REPO_ROOT), documented)
    missing = sorted(set(packages) - set(documented) - {"implicit_bench"})
    assert missing == [], f"packages missing from docs/architecture.md's layer table: {missing}"
    upward = [
        f"{a} (layer {documented[a]}) -> {b} (layer {documented[b]}): {via[0]}"
        for a, targets in packages.items()
        if a in documented
        for b, via in targets.items()
        if b in documented and documented[b] >= documented[a]
    ]
    assert upward == []


def test_documented_layers_reads_the_table():
    text = "## Layers\n\n| layer | packages |\n| --- | --- |\n| 0 | `errors` |\n| 1 | `a`, `b` |\n"
    assert documented_layers(text) == {
        "implicit_bench.errors": 0,
        "implicit_bench.a": 1,
        "implicit_bench.b": 1,
    }
