"""The worked examples of docs/extending.md ("Extending"), performed step by step in a
temporary copy of the package: each adds a judge task or a debiasing method, runs it, and
touches at most two files."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from implicit_bench._util.files import write_json, write_table
from implicit_bench.backends.generators import png_bytes
from implicit_bench.render.images import ImageKey, ImageRecord, ImageStore
from implicit_bench.world.params import WorldParams
from implicit_bench.world.picture import Shown, draw
from implicit_bench.world.truth import plant, world_json
from tests.helpers.judge_fixtures import UNITS
from tests.helpers.paths import REPO_ROOT

DOCS = REPO_ROOT / "docs" / "extending.md"


# ----- helpers -------------------------------------------------------------------------------
def doc_blocks(heading: str) -> list[str]:
    """The fenced code blocks of the docs section under ``heading`` (up to the next heading)."""
    lines = DOCS.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip() == heading)
    blocks: list[str] = []
    current: list[str] | None = None
    for line in lines[start + 1 :]:
        if line.startswith("```"):
            if current is None:
                current = []
            else:
                blocks.append("".join(current))
                current = None
        elif current is not None:
            current.append(line)
        elif line.startswith("#"):
            break
    return blocks


def copy_tracked(dst: Path, paths: list[str]) -> None:
    """Copy the files git tracks (or would track) under ``paths`` into ``dst``."""
    files = (
        subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", *paths],
            cwd=REPO_ROOT,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, files):
        source = REPO_ROOT / name
        if source.is_file():
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            (dst / name).write_bytes(source.read_bytes())


def snapshot(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def touched(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}


def merge(base: dict, extra: dict) -> dict:
    out = dict(base)
    for key, value in extra.items():
        out[key] = (
            merge(out[key], value)
            if isinstance(value, dict) and isinstance(out.get(key), dict)
            else value
        )
    return out


def run_python(root: Path, *args: str) -> subprocess.CompletedProcess:
    """Python in the copy: its ``src`` comes first, so the copy's package is the one imported."""
    env = {
        **os.environ,
        "PYTHONPATH": f"{root / 'src'}{os.pathsep}{root}",
        "IMPLICIT_BENCH_RUN_LOG": str(root / "runs.jsonl"),
    }
    return subprocess.run(
        [sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=600
    )


def world_inputs(root: Path, params: dict) -> int:
    """units.parquet, the planted world of params' ``world`` section and one image store
    ``data/images/base`` of world pictures (one per unit, variant and seed 42)."""
    units = pd.DataFrame(UNITS)
    write_table(units, root / "data/interim/units.parquet")
    world = WorldParams.model_validate(params["world"])
    write_table(plant(units, world), root / "data/world/truth.parquet")
    write_json(root / "data/world/world.json", world_json(world))
    n = 0
    with ImageStore(root / "data/images/base") as store:
        for unit in UNITS:
            for variant, attribute in (
                ("neutral", ""),
                ("stereotype", unit["stereotype"]),
                ("anti_stereotype", unit["anti_stereotype"]),
            ):
                picture = Shown(attribute, unit["head"], "female", "young", noise=n)
                key = ImageKey("base", unit["unit_id"], variant, 42)
                store.put(
                    ImageRecord(
                        key, "sim:sim_local", unit[f"prompt_{variant}"], "ok", width=64, height=64
                    ),
                    png_bytes(draw(picture)),
                )
                n += 1
        store.finalize()
    return n


# ----- adding a judge task -------------------------------------------------------------------
CHECK_PARAMS = """
import sys
from implicit_bench.errors import ConfigError
from implicit_bench.backends.judges.params import JudgeStageParams
from implicit_bench.params import load_params, section
try:
    section(load_params("params.yaml"), "judge", JudgeStageParams, "params.yaml")
except ConfigError as exc:
    print(exc)
    sys.exit(3)
"""

ANALYZE = """
import json
import implicit_bench
from implicit_bench.protocol.tables import JUDGEMENTS, UNITS
from implicit_bench.protocol.tables.judgements import check_judgements
units, _ = UNITS.check(UNITS.path)
judgements, rejects, _ = check_judgements([JUDGEMENTS.path], units)
rows = judgements[judgements["task"] == "single_person"]
print(json.dumps({"package": implicit_bench.__file__, "rejects": int(len(rejects)),
                  "rows": int(len(rows)),
                  "scores": sorted(set(rows.loc[rows["valid"], "score"].tolist()))}))
"""


@pytest.mark.slow
def test_adding_a_judge_task_touches_two_files(tmp_path: Path):
    task_yaml, params_yaml = doc_blocks("#### Worked example: adding a judge task")
    shipped = REPO_ROOT / "src/implicit_bench/prompts/judges/single_person.yaml"
    assert shipped.read_text(encoding="utf-8") == task_yaml  # the docs show the shipped file
    root = tmp_path / "repo"
    copy_tracked(root, ["src/implicit_bench", "stages/judge.py", "params.yaml"])
    (root / "src/implicit_bench/prompts/judges/single_person.yaml").unlink()  # before the example
    before = snapshot(root)
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    (root / "params.yaml").write_text(
        yaml.safe_dump(merge(params, yaml.safe_load(params_yaml))), encoding="utf-8"
    )
    refused = run_python(root, "-c", CHECK_PARAMS)
    assert refused.returncode == 3 and "single_person" in refused.stdout  # unknown until step 1

    # step 1: the task file; step 2 was the params entry above
    (root / "src/implicit_bench/prompts/judges/single_person.yaml").write_text(
        task_yaml, encoding="utf-8"
    )
    changed = touched(before, snapshot(root))
    assert changed == {"src/implicit_bench/prompts/judges/single_person.yaml", "params.yaml"}
    assert len(changed) <= 2

    n_images = world_inputs(root, params)
    done = run_python(root, "stages/judge.py", "--params", "params.yaml")
    assert done.returncode == 0, done.stderr
    frame = pd.read_parquet(root / "data/judgements/judgements.parquet")
    rows = frame[frame["task"] == "single_person"]
    assert len(rows) == n_images and set(rows["judge"]) == {"qwen3vl"}  # one simulated judge
    assert rows["order"].isna().all()
    valid = rows[rows["valid"]]
    assert len(valid) >= n_images // 2 and set(valid["value"]) <= {"true", "false"}
    assert rows.loc[~rows["valid"], "value"].isna().all()  # malformed answers: invalid, counted
    metrics = json.loads((root / "metrics/judge.json").read_text(encoding="utf-8"))
    counts = metrics["counts"]["qwen3vl"]["single_person"]
    assert counts["rows"] == n_images and counts["valid"] == len(valid)
    assert "single_person" in metrics["tasks"] and {"rubric", "blind", "alignment"} <= set(
        frame["task"]
    )

    analyzed = run_python(root, "-c", ANALYZE)
    assert analyzed.returncode == 0, analyzed.stderr
    result = json.loads(analyzed.stdout)
    assert Path(result["package"]).is_relative_to(root)  # the copy's package ran
    assert result["rejects"] == 0 and result["rows"] == n_images
    assert set(result["scores"]) <= {0.0, 1.0}


# ----- adding a debiasing method -------------------------------------------------------------
DESCRIBE = """
import json
import implicit_bench
from implicit_bench.debias.configs import TABLE_27
from implicit_bench.debias.methods import METHODS
from implicit_bench.debias.params import DebiasParams
from implicit_bench.params import load_params, section
params = section(load_params("params.yaml"), "debias", DebiasParams, "params.yaml").checked()
spec = params.configs["suffix_fairness"]
print(json.dumps({"package": implicit_bench.__file__, "methods": METHODS.names(),
                  "label": spec.label, "dump": spec.model_dump(), "table27": sorted(TABLE_27)}))
"""


@pytest.mark.slow
def test_adding_a_debias_method_touches_two_files(tmp_path: Path):
    module, params_yaml = doc_blocks("#### Worked example: adding a debiasing method")
    shipped = REPO_ROOT / "src/implicit_bench/debias/methods/suffix.py"
    assert shipped.read_text(encoding="utf-8") == module  # the docs show the shipped module
    root = tmp_path / "repo"
    copy_tracked(root, ["src/implicit_bench", "stages/debias_render.py", "params.yaml"])
    (root / "src/implicit_bench/debias/methods/suffix.py").unlink()  # before the example
    before = snapshot(root)
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    (root / "params.yaml").write_text(
        yaml.safe_dump(merge(params, yaml.safe_load(params_yaml))), encoding="utf-8"
    )
    refused = run_python(root, "-c", DESCRIBE)
    assert (
        refused.returncode != 0 and "unknown debias method 'suffix'" in refused.stderr
    )  # until step 1

    # step 1: the method module; step 2 was the params entry above
    (root / "src/implicit_bench/debias/methods/suffix.py").write_text(module, encoding="utf-8")
    changed = touched(before, snapshot(root))
    assert changed == {"src/implicit_bench/debias/methods/suffix.py", "params.yaml"}
    assert len(changed) <= 2

    described = run_python(root, "-c", DESCRIBE)
    assert described.returncode == 0, described.stderr
    info = json.loads(described.stdout)
    assert Path(info["package"]).is_relative_to(root)  # the copy's package ran
    assert "suffix" in info["methods"] and info["label"] == "Prompt suffix"
    suffix = yaml.safe_load(params_yaml)["debias"]["configs"]["suffix_fairness"]["suffix"]
    assert info["dump"] == {
        "exp": None,
        "method": "suffix",
        "reads": "debias.seeds",
        "suffix": suffix,
    }

    world_inputs(root, params)
    done = run_python(
        root, "stages/debias_render.py", "--config", "suffix_fairness", "--params", "params.yaml"
    )
    assert done.returncode == 0, done.stderr
    with ImageStore(root / "data/debias/images/suffix_fairness") as store:
        index = store.index()
    seeds = params["debias"]["seeds"]
    assert len(index) == len(UNITS) * len(seeds) and set(index["status"]) == {
        "ok"
    }  # the sim generator
    expected = {u["unit_id"]: f"{u['prompt_neutral']} {suffix}" for u in UNITS}
    assert all(expected[r.unit_id] == r.prompt for r in index.itertuples())
    summary = json.loads(
        (root / "data/debias/images/suffix_fairness/summary.json").read_text(encoding="utf-8")
    )
    assert (
        summary["method"] == "suffix"
        and summary["alpha"] is None
        and summary["units_not_rendered"] == {}
    )
