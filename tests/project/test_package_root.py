"""The package root reads as the architecture: at most six modules at
``src/implicit_bench/``, and every package says in its first docstring line what it owns."""

from __future__ import annotations

import ast

from tests.helpers.paths import REPO_ROOT

PACKAGE = REPO_ROOT / "src" / "implicit_bench"


def test_at_most_six_modules_at_the_package_root():
    root_modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root_modules) <= 6, root_modules


def test_every_package_has_a_docstring():
    missing = [
        str(init.parent.relative_to(PACKAGE))
        for init in PACKAGE.glob("*/__init__.py")
        if not ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    ]
    assert missing == []
