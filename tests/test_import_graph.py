"""No import loops in src/implicit_bench: neither between packages nor between modules
(docs/architecture.md, "Layers"; the graph: tests/import_graph.py)."""

from __future__ import annotations

from pathlib import Path

from import_graph import cycles, layers, module_graph, module_imports, package_graph

REPO = Path(__file__).resolve().parents[1]


def test_no_module_imports_another_that_imports_it_back():
    modules = module_graph(REPO)
    assert len(modules) > 100
    assert cycles(modules) == []


def test_packages_form_layers_without_cycles():
    packages = package_graph(module_graph(REPO))
    loops = cycles(packages)
    edges = {
        a: {b: via for b, via in packages[a].items() if b in loop} for loop in loops for a in loop
    }
    assert loops == [], edges
    assert len(layers(packages)) > 3


def test_the_walker_sees_lazy_imports_registry_strings_and_skips_type_checking(tmp_path):
    """The graph's edge rules on a hand-made package: a lazy import and a registry string are
    edges, an ``if TYPE_CHECKING:`` import and the parent package are not."""
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
    assert module_imports(tmp_path, pkg / "sub" / "backend.py") == {"implicit_bench.low"}
    assert module_imports(tmp_path, pkg / "sub" / "__init__.py") == {"implicit_bench.sub.backend"}
    graph = module_graph(tmp_path)
    assert graph["implicit_bench.high"] == {"implicit_bench.sub.backend"}
    assert cycles(graph) == []
    graph["implicit_bench.low"] = {"implicit_bench.high"}  # low -> high -> backend -> low
    assert cycles(graph) == [
        ["implicit_bench.high", "implicit_bench.low", "implicit_bench.sub.backend"]
    ]
    assert layers(
        package_graph({"implicit_bench.a.x": {"implicit_bench.b"}, "implicit_bench.b": set()})
    ) == [["implicit_bench.b"], ["implicit_bench.a"]]
