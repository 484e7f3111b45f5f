"""The analysis's shortcuts give what the general paths gave: text stripped per distinct value,
the formula-unescape prefix test, answer-kind reasons built for failing cells only, and the
CLI's pydantic-plugin setting left to the caller when set."""

from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd

from implicit_bench._util.files import read_table, write_table
from implicit_bench.protocol.judge_tasks import load_task
from implicit_bench.protocol.tables.spec import as_text


def test_as_text_strips_each_distinct_value_and_keeps_nulls():
    values = pd.Series([" a", "b ", None, " a", "c", "b "], dtype="str")
    out = as_text(values)
    assert out.dtype == object
    assert out.tolist() == ["a", "b", None, "a", "c", "b"]
    plain = pd.Series([" x ", "y"], dtype=object)  # the general (object) path is unchanged
    assert as_text(plain).tolist() == ["x", "y"]


def test_csv_round_trip_with_and_without_escaped_cells(tmp_path):
    frame = pd.DataFrame({"a": ["=1+1", "plain", "-0.25"], "b": ["x", "y", "z"]})
    path = tmp_path / "t.csv"
    write_table(frame, path)
    assert "'=1+1" in path.read_text()  # escaped on disk
    back = read_table(path, dtype=str)
    assert back["a"].tolist() == ["=1+1", "plain", "-0.25"]  # column with a ' cell: unescaped
    assert back["b"].tolist() == ["x", "y", "z"]  # no ' cell: skipped by the prefix test


def test_answer_kind_reasons_name_the_failing_cells_only():
    rubric = load_task("rubric")
    values = pd.Series(["2", "6", "3", "x"], index=[10, 11, 12, 13])
    ((bad, reason),) = rubric.kind.check_stored(values, rubric)[0]
    assert bad.tolist() == [False, True, False, True]
    assert list(reason.index) == [11, 13]
    assert reason[11].endswith("got '6'") and reason[13].endswith("got 'x'")


def test_cli_leaves_a_set_pydantic_plugin_variable_alone():
    code = "import os, implicit_bench.cli.main; print(os.environ['PYDANTIC_DISABLE_PLUGINS'])"
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    unset = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert unset.stdout.strip() == "__all__"
    chosen = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "PYDANTIC_DISABLE_PLUGINS": "logfire"},
        capture_output=True,
        text=True,
    )
    assert chosen.stdout.strip() == "logfire"
