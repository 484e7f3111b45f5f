"""Every `dvc exp run -S`, `implicit-bench profile` and `implicit-bench run` example in README.md
and docs/ works as written: each `-S` override is applied with DVC's own
function (what `dvc exp run -S` calls) to the params of a shipped profile, and the result is
validated with the params models of the sections it touches; profile names exist; `run`
flags parse."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.paths import REPO_ROOT

COMMAND = re.compile(r"\b(dvc exp run|implicit-bench (?:profile|run))\b")
PROFILES = ("default", "paper", "tiny")


def _doc_files() -> list[Path]:
    return [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]


def recipes(text: str) -> list[str]:
    """Commands in fenced code blocks (continuation lines joined) and in inline code spans."""
    found = []
    for block in re.findall(r"```[A-Za-z]*\n(.*?)```", text, re.S):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            line = re.sub(r"\s+#.*$", "", line.strip())
            found += [part.strip() for part in line.split("&&") if COMMAND.search(part)]
    for span in re.findall(r"`([^`\n]+)`", text):
        found += [part.strip() for part in span.split("&&") if COMMAND.match(part.strip())]
    return [" ".join(c[c.index(COMMAND.search(c).group(0)) :].split()) for c in found]


def _overrides(cmd: str) -> list[str] | None:
    words = shlex.split(cmd)
    out = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-S", "--set-param")]
    placeholder = {"key", "section.key", "param", "KEY"}
    if not out or any(
        "..." in o or o.startswith("section.") or o.split("=", 1)[0] in placeholder for o in out
    ):
        return (
            None  # no override, or a placeholder (`-S section.key=value`, `-S key=value`, `-S ...`)
        )
    return out


def validate_sections(params: dict[str, Any], sections: set[str]) -> None:
    """Validate ``sections`` (and the catalogue entries they use) with the stages' params models."""
    from implicit_bench.backends.generators import validate_config
    from implicit_bench.backends.judges import judge_params
    from implicit_bench.params import SubsetParams, check_references, section

    check_references(params)
    for name, block in (params.get("generators") or {}).items():
        if "generators" in sections or "render" in sections:
            validate_config(block, where=f"generators.{name}")
    for name, block in (params.get("judges") or {}).items():
        if "judges" in sections or "judge" in sections:
            judge_params(block, f"judges.{name}")
    if "render" in sections:
        from implicit_bench.render.params import RenderParams

        section(params, "render", RenderParams, attach={"generators": "configs"})
    if "judge" in sections:
        from implicit_bench.backends.judges.params import JudgeStageParams

        section(params, "judge", JudgeStageParams, attach={"judges": "judges"})
    if "debias" in sections:
        from implicit_bench.debias.stage import DebiasParams

        section(
            params, "debias", DebiasParams, inherit={"bootstrap": "scoring.bootstrap"}
        ).checked()
    if "kg" in sections:
        from implicit_bench.construction.kg.params import KGParams

        section(params, "kg", KGParams)
    if "triplets" in sections:
        from implicit_bench.construction.triplets.params import TripletsParams

        section(params, "triplets", TripletsParams)
    if "subset" in sections:
        section(params, "subset", SubsetParams)
    if "clip" in sections:
        from implicit_bench.backends.clip.params import ClipStageParams

        section(params, "clip", ClipStageParams)


def _check_exp_run(cmd: str, tmp_path: Path) -> str | None:
    """None when the overrides apply to and validate on at least one
    shipped profile; else why not."""
    from dvc.utils.hydra import apply_overrides

    from implicit_bench.params.profiles import compose

    overrides = _overrides(cmd)
    if overrides is None:
        return None
    errors = []
    for profile in PROFILES:
        path = tmp_path / f"{profile}.yaml"
        path.write_text(
            yaml.safe_dump(compose(profile, REPO_ROOT / "params.yaml", REPO_ROOT / "profiles"))
        )
        try:
            apply_overrides(path, overrides)
            params = yaml.safe_load(path.read_text())
            validate_sections(
                params, {o.lstrip("+~").split(".", 1)[0].split("=", 1)[0] for o in overrides}
            )
            return None
        except Exception as exc:  # noqa: BLE001 - collected, reported below
            errors.append(f"{profile}: {' '.join(str(exc).split())[:300]}")
    return "; ".join(errors)


def _all_recipes() -> list[tuple[str, str]]:
    return [
        (path.relative_to(REPO_ROOT).as_posix(), cmd)
        for path in _doc_files()
        for cmd in recipes(path.read_text(encoding="utf-8"))
    ]


def test_the_docs_have_recipes_to_check():
    cmds = [c for _, c in _all_recipes()]
    assert any("render.executors.qwen_image" in c for c in cmds)  # the Ray recipe of docs/gpu.md
    assert any(c.startswith("implicit-bench run") for c in cmds)  # README, "Evaluate your model"


def test_every_dvc_exp_run_override_applies_and_validates(tmp_path):
    failures = []
    for doc, cmd in _all_recipes():
        if cmd.startswith("dvc exp run"):
            error = _check_exp_run(cmd, tmp_path)
            if error:
                failures.append(f"{doc}: {cmd}\n    {error}")
    assert not failures, "\n".join(failures)


def test_the_ray_recipe_as_the_issue_ran_it_fails_and_as_documented_works(tmp_path):
    wrong = (
        "dvc exp run -S render.executors.qwen_image.kind=ray"  # DVC refuses a new key without '+'
    )
    assert _check_exp_run(wrong, tmp_path) is not None
    gpu = (REPO_ROOT / "docs/gpu.md").read_text(encoding="utf-8")
    ray = [
        c
        for c in recipes(gpu)
        if "render.executors.qwen_image" in c and c.startswith("dvc exp run")
    ]
    assert ray and all(_check_exp_run(c, tmp_path) is None for c in ray)


def test_every_profile_and_run_example_is_valid(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from implicit_bench.cli.run import run_command

    known = {p.stem for p in (REPO_ROOT / "profiles").glob("*.yaml")} | {"default"}
    for doc, cmd in _all_recipes():
        words = shlex.split(cmd)
        if words[:2] == ["implicit-bench", "profile"]:
            names = [w for w in words[2:] if not w.startswith("-")]
            assert (
                not names
                or names[0] in known
                or names[0] in ("NAME", "run")
                or names[0].startswith("run-")
            ), f"{doc}: {cmd}"
        elif (
            words[:2] == ["implicit-bench", "run"]
            and len(words) > 2
            and "..." not in cmd
            and "<" not in cmd
        ):
            if "REL" in words:  # the placeholder of the user's copy of the release
                (tmp_path / "REL").mkdir(exist_ok=True)
                monkeypatch.chdir(tmp_path)
            ctx = run_command.make_context("run", words[2:], resilient_parsing=False)
            monkeypatch.undo()
            assert ctx.params["generators"] and ctx.params["judges"], f"{doc}: {cmd}"
    assert CliRunner  # the flags parse with click's own parser (make_context raises otherwise)


@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "```bash\ndvc exp run -S a.b=1 \\\n   -S c.d=2  # note\n```\n",
            ["dvc exp run -S a.b=1 -S c.d=2"],
        ),
        ("run `dvc exp run -S debias.alpha=1` then", ["dvc exp run -S debias.alpha=1"]),
        (
            '```\nsh -c "implicit-bench profile paper && dvc repro"\n```',
            ["implicit-bench profile paper"],
        ),
    ],
)
def test_recipe_extraction(text, expected):
    assert recipes(text) == expected
