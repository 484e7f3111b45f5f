"""`implicit-bench import` on a hand-written copy of the release layout, and `analyze` on what
it writes: every figure checked against values worked out by hand
(tests/helpers/release_fixtures.py)."""

from __future__ import annotations

import json
import zipfile

import pandas as pd
import pytest
from click.testing import CliRunner

from implicit_bench.analysis.byo.core import run_analyze
from implicit_bench.cli.import_ import import_command
from implicit_bench.errors import InputError
from implicit_bench.params import load_params
from implicit_bench.release.importer import import_release, write_imported
from tests.helpers.release_fixtures import write_release


@pytest.fixture
def imported(tmp_path):
    src = write_release(tmp_path / "IMPLICIT-Bench")
    out = tmp_path / "imported"
    result = CliRunner().invoke(import_command, [str(src), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "1 fractional rubric values" in result.output
    return out


def _read(path):
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def test_units_and_judgements_follow_the_mapping(imported):
    units = _read(imported / "units.csv").set_index("unit_id")
    assert list(units.index) == ["a1", "007"]  # ids stay strings
    assert units.loc["007", "source"] == "crows_pairs" and units.loc["007", "relation"] == ""
    assert units.loc["a1", "stereotype"] == "woman" and json.loads(
        units.loc["a1", "stereotype_tails"]
    ) == ["woman"]
    assert units.loc["a1", "flagged_by"] == "qwen_only"
    bench = _read(imported / "judgements_benchmark.csv")
    assert sorted(set(bench["seed"])) == ["1042", "42"]  # seed indices 0, 1 -> 42, 1042
    assert set(bench["config"]) == {"qwen_image"} and set(bench["judge"]) == {
        "qwen3vl",
        "gemma4",
        "clip",
    }
    # 2 units x 2 seeds x (2 judges x 3 variants + 1 CLIP lean)
    assert len(bench) == 28
    row = bench[
        (bench.unit_id == "a1")
        & (bench.seed == "1042")
        & (bench.judge == "qwen3vl")
        & (bench.variant == "neutral")
    ]
    assert row["value"].tolist() == ["2.5"]
    blank = bench[
        (bench.unit_id == "a1")
        & (bench.seed == "1042")
        & (bench.judge == "gemma4")
        & (bench.variant == "neutral")
    ]
    assert blank["value"].tolist() == [""] and blank["valid"].tolist() == ["False"]
    lean = bench[(bench.task == "clip_lean")].set_index(["unit_id", "seed"])["value"].astype(float)
    assert lean[("a1", "42")] == pytest.approx(0.1) and lean[("007", "1042")] == pytest.approx(0.25)
    debias = _read(imported / "judgements_debias.csv")
    assert set(debias["config"]) == {"sv_attributes_own"}  # experiment 7 of Table 27
    assert set(_read(imported / "judgements_unmodified.csv")["config"]) == {"unmodified"}
    alpha1 = _read(imported / "judgements_debias_alpha1.csv")
    assert len(alpha1) == 8  # the verbatim copy is kept once
    gens = _read(imported / "judgements_generators.csv")
    assert set(gens["config"]) == {"gpt_image_2", "nano_banana_2"}
    manifest = json.loads((imported / "manifest.json").read_text())
    assert manifest["verbatim_copies_dropped"] == {"exp_07_alpha1_eval.csv": 1}
    assert manifest["rubric_fractional"] == 1
    assert manifest["seeds"] == {"0": 42, "1": 1042}
    assert set(manifest["skipped_files"]) == {"exp_14_eval_local_shard_0.jsonl", "sd3_eval.csv"}
    assert "Table 4" in manifest["reproduces"] and any(
        "blind" in v for v in manifest["does_not_reproduce"].values()
    )
    images = _read(imported / "images.csv")
    status = images.set_index(["config", "unit_id", "seed"])["status"]
    assert (
        status[("gpt_image_2", "007", "42")] == "refused"
        and status[("gpt_image_2", "a1", "42")] == "ok"
    )
    assert (images["config"] == "nano_banana_2").sum() == 4 and status[
        ("nano_banana_2", "007", "1042")
    ] == "refused"
    retrieval = _read(imported / "retrieval.csv")
    assert retrieval["own_hit"].tolist() == ["True", "False"] and retrieval[
        "own_rank"
    ].tolist() == ["1", "3"]


def _analyze(imported, recipe, tmp_path, **kw):
    params = load_params(imported / f"analyze_{recipe}.yaml")
    files = {
        "benchmark": ["judgements_benchmark"],
        "generators": ["judgements_unmodified", "judgements_generators"],
        "debias": ["judgements_unmodified", "judgements_debias"],
        "debias_alpha1": ["judgements_unmodified", "judgements_debias_alpha1"],
    }[recipe]
    params.setdefault("evaluate", {})["bootstrap"] = {"n": 50, "seed": 1}
    refusals = (str(imported / "images.csv"),) if recipe == "generators" else ()
    out = tmp_path / recipe
    run_analyze(
        str(imported / "units.csv"),
        [str(imported / f"{f}.csv") for f in files],
        str(out),
        params,
        refusals=refusals,
        **kw,
    )
    return out


def test_benchmark_recipe_lean_and_selection(imported, tmp_path):
    out = _analyze(imported, "benchmark", tmp_path)
    lean = json.loads((out / "metrics" / "lean.json").read_text())["scorers"]
    # Qwen3-VL dx = 2, 0, -3, 0: mean -0.25, positive 1 of 4 (the 2.5 score is kept as it is)
    assert lean["qwen3vl"]["mean"]["value"] == pytest.approx(-0.25)
    assert lean["qwen3vl"]["lean_s"]["value"] == pytest.approx(0.25)
    # Gemma-4: a1 seed 1042 has no neutral score -> dx = 0, 0, 3
    assert lean["gemma4"]["n"] == 3 and lean["gemma4"]["mean"]["value"] == pytest.approx(1.0)
    # CLIP lean = 0.1, -0.25, 0, 0.25
    assert lean["clip"]["mean"]["value"] == pytest.approx(0.025)
    # B.6's judge correlations between the release's two rubric judges (analysis.judge_agreement,
    # worked by hand in tests/unit/bench/test_b6_agreement.py)
    agree = json.loads((out / "metrics" / "lean.json").read_text())["judge_agreement"]
    assert agree["judges"] == ["gemma4", "qwen3vl"]
    assert set(agree["image_pearson"]) == {"gemma4~qwen3vl"}
    assert agree["image_pearson"]["gemma4~qwen3vl"]["n_images"] == agree["n_images"] > 0
    sel = json.loads((out / "metrics" / "selection.json").read_text())
    # unit means over complete seeds: qwen a1 1.0, 007 -1.5; gemma a1 0.0 (1 seed), 007 1.5
    assert sel["units_kept_union"] == 2 and sel["units_kept_intersection"] == 0
    assert sel["per_judge"]["gemma4"]["units_fewer_complete_seeds"] == 1
    bench = json.loads((out / "metrics" / "benchmark.json").read_text())
    assert bench["inputs"]["rubric_fractional"] == 1 and bench["inputs"][
        "rubric_fractional_parts"
    ] == [0.5]


def test_generators_recipe_is_table_4(imported, tmp_path):
    out = _analyze(imported, "generators", tmp_path)
    table = pd.read_csv(out / "tables" / "table04_generators.csv").set_index("config")
    assert table.loc["unmodified", "bias"] == pytest.approx(2.5) and table.loc[
        "unmodified", "alignment"
    ] == pytest.approx(0.75)
    # gated (aligned images only): b = 4, 2, 3 (007 seed 0 not aligned) -> 3.0
    assert (
        table.loc["unmodified", "bias_gated"] == pytest.approx(3.0)
        and table.loc["unmodified", "gated_images"] == 3
    )
    assert (
        table.loc["gpt_image_2", "bias"] == pytest.approx(3.0)
        and table.loc["gpt_image_2", "refused"] == 1
    )
    assert (
        table.loc["gpt_image_2", "coverage"] == pytest.approx(0.75)
        and table.loc["gpt_image_2", "alignment"] == 1.0
    )
    assert table.loc["nano_banana_2", "bias"] == pytest.approx(4.5) and table.loc[
        "nano_banana_2", "coverage"
    ] == pytest.approx(0.5)


def test_debias_recipes_are_tables_7_and_32(imported, tmp_path):
    out = _analyze(imported, "debias", tmp_path)
    debias = json.loads((out / "metrics" / "debias.json").read_text())["configs"]
    assert debias["unmodified"]["S"] == pytest.approx(30.0) and debias["unmodified"][
        "bias"
    ] == pytest.approx(2.5)
    assert debias["sv_attributes_own"]["S"] == pytest.approx(60.0) and debias["sv_attributes_own"][
        "dS"
    ]["value"] == pytest.approx(30.0)
    retrieval = json.loads((out / "metrics" / "retrieval.json").read_text())
    assert (
        retrieval["top1_accuracy"] == 0.5
        and retrieval["mean_own_rank"] == 2.0
        and retrieval["removed_same_head"] is None
    )
    out1 = _analyze(imported, "debias_alpha1", tmp_path)
    alpha1 = json.loads((out1 / "metrics" / "debias.json").read_text())["configs"][
        "sv_attributes_own"
    ]
    # b = 3, 3, 1, 1; Y = 1, 0, 1, 1: S = (0.4 + 0 + 0.8 + 0.8) / 4 = 50.0
    assert alpha1["bias"] == pytest.approx(2.0) and alpha1["S"] == pytest.approx(50.0)


def test_zip_download_reads_the_same(tmp_path):
    src = write_release(tmp_path / "checkout")
    archive = tmp_path / "IMPLICIT-Bench-main.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(src.rglob("*")):
            if path.is_file():
                zf.write(path, "IMPLICIT-Bench-main/" + path.relative_to(src).as_posix())
    from_zip = import_release(archive)
    from_dir = import_release(src)
    pd.testing.assert_frame_equal(from_zip.units, from_dir.units)
    for name in from_dir.judgements:
        pd.testing.assert_frame_equal(from_zip.judgements[name], from_dir.judgements[name])
    paths = write_imported(from_zip, tmp_path / "z")
    assert "analyze_benchmark.yaml" in paths


def test_bad_release_files_name_the_row(tmp_path):
    src = write_release(tmp_path / "r")
    scores = src / "data" / "benchmark_scores.csv"
    scores.write_text(
        scores.read_text().replace(",1.0,4.0,5.0,2.0,3.0,4.0,", ",1.0,four,5.0,2.0,3.0,4.0,")
    )
    with pytest.raises(InputError, match="row 1, field 'qwen_neutral'"):
        import_release(src)
    src = write_release(tmp_path / "r2")
    (src / "cache" / "eval_results" / "exp_00_alignment.csv").write_text(
        (src / "cache" / "eval_results" / "exp_00_alignment.csv")
        .read_text()
        .replace(",False,", ",maybe,")
    )
    with pytest.raises(InputError, match="row 3, field 'aligned'"):
        import_release(src)
    with pytest.raises(InputError, match="not a directory"):
        import_release(tmp_path / "missing")
