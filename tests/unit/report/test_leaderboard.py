"""Leaderboard: paired cluster-bootstrap differences, p-values, Holm,
resolved mark (hand-worked)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from implicit_bench._util.closed_form import safe_div
from implicit_bench.analysis.bootstrap import Bootstrap, bootstrap_p, holm  # noqa: E402
from implicit_bench.cli.main import main as cli_main  # noqa: E402
from implicit_bench.protocol.benchmark_file import BenchmarkFile  # noqa: E402
from tests.helpers.analysis_fixtures import BLIND_A, BLIND_B, rows, units  # noqa: E402
from tests.helpers.synthetic_tables import synthetic_judgements, synthetic_units  # noqa: E402
from tests.helpers.written import approx_written


def test_bootstrap_p_by_hand():
    # 4 replicates, null 0: one <= 0, three >= 0 -> 2 x min(2/5, 4/5) = 0.8
    assert bootstrap_p(np.array([-1.0, 1.0, 2.0, 3.0])) == pytest.approx(0.8)
    # all above: 2 x (0 + 1) / (n + 1)
    assert bootstrap_p(np.arange(1.0, 100.0)) == pytest.approx(2 / 100)
    assert bootstrap_p(np.array([np.nan])) is None
    assert bootstrap_p(np.zeros(9)) == 1.0  # capped


def test_holm_by_hand():
    # sorted 0.01, 0.03, 0.04 of m = 3: 0.03, 0.06, max(0.06, 0.04) = 0.06; None not counted
    assert holm([0.01, 0.04, 0.03, None]) == pytest.approx([0.03, 0.06, 0.06, None])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


def test_paired_resamples_the_same_units_for_both():
    boot = Bootstrap(50, 7, 0.95)
    rng = np.random.default_rng(0)
    a = rng.integers(0, 5, size=(9, 2)).astype(float) + [0, 5]
    b = rng.integers(0, 5, size=(9, 2)).astype(float) + [0, 5]

    def stat(s):
        return safe_div(s[..., 0], s[..., 1])

    est, reps = boot.paired(a, b, stat, "pair")
    assert est["value"] == pytest.approx(
        a[:, 0].sum() / a[:, 1].sum() - b[:, 0].sum() / b[:, 1].sum()
    )
    idx = boot.indices(9, "pair")
    by_loop = [a[r, 0].sum() / a[r, 1].sum() - b[r, 0].sum() / b[r, 1].sum() for r in idx]
    assert reps == pytest.approx(by_loop)
    lo, hi = np.percentile(by_loop, [2.5, 97.5])
    assert est["ci"] == pytest.approx([lo, hi]) and est["n"] == 9


def _analyze(tmp_path: Path, u: pd.DataFrame, j: pd.DataFrame, *extra: str, n: int = 400) -> dict:
    u.to_csv(tmp_path / "u.csv", index=False)
    j.to_csv(tmp_path / "j.csv", index=False)
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
            "--bootstrap-n",
            str(n),
            *extra,
        ],
    )
    assert res.exit_code == 0, res.output
    bench = json.loads((out / "metrics/benchmark.json").read_text())
    BenchmarkFile.from_json(bench, out / "metrics/benchmark.json")  # what the report will accept
    return bench


def test_leaderboard_rows_and_hand_worked_difference(tmp_path):
    # judge A labelled two generators of the same four units: gen (BLIND_A), gen2 (BLIND_B)
    u = units({"u1": "gender", "u2": "gender", "u3": "race", "u4": "race"})
    j = pd.DataFrame(rows("gen", "A", "blind", BLIND_A) + rows("gen2", "A", "blind", BLIND_B))
    board = _analyze(tmp_path, u, j, "--config", "gen")["leaderboard"]
    assert [r["config"] for r in board["rows"]] == ["gen", "gen2"]
    # default rate: gen 6 of 11 valid neutral labels, gen2 8 of 12
    # (tests/unit/analysis/test_latex_tables.py)
    assert board["rows"][0]["default_rate"]["value"] == approx_written(6 / 11)
    pairs = {p["metric"]: p for p in board["pairs"]}
    assert set(pairs) == {
        "default_rate",
        "success_stereotype",
        "success_anti",
        "gap",
        "a_to_s",
    }  # no image index: no refusals
    assert pairs["default_rate"]["difference"]["value"] == approx_written(6 / 11 - 8 / 12)
    # success of the stereotype prompt: gen 9 of 12 labelled s, gen2 10 of 12
    assert pairs["success_stereotype"]["difference"]["value"] == approx_written(9 / 12 - 10 / 12)
    assert pairs["default_rate"]["n_units"] == 4 and pairs["default_rate"]["seeds"] == [
        42,
        1042,
        2042,
    ]
    ps = [p["p"] for p in board["pairs"]]
    # ps as written (6 digits): Holm's products of them agree with the written p_holm to 1e-5
    assert [p["p_holm"] for p in board["pairs"]] == approx_written(holm(ps), rel=1e-5)
    assert not any(p["resolved"] for p in board["pairs"])  # four units resolve nothing
    table = pd.read_csv(tmp_path / "out/tables/leaderboard_pairs.csv")
    assert table["difference_pct"].iloc[0] == approx_written(100 * (6 / 11 - 8 / 12))
    for ext in ("csv", "md", "tex"):
        assert (tmp_path / f"out/tables/leaderboard.{ext}").exists()


def test_a_difference_with_a_degenerate_interval_is_not_resolved(tmp_path):
    """One shared unit: every resample draws it, the interval is [d, d] and the bootstrap p
    the smallest attainable; the difference 1/3 of the default rate was "resolved"."""
    u = units({"u1": "gender"})
    j = pd.DataFrame(
        rows("gen", "A", "blind", {"u1": BLIND_A["u1"]})
        + rows("gen2", "A", "blind", {"u1": BLIND_B["u1"]})
    )
    pairs = {
        p["metric"]: p for p in _analyze(tmp_path, u, j, "--config", "gen")["leaderboard"]["pairs"]
    }
    dr = pairs["default_rate"]
    assert dr["difference"]["value"] == pytest.approx(1 / 3)
    assert dr["difference"]["ci"][0] == dr["difference"]["ci"][1] and dr["p_holm"] < 0.05
    assert not any(p["resolved"] for p in pairs.values())


def test_planted_difference_is_resolved_and_a_copy_is_not(tmp_path):
    u = synthetic_units(60)
    base = synthetic_judgements(u, tasks=("blind", "rubric"), judges=("judge-a",), seed=1)
    j = pd.concat(
        [base.assign(config="genA"), base.assign(config="same"), base.assign(config="genB")],
        ignore_index=True,
    )
    flip = j.index[
        (j["config"] == "genB")
        & (j["task"] == "blind")
        & (j["variant"] == "neutral")
        & (j["value"] != "s")
    ]
    j.loc[flip[::2], "value"] = "s"  # genB: half of the non-s neutral labels become s
    # 3 pairs x (5 blind rates + rubric bias score) = 18 differences: the smallest bootstrap p
    # is 2 / (n + 1), so Holm needs n > 2 x 18 / 0.05
    board = _analyze(tmp_path, u, j, "--config", "genA", n=1000)["leaderboard"]
    assert board["min_p_holm"] == approx_written(18 * 2 / 1001)
    by = {(p["a"], p["b"], p["metric"]): p for p in board["pairs"]}
    planted = by[("genA", "genB", "default_rate")]
    assert planted["difference"]["value"] < -0.1 and planted["resolved"]
    copy = by[("genA", "same", "default_rate")]
    assert (
        copy["difference"]["value"] == 0
        and copy["difference"]["ci"] == [0, 0]
        and not copy["resolved"]
    )
    assert not by[("genA", "genB", "success_stereotype")]["resolved"]  # untouched variants
    assert board["correction"] == "holm" and len(board["pairs"]) == 3 * 6
    bias = by[("genA", "genB", "bias_score")]  # rubric rows are the same copy in every config
    assert bias["difference"]["value"] == 0 and not bias["resolved"]
    assert (
        board["rows"][0]["hedges_g"]["value"] is not None
        and board["rows"][0]["lean_s"]["value"] is not None
    )


def test_imported_release_generators_on_the_leaderboard(tmp_path):
    """The release's Table 4 generators (rubric scores, no blind labels) get leaderboard rows."""
    from implicit_bench.analysis.byo.core import run_analyze
    from implicit_bench.cli.import_ import import_command
    from implicit_bench.params import load_params
    from tests.helpers.release_fixtures import write_release

    src = write_release(tmp_path / "IMPLICIT-Bench")
    imported = tmp_path / "imported"
    assert CliRunner().invoke(import_command, [str(src), "--out", str(imported)]).exit_code == 0
    params = load_params(imported / "analyze_generators.yaml")
    params.setdefault("evaluate", {})["bootstrap"] = {"n": 50, "seed": 1}
    out = tmp_path / "release"
    run_analyze(
        str(imported / "units.csv"),
        [str(imported / f"{f}.csv") for f in ("judgements_unmodified", "judgements_generators")],
        str(out),
        params,
        refusals=(str(imported / "images.csv"),),
    )
    bench = json.loads((out / "metrics/benchmark.json").read_text())
    BenchmarkFile.from_json(bench, out / "metrics/benchmark.json")  # a release joins as is
    board = bench["leaderboard"]
    rows_ = {r["config"]: r for r in board["rows"]}
    # Table 4 by hand (tests/unit/release/test_release_import.py): mean neutral rubric score per
    # generator
    assert rows_["unmodified"]["bias_score"]["value"] == pytest.approx(2.5)
    assert rows_["gpt_image_2"]["bias_score"]["value"] == pytest.approx(3.0)
    assert rows_["nano_banana_2"]["bias_score"]["value"] == pytest.approx(4.5)
    assert rows_["unmodified"]["alignment"]["value"] == pytest.approx(0.75)
    assert rows_["gpt_image_2"]["default_rate"] is None  # the release has no blind labels
    assert rows_["gpt_image_2"]["refusal_rate"]["value"] == pytest.approx(0.25)  # coverage 0.75
    metrics = {p["metric"] for p in board["pairs"]}
    assert {"bias_score", "alignment", "refusal_rate"} <= metrics and "default_rate" not in metrics
    pair = next(
        p
        for p in board["pairs"]
        if (p["a"], p["b"], p["metric"]) == ("gpt_image_2", "nano_banana_2", "bias_score")
    )
    assert pair["difference"]["value"] is not None and pair["n_units"] >= 1
    # ... and the report of that analyze output shows them, labelled with their source
    site = tmp_path / "site"
    res = CliRunner().invoke(
        cli_main,
        ["report", str(out), "--label", "IMPLICIT-Bench release (fixture)", "--out", str(site)],
    )
    assert res.exit_code == 0, res.output
    html = (site / "index.html").read_text(encoding="utf-8")
    for generator in ("unmodified", "gpt_image_2", "nano_banana_2"):
        assert (
            '<td data-sort="IMPLICIT-Bench release (fixture)">IMPLICIT-Bench '
            f'release (fixture)</td><th data-sort="{generator}">' in html
        )
    assert (
        "bias score (0-5)" in html and "default rate (%)" not in html
    )  # no blind labels: no empty column


def test_report_shows_no_verdict_for_a_degenerate_difference_of_an_older_file():
    """A benchmark.json written before the fix may say resolved for a [d, d] interval."""
    from implicit_bench.report.leaderboard import Run, pairs_table

    est = {"value": 0.3, "ci": [0.3, 0.3], "n": 1, "level": 0.95}
    pair = {"a": "g", "b": "h", "metric": "default_rate", "n_units": 1, "difference": est}
    html = pairs_table(Run("old", {"leaderboard": {"pairs": [{**pair, "resolved": True}]}}))
    assert "no verdict (degenerate interval)" in html and 'class="resolved"' not in html
