"""Each fast path gives what the general path beside it gives, bit for
bit: text columns checked per distinct value (``TextCodes``), the duplicate key and category
columns from their codes, a ratio of counts through one product, Spearman replicates from
joint level counts, the unit lookup of ``views.rows`` on the kept rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from implicit_bench.analysis import bootstrap as bs
from implicit_bench.analysis.views import rows
from implicit_bench.protocol.tables.judgements import _category
from implicit_bench.protocol.tables.spec import Checker, TextCodes, as_text, blank

RAW = [" b", "a", None, "c ", "a", "b", "", "NULL", " none", "zz", "a "]


def per_cell(series: pd.Series, null_tokens: bool, nullable: bool) -> pd.Series:
    """The general path of ``TableSpec.validate`` for one text column."""
    text = as_text(series)
    if null_tokens:
        return text.where(~text.fillna("").str.lower().isin(("", "nan", "none", "null")), None)
    if nullable:
        return text.where(text.notna() & (text != ""), None)
    return text


@pytest.mark.parametrize(("null_tokens", "nullable"), [(False, False), (False, True), (True, True)])
def test_text_codes_equal_the_per_cell_path(null_tokens, nullable):
    raw = pd.Series(RAW, dtype="str")
    codes = TextCodes.of(raw, null_tokens, nullable)
    general = per_cell(raw, null_tokens, nullable)
    fast = codes.series(raw.index)
    assert fast.dtype == general.dtype == object
    assert fast.tolist() == general.tolist()  # None where null, the stripped text elsewhere
    assert codes.blank().tolist() == blank(general).tolist()
    allowed = ("a", "b", "none")
    isin = (general.notna() & general.isin(allowed)).tolist()
    assert codes.isin(allowed).tolist() == isin
    assert TextCodes.of(pd.Series(RAW, dtype=object), null_tokens, nullable) is None  # general


def test_text_codes_of_an_all_null_column():
    raw = pd.Series([None, None], dtype="str")
    codes = TextCodes.of(raw, False, True)
    assert codes.series(raw.index).tolist() == [None, None]
    assert codes.blank().tolist() == [True, True]


def test_checker_lookups_use_the_codes_or_the_column():
    raw = pd.Series(RAW, dtype="str")
    frame = pd.DataFrame({"t": per_cell(raw, False, True), "file": "f", "row": range(len(RAW))})
    chk = Checker("x", frame, "reject")
    general = (chk.isin("t", ["a", "zz"]).tolist(), chk.blank("t").tolist())
    chk.codes["t"] = TextCodes.of(raw, False, True)
    assert (chk.isin("t", ["a", "zz"]).tolist(), chk.blank("t").tolist()) == general


def test_category_from_codes_equals_astype():
    raw = pd.Series(RAW, dtype="str")
    codes = TextCodes.of(raw, False, True)
    kept = np.array([i % 3 != 1 for i in range(len(RAW))])
    values = codes.series(raw.index)[kept].reset_index(drop=True)
    pd.testing.assert_series_equal(_category(values, codes, kept), values.astype("category"))


def test_ratio_of_counts_equals_the_float64_products():
    rng = np.random.default_rng(5)
    num = rng.integers(0, 4, 300).astype(float)
    den = num + rng.integers(0, 3, 300)
    boot = bs.Bootstrap(n=200, seed=3)
    _, reps = boot.ratio(num, den, "s")
    w = bs.Bootstrap(n=200, seed=3).weights(300, "s")
    assert np.array_equal(reps, bs.safe_div(w @ num, w @ den), equal_nan=True)
    frac = num / 3  # not integers: the float64 products, as before
    _, reps = bs.Bootstrap(n=200, seed=3).ratio(frac, den, "s")
    assert np.array_equal(reps, bs.safe_div(w @ frac, w @ den), equal_nan=True)


@pytest.mark.parametrize(("n", "levels"), [(2, 1), (7, 2), (400, 4), (300, 8)])
def test_spearman_by_counts_equals_the_ranks(n, levels):
    rng = np.random.default_rng(n)
    x = rng.integers(0, levels, n) / 3
    y = rng.integers(0, levels, n) / 3
    idx = rng.integers(0, n, size=(300, n), dtype=np.int32)
    fast = bs._spearman_by_counts(x, y, idx)
    assert fast is not None
    assert np.array_equal(fast, bs._spearman_by_ranks(x, y, idx), equal_nan=True)
    assert np.array_equal(bs.spearman_reps(x, y, idx), fast, equal_nan=True)


def test_spearman_with_many_levels_takes_the_ranks():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=50), rng.normal(size=50)
    idx = rng.integers(0, 50, size=(20, 50), dtype=np.int32)
    assert bs._spearman_by_counts(x, y, idx) is None
    assert np.array_equal(bs.spearman_reps(x, y, idx), bs._spearman_by_ranks(x, y, idx))


def test_rows_unit_lookup_on_the_kept_rows():
    j = pd.DataFrame(
        {
            "task": ["blind", "rubric", "blind", "blind"],
            "config": ["g", "g", "h", "g"],
            "judge": ["a", "a", "a", "b"],
            "seed": [1, 1, 2, 1],
            "unit_id": ["u1", "u1", "u2", "u3"],
        },
        index=[10, 11, 12, 13],
    )
    out = rows(j, "blind", "g", seeds=[1], units=["u3", "u1"])
    mask = (j["task"] == "blind") & (j["config"] == "g") & j["seed"].isin([1])
    pd.testing.assert_frame_equal(out, j[mask & j["unit_id"].isin({"u3", "u1"})])


def test_any_text_per_distinct_value_equals_the_cell_loop():
    from implicit_bench._util.files import _any_text

    def starts(v: str) -> bool:
        return v.startswith("=")

    for cells in (["a", None, 1.5, "=x"] * 3, ["a", None, 1.5, "x"] * 3, ["a", [1, 2], "=x"]):
        column = pd.Series(cells, dtype=object)
        loop = any(isinstance(v, str) and starts(v) for v in cells)
        assert _any_text(column, starts) is loop


def test_rates_read_from_blind_rates_equal_the_recomputed_ones(tmp_path):
    """With blind_rates run first, by_config's analysed-configuration row and the leaderboard's
    strongest group are read from its entries; run without it (``metrics: [leaderboard]``)
    they are computed: the same values."""
    from implicit_bench.analysis.context import EvalContext
    from implicit_bench.analysis.load import load_tables
    from implicit_bench.analysis.metrics import run_metrics
    from implicit_bench.analysis.params import EvaluateParams
    from tests.helpers.synthetic_tables import synthetic_judgements, synthetic_units

    units = synthetic_units(40)
    units.to_csv(tmp_path / "units.csv", index=False)
    synthetic_judgements(units).to_csv(tmp_path / "j.csv", index=False)
    tables = load_tables(tmp_path / "units.csv", [tmp_path / "j.csv"])
    params = EvaluateParams(bootstrap={"n": 60, "seed": 3})
    every = run_metrics(EvalContext.build(tables, tables.units, params))
    alone = run_metrics(EvalContext.build(tables, tables.units, params), ["leaderboard"])
    assert "judges" in every.benchmark and "judges" not in alone.benchmark  # the two paths
    assert every.benchmark["by_config"] == alone.benchmark["by_config"]
    assert every.benchmark["leaderboard"]["rows"] == alone.benchmark["leaderboard"]["rows"]
    row = every.benchmark["leaderboard"]["rows"][0]
    assert row["strongest_units"] and row["success_stereotype"]["value"] is not None
