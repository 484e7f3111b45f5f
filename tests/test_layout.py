"""The package layout rules of docs/architecture.md ("Entry modules", "Test scaffolding")."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCAFFOLDING = ("synthetic_tables", "synthetic_project", "chromium", "dvc_workspace")


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
            if (
                module == "tests"
                or module.startswith("tests.")
                or module.rsplit(".", 1)[-1] in SCAFFOLDING
            ):
                offenders.append(f"{path.relative_to(REPO)}: {module}")
    assert not offenders, offenders
    for name in SCAFFOLDING:
        assert (REPO / "tests" / f"{name}.py").is_file()
        assert not list((REPO / "src").rglob(f"{name}.py")), name


# Modules every stage script may import besides entry modules: the shared infrastructure
# (click errors and the model stages' command class, params, table and JSON I/O, run log,
# provenance, protocol constants).
SHARED = {
    "implicit_bench._util.friendly_errors",
    "implicit_bench.errors",
    "implicit_bench.params",
    "implicit_bench._util.files",
    "implicit_bench.runtime.runlog",
    "implicit_bench.runtime.provenance",
    "implicit_bench.protocol.schema",
    "implicit_bench.tables",
    "implicit_bench.preflight.stage",
}


def _project_imports(path: Path) -> set[str]:
    return {m for m in _imports(path) if m == "implicit_bench" or m.startswith("implicit_bench.")}


def _is_shared(module: str) -> bool:
    return any(module == s or module.startswith(s + ".") for s in SHARED)


def _entry_modules() -> set[str]:
    src = REPO / "src"
    return {
        ".".join(p.relative_to(src).with_suffix("").parts)
        for p in (src / "implicit_bench").rglob("stage.py")
    }


def test_every_stage_script_imports_library_code_from_entry_modules_only():
    """``stages/NAME.py`` reaches the library through ``implicit_bench.<package>.stage``."""
    entries = _entry_modules()
    scripts = sorted((REPO / "stages").glob("*.py"))
    assert len(scripts) > 20
    for script in scripts:
        modules = _project_imports(script)
        others = sorted(m for m in modules if not _is_shared(m) and m not in entries)
        assert not others, (
            f"{script.name} imports {others}: import them from the package's stage module"
        )
        assert modules & entries, f"{script.name} imports no entry module"


def test_every_entry_module_serves_a_stage():
    """No stage.py without a stage script; entry modules are only named stage.py (a module of
    ``cli/`` is named after its command, so ``cli/run.py`` is the ``run`` command)."""
    used = set().union(*(_project_imports(s) for s in (REPO / "stages").glob("*.py")))
    assert sorted(_entry_modules() - used) == []
    old_names = {"run.py", "pipeline.py", "build.py", "site.py"}
    package = REPO / "src" / "implicit_bench"
    assert not [
        p for p in package.rglob("*.py") if p.name in old_names and p.parent != package / "cli"
    ]


def test_tools_live_in_a_package_cli_module_or_a_package_module():
    """``implicit-bench`` tools: ``<package>/cli.py``, or a module of a package (no module
    sits at the package root: docs/architecture.md, "Layers")."""
    from implicit_bench.cli.main import TOOLS

    for name, target in TOOLS.items():
        module = target.split(":", 1)[0]
        parts = module.split(".")
        assert parts[0] == "implicit_bench", name
        assert len(parts) == 3, f"tool {name}: {module}"


def test_no_test_file_is_named_after_a_review_round():
    """Test files are named after what they test (issue 36), not after the review or issue that
    asked for them."""
    import re

    rounds = re.compile(r"hardening|round\d|review|issue\d|_r\d+(_|$)")
    named = sorted(p.name for p in (REPO / "tests").rglob("test_*.py") if rounds.search(p.stem))
    assert named == []


def test_every_dvc_stage_has_its_script_and_its_row_in_the_entry_module_table():
    """Stage NAME runs stages/NAME.py (``cli.stages.ALIASES`` the one documented exception), and
    docs/architecture.md's entry-module table names every stage with the entry module its script
    imports (issue 36: one name per concept)."""
    import re

    import yaml

    from implicit_bench.cli.stages import ALIASES

    stages = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## Entry modules", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (`.+?) \| `(implicit_bench\.[\w.]+)`", section, flags=re.MULTILINE)
    documented = {n: module for names, module in rows for n in re.findall(r"`(\w+)`", names)}
    assert set(ALIASES) == {"select"}
    for name, stage in stages.items():
        cmd = (stage.get("do") or stage)["cmd"]
        script = re.search(r"stages/(\w+)\.py", cmd).group(1)
        assert script == ALIASES.get(name, name), f"stage {name} runs stages/{script}.py"
        assert name in documented, f"stage {name} is not in docs/architecture.md's table"
        assert documented[name] in _project_imports(REPO / "stages" / f"{script}.py"), name
