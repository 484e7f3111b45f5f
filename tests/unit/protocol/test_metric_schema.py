"""The declared metric schema (protocol/metric_schema.py), and the recipe for a new headline
metric performed end to end: one ``Metric`` entry with its counts reaches benchmark.json, the
per-judge table, metrics/summary.json and the summary page's cards."""

from __future__ import annotations

import pandas as pd
import pytest

from implicit_bench.analysis.load import load_tables
from implicit_bench.analysis.paper_tables import clean, headline_table
from implicit_bench.analysis.params import EvaluateParams
from implicit_bench.analysis.stage import evaluate
from implicit_bench.protocol import metric_schema
from implicit_bench.protocol.benchmark_file import BenchmarkFile
from implicit_bench.protocol.estimate import Estimate
from implicit_bench.report.summary.stage import headline
from implicit_bench.report.summary_page import headline_cards
from tests.helpers.analysis_fixtures import BLIND_A, rows, units

TYPES = {"u1": "gender", "u2": "gender", "u3": "race"}


def test_the_schema_is_consistent():
    names = [m.name for m in metric_schema.METRICS]
    assert len(names) == len(set(names))
    assert set(metric_schema.headline()) <= set(metric_schema.tabled())  # summary reads tables'
    for m in metric_schema.blind_rates():
        assert (m.ratio is None) != (m.difference is None), m.name
        assert all(part in names for part in m.difference or ()), m.name
    for m in metric_schema.METRICS:
        assert m.unit in ("share", "pp", "score", "effect"), m.name
        assert not m.headline or m.title, f"{m.name}: a headline metric needs its card title"
        assert not m.leaderboard or m.board, f"{m.name}: a leaderboard column needs its header"
    with pytest.raises(KeyError, match="no metric 'nope'"):
        metric_schema.metric("nope")


def test_adding_a_headline_metric_is_one_entry(tmp_path, monkeypatch):
    """The recipe: a ``Metric`` with ``headline=True``, ``tabled=True`` and its ``ratio``."""
    new = metric_schema.Metric(
        "neither_anti",
        "share",
        None,
        title="Anti-stereotype images read as neither",
        phrase="anti-stereotype read as neither",
        latex="Neither, anti-stereotype (\\%)",
        headline=True,
        tabled=True,
        ratio=(("anti_stereotype", "neither"), ("valid", "anti_stereotype")),
    )
    monkeypatch.setattr(metric_schema, "METRICS", (*metric_schema.METRICS, new))
    units(TYPES).to_csv(tmp_path / "u.csv", index=False)
    blind = {u: BLIND_A[u] for u in TYPES}
    pd.DataFrame(rows("gen", "A", "blind", blind)).to_csv(tmp_path / "j.csv", index=False)
    tables = load_tables(tmp_path / "u.csv", [tmp_path / "j.csv"])
    ev = evaluate(tables, tables.units, EvaluateParams(bootstrap={"n": 200, "seed": 1}))
    bench = ev.benchmark
    # worked by hand from BLIND_A: anti-stereotype images read as neither / valid ones
    a_labels = [lab for u in TYPES for lab in BLIND_A[u]["A"] if lab not in (None, "-")]
    expected = a_labels.count("neither") / len(a_labels)
    assert Estimate.from_json(bench["neither_anti"]).value == pytest.approx(expected)
    assert "neither_anti_pct" in headline_table(bench).columns
    summary = headline({"benchmark": bench})
    assert summary["neither_anti_pct"] == pytest.approx(round(100 * expected, 2))
    assert {"neither_anti_pct_lo", "neither_anti_pct_hi"} <= set(summary)
    # the contract of benchmark.json checks the new rate with no edit (protocol.benchmark_file)
    typed = BenchmarkFile.from_json(clean(bench), "metrics/benchmark.json")
    assert typed.rate("neither_anti") == bench["neither_anti"]
    assert "Anti-stereotype images read as neither" in headline_cards(typed)
