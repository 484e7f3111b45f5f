"""The package root reads as the architecture: at most six modules and twenty packages at
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


#: folders of package data at the root (no code): the judge / writer prompts and word lists
DATA_FOLDERS = {"assets", "prompts"}


def test_at_most_twenty_packages_at_the_package_root():
    """Kinds of one thing share a parent (``backends/``: every model kind; ``construction/``:
    sources -> kg -> triplets), so the root lists the layers, not every part."""
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
    packages = [name for name in folders if (PACKAGE / name / "__init__.py").is_file()]
    assert sorted(set(folders) - set(packages)) == sorted(DATA_FOLDERS)
    assert len(packages) <= 20, packages


#: stage -> (the package its entry module is in, why the names differ)
STAGE_NAME_EXCEPTIONS = {
    "models": ("backends.tiny", "it builds the tiny randomly initialised models of every kind"),
    "judge": ("backends.judges", "one stage runs the backends of the `judges` registry"),
    "select": ("analysis", "unit selection is the analysis library's first step"),
    "evaluate": ("analysis", "the analysis library's metrics, tables and intervals"),
    "judge_audit": ("audits", "the judge-order audit, one of the audits' sections"),
    "negation": ("audits", "the negated-prompt audit, one of the audits' sections"),
    "diversity": ("audits", "the attribute-diversity audit, one of the audits' sections"),
    "diversity_study": ("audits.study", "HoloFair's own study, rendered for the audit"),
    "retrieve": ("debias", "debiasing's first step"),
    "rewrite": ("debias", "debiasing's second step"),
    "b6": ("bench", "Appendix B.6's third judge on the benchmark phase's images"),
}


def _entry_packages(script) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith(".stage"):
            package = node.module.removeprefix("implicit_bench.").removesuffix(".stage")
            if package != "runtime.preflight":  # the model stages' shared command class
                found.add(package)
    return found


def test_each_stage_is_named_after_its_script_and_package():
    """``dvc.yaml`` stage NAME's script calls ``<...>.NAME[...].stage``, or a compound name's
    first word: ``bench_render`` -> ``bench.stage``, ``debias_render`` -> ``debias.render.stage``;
    the exceptions above say why."""
    from implicit_bench.cli.stage import ALIASES  # a script named otherwise, and why
    from implicit_bench.runtime.dvc import dvc_stages

    stages = dvc_stages(REPO_ROOT / "dvc.yaml")
    assert len(stages) > 20
    wrong = []
    for name in stages:
        packages = _entry_packages(REPO_ROOT / "stages" / f"{ALIASES.get(name, name)}.py")
        words = name.split("_")
        if any(name in p.split(".") or words[0] in p.split(".") for p in packages):
            assert name not in STAGE_NAME_EXCEPTIONS, f"{name}: no longer an exception"
            continue
        expected = STAGE_NAME_EXCEPTIONS.get(name, (None, ""))[0]
        if expected not in packages:
            wrong.append(f"{name}: its script calls {sorted(packages)}")
    assert wrong == []
