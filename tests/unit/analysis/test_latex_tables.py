"""Paper-ready tables: `value [lo, hi]` cells, LaTeX booktabs, generators side by side."""

from __future__ import annotations

import pandas as pd
import pytest

from implicit_bench.analysis.bootstrap import Bootstrap  # noqa: E402
from implicit_bench.analysis.builtin_metrics import config_rates  # noqa: E402
from implicit_bench.analysis.latex import interval_columns, to_booktabs, with_intervals  # noqa: E402
from implicit_bench.analysis.paper_tables import side_by_side_table, write_tables  # noqa: E402
from tests.helpers.analysis_fixtures import BLIND_A, BLIND_B, rows  # noqa: E402


def test_interval_cells_and_percent_columns():
    frame = pd.DataFrame(
        {
            "judge": ["qwen3vl", "gpt54"],
            "units": [12, 12],
            "default_rate_pct": [52.04, None],
            "default_rate_ci_low": [40.0, None],
            "default_rate_ci_high": [61.55, None],
            "g": [1.234, 0.5],
            "g_ci_low": [0.9, 0.1],
            "g_ci_high": [1.5, 0.95],
        }
    )
    assert interval_columns(frame) == [
        ("default_rate_pct", "default_rate_ci_low", "default_rate_ci_high"),
        ("g", "g_ci_low", "g_ci_high"),
    ]
    cells = with_intervals(frame)
    assert list(cells.columns) == ["judge", "units", "default_rate (%)", "g"]
    assert cells["default_rate (%)"].tolist() == [
        "52.0 [40.0, 61.5]",
        "–",
    ]  # one decimal for percentages
    assert cells["g"].tolist() == ["1.23 [0.90, 1.50]", "0.50 [0.10, 0.95]"]  # two otherwise
    assert cells["units"].tolist() == ["12", "12"]
    lone = pd.DataFrame({"bias_type": ["age"], "g": [0.5], "ci_low": [0.25], "ci_high": [0.75]})
    assert with_intervals(lone)["g"].tolist() == ["0.50 [0.25, 0.75]"]


def test_booktabs_table_escapes_and_sets_wide_tables_in_landscape():
    frame = pd.DataFrame(
        {
            "bias_type": ["physical_appearance"],
            "share_pct": [12.5],
            "share_ci_low": [5.0],
            "share_ci_high": [20.0],
        }
    )
    tex = to_booktabs(frame, "shares & more", "tab:shares")
    for part in (
        r"\toprule",
        r"\midrule",
        r"\bottomrule",
        r"\caption{shares \& more}",
        r"\label{tab:shares}",
        r"\begin{tabular}{lr}",
        r"physical\_appearance & 12.5 [5.0, 20.0] \\",
        r"bias type & share (\%) \\",
    ):
        assert part in tex
    assert r"\resizebox" not in tex
    wide = pd.DataFrame({f"c{i}": [1.0] for i in range(9)})
    wide_tex = to_booktabs(wide, "wide", "tab:wide")
    assert r"\begin{landscape}" in wide_tex and r"\end{landscape}" in wide_tex  # set in landscape,
    assert r"\resizebox" not in wide_tex  # never shrunk


def test_generators_side_by_side_from_one_run(tmp_path):
    # judge A labelled two generators' images of the same units:
    # "gen" (BLIND_A) and "gen2" (BLIND_B)
    j = pd.DataFrame(rows("gen", "A", "blind", BLIND_A) + rows("gen2", "A", "blind", BLIND_B))
    j["order"] = None
    by_config = config_rates(j, "A", ["u1", "u2", "u3", "u4"], None, Bootstrap(200, 0, 0.95))
    table = side_by_side_table({"by_config": by_config})
    assert table["generator"].tolist() == ["gen", "gen2"] and table["units"].tolist() == [4, 4]
    # neutral images labelled s / valid neutral images: gen
    # 3+1+0+2 = 6 of 11; gen2 2+3+0+3 = 8 of 12
    assert table["default_rate_pct"].tolist() == pytest.approx([100 * 6 / 11, 100 * 8 / 12])
    assert (table["default_rate_ci_low"] <= table["default_rate_pct"]).all()
    written = write_tables(tmp_path, {"generators_side_by_side": table})
    tex = (tmp_path / "tables/generators_side_by_side.tex").read_text()
    assert str(tmp_path / "tables/generators_side_by_side.tex") in written
    assert "gen2 & A & 4 & 66.7 [" in tex
    md = (tmp_path / "tables/generators_side_by_side.md").read_text()
    assert "54.5 [" in md and "66.7 [" in md


def test_a_table_without_columns_or_rows_is_a_table_that_says_so():
    """An empty frame (no rows; no columns) still gives one table float reading "(no rows)"."""
    for frame in (pd.DataFrame(), pd.DataFrame(columns=["config", "default_rate"])):
        tex = to_booktabs(frame, caption="Empty", label="tab:empty")
        assert tex.count(r"\begin{table}") == 1 and "(no rows)" in tex
        assert r"\caption{Empty}" in tex and r"\label{tab:empty}" in tex


STYLER_CASES = [
    pd.DataFrame({"Scorer": ["Qwen3-VL", "a_b & c", ""], "$n$": ["5,493", "1", "–"]}),
    pd.DataFrame({"": ["(no rows)"]}),
    pd.DataFrame({"x": ["50% {x} #1 ~ y ~z ^ q ^r \\ s \\t", "tab\there", "–1.0"]}),
    pd.DataFrame(
        {r"\begin{tabular}[b]{@{}c@{}}Lean to \\ stereotype\end{tabular}": ["1"], "b": ["2"]}
    ),
    pd.DataFrame({"only": ["one"]}),
]


@pytest.mark.parametrize("cells", STYLER_CASES)
@pytest.mark.parametrize(
    ("caption", "label", "position"),
    [("A caption (Table 3).", "tab:x", "t"), ("", "", "p"), ("c", "None", "t")],
)
def test_booktabs_float_is_stylers_output_byte_for_byte(cells, caption, label, position):
    """The direct writer gives what pandas' Styler.to_latex gave before (the outputs of analyze
    stay byte-identical)."""
    from implicit_bench.analysis.latex import booktabs_float

    align = "l" * cells.shape[1]
    styler = cells.map(lambda v: str(v).replace("–", "--")).style.hide(axis="index")
    styler = styler.format(escape="latex").set_table_styles([{"selector": "small", "props": ":;"}])
    expected = styler.to_latex(
        caption=caption,
        label=label,
        position=position,
        position_float="centering",
        hrules=True,
        column_format=align,
        environment="table",
    )
    assert booktabs_float(cells, caption, label, position, align) == expected


@pytest.mark.parametrize("rows", [0, 1, 3])
def test_with_intervals_fast_path_equals_the_column_by_column_path(rows):
    """The columns built as lists give the cells, dtypes and labels of the general
    path (each column assigned into an object copy of the frame)."""
    from implicit_bench.analysis.latex import _with_intervals_general, interval_columns

    base = {
        "bias_type": ["age", "gender", None],
        "n": [1831, 12, 5],
        "rate_pct": [71.5, None, 3.0],
        "rate_ci_low": [70.1, None, 1.0],
        "rate_ci_high": [73.0, None, 4.5],
        "g": [2.38, float("nan"), -0.2],
        "g_ci_low": [1.77, 0.1, -0.5],
        "g_ci_high": [3.34, 0.2, 0.1],
        "share": [0.123456, 1234.0, 0.5],
        "flag": [True, False, True],
    }
    frame = pd.DataFrame({k: v[:rows] for k, v in base.items()})
    frame["bias_type"] = frame["bias_type"].astype("str")
    fast = with_intervals(frame)
    general = _with_intervals_general(frame, interval_columns(frame))
    pd.testing.assert_frame_equal(fast, general, check_exact=True, check_column_type=True)
    assert list(fast.dtypes) == list(general.dtypes)
    if rows:  # (no rows: object columns, no interval triple found)
        assert list(fast.columns) == ["bias_type", "n", "rate (%)", "g", "share", "flag"]
    dup = pd.DataFrame([[1, 2]], columns=["a", "a"])  # duplicate names: the general path
    pd.testing.assert_frame_equal(with_intervals(dup), _with_intervals_general(dup, []))
