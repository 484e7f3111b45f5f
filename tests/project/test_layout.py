"""The package layout rules of docs/architecture.md ("Entry modules") and docs/contracts.md
("Test scaffolding")."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.helpers.paths import REPO_ROOT

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
    for path in [*(REPO_ROOT / "src").rglob("*.py"), *(REPO_ROOT / "stages").glob("*.py")]:
        for module in _imports(path):
            if (
                module == "tests"
                or module.startswith("tests.")
                or module.rsplit(".", 1)[-1] in SCAFFOLDING
            ):
                offenders.append(f"{path.relative_to(REPO_ROOT)}: {module}")
    assert not offenders, offenders
    for name in SCAFFOLDING:
        assert (REPO_ROOT / "tests" / "helpers" / f"{name}.py").is_file()
        assert not list((REPO_ROOT / "src").rglob(f"{name}.py")), name


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
    "implicit_bench.protocol.tables",
    "implicit_bench.runtime.preflight.stage",
}


def _project_imports(path: Path) -> set[str]:
    return {m for m in _imports(path) if m == "implicit_bench" or m.startswith("implicit_bench.")}


def _is_shared(module: str) -> bool:
    return any(module == s or module.startswith(s + ".") for s in SHARED)


def _entry_modules() -> set[str]:
    """Every ``stage.py`` but ``cli/stage.py`` (the ``implicit-bench stage`` command)."""
    src = REPO_ROOT / "src"
    package = src / "implicit_bench"
    return {
        ".".join(p.relative_to(src).with_suffix("").parts)
        for p in package.rglob("stage.py")
        if p.parent != package / "cli"
    }


def test_every_stage_script_imports_library_code_from_entry_modules_only():
    """``stages/NAME.py`` reaches the library through ``implicit_bench.<package>.stage``."""
    entries = _entry_modules()
    scripts = sorted((REPO_ROOT / "stages").glob("*.py"))
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
    used = set().union(*(_project_imports(s) for s in (REPO_ROOT / "stages").glob("*.py")))
    assert sorted(_entry_modules() - used) == []
    old_names = {"run.py", "pipeline.py", "build.py", "site.py"}
    package = REPO_ROOT / "src" / "implicit_bench"
    assert not [
        p for p in package.rglob("*.py") if p.name in old_names and p.parent != package / "cli"
    ]


# Modules outside cli/ that may import click (docs/contracts.md, "Tools"): the one-line
# errors of every command, and the model stages' command class.
CLICK_OUTSIDE_CLI = {
    "implicit_bench._util.friendly_errors",
    "implicit_bench.runtime.preflight.stage",
}


def test_every_tool_is_a_module_of_cli_named_after_its_command():
    """``implicit-bench NAME`` is ``implicit_bench.cli.<NAME, '-' -> '_'>`` (``import`` is
    ``cli/import_.py``); a hidden alias sits in the module of the command it aliases."""
    from implicit_bench.cli.main import ALIASES, TOOLS

    assert set(ALIASES) <= set(TOOLS)
    for name, target in TOOLS.items():
        module, _, attr = target.partition(":")
        command = ALIASES.get(name, name).replace("-", "_")
        command += "_" if command == "import" else ""
        assert module == f"implicit_bench.cli.{command}", f"tool {name}: {module}"
        assert attr and (REPO_ROOT / "src" / "implicit_bench" / "cli" / f"{command}.py").is_file()


def test_no_library_module_imports_click():
    """The library parses no options and prints through no click: only ``cli/`` (and the listed
    exceptions) imports click, so every library function runs without it."""
    src = REPO_ROOT / "src"
    offenders = []
    for path in (src / "implicit_bench").rglob("*.py"):
        module = ".".join(path.relative_to(src).with_suffix("").parts)
        if module.startswith("implicit_bench.cli.") or module in CLICK_OUTSIDE_CLI:
            continue
        if any(m == "click" or m.startswith("click.") for m in _imports(path)):
            offenders.append(module)
    assert sorted(offenders) == []


def test_no_test_file_is_named_after_a_review_round():
    """Test files are named after what they test, not after the review or issue that
    asked for them."""
    import re

    rounds = re.compile(r"hardening|round\d|review|issue\d|_r\d+(_|$)")
    named = sorted(
        p.name for p in (REPO_ROOT / "tests").rglob("test_*.py") if rounds.search(p.stem)
    )
    assert named == []


def test_every_dvc_stage_has_its_script_and_its_row_in_the_entry_module_table():
    """Stage NAME runs stages/NAME.py (``cli.stage.ALIASES`` the one documented exception), and
    docs/architecture.md's entry-module table names every stage with the entry module its script
    imports (one name per concept)."""
    import re

    import yaml

    from implicit_bench.cli.stage import ALIASES

    stages = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    doc = (REPO_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## Entry modules", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (`.+?) \| `(implicit_bench\.[\w.]+)`", section, flags=re.MULTILINE)
    documented = {n: module for names, module in rows for n in re.findall(r"`(\w+)`", names)}
    assert set(ALIASES) == {"select"}
    for name, stage in stages.items():
        cmd = (stage.get("do") or stage)["cmd"]
        script = re.search(r"stages/(\w+)\.py", cmd).group(1)
        assert script == ALIASES.get(name, name), f"stage {name} runs stages/{script}.py"
        assert name in documented, f"stage {name} is not in docs/architecture.md's table"
        assert documented[name] in _project_imports(REPO_ROOT / "stages" / f"{script}.py"), name


# tests/ mirrors the package (docs/testing.md, "Layout"): unit tests of package P (or P.Q)
# under tests/unit/P/ (tests/unit/P/Q/; `_util` -> tests/unit/util/), whole-pipeline runs
# under tests/e2e/, checks of the repository itself (layout, docs, dependencies) under
# tests/project/, the docs' recipes typed into fresh clones under tests/journeys/, shared code
# in tests/helpers/.
TEST_FOLDERS = {"e2e", "project", "journeys"}


def _test_files() -> list[Path]:
    return sorted((REPO_ROOT / "tests").rglob("test_*.py"))


def test_tests_mirror_the_packages():
    """Unit tests of package ``a.b`` live under ``tests/unit/a/b/`` (a sub-package too)."""
    src = REPO_ROOT / "src" / "implicit_bench"
    packages = {
        tuple(part.lstrip("_") for part in init.parent.relative_to(src).parts)
        for init in src.rglob("__init__.py")
        if init.parent != src
    }
    misplaced = []
    for path in _test_files():
        parts = path.relative_to(REPO_ROOT / "tests").parts
        ok = (len(parts) == 2 and parts[0] in TEST_FOLDERS) or (
            parts[0] == "unit" and tuple(parts[1:-1]) in packages
        )
        if not ok:
            misplaced.append(str(path.relative_to(REPO_ROOT)))
    assert misplaced == []
    loose = [p.name for p in (REPO_ROOT / "tests").glob("*.py") if p.name != "conftest.py"]
    assert loose == [], "shared test code lives in tests/helpers/"


def test_tests_import_helpers_one_way_and_never_another_test():
    """Shared code is imported as ``tests.helpers.<module>``; no test module imports another, no
    test edits ``sys.path`` or finds the repository from its own ``__file__``
    (``tests.helpers.paths.REPO_ROOT``)."""
    helpers = {p.stem for p in (REPO_ROOT / "tests" / "helpers").glob("*.py")}
    offenders = []
    for path in [*_test_files(), *(REPO_ROOT / "tests" / "helpers").glob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        name = str(path.relative_to(REPO_ROOT))
        for module in _imports(path):
            head = module.split(".")
            if head[0] in helpers or head[0].startswith("test_"):
                offenders.append(f"{name}: import {module}")
            if head[0] == "tests" and len(head) > 1 and head[1] != "helpers":
                offenders.append(f"{name}: import {module}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and ast.unparse(node) == "sys.path.insert":
                offenders.append(f"{name}: sys.path.insert")
            if isinstance(node, ast.Name) and node.id == "__file__" and path.name != "paths.py":
                offenders.append(f"{name}: __file__")
    assert offenders == []


# `(x.get("k") or {})` over a raw mapping: params are read through their typed models
# (`params.section`, `params.base_params`), other stages' metrics JSON through `_util.nested.dig`.
# The chains left, per file; each says why raw in a comment beside it (docs/contracts.md,
# "Configuration": "Reading params").
RAW_CHAIN = re.compile(r'\.get\("[a-z_0-9]+"\) or \{\}\)')
RAW_CHAINS_ALLOWED = {
    # not yet moved: the plan and the run overlay read sections whose model defaults differ from
    # what `plan` prints for an absent key (render.seeds: the plan says none, the model
    # [42, 1042, 2042]); the analyze command and extension build / read analyze's params overlay
    "src/implicit_bench/planning/plan.py": 7,
    "src/implicit_bench/planning/overlay.py": 4,
    "src/implicit_bench/cli/run.py": 1,
    "src/implicit_bench/cli/analyze.py": 2,  # a params overlay (--retrieval)
    "src/implicit_bench/analysis/byo/extensions/retrieval.py": 1,
    # raw on purpose: read before a stage validates its section (the stage reports a bad one)
    "src/implicit_bench/runtime/preflight/checks.py": 4,
    "src/implicit_bench/runtime/cache_location.py": 1,
    "src/implicit_bench/params/__init__.py": 2,  # check_references, apart from the models
    "src/implicit_bench/protocol/judge_families.py": 1,  # `check` on any params file
    # raw is the contract: params.yaml text round-trips and params overlays
    "src/implicit_bench/params/profiles.py": 1,
    "src/implicit_bench/planning/sequential.py": 2,
    "src/implicit_bench/debias/configs.py": 1,  # a model's before-validator input
    # not params: HTTP keyword arguments, a vendor's JSON answer, a result record
    "src/implicit_bench/runtime/httpretry.py": 1,
    "src/implicit_bench/backends/vendor_batch/openai.py": 1,
    "src/implicit_bench/backends/vendor_batch/gemini.py": 1,
}


def test_raw_params_chains_do_not_come_back():
    """No file holds more lines with `(x.get("k") or {})` than RAW_CHAINS_ALLOWED lets it."""
    found: dict[str, int] = {}
    for path in [*(REPO_ROOT / "src").rglob("*.py"), *(REPO_ROOT / "stages").glob("*.py")]:
        lines = path.read_text(encoding="utf-8").splitlines()
        n = sum(1 for line in lines if RAW_CHAIN.search(line))  # lines, as `grep -c` counts
        if n:
            found[path.relative_to(REPO_ROOT).as_posix()] = n
    over = {f: n for f, n in found.items() if n > RAW_CHAINS_ALLOWED.get(f, 0)}
    assert not over, f"raw params chains (read params through their model, JSON with dig): {over}"
    assert sum(RAW_CHAINS_ALLOWED.values()) == 30
