"""The two phases of the protocol: the paper profile's plan at the paper's counts, the
benchmark phase's params and unit set, `run --tables 4`, the order audit's subset.

Every expected count is worked out by hand from the paper (Sections 3.3, 3.5, A.1, E.2):
4,705 candidates x 3 prompts x 3 seeds = 42,345 Qwen-Image images; 1,831 selected units x 3 x 3 =
16,479 requests per blind judge; 1,831 x 3 neutral images = 5,493 per Table 4 generator and per
debiasing configuration; 48 s per image, 20 / 16,479 US$ per GPT-5.4 batch request.
"""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from implicit_bench.bench.params import BenchParams
from implicit_bench.cli.main import main
from implicit_bench.cli.options import parse_assume
from implicit_bench.params.profiles import compose
from implicit_bench.planning.plan import build_plan, format_plan
from tests.helpers.paths import REPO_ROOT

PAPER = {"candidates": 4705, "selected": 1831}


@pytest.fixture(scope="module")
def paper_plan(tmp_path_factory):
    params = compose("paper", REPO_ROOT / "params.yaml", REPO_ROOT / "profiles")
    root = tmp_path_factory.mktemp("empty")  # a fresh clone's state: nothing built
    plans, info = build_plan(params, root, assume=PAPER)
    return {p.stage: p for p in plans}, info, plans


def test_paper_construction_counts(paper_plan):
    by_stage, info, _ = paper_plan
    assert info["units"] == 4705 and info["selected"] == 1831
    qwen = by_stage["render qwen_image"]
    assert (qwen.items, qwen.phase) == (4705 * 3 * 3, "construction") == (42_345, "construction")
    assert qwen.hours == pytest.approx(42_345 * 48 / 3600) == pytest.approx(564.6)
    judge = by_stage["judge"]
    # rubric only: both judges on Qwen-Image, Qwen3-VL alone on SD3's all-candidates run
    assert judge.calls_by_model == {"judges.qwen3vl": 2 * 42_345, "judges.gemma4": 42_345}
    assert judge.hours == pytest.approx(3 * 42_345 * 4.8 / 3600, abs=5e-4)
    construction = [p for p in by_stage.values() if p.phase == "construction"]
    assert not any("judges.gpt54" in p.calls_by_model for p in construction)  # no blind call


def test_paper_benchmark_phase_counts(paper_plan):
    by_stage, _, plans = paper_plan
    for judge in ("qwen3vl", "gpt54"):
        blind = by_stage[f"bench_judge blind {judge}"]
        assert (blind.items, blind.phase) == (1831 * 3 * 3, "benchmark") == (16_479, "benchmark")
    assert by_stage["bench_judge blind gpt54"].usd == pytest.approx(20.0, abs=0.01)
    blind_hours = by_stage["bench_judge blind qwen3vl"].hours
    assert blind_hours == pytest.approx(16_479 * 4.8 / 3600, abs=5e-4)
    for name in ("sd3_benchmark", "gpt_image", "nano_banana_2"):
        assert by_stage[f"bench_render {name}"].items == 1831 * 3 == 5_493
    assert by_stage["bench_render gpt_image"].usd == pytest.approx(5_493 * 0.006, abs=0.005)
    assert by_stage["bench_render nano_banana_2"].usd == pytest.approx(5_493 * 0.067, abs=0.005)
    assert by_stage["bench_render sd3_benchmark"].hours == pytest.approx(5_493 * 48 / 3600)
    debias = [p for p in plans if p.stage.startswith("debias_render@")]
    assert len(debias) == 12 and {p.items for p in debias} == {5_493}
    # about 73 GPU-hours each (A.1)
    assert all(p.hours == pytest.approx(5_493 * 48 / 3600, abs=5e-4) for p in debias)
    # alignment: the neutral images of Qwen-Image and the three Table 4 generators
    assert by_stage["bench_judge alignment qwen3vl"].items == 4 * 5_493
    # no negated variant, no diversity study in the paper profile
    assert not any("negated" in p.note for p in plans)


def test_plan_prints_the_two_phases_apart(paper_plan):
    _, info, plans = paper_plan
    text = format_plan(plans, info)
    construction = text.index("== construction")
    benchmark = text.index("== benchmark phase")
    assert construction < text.index("render qwen_image") < benchmark
    assert benchmark < text.index("bench_judge blind gpt54")
    assert "construction subtotal" in text and "benchmark subtotal" in text


def test_plan_assume_on_the_command_line(tmp_path, monkeypatch):
    for name in ("params.yaml", "profiles"):
        src = REPO_ROOT / name
        dst = tmp_path / name
        if src.is_dir():
            dst.mkdir()
            for f in src.glob("*.yaml"):
                (dst / f.name).write_text(f.read_text())
        else:
            dst.write_text(src.read_text())
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main, ["plan", "--profile", "paper", "--assume", "candidates=4705,selected=1831"]
    )
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("bench_judge blind gpt54"))
    assert line.split()[5:8] == ["16,479", "-", "16,479"]
    bad = CliRunner().invoke(main, ["plan", "--assume", "units=3"])
    assert bad.exit_code == 2 and "--assume 'units=3'" in bad.output
    assert parse_assume("selected=5, candidates=7") == {"selected": 5, "candidates": 7}


def test_bench_params_refuse_an_unknown_unit_set():
    with pytest.raises(ValueError, match="neither 'selected' nor a bench.subsets name"):
        BenchParams.model_validate({"generators": {"g": {"units": "b6"}}})


def test_a_named_subset_keeps_at_most_n_units_per_bias_type():
    units = pd.DataFrame(
        {
            "unit_id": [f"u{i}" for i in range(7)],
            "bias_type": ["gender"] * 4 + ["race"] * 2 + ["age"],
        }
    )
    bench = BenchParams.model_validate(
        {"subsets": {"b6": {"max_per_bias_type": 2}}, "generators": {"g": {"units": "b6"}}}
    )
    kept = bench.unit_set(units, "b6")
    # gender: 2 of 4; race: both (2 <= 2); age: its one unit, taken in full
    assert kept.groupby("bias_type").size().to_dict() == {"age": 1, "gender": 2, "race": 2}
    assert kept.equals(bench.unit_set(units, "b6"))  # fixed by the hash, not by chance
    assert len(bench.unit_set(units, "selected")) == 7


def test_the_order_audit_asks_both_orders_for_the_stated_units_only():
    from implicit_bench.backends.judges.params import JudgeStageParams
    from implicit_bench.backends.judges.stage import audit_units

    base = {"judges": {}, "tasks": {}, "blind_orders": "hash"}
    ids = [f"u{i}" for i in range(10)]
    assert audit_units(JudgeStageParams.model_validate(base), ids) == set()
    chosen = audit_units(JudgeStageParams.model_validate({**base, "both_orders_units": 3}), ids)
    assert len(chosen) == 3 and chosen <= set(ids)
    both = JudgeStageParams.model_validate({**base, "blind_orders": "both", "both_orders_units": 3})
    assert audit_units(both, ids) == set()  # every image is asked both orders anyway


def test_run_tables_4_asks_the_neutral_prompts_only(tmp_path, monkeypatch):
    for name in ("params.yaml", "dvc.yaml"):
        (tmp_path / name).write_text((REPO_ROOT / name).read_text())
    (tmp_path / "profiles").mkdir()
    for f in (REPO_ROOT / "profiles").glob("*.yaml"):
        (tmp_path / "profiles" / f.name).write_text(f.read_text())
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main,
        ["run", "--generator", "tiny", "--judge", "qwen3vl", "--tables", "4", "--dry-run"]
        + ["--no-preflight"],
    )
    assert result.exit_code == 0, result.output
    overlay = yaml.safe_load((tmp_path / "profiles/run.yaml").read_text())
    bench = overlay["bench"]
    assert bench["generators"]["tiny"]["variants"] == ["neutral"]
    assert set(bench["tasks"]) == {"rubric", "alignment"}  # the Table 4 row: no blind question
    assert "config" not in overlay["evaluate"]  # the analysed config stays the profile's
    assert "render" not in overlay  # construction keeps the profile's generators
    line = next(x for x in result.output.splitlines() if x.startswith("bench_render tiny"))
    assert line.split()[3] == f"{240 * 3:,}"  # at most the 240 candidates x 1 variant x 3 seeds


def test_run_benchmark_uses_the_release_units_and_skips_construction(tmp_path, monkeypatch):
    """`run --benchmark RELEASE`: the release's units are the fixed unit set (bench.units), its
    seed index recorded, construction renders and judges nothing; the plan counts the new
    generator's Table 4 row on the release's 1,831 units: 5,493 neutral images."""
    from tests.helpers.release_fixtures import write_generated_release

    release = write_generated_release(tmp_path / "release", 1831)
    work = tmp_path / "work"
    (work / "profiles").mkdir(parents=True)
    for name in ("params.yaml", "dvc.yaml"):
        (work / name).write_text((REPO_ROOT / name).read_text())
    for f in (REPO_ROOT / "profiles").glob("*.yaml"):
        (work / "profiles" / f.name).write_text(f.read_text())
    monkeypatch.chdir(work)
    result = CliRunner().invoke(
        main,
        ["run", "--generator", "tiny", "--judge", "qwen3vl", "--tables", "4"]
        + ["--benchmark", str(release), "--dry-run", "--no-preflight"],
    )
    assert result.exit_code == 0, result.output
    overlay = yaml.safe_load((work / "profiles/run.yaml").read_text())
    assert overlay["render"] == {"run": []}
    # construction judges nothing; bench_judge names no construction store (its dep is its own)
    assert overlay["judge"] == {"configs": [], "images_dir": "data/bench_images"}
    assert overlay["bench"]["units"] == "data/raw/benchmark_units.parquet"
    assert overlay["evaluate"]["units"] == "data/raw/benchmark_units.parquet"
    assert overlay["bench"]["seed_index"] == {42: 0, 1042: 1, 2042: 2}
    assert overlay["benchmark"] == {"path": str(release), "variants": ["neutral"]}
    assert overlay["evaluate"]["beside_release"] == str(release)  # beside the paper
    # construction judged nothing: evaluate reads the benchmark phase's judgements of "tiny"
    assert overlay["evaluate"]["judgements"] == ["data/judgements/bench.parquet"]
    assert overlay["evaluate"]["config"] == "tiny" and overlay["evaluate"]["blind_judges"] is None
    composed = compose("run", work / "params.yaml", work / "profiles")["evaluate"]
    assert composed["blind_judges"] is None and composed["config"] == "tiny"
    lines = result.output.splitlines()
    assert not any(line.startswith(("render ", "kg ", "triplets ")) for line in lines)
    for line in lines:  # the construction judge and CLIP have nothing to do
        if line.startswith(("judge ", "clip ")):
            assert line.split()[5] == "0", line
    assert "rendered here: neutral\n" in result.output  # the Table 4 row: neutral prompts
    row = next(x for x in lines if x.startswith("bench_render tiny"))
    assert row.split()[3] == "5,493"  # 1,831 release units x 3 seeds, neutral prompts
    assert "release seed index 42 -> 0, 1042 -> 1, 2042 -> 2" in result.output
    assert not (work / "data/raw/benchmark_units.parquet").exists()  # a dry run writes no units
