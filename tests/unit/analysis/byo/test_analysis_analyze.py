"""`implicit-bench analyze` and the select / evaluate stages write the same outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from implicit_bench.analysis.byo import extensions
from implicit_bench.cli.main import main as cli_main
from tests.helpers.analysis_fixtures import (
    BLIND_TYPES,
    blind_judgements,
    rows,
    rubric_judgements,
    units,
)
from tests.helpers.debias_fixtures import debias_judgements
from tests.helpers.paths import REPO_ROOT
from tests.helpers.written import approx_written


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    units(BLIND_TYPES).to_csv(tmp_path / "units.csv", index=False)
    j = pd.concat([blind_judgements(), rubric_judgements()], ignore_index=True)
    j.to_parquet(tmp_path / "judgements.parquet")
    return tmp_path / "units.csv", tmp_path / "judgements.parquet"


def seen_by_extension(tables, out_dir, params):
    """A test extension: records what it received."""
    (out_dir / "metrics").mkdir(parents=True, exist_ok=True)
    (out_dir / "metrics" / "ext.json").write_text(
        json.dumps(
            {
                "units": len(tables.units),
                "judgements": len(tables.judgements),
                "section": params.get("ext"),
            }
        )
    )
    return {"ok": True}


def test_analyze_command(tmp_path, monkeypatch):
    u, j = _inputs(tmp_path)
    monkeypatch.setitem(extensions.EXTENSIONS, "test", "test_analysis_analyze:seen_by_extension")
    (tmp_path / "p.yaml").write_text(
        yaml.safe_dump({"ext": {"x": 1}, "evaluate": {"bootstrap": {"n": 50}}})
    )
    out = tmp_path / "out"
    res = CliRunner().invoke(
        cli_main,
        [
            "analyze",
            "--units",
            str(u),
            "--judgements",
            str(j),
            "--out",
            str(out),
            "--params",
            str(tmp_path / "p.yaml"),
            "--blind-judge",
            "A",
            "--blind-judge",
            "B",
            "--bootstrap-seed",
            "5",
        ],
    )
    assert res.exit_code == 0, res.output
    bench = json.loads((out / "metrics" / "benchmark.json").read_text())
    for key in (
        "default_rate",
        "success_stereotype",
        "success_anti",
        "gap",
        "by_default_strength",
        "by_bias_type",
    ):
        assert key in bench
    # --selection none: every unit is analysed, so the headline equals test_analysis_blind's 6/11
    assert bench["default_rate"]["value"] == pytest.approx(6 / 11)
    assert (
        bench["bootstrap"]["n_boot"] == 50
        and bench["bootstrap"]["seed"] == 5
        and bench["default_rate"]["n"] == 4
    )
    assert bench["primary_judge"] == "A" and len(bench["agreement"]) == 1
    sel = json.loads((out / "metrics" / "selection.json").read_text())
    assert sel["applied"] is False and sel["units_kept"] == 2
    lean = json.loads((out / "metrics" / "lean.json").read_text())
    assert set(lean["scorers"]) == {"A", "B"}
    for name in (
        "table21_label_shares",
        "table22_success_by_default_strength",
        "table05_recoverability",
        "table13_lean",
        "table03_neutral_mean",
    ):
        assert (out / "tables" / f"{name}.csv").exists() and (
            out / "tables" / f"{name}.md"
        ).exists()
    conf = pd.read_csv(out / "plots" / "judge_confusion.csv")
    assert len(conf) == 27  # the complete-unit images of test_analysis_blind's agreement test
    assert json.loads((out / "metrics" / "ext.json").read_text()) == {
        "units": 4,
        "judgements": len(pd.read_parquet(j)),
        "section": {"x": 1},
    }


def _run_stage(name: str, cwd: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")}
    script = REPO_ROOT / "stages" / f"{name}.py"
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


def test_stages_match_analyze(tmp_path):
    u, j = _inputs(tmp_path)
    params = {
        "select": {"units": str(u), "judgements": [str(j)], "pairs": None},
        "evaluate": {"units": str(u), "judgements": [str(j)], "bootstrap": {"n": 40, "seed": 3}},
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    _run_stage("select_units", tmp_path)
    _run_stage("evaluate", tmp_path)
    selected = pd.read_parquet(tmp_path / "data" / "processed" / "selected_units.parquet")
    assert sorted(selected["unit_id"]) == ["u1", "u2"]
    res = CliRunner().invoke(
        cli_main,
        [
            "analyze",
            "--units",
            str(u),
            "--judgements",
            str(j),
            "--out",
            str(tmp_path / "byo"),
            "--selection",
            "union",
            "--bootstrap-n",
            "40",
            "--bootstrap-seed",
            "3",
        ],
    )
    assert res.exit_code == 0, res.output
    for name in ("benchmark.json", "lean.json", "selection.json"):
        a = json.loads((tmp_path / "metrics" / name).read_text())
        b = json.loads((tmp_path / "byo" / "metrics" / name).read_text())
        a.pop("inputs", None), b.pop("inputs", None), a.pop("applied", None), b.pop("applied", None)
        assert a == b, name
    stage_tables = sorted(p.name for p in (tmp_path / "tables").iterdir())
    assert stage_tables == sorted(p.name for p in (tmp_path / "byo" / "tables").iterdir())
    for p in (tmp_path / "plots").iterdir():
        assert p.read_text() == (tmp_path / "byo" / "plots" / p.name).read_text()
    bench = json.loads((tmp_path / "metrics" / "benchmark.json").read_text())
    # kept units u1, u2: neutral s = 3 + 1 of 6
    assert bench["default_rate"]["value"] == pytest.approx(4 / 6)


def test_analyze_reports_bad_rows(tmp_path):
    u, _ = _inputs(tmp_path)
    (tmp_path / "j.csv").write_text(
        "unit_id,variant,seed,config,judge,task,value\n"
        "u1,neutral,42,gen,A,blind,s\n"
        "u1,neutral,42,gen,A,blind,a\n"  # duplicate key
        "u2,neutral,42,gen,A,blind,B\n"  # option letter
        "u3,neutral,42,gen,A,blind,neither\n"
    )
    out = tmp_path / "out"
    res = CliRunner().invoke(
        cli_main,
        [
            "analyze",
            "--units",
            str(u),
            "--judgements",
            str(tmp_path / "j.csv"),
            "--out",
            str(out),
            "--bootstrap-n",
            "10",
        ],
    )
    assert res.exit_code == 0, res.output
    bench = json.loads((out / "metrics" / "benchmark.json").read_text())
    assert bench["inputs"]["rejected_rows"] == 3 and bench["inputs"]["duplicate_keys"] == 1
    # only u3's neutral label is left: default rate 0 of 1
    assert (
        bench["default_rate"]["value"] == 0.0
        and bench["judges"]["A"]["all"]["n_images"]["neutral"] == 1
    )
    rejects = pd.read_csv(out / "tables" / "rejected_rows.csv")
    assert sorted(rejects["row"]) == [1, 2, 3]
    res = CliRunner().invoke(
        cli_main,
        [
            "analyze",
            "--units",
            str(u),
            "--judgements",
            str(tmp_path / "j.csv"),
            "--out",
            str(out),
            "--params",
            str(_params(tmp_path, {"evaluate": {"on_bad_row": "error", "on_duplicate": "error"}})),
        ],
    )
    assert res.exit_code == 1 and "j.csv, row 2" in res.output


def _params(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "strict.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_worked_example_of_the_docs(tmp_path):
    """docs/byo-judgements.md: the example tables give the numbers the page works out."""
    text = (REPO_ROOT / "docs" / "byo-judgements.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```csv\n")[1:]]
    (tmp_path / "units.csv").write_text(blocks[0])
    (tmp_path / "judgements.csv").write_text(blocks[1])
    res = CliRunner().invoke(
        cli_main,
        [
            "analyze",
            "--units",
            str(tmp_path / "units.csv"),
            "--judgements",
            str(tmp_path / "judgements.csv"),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert res.exit_code == 0, res.output
    b = json.loads((tmp_path / "out" / "metrics" / "benchmark.json").read_text())
    assert b["default_rate"]["value"] == approx_written(4 / 5)
    assert b["success_stereotype"]["value"] == approx_written(5 / 6)
    assert b["success_anti"]["value"] == approx_written(4 / 6)
    assert b["gap"]["value"] == approx_written(1 / 6)
    assert b["a_to_s"]["value"] == approx_written(2 / 6)
    g = b["by_default_strength"]
    assert g["ungrouped_units"] == 1 and g["groups"]["3 of 3"]["gap"]["value"] == approx_written(
        2 / 3
    )
    assert g["groups"]["3 of 3"]["a_to_s"]["value"] == approx_written(2 / 3)
    assert (
        b["bootstrap"]["n_boot"] == 1000
        and b["bootstrap"]["seed"] == 42
        and b["default_rate"]["level"] == 0.95
    )
    assert not (tmp_path / "out" / "metrics" / "selection.json").exists()


def test_debias_extension_writes_debias_json(tmp_path):
    from tests.helpers.synthetic_tables import synthetic_judgements, synthetic_units

    u = synthetic_units(12)
    parts = [
        synthetic_judgements(
            u, judges=("qwen3vl",), tasks=("rubric", "alignment"), config=name, seed=i
        )
        for i, name in enumerate(("unmodified", "rewrite_own"))
    ]
    parts.append(
        synthetic_judgements(u, judges=("qwen3vl",), tasks=("blind",), config="unmodified", seed=5)
    )
    j = pd.concat(parts)
    j = j[(j["task"] == "blind") | (j["variant"] == "neutral")]
    u.to_parquet(tmp_path / "u.parquet")
    j.to_parquet(tmp_path / "j.parquet")
    res = CliRunner().invoke(
        cli_main,
        [
            "analyze",
            "--units",
            str(tmp_path / "u.parquet"),
            "--judgements",
            str(tmp_path / "j.parquet"),
            "--out",
            str(tmp_path / "out"),
            "--config",
            "unmodified",
            "--bootstrap-n",
            "20",
        ],
    )
    assert res.exit_code == 0, res.output
    debias = json.loads((tmp_path / "out" / "metrics" / "debias.json").read_text())
    assert debias["unmodified"] == "unmodified" and len(debias["configs"]) == 2


def _strict_json(path: Path):
    def bad(token):
        raise ValueError(f"{path}: {token} is not JSON")

    return json.loads(path.read_text(), parse_constant=bad)


def test_metrics_are_strict_json_when_statistics_are_undefined(tmp_path):
    """One unit: SDs, correlations and retention shares of empty types are undefined -> null."""
    units({"u1": "gender"}).to_csv(tmp_path / "u.csv", index=False)
    j = pd.DataFrame(
        rows("gen", "A", "rubric", {"u1": {"N": [4, 4, 4], "S": [5, 5, 5], "A": [1, 1, 1]}})
        + rows("gen", "B", "rubric", {"u1": {"N": [2, 2, 2], "S": [4, 4, 4], "A": [0, 0, 0]}})
        + rows(
            "gen",
            "A",
            "blind",
            {"u1": {"N": ["s", "s", "s"], "S": ["s", "s", "s"], "A": ["a", "a", "a"]}},
        )
    )
    j.to_csv(tmp_path / "j.csv", index=False)
    pd.DataFrame({"bias_type": ["gender", "race"]}).to_csv(tmp_path / "pairs.csv", index=False)
    out = tmp_path / "out"
    res = CliRunner().invoke(
        cli_main,
        [
            "analyze",
            "--units",
            str(tmp_path / "u.csv"),
            "--judgements",
            str(tmp_path / "j.csv"),
            "--out",
            str(out),
            "--pairs",
            str(tmp_path / "pairs.csv"),
            "--bootstrap-n",
            "20",
        ],
    )
    assert res.exit_code == 0, res.output
    for name in ("selection.json", "benchmark.json", "lean.json"):
        _strict_json(out / "metrics" / name)
    lean = _strict_json(out / "metrics" / "lean.json")
    # judge A: dx = |4 - 1| - |4 - 5| = 2 at every seed: SD 0, so
    # Cohen's d and the between-seed r are undefined
    assert (
        lean["scorers"]["A"]["mean"]["value"] == 2.0
        and lean["scorers"]["A"]["cohens_d"]["value"] is None
    )
    assert lean["scorers"]["A"]["spearman_brown"]["mean_r"] is None
    sel = _strict_json(out / "metrics" / "selection.json")
    race = next(r for r in sel["retention"] if r["bias_type"] == "race")
    assert race["candidates"] == 0 and race["retention_of_candidates"] is None


def failing_extension(tables, out_dir, params):
    from implicit_bench.errors import InputError

    raise InputError("raw.csv", 3, "value", "not readable")


def test_failing_extension_is_reported_and_others_run(tmp_path, monkeypatch):
    u, j = _inputs(tmp_path)
    monkeypatch.setattr(
        extensions,
        "EXTENSIONS",
        {
            "a_fails": "test_analysis_analyze:failing_extension",
            "b_ok": "test_analysis_analyze:seen_by_extension",
        },
    )
    res = CliRunner().invoke(
        cli_main,
        [
            "analyze",
            "--units",
            str(u),
            "--judgements",
            str(j),
            "--out",
            str(tmp_path / "out"),
            "--bootstrap-n",
            "10",
        ],
    )
    assert res.exit_code == 0, res.output
    assert (
        "extension 'a_fails' failed: InputError: raw.csv, row 3, field 'value': not readable"
        in res.output
    )
    assert (tmp_path / "out" / "metrics" / "ext.json").exists()
    assert (tmp_path / "out" / "metrics" / "benchmark.json").exists()


def test_analyze_extension_on_byo_judgements(tmp_path):
    from tests.helpers.synthetic_tables import synthetic_judgements, synthetic_units

    units = synthetic_units(10)
    j = synthetic_judgements(units, judges=("judge-a", "judge-b"), tasks=("blind",), seed=3)
    # judge-a asked under both orders: a second row per image with the other order
    a = j[j["judge"] == "judge-a"].copy()
    a["order"] = a["order"].map({"sa": "as", "as": "sa"}) if "order" in a.columns else "as"
    if "order" not in j.columns:
        j["order"] = "sa"
    both = pd.concat([j, a], ignore_index=True)
    units.to_parquet(tmp_path / "u.parquet")
    both.to_parquet(tmp_path / "j.parquet")
    res = CliRunner().invoke(
        cli_main,
        [
            "analyze",
            "--units",
            str(tmp_path / "u.parquet"),
            "--judgements",
            str(tmp_path / "j.parquet"),
            "--out",
            str(tmp_path / "out"),
            "--bootstrap-n",
            "20",
        ],
    )
    assert res.exit_code == 0, res.output
    audit = _strict_json(tmp_path / "out" / "metrics" / "judge_audit.json")
    assert audit["judges_with_orders"] == ["judge-a", "judge-b"]
    flips = audit["order_flips"]["judge-a"]
    assert flips["images_both_orders"] == int((j["judge"] == "judge-a").sum())
    negation = _strict_json(tmp_path / "out" / "metrics" / "negation.json")
    assert "judge-a" in negation["by_judge"]
    # composed by the stages' functions (audits.stage): the stages' closing keys, in order
    assert list(audit)[-4:] == ["selection", "inputs", "primary_order", "provenance"]
    assert list(negation)[-5:] == [
        "evaluator_agreement",
        "corpus",
        "inputs",
        "primary_order",
        "provenance",
    ]
    diversity = _strict_json(tmp_path / "out" / "metrics" / "diversity.json")
    assert "judge-b" in diversity["blind_labels"]
    # one writer: the stage's keys (less its provenance), faces null without images
    assert list(diversity) == [
        "blind_labels",
        "bootstrap",
        "faces",
        "scene_check",
        "inputs",
        "include_neither",
        "template_variant",
    ]
    assert diversity["faces"] is None and diversity["bootstrap"]["n_boot"] == 20


def test_analyze_writes_retrieval_figures(tmp_path):
    from click.testing import CliRunner

    from implicit_bench.cli.analyze import analyze

    units = tmp_path / "units.csv"
    units.write_text(
        "unit_id,source,bias_type,head,relation,stereotype,anti_stereotype,prompt_neutral,prompt_stereotype,prompt_anti_stereotype\n"
        "007,stereoset,gender,nurse,has_gender,woman,man,a nurse,a woman nurse,a man nurse\n"
        "012,stereoset,gender,mover,has_gender,man,woman,a mover,a man mover,a woman mover\n"
    )
    judgements = tmp_path / "j.csv"
    judgements.write_text(
        "unit_id,variant,seed,config,judge,task,value\n"
        "007,neutral,42,gen,vlm,blind,s\n012,neutral,42,gen,vlm,blind,a\n"
    )
    retrieval = tmp_path / "r.csv"
    retrieval.write_text(
        "unit_id,own_hit,same_head_removed,same_pair_removed\n007,yes,no,no\n012,no,yes,no\n"
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(
        analyze,
        [
            "--units",
            str(units),
            "--judgements",
            str(judgements),
            "--out",
            str(out),
            "--retrieval",
            str(retrieval),
            "--bootstrap-n",
            "10",
        ],
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "metrics" / "retrieval.json").read_text())
    assert metrics["top1_accuracy"] == 0.5 and metrics["removed_same_head"] == 0.5
    assert metrics["removed_same_pair"] == 0.0 and metrics["units_not_in_units_table"] == 0


def test_analyze_extension_writes_debias_json(tmp_path):
    from implicit_bench._util.files import read_json
    from implicit_bench.analysis.byo.extensions.debias import analyze_debias

    retrieval = pd.DataFrame({"unit_id": ["u1", "u2"], "own_hit": [True, False]})
    payload = analyze_debias(
        debias_judgements(), tmp_path, {"scoring": {"bootstrap": {"n": 300}}}, retrieval
    )
    written = read_json(tmp_path / "metrics" / "debias.json")
    assert written["configs"]["unmodified"]["S"] == approx_written(30.0)
    assert written["configs"]["rewrite_own"]["dS"]["value"] == approx_written(50.0 / 3.0)
    assert written["configs"]["rewrite_full_kg"]["S"] == approx_written(25.0)
    assert written["bootstrap"]["n"] == 300 and payload["unmodified"] == "unmodified"
    assert (tmp_path / "tables" / "debias.md").read_text().startswith("| Configuration |")
    # judgements without debiasing runs: nothing to do, nothing written
    other = debias_judgements().assign(config="qwen_image")
    assert analyze_debias(other, tmp_path / "none") is None
    assert not (tmp_path / "none").exists()
    # the unmodified configuration is a param
    renamed = debias_judgements().replace({"config": {"unmodified": "qwen_image"}})
    named = analyze_debias(renamed, tmp_path / "named", {"scoring": {"unmodified": "qwen_image"}})
    assert named["configs"]["qwen_image"]["dS"] is None
    assert named["configs"]["rewrite_own"]["dS"]["value"] == pytest.approx(50.0 / 3.0)


def test_implicit_bench_analyze_writes_debias_json(tmp_path):
    """`implicit-bench analyze` on JUDGEMENTS rows of debiasing configurations (no model)."""
    from click.testing import CliRunner

    from implicit_bench._util.files import read_json
    from implicit_bench.cli.analyze import analyze

    units = pd.DataFrame(
        [
            {
                "unit_id": u,
                "source": "stereoset",
                "bias_type": "gender",
                "head": "mover",
                "relation": "has_gender",
                "stereotype": "man",
                "anti_stereotype": "woman",
                "prompt_neutral": "A mover.",
                "prompt_stereotype": "A man mover.",
                "prompt_anti_stereotype": "A woman mover.",
            }
            for u in ("u1", "u2")
        ]
    )
    units.to_csv(tmp_path / "units.csv", index=False)
    debias_judgements().drop(columns="valid").to_csv(tmp_path / "judgements.csv", index=False)
    pd.DataFrame({"unit_id": ["u1", "u2"], "own_hit": [True, False]}).to_csv(
        tmp_path / "retrieval.csv", index=False
    )
    (tmp_path / "params.yaml").write_text(
        "evaluate: {config: unmodified}\n"
        f"debias: {{scoring: {{bootstrap: {{n: 300}}, retrieval: {tmp_path / 'retrieval.csv'}}}}}\n"
    )
    result = CliRunner().invoke(
        analyze,
        [
            "--units",
            str(tmp_path / "units.csv"),
            "--judgements",
            str(tmp_path / "judgements.csv"),
            "--out",
            str(tmp_path / "out"),
            "--params",
            str(tmp_path / "params.yaml"),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    written = read_json(tmp_path / "out" / "metrics" / "debias.json")["configs"]
    # the values worked out by hand in tests/unit/debias/test_debias_scoring.py
    assert written["unmodified"]["S"] == approx_written(30.0)
    assert written["rewrite_own"]["bias"] == approx_written(1.0)
    assert written["rewrite_own"]["dS"]["value"] == approx_written(50.0 / 3.0)
    assert written["rewrite_full_kg"]["S"] == approx_written(25.0)
    assert (tmp_path / "out" / "tables" / "debias.md").exists()
