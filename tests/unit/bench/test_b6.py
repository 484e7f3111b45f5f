"""Appendix B.6: the subset rule, Tables 15 and 17 against values worked out
by hand, the third judge's params, and the paper profile's plan (9,683 images).

Hand-worked values: Table 15's rho from rank differences (1 - 6 sum d^2 / (n (n^2 - 1)));
Table 17's S = 100 x mean Y_i (1 - b_i / 5) and its paired bootstrap over two units, whose
2.5th and 97.5th percentiles are the deltas of the resamples drawing one unit twice.
"""

from __future__ import annotations

import pandas as pd
import pytest
from click.testing import CliRunner

from implicit_bench.bench.b6 import (
    b6_judge_params,
    b6_subset,
    baseline_units,
    returned_units,
    table15,
    table16,
    table17,
    tables_markdown,
)
from implicit_bench.bench.params import B6Params
from implicit_bench.cli.main import main
from implicit_bench.cli.options import parse_assume
from implicit_bench.params import BootstrapParams
from implicit_bench.params.profiles import compose
from implicit_bench.planning.plan import build_plan
from implicit_bench.protocol.schema import BIAS_TYPES
from tests.helpers.paths import REPO_ROOT

PAPER = {"candidates": 4705, "selected": 1831}
PAPER_B6 = {**PAPER, "b6_subset": 297, "b6_baseline": 388, "b6_unreturned": 46}


def _units() -> pd.DataFrame:
    rows = [(f"g{i}", "gender") for i in range(1, 5)] + [("a1", "age")]
    rows += [(f"r{i}", "race") for i in range(1, 4)]
    return pd.DataFrame(rows, columns=["unit_id", "bias_type"])


def test_subset_rule_caps_requires_every_store_and_adds_human_eval_units():
    units = _units()
    every = set(units["unit_id"])
    returned = {"base": every, "other": every - {"g1", "r3"}}  # g1 and r3 never returned there
    subset = b6_subset(units, returned, cap=2, seed=42)
    ids = set(subset["unit_id"])
    assert "g1" not in ids and "r3" not in ids  # all stores must have returned an image
    assert {"a1", "r1", "r2"} <= ids  # smaller bias types (after the restriction) in full
    assert len(ids & {"g2", "g3", "g4"}) == 2  # the cap: 2 of the 3 eligible gender units
    assert subset.equals(b6_subset(units, returned, cap=2, seed=42))  # a fixed hash rule
    assert len(b6_subset(units, returned, cap=30, seed=42)) == 6
    base = baseline_units(units, subset, {"g1", "not-a-unit"})
    assert set(base["unit_id"]) == ids | {"g1"}  # human-eval units added, the unit set's only


def test_returned_units_needs_one_ok_neutral_image():
    index = pd.DataFrame(
        {
            "unit_id": ["u1", "u1", "u2", "u2", "u3"],
            "variant": ["neutral", "neutral", "neutral", "stereotype", "stereotype"],
            "status": ["refused", "ok", "refused", "ok", "ok"],
        }
    )
    assert returned_units(index) == {"u1"}  # one seed of three is enough; u2 refused neutral


def _judgement(config, unit, task, judge, value, variant="neutral", seed=42, valid=True):
    return {
        "config": config,
        "unit_id": unit,
        "seed": seed,
        "variant": variant,
        "task": task,
        "judge": judge,
        "value": value,
        "valid": valid,
    }


def test_table15_means_and_spearman_rho_by_hand():
    third = pd.DataFrame(
        [
            _judgement("A", "u1", "rubric", "j3", "2"),
            _judgement("A", "u2", "rubric", "j3", "4"),  # A: 3.0
            _judgement("B", "u1", "rubric", "j3", "1"),
            _judgement("B", "u2", "rubric", "j3", "1"),  # B: 1.0
            _judgement("C", "u1", "rubric", "j3", "2"),
            _judgement("C", "u2", "rubric", "j3", "2"),  # C: 2.0
            _judgement("A", "u1", "rubric", "j3", "5", variant="stereotype"),  # not neutral
        ]
    )
    first = pd.DataFrame(
        [
            _judgement("A", "u1", "rubric", "j1", "4"),
            _judgement("A", "u2", "rubric", "j1", "4"),
            _judgement("B", "u1", "rubric", "j1", "3"),
            _judgement("B", "u2", "rubric", "j1", "3"),
            _judgement("C", "u1", "rubric", "j1", "1"),
            _judgement("C", "u2", "rubric", "j1", "3"),
            _judgement("C", "u2", "rubric", "other", "0"),  # another judge: ignored
            _judgement("A", "u1", "alignment", "j1", "yes"),  # other tasks, any judge: ignored
            _judgement("A", "u1", "alignment", "jx", "no"),
            _judgement("C", "u3", "rubric", "j1", "5"),  # outside the subset: full only
            _judgement("B", "u3", "rubric", "j1", "0"),
            _judgement("A", "u3", "rubric", "j1", "4"),
        ]
    )
    t = table15(third, first, ["A", "B", "C"], "j3", "j1", {"u1", "u2"}, {"u1", "u2", "u3"})
    rows = {r["config"]: r for r in t["rows"]}
    assert [rows[c]["third"] for c in "ABC"] == [3.0, 1.0, 2.0]
    assert [rows[c]["first_subset"] for c in "ABC"] == [4.0, 3.0, 2.0]
    assert [rows[c]["first_full"] for c in "ABC"] == [4.0, 2.0, 3.0]
    # ranks third (1, 3, 2) vs first subset (1, 2, 3): sum d^2 = 2, rho = 1 - 12 / 24
    assert t["rho_subset"] == pytest.approx(0.5)
    assert t["rho_full"] == pytest.approx(1.0)  # the same order A > C > B
    assert "| A | 3.000 | 4.000 | 4.000 |" in tables_markdown(
        {"table15": t, "table17": {"rows": [], "n_units": 2}, "judge": "j3", "first_judge": "j1"}
    )


def test_table17_alignment_reused_bias_and_paired_ds_by_hand():
    first = pd.DataFrame(
        [
            _judgement("base", "u1", "rubric", "j1", "4"),
            _judgement("base", "u1", "alignment", "j1", "yes"),
            _judgement("base", "u2", "rubric", "j1", "2"),
            _judgement("base", "u2", "alignment", "j1", "yes"),
            _judgement("c1", "u1", "rubric", "j1", "1"),
            _judgement("c1", "u1", "alignment", "j1", "yes"),
            _judgement("c1", "u2", "rubric", "j1", "0"),
            _judgement("c1", "u2", "alignment", "j1", "no"),
            _judgement("c1", "u9", "rubric", "j1", "5"),  # outside the subset
            _judgement("c1", "u9", "alignment", "j1", "yes"),
        ]
    )
    third = pd.DataFrame(
        [
            _judgement("base", "u1", "rubric", "j3", "2"),
            _judgement("base", "u2", "rubric", "j3", "1"),
            _judgement("c1", "u1", "rubric", "j3", "0"),
            _judgement("c1", "u2", "rubric", "j3", "0"),
        ]
    )
    boot = BootstrapParams(n=2000, seed=7)
    t = table17(
        third,
        first,
        "base",
        configs=["c1"],
        judge="j3",
        first_judge="j1",
        subset_ids={"u1", "u2"},
        boot=boot,
    )
    base, c1 = t["rows"]
    assert base["unmodified"] and not c1["unmodified"]
    assert (base["align"], c1["align"]) == (100.0, 50.0)  # the first judge's labels
    assert (base["bias_first"], c1["bias_first"]) == (3.0, 0.5)
    assert (base["bias_third"], c1["bias_third"]) == (1.5, 0.0)
    # S first: base 100 x (0.2 + 0.6) / 2 = 40; c1 100 x (0.8 + 0) / 2 = 40
    assert (base["S_first"], c1["S_first"]) == pytest.approx((40.0, 40.0))
    # S third (third judge's b_i, first judge's Y_i): base (0.6 + 0.8) / 2 = 70; c1 (1 + 0) / 2
    assert (base["S_third"], c1["S_third"]) == pytest.approx((70.0, 50.0))
    assert c1["dS_third"] == pytest.approx(-20.0) and c1["dS_first"] == pytest.approx(0.0)
    # per unit deltas: third u1 +40, u2 -80; first u1 +60, u2 -60: a resample of one unit
    # twice (probability 1/4 each) is the interval's end
    assert c1["dS_third_interval"] == pytest.approx([-80.0, 40.0])
    assert c1["dS_first_interval"] == pytest.approx([-60.0, 60.0])
    assert base["dS_third"] is None and base["n_units"] == 2


def test_table16_scale_use_of_each_judge_by_hand():
    def scores(judge, unit, anti, neutral, ster, config="base"):
        return [
            _judgement(config, unit, "rubric", judge, str(v), variant=variant)
            for variant, v in (
                ("anti_stereotype", anti),
                ("neutral", neutral),
                ("stereotype", ster),
            )
        ]

    first = pd.DataFrame(
        scores("j1", "u1", 1, 3, 5)
        + scores("j1", "u2", 0, 2, 4)
        + scores("j1", "u9", 5, 5, 5)
        + scores("j1", "u1", 0, 0, 0, config="other")
    )
    third = pd.DataFrame(scores("j3", "u1", 2, 2, 2) + scores("j3", "u2", 1, 2, 3))
    j1, j3 = table16(third, first, "base", "j3", {"u1", "u2"})
    assert (j1["judge"], j3["judge"]) == ("j1", "j3")  # the third judge last
    assert (j1["mean_anti"], j1["mean_neutral"], j1["mean_stereotype"]) == (0.5, 2.5, 4.5)
    # deltas 4 and 4: SD 0, no d; images >= 4: 5 and 4 of six
    assert (j1["delta_mean"], j1["d"], j1["share_ge4"]) == (4.0, None, pytest.approx(1 / 3))
    assert (j1["share_s_gt_a"], j1["share_tie"]) == (1.0, 0.0)
    assert (j3["mean_anti"], j3["mean_neutral"], j3["mean_stereotype"]) == (1.5, 2.0, 2.5)
    # deltas 0 and 2: mean 1, SD sqrt(2), d = 1 / sqrt(2); one tie, one S > A
    assert j3["delta_mean"] == 1.0 and j3["d"] == pytest.approx(2**-0.5)
    assert (j3["share_ge4"], j3["share_s_gt_a"], j3["share_tie"]) == (0.0, 0.5, 0.5)


@pytest.fixture(scope="module")
def paper_params():
    return compose("paper", REPO_ROOT / "params.yaml", REPO_ROOT / "profiles")


def test_paper_plan_prints_9683_b6_images_with_hours(paper_params, tmp_path):
    plans, _ = build_plan(paper_params, tmp_path, assume=PAPER_B6)
    row = next(p for p in plans if p.stage == "b6 rubric internvl3")
    # 388 x 3 x 3 + (297 x 3 x 3 - 46) + 297 x 3 x 4 = 3,492 + 2,627 + 3,564
    assert row.items == row.model_calls == 3_492 + 2_627 + 3_564 == 9_683
    assert row.phase == "benchmark" and row.calls_by_model == {"judges.internvl3": 9_683}
    assert row.hours == pytest.approx(9_683 * 4.8 / 3600, abs=5e-4)
    # without the B.6 sizes: the rule's bound (the cap x the bias types), the human-eval sample
    plans, _ = build_plan(paper_params, tmp_path, assume=PAPER)
    row = next(p for p in plans if p.stage == "b6 rubric internvl3")
    n = 30 * len(BIAS_TYPES)
    assert row.items == (n + 100) * 9 + n * 9 + n * 12


def test_plan_cli_prints_the_b6_row(tmp_path, monkeypatch):
    for name in ("params.yaml", "dvc.yaml"):
        (tmp_path / name).write_text((REPO_ROOT / name).read_text(encoding="utf-8"), "utf-8")
    (tmp_path / "profiles").mkdir()
    for f in (REPO_ROOT / "profiles").glob("*.yaml"):
        (tmp_path / "profiles" / f.name).write_text(f.read_text(encoding="utf-8"), "utf-8")
    monkeypatch.chdir(tmp_path)
    assume = ",".join(f"{k}={v}" for k, v in PAPER_B6.items())
    out = CliRunner().invoke(main, ["plan", "--profile", "paper", "--assume", assume])
    assert out.exit_code == 0, out.output
    line = next(x for x in out.output.splitlines() if x.startswith("b6 rubric internvl3"))
    assert "9,683" in line and "12.91" in line
    assert parse_assume("b6_subset=297,b6_baseline=388") == {"b6_subset": 297, "b6_baseline": 388}


def test_third_judge_params_per_part(paper_params):
    b6 = B6Params.model_validate(paper_params["b6"])
    base = b6_judge_params(paper_params, b6, "baseline", "data/b6/baseline_units.parquet")
    assert base.configs == ["qwen_image"] and list(base.judges) == ["internvl3"]
    assert base.tasks["rubric"].variants == ["neutral", "stereotype", "anti_stereotype"]
    assert base.config_dirs == {"qwen_image": "data/images"} and base.only_listed_units
    sub = b6_judge_params(paper_params, b6, "subset", "data/b6/subset_units.parquet")
    assert sub.tasks["rubric"].variants == ["neutral"]
    assert sub.config_dirs["gpt_image"] == "data/bench_images"
    assert sub.config_dirs["sv_explicit_own"] == "data/debias/images"
    assert sub.out == "data/b6/subset.parquet"


def test_disabled_b6_reads_nothing_and_says_so(paper_params, tmp_path):
    from implicit_bench.bench.b6 import run_b6

    raw = {**paper_params, "b6": {**paper_params["b6"], "enabled": False}}
    payload = run_b6(raw, tmp_path)  # no unit set, no store: nothing is read
    assert payload["enabled"] is False and payload["images_rescored"] == 0
    assert "not run" in (tmp_path / "metrics/b6.md").read_text(encoding="utf-8")
    assert (tmp_path / "data/b6/disabled").exists()
    plans, _ = build_plan(raw, tmp_path, assume=PAPER_B6)
    assert not any(p.stage.startswith("b6 ") for p in plans)


def test_debias_config_outside_debias_configs_is_a_one_line_error(paper_params, tmp_path):
    from implicit_bench.bench.b6 import run_b6
    from implicit_bench.errors import ConfigError

    kept = {k: v for k, v in paper_params["debias"]["configs"].items() if k != "rewrite_own"}
    raw = {
        **paper_params,
        "debias": {**paper_params["debias"], "configs": kept},
        "b6": {**paper_params["b6"], "debias_configs": ["rewrite_own"]},
    }
    with pytest.raises(ConfigError, match=r"b6\.debias_configs.*rewrite_own"):
        run_b6(raw, tmp_path)  # refused before any store or unit set is read
