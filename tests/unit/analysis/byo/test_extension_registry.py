"""The ``analyze`` extensions live in one folder (docs/analysis.md, "Extending
analyze"): one module per registered name, nothing registered from elsewhere."""

from __future__ import annotations

import ast

from implicit_bench.analysis.byo.extensions import EXTENSIONS, load_extension
from tests.helpers.paths import REPO_ROOT

FOLDER = REPO_ROOT / "src" / "implicit_bench" / "analysis" / "byo" / "extensions"


def test_every_extension_is_its_folders_module_named_as_registered():
    assert EXTENSIONS, "no extension registered"
    for name, ref in EXTENSIONS.items():
        assert ref == f"implicit_bench.analysis.byo.extensions.{name}:analyze_extension", name
        assert callable(load_extension(ref))
    modules = {p.stem for p in FOLDER.glob("*.py") if p.name != "__init__.py"}
    assert modules == set(EXTENSIONS)


def test_no_module_outside_the_folder_defines_an_analyze_extension():
    outside = []
    for path in sorted((REPO_ROOT / "src" / "implicit_bench").rglob("*.py")):
        if FOLDER in path.parents:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(
            isinstance(node, ast.FunctionDef) and node.name == "analyze_extension"
            for node in tree.body
        ):
            outside.append(path.relative_to(REPO_ROOT).as_posix())
    assert outside == []


def test_every_work_check_is_its_extensions_module():
    """A work check (``WORK_CHECKS``) lives beside its extension and imports."""
    from implicit_bench.analysis.byo.extensions import EXTENSIONS, WORK_CHECKS
    from implicit_bench.runtime.registry import import_target

    for name, ref in WORK_CHECKS.items():
        assert ref.split(":")[0] == EXTENSIONS[name].split(":")[0], name
        assert callable(import_target(ref)), name
