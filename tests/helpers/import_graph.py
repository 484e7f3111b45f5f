"""The import graph of ``src/implicit_bench`` (tests/project/test_import_graph.py,
docs/architecture.md "Layers").

An edge ``a -> b`` is an import of project module ``b`` anywhere in ``a``'s body: module level,
inside a function (lazy), or a registry's ``"implicit_bench.module:Name"`` string (imported on
use), and one under ``if TYPE_CHECKING:`` (never executed, but a type-only circle is still a
circle of meaning; ``type_only=False`` leaves them out). The implicit import of a
parent package's ``__init__`` is not an edge (Python runs it before any submodule; a registry in
``__init__`` naming its backends would otherwise always be a loop).
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable
from pathlib import Path

from tests.helpers.dvc_deps import PACKAGE, REGISTRY_STRING, _module_name, _parse, module_file


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """ids of the nodes inside ``if TYPE_CHECKING:`` blocks."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                skip.update(id(n) for n in ast.walk(stmt))
    return skip


def _resolve(root: Path, name: str) -> str | None:
    """The project module ``name`` names (``a.b.C`` -> ``a.b``), or None."""
    while name:
        if module_file(root, name) is not None:
            return name
        name = name.rpartition(".")[0]
    return None


def module_imports(root: Path, path: Path, type_only: bool = True) -> set[str]:
    """The project modules one source file imports (see the module docstring);
    ``type_only=False``: without those under ``if TYPE_CHECKING:``."""
    tree = _parse(path)
    own = _module_name(root, path) or ""
    is_package = path.name == "__init__.py"
    skip = set() if type_only else _type_checking_nodes(tree)
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = own.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            for alias in node.names:  # `from pkg import submodule` imports the submodule
                sub = f"{module}.{alias.name}"
                names.add(sub if module_file(root, sub) is not None else module)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = REGISTRY_STRING.match(node.value)
            if match:
                names.add(match.group(1))
    found = {_resolve(root, n) for n in names if n == PACKAGE or n.startswith(PACKAGE + ".")}
    return {m for m in found if m and m != own}


def module_graph(root: Path, type_only: bool = True) -> dict[str, set[str]]:
    """module -> the project modules it imports, for every module under src/implicit_bench."""
    graph: dict[str, set[str]] = {}
    for path in sorted((root / "src" / PACKAGE).rglob("*.py")):
        graph[_module_name(root, path) or PACKAGE] = module_imports(root, path, type_only)
    return graph


def package_of(module: str, units: Collection[str] = ()) -> str:
    """``implicit_bench.x.y`` -> ``implicit_bench.x`` (a top-level module is its own package),
    or the longest of ``units`` (sub-packages that are layers of their own, such as
    ``implicit_bench.backends.judges``) that the module is in."""
    parts = module.split(".")
    for n in range(len(parts), 2, -1):
        if ".".join(parts[:n]) in units:
            return ".".join(parts[:n])
    return ".".join(parts[:2])


def package_graph(
    modules: dict[str, set[str]], units: Collection[str] = ()
) -> dict[str, dict[str, list[str]]]:
    """package -> imported package -> the module edges behind it (``units``: see
    :func:`package_of`)."""
    graph: dict[str, dict[str, list[str]]] = {package_of(m, units): {} for m in modules}
    for a, targets in modules.items():
        for b in targets:
            pa, pb = package_of(a, units), package_of(b, units)
            if pa != pb:
                graph[pa].setdefault(pb, []).append(f"{a} -> {b}")
    return graph


def cycles(graph: dict[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def layers(graph: dict[str, Iterable[str]]) -> list[list[str]]:
    """Packages by layer: layer 0 imports no other package, layer k only lower ones (acyclic)."""
    level: dict[str, int] = {}

    def depth(v: str) -> int:
        if v not in level:
            level[v] = -1  # guard; the graph is acyclic when this is called
            level[v] = 1 + max((depth(w) for w in graph.get(v, ())), default=-1)
        return level[v]

    for v in graph:
        depth(v)
    out: list[list[str]] = [[] for _ in range(max(level.values()) + 1)]
    for v, k in level.items():
        out[k].append(v)
    return [sorted(x) for x in out]
