"""A malformed leaderboard (another run's or this run's ``metrics/benchmark.json``) or
``metrics/human_eval.json`` stops ``implicit-bench report`` with one line naming the file and
the field (non-dict rows, wrong types and missing keys were AttributeError /
KeyError / format errors from the renderers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from implicit_bench.cli.main import main as cli_main
from implicit_bench.protocol.benchmark_file import BenchmarkFile
from implicit_bench.protocol.human_eval_file import check_human_eval

EST = {"value": 0.5, "ci": [0.4, 0.6], "n": 3, "level": 0.95}
ROW = {"config": "g", "n_units": 3, "default_rate": EST}
PAIR = {"a": "g", "b": "h", "metric": "default_rate", "n_units": 3, "difference": EST}


def _run_dir(root: Path, **metrics: object) -> Path:
    (root / "metrics").mkdir(parents=True)
    for name, payload in {"benchmark": {}, **metrics}.items():
        (root / "metrics" / f"{name}.json").write_text(json.dumps(payload), encoding="utf-8")
    return root


def _report(*dirs: Path, out: Path):
    return CliRunner().invoke(cli_main, ["report", *map(str, dirs), "--out", str(out)])


@pytest.mark.parametrize(
    ("board", "field"),
    [
        ({"rows": ["x"]}, "leaderboard.rows[0]"),
        ({"rows": [{"n_units": 3}]}, "leaderboard.rows[0].config"),
        ({"rows": [{**ROW, "n_units": "<img src=x>"}]}, "leaderboard.rows[0].n_units"),
        ({"rows": [{**ROW, "default_rate": {"value": 1}}]}, "leaderboard.rows[0].default_rate"),
        ({"rows": [ROW], "pairs": [{**PAIR, "p": "0.1"}]}, "leaderboard.pairs[0].p"),
        ({"rows": [ROW], "pairs": [{"a": "g"}]}, "leaderboard.pairs[0].b"),
        ({"rows": [ROW], "alpha": [0.05]}, "leaderboard.alpha"),
        ([ROW], "leaderboard"),
    ],
)
def test_another_runs_malformed_leaderboard_is_one_line_naming_file_and_field(
    tmp_path, board, field
):
    mine = _run_dir(tmp_path / "mine", benchmark={"leaderboard": {"rows": [ROW]}})
    other = _run_dir(tmp_path / "other", benchmark={"leaderboard": board})
    res = _report(mine, other, out=tmp_path / "site")
    assert res.exit_code == 1, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.output, res.output
    assert "other/metrics/benchmark.json" in lines[0] and f"field '{field}'" in lines[0]


def test_this_runs_malformed_human_eval_is_one_line_naming_file_and_field(tmp_path):
    mine = _run_dir(tmp_path / "mine", human_eval={"direction_flips": {"j": {"flips": "3"}}})
    res = _report(mine, out=tmp_path / "site")
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1, res.output
    assert "metrics/human_eval.json" in res.output
    assert "field 'direction_flips.j.flips'" in res.output


def test_a_benchmark_that_is_not_an_object_is_named():
    with pytest.raises(ValueError, match=r"b\.json: not a JSON object \(list\)"):
        BenchmarkFile.from_json([1], "b.json")


def test_well_formed_leaderboard_and_human_eval_pass():
    BenchmarkFile.from_json({"leaderboard": {"rows": [ROW], "pairs": [PAIR], "alpha": 0.05}}, "b")
    check_human_eval(
        {
            "n_raters": 4,
            "screening": {"rule": "loo", "threshold": 0.2, "excluded": []},
            "human_vs_judge": {"j": {"r": EST, "mae": 0.4}},
            "direction_flips": {"j": {"flips": 1, "cases": 9}},
            "by_bias_type": {"age": {"cases": 3, "human_vs_judge": {"j": {"r": None}}}},
            "extra": "kept",
        },
        "h",
    )
