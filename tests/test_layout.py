"""The package layout rules of docs/architecture.md ("Entry modules", "Test scaffolding")."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCAFFOLDING = ("synthetic_tables", "synthetic_project", "chromium")


def _imports(path: Path) -> set[str]:
    """Every module a file imports, module-level and in-function (absolute names)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def test_test_scaffolding_is_not_imported_by_the_package_or_the_stages():
    """Synthetic data and the browser driver live under tests/; src/ and stages/ never use them."""
    offenders = []
    for path in [*(REPO / "src").rglob("*.py"), *(REPO / "stages").glob("*.py")]:
        for module in _imports(path):
            if module == "tests" or module.startswith("tests.") or module.rsplit(".", 1)[-1] in SCAFFOLDING:
                offenders.append(f"{path.relative_to(REPO)}: {module}")
    assert not offenders, offenders
    for name in SCAFFOLDING:
        assert (REPO / "tests" / f"{name}.py").is_file()
        assert not list((REPO / "src").rglob(f"{name}.py")), name
