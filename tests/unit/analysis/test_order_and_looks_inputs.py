"""``analyze --order FILE --looks N1,N2`` reads its inputs as meant or refuses them in one line:
an empty ``--looks`` is refused (it used to run without anytime.json and without a word),
spaces around a count are read, and an order file with a UTF-8 byte order mark is read
(docs/errors.md, "Records of multi-round runs and benchmarks")."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from implicit_bench.analysis.looks import parse_counts
from implicit_bench.cli.main import main as cli_main
from implicit_bench.errors import ConfigError
from tests.helpers.analysis_fixtures import BLIND_TYPES, blind_judgements, rubric_judgements, units


def _inputs(tmp_path):
    """Four units u1..u4 with blind and rubric judgements (the anytime tests' fixture)."""
    units(BLIND_TYPES).to_csv(tmp_path / "units.csv", index=False)
    j = pd.concat([blind_judgements(), rubric_judgements()], ignore_index=True)
    j.to_parquet(tmp_path / "judgements.parquet")
    return tmp_path / "units.csv", tmp_path / "judgements.parquet"


def _analyze(tmp_path, looks, order=b"u3\nu1\nu4\nu2\n"):
    u, j = _inputs(tmp_path)
    (tmp_path / "order.txt").write_bytes(order)
    args = ["analyze", "--units", str(u), "--judgements", str(j), "--out", str(tmp_path / "out")]
    args += ["--bootstrap-n", "20", "--order", str(tmp_path / "order.txt"), "--looks", looks]
    return CliRunner().invoke(cli_main, args)


@pytest.mark.parametrize("looks", ["", " ", ",", "2,", "1,,2", "1_0", "+2", "２", "2.0"])
def test_a_looks_text_that_is_no_list_of_counts_is_one_line(tmp_path, looks):
    res = _analyze(tmp_path, looks)
    assert res.exit_code == 1
    (line,) = res.output.strip().splitlines()
    assert line == f"Error: --looks: '{looks}' is not a comma-separated list of unit counts"
    assert not (tmp_path / "out").exists()  # refused before anything is read or written


def test_spaces_around_a_count_are_read_as_meant(tmp_path):
    res = _analyze(tmp_path, " 1, 2 ")
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "out" / "anytime.json").read_text())["looks"] == [1, 2]
    assert parse_counts(" 20", "--looks") == [20]
    with pytest.raises(ConfigError, match="--rounds: '' is not"):
        parse_counts("", "--rounds")


def test_an_order_file_with_a_byte_order_mark_is_read(tmp_path):
    res = _analyze(tmp_path, "1,4", order="u3\r\nu1\r\nu4\r\nu2\r\n".encode("utf-8-sig"))
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "out" / "anytime.json").read_text())
    assert report["order"] == {"file": "order.txt", "draw": "unit", "units": 4, "judged": 4}
    first = report["estimands"]["default_rate"]["looks"][0]
    assert first["estimate"] == 0.0  # u3 first, read without the mark: its rate is 0
