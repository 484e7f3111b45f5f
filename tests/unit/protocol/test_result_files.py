"""The typed contracts of metrics/benchmark.json and metrics/summary.json
(protocol/benchmark_file.py, protocol/summary_file.py): the committed files parse, a wrong type
is one line naming the file and the field, unknown keys are kept, numbers keep their JSON form,
and a new headline metric is checked with no edit to the contracts."""

from __future__ import annotations

import json

import pytest

from implicit_bench.errors import InputError
from implicit_bench.protocol import metric_schema
from implicit_bench.protocol.benchmark_file import BenchmarkFile
from implicit_bench.protocol.summary_file import MAX_VALUES, SummaryFile, headline_keys
from tests.helpers.paths import REPO_ROOT

EST = {"value": 0.5, "ci": [0.4, 0.6], "n": 3, "level": 0.95}


def test_the_committed_files_keep_their_contracts():
    bench = BenchmarkFile.read(REPO_ROOT / "metrics/benchmark.json")
    raw = json.loads((REPO_ROOT / "metrics/benchmark.json").read_text(encoding="utf-8"))
    assert bench.rate("gap") == raw["gap"] and bench.primary_judge == raw["primary_judge"]
    assert bench.judged(raw["primary_judge"], "n_units") == raw["units"]
    summary = SummaryFile.read(REPO_ROOT / "metrics/summary.json")
    values = json.loads((REPO_ROOT / "metrics/summary.json").read_text(encoding="utf-8"))
    assert summary.interval("gap_pct") == tuple(
        values[k] for k in ("gap_pct", "gap_pct_lo", "gap_pct_hi")
    )


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"gap": {"value": 0.1}}, "gap"),
        ({"default_rate": 0.5}, "default_rate"),
        ({"units": "12"}, "units"),
        ({"units": True}, "units"),
        ({"blind_judges": "a"}, "blind_judges"),
        ({"by_bias_type": {"age": 3}}, "by_bias_type.age"),
        ({"corrected": {"calibration": {"items": 2.5}}}, "corrected.calibration.items"),
        ({"corrected": {"all": {"gap": "x"}}}, "corrected.all.gap"),
        ({"bootstrap": {"level": "95%"}}, "bootstrap.level"),
        (
            {"leaderboard": {"rows": [{"config": "g", "n_units": "3"}]}},
            "leaderboard.rows[0].n_units",
        ),
    ],
)
def test_a_wrong_benchmark_field_is_one_line_naming_file_and_field(payload, field):
    with pytest.raises(InputError) as err:
        BenchmarkFile.from_json(payload, "run/metrics/benchmark.json")
    assert str(err.value).startswith(f"run/metrics/benchmark.json, field '{field}': ")
    assert "\n" not in str(err.value)


def test_benchmark_reads_typed_and_keeps_unknown_keys():
    bench = BenchmarkFile.from_json(
        {
            "units": 4,
            "gap": EST,
            "judges": {"j": {"all": {"gap": EST, "n_units": 4}}},
            "corrected": {"all": {"gap": EST, "n_units": 4}, "calibration": {"max_condition": 50}},
            "bootstrap": {"level": 0.9},
            "a_new_block": {"anything": [1, "x"]},
        },
        "b.json",
    )
    assert bench.units == 4 and bench.rate("gap") == EST and bench.rate("default_rate") is None
    assert bench.has("gap") and not bench.has("default_rate")
    assert bench.judged("j", "gap") == EST and bench.judged("other", "gap") is None
    assert bench.corrected is not None and bench.corrected.all.get("gap") == EST
    # a number keeps its JSON form: the report prints "at most 50", never "50.0"
    assert repr(bench.corrected.calibration.max_condition) == "50"
    assert bench.bootstrap is not None and bench.bootstrap.level == 0.9
    assert bench.model_extra == {"a_new_block": {"anything": [1, "x"]}}


def test_a_file_that_is_not_an_object_or_not_json_is_named(tmp_path):
    with pytest.raises(InputError, match=r"^b\.json: not a JSON object \(list\)$"):
        BenchmarkFile.from_json([1], "b.json")
    bad = tmp_path / "summary.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match=r"summary\.json: not valid JSON"):
        SummaryFile.read(bad)


@pytest.mark.parametrize(
    ("payload", "field", "reason"),
    [
        ({"gap_pct": "3"}, "gap_pct", "a valid integer or a valid number (got '3')"),
        ({"default_rate_corrected_pct_lo": [1]}, "default_rate_corrected_pct_lo", "integer"),
        ({"random_init": 1}, "random_init", "a valid boolean (got 1)"),
        ({"a_newer_key": {"nested": 1}}, "a_newer_key", "a valid string or a valid boolean"),
    ],
)
def test_a_wrong_summary_value_is_one_line_naming_the_key(payload, field, reason):
    with pytest.raises(InputError) as err:
        SummaryFile.from_json(payload, "metrics/summary.json")
    msg = str(err.value)
    assert msg.startswith(f"metrics/summary.json, field '{field}': Input should be ")
    assert reason in msg and "\n" not in msg


def test_a_summary_holds_at_most_max_values():
    fine = {f"k{i}": i for i in range(MAX_VALUES)}
    assert SummaryFile.from_json(fine, "s.json").model_extra == fine
    with pytest.raises(InputError, match=f"{MAX_VALUES + 1} values, more than {MAX_VALUES}"):
        SummaryFile.from_json({**fine, "one_more": 1}, "s.json")


def test_the_headline_keys_follow_the_metric_schema():
    keys = headline_keys(("gap",))
    assert keys == (
        "gap_pct",
        "gap_pct_lo",
        "gap_pct_hi",
        "gap_corrected_pct",
        "gap_corrected_pct_lo",
        "gap_corrected_pct_hi",
    )


def test_a_new_headline_metric_is_checked_with_no_edit(monkeypatch):
    new = metric_schema.Metric(
        "neither_anti", "share", None, title="t", headline=True, tabled=True, ratio=("a", "b")
    )
    monkeypatch.setattr(metric_schema, "METRICS", (*metric_schema.METRICS, new))
    with pytest.raises(InputError, match="field 'neither_anti'"):
        BenchmarkFile.from_json({"neither_anti": {"value": 1}}, "b.json")
    with pytest.raises(InputError, match="field 'neither_anti_pct_hi'"):
        SummaryFile.from_json({"neither_anti_pct_hi": "high"}, "s.json")
    assert BenchmarkFile.from_json({"neither_anti": EST}, "b.json").rate("neither_anti") == EST
