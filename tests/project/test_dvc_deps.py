"""Every DVC stage declares what its script imports and reads (docs/contracts.md,
"Declared dependencies"); the checker itself is tested on a small made-up package."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers.dvc_deps import (
    StageSpec,
    covered,
    import_closure,
    package_data,
    read_sections,
    workspace_reads,
)
from tests.helpers.paths import REPO_ROOT


def test_every_stage_declares_its_imports_package_data_reads_and_params():
    from tests.helpers.dvc_deps import missing

    gaps = missing(REPO_ROOT)
    lines = [
        f"{stage} {kind}: {', '.join(paths)}"
        for stage, kinds in gaps.items()
        for kind, paths in kinds.items()
    ]
    assert not gaps, "dvc.yaml deps miss what the stages use (add them):\n" + "\n".join(lines)


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_closure_follows_lazy_imports_registry_strings_and_package_inits(tmp_path):
    _write(
        tmp_path,
        {
            "src/implicit_bench/__init__.py": "",
            "src/implicit_bench/core.py": "X = 1\n",
            "src/implicit_bench/lazy.py": "",
            "src/implicit_bench/unused.py": "",
            "src/implicit_bench/backends/__init__.py": 'REG = {"a": '
            '"implicit_bench.backends.impl:Impl"}\n',
            "src/implicit_bench/backends/impl.py": "from . import helper\n",
            "src/implicit_bench/backends/helper.py": "",
            "stages/s.py": (
                "from implicit_bench.core import X\n"
                "from implicit_bench import backends\n"
                "def main():\n    import implicit_bench.lazy\n"
            ),
        },
    )
    found = {
        p.relative_to(tmp_path).as_posix()
        for p in import_closure(tmp_path, tmp_path / "stages/s.py")
    }
    assert found == {
        "stages/s.py",
        "src/implicit_bench/__init__.py",
        "src/implicit_bench/core.py",
        "src/implicit_bench/lazy.py",  # imported inside a function
        "src/implicit_bench/backends/__init__.py",
        "src/implicit_bench/backends/impl.py",  # a registry "module:Class" string
        "src/implicit_bench/backends/helper.py",  # a relative import of the registered module
    }


def test_a_lazy_import_counts_only_in_a_reached_function(tmp_path):
    """A registry importing every method module made each stage that validates the
    params declare what only another stage's calls of a method import (debias/steering.py)."""
    _write(
        tmp_path,
        {
            "src/implicit_bench/__init__.py": "",
            "src/implicit_bench/heavy.py": "",
            "src/implicit_bench/used.py": "",
            "src/implicit_bench/hook.py": "",
            "src/implicit_bench/deco.py": "",
            "src/implicit_bench/ext.py": "",
            "src/implicit_bench/methods.py": (
                "import click\n"
                "class Method:\n"
                "    def render(self):\n        import implicit_bench.heavy\n"
                "    def score(self):\n        import implicit_bench.used\n"
                "def _helper():\n    import implicit_bench.heavy\n"
                "def called():\n    import implicit_bench.ext\n"
                "class Cmd(click.Command):\n"
                "    def invoke(self, ctx):\n        import implicit_bench.hook\n"
                "@click.command()\ndef cli():\n    import implicit_bench.deco\n"
            ),
            "stages/s.py": (
                "from implicit_bench.methods import Method, called\n"
                "render = 1\n"  # a bare name does not call a method
                "def main():\n    Method().score()\n    called()\n"
            ),
        },
    )
    found = {
        p.relative_to(tmp_path).as_posix()
        for p in import_closure(tmp_path, tmp_path / "stages/s.py")
    }
    assert found == {
        "stages/s.py",
        "src/implicit_bench/__init__.py",
        "src/implicit_bench/methods.py",
        "src/implicit_bench/used.py",  # Method.score: called as an attribute
        "src/implicit_bench/ext.py",  # called(): named by the script
        "src/implicit_bench/hook.py",  # a method of a click.Command subclass: click calls it
        "src/implicit_bench/deco.py",  # a decorated function
    }  # not heavy.py: Method.render and _helper are named nowhere


def test_steering_only_where_it_is_reached():
    """debias/steering.py is declared by the stages that steer (debias_render renders with it,
    recovery plants its dS), not by those that only validate the debias params."""
    from tests.helpers.dvc_deps import dvc_stages

    steering = REPO_ROOT / "src/implicit_bench/debias/steering.py"
    declaring = {
        spec.name.partition("@")[0]
        for spec in dvc_stages(REPO_ROOT)
        if steering in import_closure(REPO_ROOT, REPO_ROOT / spec.script)
    }
    assert declaring == {"debias_render", "recovery"}


def test_package_data_named_by_folder_and_stem(tmp_path):
    _write(
        tmp_path,
        {
            "src/implicit_bench/__init__.py": "",
            "src/implicit_bench/prompts/judges/rubric.yaml": "",
            "src/implicit_bench/prompts/judges/blind.yaml": "",
            "src/implicit_bench/prompts/other.txt": "",
            "src/implicit_bench/tasks.py": (
                "from importlib import resources\n"
                "def load(name):\n"
                "    return resources.files('implicit_bench') / "
                "'prompts' / 'judges' / f'{name}.yaml'\n"
                "TASKS = ['rubric']\n"
            ),
        },
    )
    closure = {tmp_path / "src/implicit_bench/tasks.py"}
    found = {p.name for p in package_data(tmp_path, closure)}
    assert found == {"rubric.yaml"}  # blind is never named, other.txt is in another folder


def test_reads_of_other_stages_outputs_and_foreach_entries():
    outs = [
        "data/images",
        "metrics/render.json",
        "data/debias/images/a",
        "data/debias/images/b",
        "data/x.parquet",
    ]
    spec = StageSpec("judge@a", "stages/judge.py", [], ["data/debias/j/a.parquet"], set())
    strings = {
        "data/images/*/index.parquet",
        "metrics/render.json",
        "data/debias/images",
        "not a path",
    }
    reads = workspace_reads(strings, spec, outs, REPO_ROOT)
    assert reads == {"data/images", "metrics/render.json", "data/debias/images/a"}
    assert covered("data/images/tiny/index.parquet", ["data/images"])
    assert not covered("data/images2", ["data/images"])


def test_params_sections_read_by_a_script(tmp_path):
    script = tmp_path / "s.py"
    script.write_text(
        "def main(raw, path):\n"
        "    p = section(raw, 'render', object, path)\n"
        "    profile = (raw.get('base') or {}).get('profile')\n"
        "    return raw['judge']\n",
        encoding="utf-8",
    )
    assert read_sections(script) == {"render", "base", "judge"}


def test_dvc_yaml_deps_are_exactly_the_derived_ones():
    """Every stage lists its script, its import closure and the package data it opens, and
    nothing else under src/ (extra deps fail too): `make dvc-deps` writes them."""
    from scripts.dvc_deps import render

    current = (REPO_ROOT / "dvc.yaml").read_text(encoding="utf-8")
    derived = render(REPO_ROOT, current)
    diff = [
        f"- {a}\n+ {b}"
        for a, b in zip(current.splitlines(), derived.splitlines(), strict=False)
        if a != b
    ]
    assert derived == current, (
        "dvc.yaml deps differ from the derived ones (run `make dvc-deps`):\n" + "\n".join(diff[:20])
    )


def test_deps_come_last_in_each_stage():
    """A stage's hand-written cmd, params and outs sit above its generated deps (a foreach
    stage's too); blank lines and comments closing a stage stay below; a second pass changes
    nothing."""
    from scripts.dvc_deps import deps_last

    text = [
        "stages:",
        "  a:",
        "    cmd: python stages/a.py",
        "    deps:",
        "      - stages/a.py",
        "      # a comment among the deps",
        "      - src/x.py",
        "    params:",
        "      - a",
        "    outs:",
        "      - out/a.json",
        "",
        "  # the next stage",
        "  b:",
        "    foreach: [x, y]",
        "    do:",
        "      deps:",
        "        - stages/b.py",
        "      cmd: python stages/b.py ${key}",
        "plots:",
        "  - out/a.json",
    ]
    moved = deps_last(text)
    assert moved == [
        "stages:",
        "  a:",
        "    cmd: python stages/a.py",
        "    params:",
        "      - a",
        "    outs:",
        "      - out/a.json",
        "    deps:",
        "      - stages/a.py",
        "      # a comment among the deps",
        "      - src/x.py",
        "",
        "  # the next stage",
        "  b:",
        "    foreach: [x, y]",
        "    do:",
        "      cmd: python stages/b.py ${key}",
        "      deps:",
        "        - stages/b.py",
        "plots:",
        "  - out/a.json",
    ]
    assert deps_last(moved) == moved


def test_workspace_deps_are_outputs_or_raw_files():
    """A dep outside src/ and stages/ is another stage's output (or inside
    one) or a tracked raw file."""
    from tests.helpers.dvc_deps import dvc_stages

    specs = dvc_stages(REPO_ROOT)
    outs = {o: s.name for s in specs for o in s.outs}
    bad = []
    for spec in specs:
        for dep in spec.deps:
            if dep.startswith(("src/", "stages/")):
                continue
            producers = {n for o, n in outs.items() if covered(dep, [o]) or covered(o, [dep])}
            if not (producers - {spec.name}) and not (
                dep.startswith("data/raw/") and (REPO_ROOT / dep).exists()
            ):
                bad.append(f"{spec.name}: {dep}")
    assert not bad, "deps nothing produces:\n" + "\n".join(bad)


def test_compress_lists_a_folder_only_when_all_its_files_are_needed():
    from scripts.dvc_deps import compress

    files = ["src/p/a/x.py", "src/p/a/y.py", "src/p/b/x.py", "src/p/b/y.py", "src/p/c.py"]
    assert compress({"src/p/a/x.py", "src/p/a/y.py", "src/p/b/x.py"}, files) == [
        "src/p/a",
        "src/p/b/x.py",
    ]
    assert compress(set(files), files) == ["src/p"]


def test_closure_follows_import_module_prefixes_and_package_iteration(tmp_path):
    _write(
        tmp_path,
        {
            "src/implicit_bench/__init__.py": "",
            "src/implicit_bench/kinds/__init__.py": "",
            "src/implicit_bench/kinds/a.py": "",
            "src/implicit_bench/kinds/b.py": "",
            "src/implicit_bench/methods/__init__.py": "import pkgutil\nfor m in "
            "pkgutil.iter_modules(__path__):\n    pass\n",
            "src/implicit_bench/methods/m.py": "",
            "stages/s.py": (
                "import importlib\nimport implicit_bench.methods\n"
                "def load(kind):\n    return "
                "importlib.import_module(f'implicit_bench.kinds.{kind}')\n"
            ),
        },
    )
    found = {
        p.relative_to(tmp_path).as_posix()
        for p in import_closure(tmp_path, tmp_path / "stages/s.py")
    }
    assert {
        "src/implicit_bench/kinds/a.py",
        "src/implicit_bench/kinds/b.py",
        "src/implicit_bench/methods/m.py",
    } <= found


@pytest.mark.slow
def test_editing_the_openai_llm_client_reruns_only_the_stages_importing_it(tmp_path):
    """Real DVC: with every stage committed, an edit of llm/openai.py changes the deps of exactly
    the stages whose import closure holds it (not `world`, hence not the whole DAG)."""
    import json
    import subprocess

    from tests.helpers.dvc_deps import dvc_stages
    from tests.helpers.paths import copy_repo

    copy_repo(REPO_ROOT, tmp_path)
    dvc = [sys.executable, "-m", "dvc"]
    subprocess.run([*dvc, "init", "--no-scm", "-q", "-f"], cwd=tmp_path, check=True)
    specs = dvc_stages(tmp_path)
    for spec in specs:  # placeholder outputs, so `dvc commit` records every stage as run
        for out in spec.outs:
            path = tmp_path / out
            if not Path(out).suffix:
                path.mkdir(parents=True, exist_ok=True)
                (path / "placeholder").write_text(out, encoding="utf-8")
            elif not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(out, encoding="utf-8")
    subprocess.run([*dvc, "commit", "-f", "-q"], cwd=tmp_path, check=True, capture_output=True)
    client = tmp_path / "src/implicit_bench/backends/llm/openai.py"
    client.write_text(client.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
    status = json.loads(
        subprocess.run(
            [*dvc, "status", "--json"], cwd=tmp_path, check=True, capture_output=True, text=True
        ).stdout
    )
    rerun = {name.rpartition(":")[2] for name in status}
    importing = {
        s.name.rpartition(":")[2]
        for s in specs
        if client in import_closure(tmp_path, tmp_path / s.script)
    }
    assert "world" not in importing and "render" not in importing
    assert rerun == importing


def test_no_declared_dependency_is_an_empty_file():
    """DVC warns "'PATH' is empty" at every stage that declares an empty file (the
    empty report/ and human_eval/ package inits warned at eight stages of every repro)."""
    import yaml

    stages = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    declared = {
        dep
        for stage in stages.values()
        for dep in (stage.get("do", stage).get("deps") or [])
        if isinstance(dep, str)
    }
    files = [REPO_ROOT / d for d in declared if (REPO_ROOT / d).is_file()]
    files += [
        p for d in declared if (REPO_ROOT / d).is_dir() for p in (REPO_ROOT / d).rglob("*.py")
    ]
    empty = sorted(str(p.relative_to(REPO_ROOT)) for p in files if p.stat().st_size == 0)
    assert not empty, f"empty declared deps (give each a docstring): {empty}"
