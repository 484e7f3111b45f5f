"""Every DVC stage declares what its script imports and reads (docs/architecture.md,
"Declared dependencies"); the checker itself is tested on a small made-up package."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import REPO_ROOT
from tests.dvc_deps import (
    StageSpec,
    covered,
    import_closure,
    package_data,
    read_sections,
    workspace_reads,
)


def test_every_stage_declares_its_imports_package_data_reads_and_params():
    from tests.dvc_deps import missing

    gaps = missing(REPO_ROOT)
    lines = [f"{stage} {kind}: {', '.join(paths)}" for stage, kinds in gaps.items() for kind, paths in kinds.items()]
    assert not gaps, "dvc.yaml deps miss what the stages use (add them):\n" + "\n".join(lines)


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_closure_follows_lazy_imports_registry_strings_and_package_inits(tmp_path):
    _write(tmp_path, {
        "src/implicit_bench/__init__.py": "",
        "src/implicit_bench/core.py": "X = 1\n",
        "src/implicit_bench/lazy.py": "",
        "src/implicit_bench/unused.py": "",
        "src/implicit_bench/backends/__init__.py": 'REG = {"a": "implicit_bench.backends.impl:Impl"}\n',
        "src/implicit_bench/backends/impl.py": "from . import helper\n",
        "src/implicit_bench/backends/helper.py": "",
        "stages/s.py": (
            "from implicit_bench.core import X\n"
            "from implicit_bench import backends\n"
            "def main():\n    import implicit_bench.lazy\n"
        ),
    })
    found = {p.relative_to(tmp_path).as_posix() for p in import_closure(tmp_path, tmp_path / "stages/s.py")}
    assert found == {
        "stages/s.py",
        "src/implicit_bench/__init__.py",
        "src/implicit_bench/core.py",
        "src/implicit_bench/lazy.py",  # imported inside a function
        "src/implicit_bench/backends/__init__.py",
        "src/implicit_bench/backends/impl.py",  # a registry "module:Class" string
        "src/implicit_bench/backends/helper.py",  # a relative import of the registered module
    }


def test_package_data_named_by_folder_and_stem(tmp_path):
    _write(tmp_path, {
        "src/implicit_bench/__init__.py": "",
        "src/implicit_bench/prompts/judges/rubric.yaml": "",
        "src/implicit_bench/prompts/judges/blind.yaml": "",
        "src/implicit_bench/prompts/other.txt": "",
        "src/implicit_bench/tasks.py": (
            "from importlib import resources\n"
            "def load(name):\n"
            "    return resources.files('implicit_bench') / 'prompts' / 'judges' / f'{name}.yaml'\n"
            "TASKS = ['rubric']\n"
        ),
    })
    closure = {tmp_path / "src/implicit_bench/tasks.py"}
    found = {p.name for p in package_data(tmp_path, closure)}
    assert found == {"rubric.yaml"}  # blind is never named, other.txt is in another folder


def test_reads_of_other_stages_outputs_and_foreach_entries():
    outs = ["data/images", "metrics/render.json", "data/debias/images/a", "data/debias/images/b", "data/x.parquet"]
    spec = StageSpec("judge@a", "stages/judge.py", [], ["data/debias/j/a.parquet"], set())
    strings = {"data/images/*/index.parquet", "metrics/render.json", "data/debias/images", "not a path"}
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
