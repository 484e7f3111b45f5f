"""Each statistic and rule has one definition under src/: a second ``bootstrap_p``, ``holm``,
``safe_div``, "resolved" verdict or headline key list fails here (docs/architecture.md, "One
home per concept")."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers.paths import REPO_ROOT

SRC = REPO_ROOT / "src" / "implicit_bench"
#: statistic -> the one module that defines it
HOMES = {
    "bootstrap_p": "analysis/bootstrap.py",
    "holm": "analysis/bootstrap.py",
    "resolve_differences": "analysis/bootstrap.py",
    "safe_div": "_util/closed_form.py",
}
SCHEMA = "protocol/metric_schema.py"
#: modules that compute each headline rate on another representation, not a list of keys to
#: show: module -> reason (a new headline rate is estimated there only if that module should)
HEADLINE_EXCEPTIONS = {
    "analysis/design.py": "the prompt variants each estimand's image values come from",
    "analysis/looks.py": "per-unit shares of the anytime intervals, from raw label arrays",
    "world/recovery/stage.py": "each estimand's true value in the simulated world",
}


def _modules(root: Path) -> list[tuple[str, ast.Module]]:
    return [
        (p.relative_to(root).as_posix(), ast.parse(p.read_text(encoding="utf-8")))
        for p in sorted(root.rglob("*.py"))
    ]


def second_definitions(root: Path) -> list[str]:
    """``file:line name`` for each function named like a statistic (``holm``, ``_holm``,
    ``holm_adjust``, ...) outside its home."""
    found = []
    for rel, tree in _modules(root):
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for name, home in HOMES.items():
                if name in node.name.lower() and rel != home:
                    found.append(f"{rel}:{node.lineno} {node.name}")
    return found


def verdicts_outside_home(root: Path) -> list[str]:
    """``file:line`` for each ``x["resolved"] = <rule>`` or ``{"resolved": <rule>}`` outside
    ``resolve_differences``' module (copying an existing mark, ``e["resolved"]`` or
    ``e.get("resolved")``, is not a rule, nor is a text such as a column title)."""

    def copied(value: ast.expr) -> bool:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return True
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            value = value.args[0] if value.func.attr == "get" and value.args else value
        key = value.slice if isinstance(value, ast.Subscript) else value
        return isinstance(key, ast.Constant) and key.value == "resolved"

    found = []
    for rel, tree in _modules(root):
        if rel == HOMES["resolve_differences"]:
            continue
        for node in ast.walk(tree):
            pairs: list[tuple[ast.expr | None, ast.expr]] = []
            if isinstance(node, ast.Assign):
                pairs = [
                    (t.slice, node.value) for t in node.targets if isinstance(t, ast.Subscript)
                ]
            elif isinstance(node, ast.Dict):
                pairs = list(zip(node.keys, node.values, strict=True))
            for key, value in pairs:
                if isinstance(key, ast.Constant) and key.value == "resolved" and not copied(value):
                    found.append(f"{rel}:{node.lineno}")
    return found


def headline_lists(root: Path, headline: tuple[str, ...]) -> list[str]:
    """``file:line`` for each literal tuple, list, set or dict keys naming three or more headline
    metrics outside the schema and the listed exceptions."""
    found = []
    names = set(headline)
    for rel, tree in _modules(root):
        if rel == SCHEMA or rel in HEADLINE_EXCEPTIONS:
            continue
        for node in ast.walk(tree):
            items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
            if not isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict) or not items:
                continue
            named = {e.value for e in items if isinstance(e, ast.Constant)} & names
            if len(named) >= 3:
                found.append(f"{rel}:{node.lineno}")
    return found


def test_each_statistic_is_defined_once():
    assert second_definitions(SRC) == []
    assert verdicts_outside_home(SRC) == []


def test_the_headline_keys_are_listed_only_in_the_schema():
    from implicit_bench.protocol import metric_schema

    assert metric_schema.headline() == (
        "default_rate",
        "success_stereotype",
        "success_anti",
        "gap",
    )
    assert headline_lists(SRC, metric_schema.headline()) == []


def test_the_checks_catch_a_second_copy(tmp_path):
    """A planted copy of each is found (the checks are not vacuous)."""
    (tmp_path / "analysis").mkdir()
    (tmp_path / "analysis" / "bootstrap.py").write_text("def holm(p):\n    return p\n")
    (tmp_path / "copy.py").write_text(
        "def _holm(p):\n    return p\n\n"
        "def my_safe_div(a, b):\n    return a / b\n\n"
        "def mark(e, q):\n    e['resolved'] = q < 0.05\n    e['x'] = e['resolved']\n"
        "    return {'resolved': e.get('resolved'), 'r': {'resolved': q < 0.01}}\n"
        "KEYS = ('default_rate', 'success_anti', 'gap')\n"
    )
    assert second_definitions(tmp_path) == ["copy.py:1 _holm", "copy.py:4 my_safe_div"]
    assert verdicts_outside_home(tmp_path) == ["copy.py:8", "copy.py:10"]
    assert headline_lists(tmp_path, ("default_rate", "success_anti", "gap")) == ["copy.py:11"]
