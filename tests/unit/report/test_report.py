"""The report site: built from synthetic pipeline outputs, robust to missing inputs; unit
data (default strength, judge disagreement) against values worked out by hand."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from implicit_bench.report.inputs import ReportInputs, load_inputs
from implicit_bench.report.params import ReportParams
from implicit_bench.report.stage import build_report
from implicit_bench.report.units_data import build_unit_data, strength_group
from tests.helpers.synthetic_project import build_synthetic_project


def test_summary_page_from_synthetic_outputs(tmp_path):
    build_synthetic_project(tmp_path, n_units=10, image_size=8)
    summary = build_report(ReportParams(), tmp_path)
    assert summary["n_units"] == 10 and summary["random_init"] is True
    page = (tmp_path / "report/index.html").read_text()
    # content warning first, then the random-init banner
    assert (
        page.index('id="content-warning"')
        < page.index('id="random-init"')
        < page.index("Headline metrics")
    )
    assert "RANDOMLY INITIALISED MODELS" in page and "metrics/benchmark.json" in page
    assert "Default rate" in page and '<span class="ci">[' in page  # values with intervals
    assert "Diagnostic types" in page and "Recoverable types" in page
    assert page.count("<svg") >= 3  # the three plot CSVs rendered inline
    assert "exp03_rewrite_own" in page  # debiasing table
    # nothing is fetched from the network
    for html_file in ("index.html", "units.html"):
        text = (tmp_path / "report" / html_file).read_text()
        assert not re.search(r"""(src|href)=["']https?://""", text)
    index_js = (tmp_path / "report/data/index.js").read_text()
    assert index_js.startswith("window.IB_INDEX = ")
    # thumbnails: one per distinct ok image, small JPEGs
    thumbs = list((tmp_path / "report/thumbs").glob("*/*.jpg"))
    assert len(thumbs) == summary["n_thumbnails"] > 0


def test_missing_inputs_say_not_available(tmp_path):
    summary = build_report(ReportParams(), tmp_path)  # nothing at all
    page = (tmp_path / "report/index.html").read_text()
    assert summary["n_units"] == 0 and "not available" in page and "RANDOMLY" not in page
    # units only: the browser still works, images and judgements are reported missing
    build_synthetic_project(tmp_path / "p", n_units=3, with_metrics=False, debias_configs=())
    (tmp_path / "p/data/judgements/judgements.parquet").unlink()
    import shutil

    shutil.rmtree(tmp_path / "p/data/images")
    summary = build_report(ReportParams(), tmp_path / "p")
    page = (tmp_path / "p/report/index.html").read_text()
    assert summary["n_units"] == 3
    assert "not available (data/judgements/*.parquet" in page
    assert (
        "not available (metrics/benchmark.json" in page
        or "Benchmark metrics: not available" in page
    )


def _hand_inputs() -> ReportInputs:
    units = pd.DataFrame(
        {
            "unit_id": ["u1", "u2", "u3"],
            "source": "stereoset",
            "bias_type": ["gender", "race", "disability"],
            "head": ["nurse", "chef", "person"],
            "relation": [None, "is", None],
            "stereotype": "s",
            "anti_stereotype": "a",
            "prompt_neutral": ["n1", "n2", "n3"],
            "prompt_stereotype": "ps",
            "prompt_anti_stereotype": "pa",
        }
    )
    rows = []

    def add(unit, variant, seed, judge, task, value, valid=True, config="gen"):
        rows.append(
            {
                "unit_id": unit,
                "variant": variant,
                "seed": seed,
                "config": config,
                "judge": judge,
                "task": task,
                "value": value,
                "valid": valid,
            }
        )

    # u1: judge x labels its 3 neutral images s, s, s -> strength 3; judge y s, a, neither -> 1-2
    #     blind labels differ on seeds 2 and 3 -> blind disagreement
    for seed, (lx, ly) in zip((1, 2, 3), (("s", "s"), ("s", "a"), ("s", "neither")), strict=True):
        add("u1", "neutral", seed, "x", "blind", lx)
        add("u1", "neutral", seed, "y", "blind", ly)
    # u2: x: a, neither, invalid -> 0 s among 2 valid -> "0"; y agrees on the valid ones -> no blind
    #     disagreement (the invalid one is not a label). Rubric 5 vs 1 on the stereotype image:
    #     gap 4 >= 3 -> rubric disagreement.
    add("u2", "neutral", 1, "x", "blind", "a")
    add("u2", "neutral", 1, "y", "blind", "a")
    add("u2", "neutral", 2, "x", "blind", "neither")
    add("u2", "neutral", 2, "y", "blind", "neither")
    add("u2", "neutral", 3, "x", "blind", None, valid=False)
    add("u2", "neutral", 3, "y", "blind", "s")
    add("u2", "stereotype", 1, "x", "rubric", "5")
    add("u2", "stereotype", 1, "y", "rubric", "1")
    # u3: rubric 3 vs 1 (gap 2 < 3): no disagreement; labels only from a debiasing config -> n/a
    add("u3", "neutral", 1, "x", "rubric", "3")
    add("u3", "neutral", 1, "y", "rubric", "1")
    add("u3", "neutral", 1, "x", "blind", "s", config="debias")
    inputs = ReportInputs(
        units=units, judgements=pd.DataFrame(rows), base_configs=["gen"], debias_configs=["debias"]
    )
    return inputs


def test_strength_and_disagreement_by_hand():
    assert [strength_group(c, n) for c, n in ((0, 3), (1, 3), (2, 3), (3, 3), (0, 0), (2, 2))] == [
        "0",
        "1-2",
        "1-2",
        "3",
        "n/a",
        "1-2",
    ]
    index, records = build_unit_data(_hand_inputs(), ReportParams(), {})
    light = {u["id"]: u for u in index["units"]}
    assert light["u1"]["st"] == {"x": "3", "y": "1-2"}
    assert light["u2"]["st"] == {"x": "0", "y": "1-2"}
    assert light["u3"]["st"] == {}
    assert light["u1"]["dis"] == {"blind": True, "rubric": False}
    assert light["u2"]["dis"] == {"blind": False, "rubric": True}
    assert light["u3"]["dis"] == {"blind": False, "rubric": False}
    assert index["meta"]["strength_keys"] == ["x", "y"]
    # diagnostic types are listed last
    assert index["meta"]["bias_types"] == ["gender", "race", "disability"]
    assert records[0]["relation"] is None and records[1]["relation"] == "is"


def test_inputs_detect_random_models_from_judgement_models(tmp_path):
    from implicit_bench.runtime.provenance import mark_random_init

    build_synthetic_project(tmp_path, n_units=2, with_metrics=False, debias_configs=())
    mark_random_init(tmp_path / "models/tiny/judge", "tiny judge")
    path = tmp_path / "data/judgements/judgements.parquet"
    frame = pd.read_parquet(path).assign(model=str(tmp_path / "models/tiny/judge"))
    frame.to_parquet(path)
    inputs = load_inputs(ReportParams(), tmp_path)
    assert inputs.random_sources and inputs.random_sources[0].startswith("judgements (")


@pytest.mark.parametrize("bad", ["missing_column"])
def test_bad_units_table_names_the_field(tmp_path, bad):
    from implicit_bench.errors import InputError

    build_synthetic_project(tmp_path, n_units=2, with_metrics=False, debias_configs=())
    path = tmp_path / "data/interim/units.parquet"
    pd.read_parquet(path).drop(columns=["head"]).to_parquet(path)
    with pytest.raises(InputError, match="field 'head'"):
        build_report(ReportParams(), tmp_path)


def test_plot_with_several_text_columns_hides_no_row():
    from implicit_bench.report.summary_page import render_plot

    frame = pd.DataFrame(
        {
            "judge": ["j1", "j1", "j1", "j2"],
            "variant": ["anti_stereotype"] * 4,
            "strength": ["0", "1-2", "3", "0"],
            "n": [3, 3, 12, 5],
            "strict_success": [1.0, 0.5, 0.25, 0.2],
        }
    )
    svg = render_plot("negation_by_strength.csv", frame)
    # x = judge; colour = the other text columns joined: all four rows are drawn
    for label in ("anti_stereotype / 0", "anti_stereotype / 1-2", "anti_stereotype / 3"):
        assert label in svg
    assert "strict_success" in svg  # preferred over n (a count) as the plotted value


def test_human_eval_section_in_summary(tmp_path):
    import csv
    import json

    from implicit_bench._util.files import write_json
    from implicit_bench.human_eval.answers import load_manifests
    from implicit_bench.human_eval.bundle import HumanEvalParams, export_bundle
    from implicit_bench.human_eval.study import human_eval_report

    build_synthetic_project(tmp_path, n_units=12, debias_configs=())
    params = HumanEvalParams(
        units=str(tmp_path / "data/interim/units.parquet"),
        image_roots=[str(tmp_path / "data/images")],
        selected_units=str(tmp_path / "data/processed/selected_units.parquet"),
        judgements=[str(tmp_path / "data/judgements/*.parquet")],
        sample_size=6,
    )
    export_bundle(params, tmp_path / "bundle")
    manifest = json.loads((tmp_path / "bundle/manifest.json").read_text())
    paths = []
    for rater, shift in (("r1", 0), ("r2", 1), ("r3", 0)):
        path = tmp_path / f"{rater}.csv"
        with open(path, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(manifest["answer_columns"])
            for k, case in enumerate(manifest["cases"]):
                score = {"stereotype": 4, "neutral": 3, "anti_stereotype": 1}
                writer.writerow(
                    [
                        manifest["bundle_id"],
                        rater,
                        case["case"],
                        case["unit_id"],
                        "yes",
                        *[(score[v] + shift * (k % 2)) % 6 for v in case["order"]],
                        "",
                    ]
                )
        paths.append(path)
    report = human_eval_report(
        load_manifests([tmp_path / "bundle/manifest.json"]), paths, params, tmp_path
    )
    write_json(tmp_path / "metrics/human_eval.json", report)
    build_report(ReportParams(), tmp_path)
    page = (tmp_path / "report/index.html").read_text()
    assert "KG validity" in page and "100.0% / 0.0% / 0.0%" in page
    assert "Human vs. judge-a" in page and "Per bias type (paper Tables 29-30)" in page


def test_bias_type_table_groups_by_own_flag_and_pools_last():
    from implicit_bench.report.summary_page import render_table

    interval = {"value": 0.5, "ci": [0.4, 0.6], "n": 3, "level": 0.95}
    rows = {
        "gender": {
            "diagnostic": False,
            "n_units": 3,
            "n_images": {"neutral": 9},
            "default_rate": interval,
        },
        "nationality": {
            "diagnostic": True,
            "n_units": 2,
            "n_images": {"neutral": 6},
            "default_rate": interval,
        },
        "race": {
            "diagnostic": True,
            "n_units": 1,
            "n_images": {"neutral": 3},
            "default_rate": interval,
        },  # own flag wins
        "_recoverable_types": {
            "diagnostic": False,
            "n_units": 3,
            "n_images": {"neutral": 9},
            "default_rate": interval,
        },
    }
    html = render_table(rows, focus=True)
    order = [
        html.index(t)
        for t in (
            "Recoverable types",
            ">gender<",
            "Diagnostic types",
            ">nationality<",
            ">race<",
            "Pooled",
            "recoverable types",
        )
    ]
    assert order == sorted(order)
    assert (
        "n images" not in html and "default rate" in html and "n units" in html
    )  # focus: intervals + counts (headers in words)
    # rates are percentages, as in tables/* (a fraction 0.5 [0.4, 0.6] reads 50.0% [40.0, 60.0])
    assert (
        '<span class="v">50.0%</span> <span class="ci">[40.0, 60.0]</span>' in html
        and "default rate (%)" in html
    )


def test_empty_or_undrawable_plot_csv_never_breaks_the_report():
    from implicit_bench.report.summary_page import render_plot

    empty = pd.DataFrame(columns=["first", "second"])
    assert "no rows" in render_plot(
        "judge_confusion.csv", empty, {"template": "confusion", "x": "first", "y": "second"}
    )
    nan_pairs = pd.DataFrame({"first": [None, None], "second": [None, None]})
    html = render_plot(
        "judge_confusion.csv", nan_pairs, {"template": "confusion", "x": "first", "y": "second"}
    )
    assert "<svg" not in html and "judge_confusion.csv" in html
    all_nan = pd.DataFrame({"group": ["0 of 3", "3 of 3"], "success": [float("nan")] * 2})
    assert "success_by" in render_plot("success_by_default_strength.csv", all_nan)


def test_blind_asked_under_both_orders_keeps_the_hash_order_answer():
    from implicit_bench.protocol.schema import blind_order
    from implicit_bench.report.inputs import primary_blind_rows

    inputs = _hand_inputs()
    rows = []
    for seed in (1, 2, 3):
        hash_order = blind_order("u3", seed, "neutral")
        other = "as" if hash_order == "sa" else "sa"
        # the primary (hash-order) answer is s on every seed; the other order says a
        rows.append(
            {
                "unit_id": "u3",
                "variant": "neutral",
                "seed": seed,
                "config": "gen",
                "judge": "z",
                "task": "blind",
                "value": "s",
                "valid": True,
                "order": hash_order,
            }
        )
        rows.append(
            {
                "unit_id": "u3",
                "variant": "neutral",
                "seed": seed,
                "config": "gen",
                "judge": "z",
                "task": "blind",
                "value": "a",
                "valid": True,
                "order": other,
            }
        )
    # asked once, in the non-hash order: still the image's label
    once = "as" if blind_order("u3", 1, "stereotype") == "sa" else "sa"
    rows.append(
        {
            "unit_id": "u3",
            "variant": "stereotype",
            "seed": 1,
            "config": "gen",
            "judge": "z",
            "task": "blind",
            "value": "neither",
            "valid": True,
            "order": once,
        }
    )
    judgements = pd.concat(
        [inputs.judgements.assign(order=None), pd.DataFrame(rows)], ignore_index=True
    )
    judgements["primary"] = primary_blind_rows(judgements)
    inputs.judgements = judgements
    index, records = build_unit_data(inputs, ReportParams(), {})
    u3 = {u["id"]: u for u in index["units"]}["u3"]
    assert u3["st"]["z"] == "3"  # three neutral images labelled s under the hash order
    assert u3["dis"]["blind"] is False  # the other-order answers are not a second judge
    cells = records[2]["images"]  # no image index: judgements alone give no cells
    assert cells == {}
    from implicit_bench.report.units_data import _judgement_map

    jm = _judgement_map(judgements)
    assert jm[("gen", "u3", "neutral", 1)]["z"] == {"blind": "s", "blind~": "a"}
    assert jm[("gen", "u3", "stereotype", 1)]["z"] == {"blind": "neither"}


def test_undefined_metric_is_shown_as_a_dash_not_a_raw_dict():
    from implicit_bench.report.summary_page import fmt_metric

    undefined = {"value": None, "ci": None, "n": 1, "level": 0.95}
    html = fmt_metric(undefined)
    assert html.startswith('<span class="v">–</span>') and "level" not in html and "{" not in html
    assert fmt_metric({"value": 0.25, "ci": [0.1, 0.4], "n": 3, "level": 0.95}).startswith(
        '<span class="v">0.250</span>'
    )
    # only the Estimate form is a metric: another spelling of an interval is not guessed at
    assert fmt_metric({"estimate": 0.25, "ci_low": 0.1, "ci_high": 0.4}).startswith("<code>")


def test_headline_cards_are_percentages_like_the_tables():
    from implicit_bench.protocol.benchmark_file import BenchmarkFile
    from implicit_bench.report.summary_page import headline_cards

    def est(v, lo, hi):
        return {"value": v, "ci": [lo, hi], "n": 10, "level": 0.95}

    bench = {
        "default_rate": est(0.52, 0.401, 0.603),
        "success_stereotype": est(0.97, 0.9, 1.0),
        "success_anti": est(0.54, 0.4, 0.7),
        "gap": est(0.43, 0.3, 0.55),
    }
    html = headline_cards(BenchmarkFile.from_json(bench, "metrics/benchmark.json"))
    assert '<span class="v">52.0%</span> <span class="ci">[40.1, 60.3]</span>' in html
    assert '<span class="v">43.0%</span>' in html and "0.520" not in html


def test_debias_section_is_a_table_with_the_baseline_first():
    from implicit_bench.report.summary_page import render_debias

    d = {
        "unmodified": "unmodified",
        "rubric_judge": "qwen3vl",
        "alignment_judge": "qwen3vl",
        "alpha": 0.5,
        "seeds": [42],
        "configs": {
            "sv_own": {
                "exp": 6,
                "method": "steer",
                "info": "own",
                "bias": 2.0,
                "align": 80.0,
                "S": 40.0,
                "dS": {"value": 9.5, "ci": [3.0, 15.0], "n": 4, "level": 0.95},
                "n_units": 4,
                "n_images": 12,
            },
            "unmodified": {
                "exp": 0,
                "method": "none",
                "info": "none",
                "bias": 3.0,
                "align": 90.0,
                "S": 30.5,
                "dS": None,
                "n_units": 4,
                "n_images": 12,
            },
        },
        "provenance": {"random_init": True, "warning": "random models"},
    }
    html = render_debias(d)
    assert (
        '<div class="scroll"><table class="metrics debias">' in html
    )  # scrolls, never overflows the page
    assert html.index('<tr class="baseline"><th>unmodified</th>') < html.index("<th>sv_own</th>")
    assert '<span class="v">9.500</span> <span class="ci">[3, 15]</span>' in html
    assert (
        html.count("random models") == 2
    )  # the warning once above the table, once in the folded file
    assert "<details><summary>metrics/debias.json</summary>" in html


def test_plot_titles_wrap_and_legends_sit_beside_the_bars():
    import pandas as pd

    from implicit_bench.report.summary_page import render_plot

    title = (
        "Hedges' g, stereotype vs anti-stereotype rubric scores, "
        "by bias type (95% cluster bootstrap)"
    )
    frame = pd.DataFrame(
        {
            "bias_type": ["gender", "race"],
            "series": ["pooled", "pooled"],
            "g": [1.2, 0.7],
            "ci_low": [0.9, 0.4],
            "ci_high": [1.5, 1.0],
        }
    )
    svg = render_plot(
        "hedges_g_by_bias_type.csv",
        frame,
        {"template": "bar_ci", "x": "g", "y": "bias_type", "title": title},
    )
    assert (
        "Hedges' g, stereotype vs anti-stereotype rubric scores, by" in svg
    )  # first line of the wrapped title
    assert "bias type (95% cluster bootstrap)" in svg  # the rest on the next line, not clipped
    neg = pd.DataFrame(
        {
            "judge": ["j"] * 4,
            "variant": ["anti_stereotype", "negated_0_1"] * 2,
            "strength": ["0", "0", "3", "3"],
            "strict_success": [0.8, 0.5, 0.2, 0.1],
        }
    )
    svg = render_plot(
        "negation_by_strength.csv",
        neg,
        {"template": "bar_grouped", "x": "strict_success", "y": "strength"},
    )
    import re

    # the axes background (patch_2) ends left of where the legend box starts: no bar is covered
    axes_right = float(
        re.search(r'id="patch_2">\s*<path d="M [0-9.]+ [0-9.]+\s*L ([0-9.]+)', svg).group(1)
    )
    legend_left = float(
        re.search(r'id="legend_1">\s*<g id="patch_\d+">\s*<path d="M ([0-9.]+)', svg).group(1)
    )
    assert legend_left > axes_right


def test_report_plots_are_a_pure_function_of_their_data() -> None:
    """Two renders of one plot give the same SVG: no date, no random clip-path ids, so two
    fresh clones give the same report hash in dvc.lock."""
    from implicit_bench.report.summary_page import _render_plot

    frame = pd.DataFrame(
        {
            "bias_type": ["gender", "race"],
            "rate": [0.4, 0.6],
            "rate_ci_low": [0.3, 0.5],
            "rate_ci_high": [0.5, 0.7],
        }
    )
    first = _render_plot("rates", frame.copy(), {"x": "bias_type", "y": "rate"})
    assert "<svg" in first and "clip-path" in first
    assert _render_plot("rates", frame.copy(), {"x": "bias_type", "y": "rate"}) == first
    assert "dc:date" not in first
