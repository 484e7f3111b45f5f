"""Reading a retrieval table: string ids, strict booleans, and the retrieval figures computed
from it in `implicit-bench analyze` (hand-worked values)."""

from __future__ import annotations

import pandas as pd
import pytest

from implicit_bench._util.booleans import parse_bool, parse_bool_column
from implicit_bench.debias.retrieval import read_retrieval, retrieval_metrics
from implicit_bench.debias.stage import own_hits
from implicit_bench.errors import InputError


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("true", True),
        (" Yes ", True),
        ("1", True),
        (1, True),
        (True, True),
        ("FALSE", False),
        ("no", False),
        ("0", False),
        (0, False),
        (0.0, False),
        ("", None),
        ("n", None),
        ("2", None),
        (float("nan"), None),
        (None, None),
        ("maybe", None),
    ],
)
def test_parse_bool_is_strict(raw, expected):
    assert parse_bool(raw) is expected


def test_own_hits_never_counts_no_or_blank_as_a_hit():
    table = pd.DataFrame({"unit_id": ["a", "b", "c"], "own_hit": ["yes", "no", "0"]})
    assert own_hits(table) == {"a": True, "b": False, "c": False}
    with pytest.raises(InputError, match="row 2.*own_hit"):
        own_hits(pd.DataFrame({"unit_id": ["a", "b"], "own_hit": ["yes", ""]}))
    with pytest.raises(InputError):
        parse_bool_column(pd.Series(["no", "nope"]), "t.csv", "own_hit")


def test_read_retrieval_keeps_leading_zeros_and_computes_the_figures(tmp_path):
    path = tmp_path / "retrieval.csv"
    path.write_text(
        "unit_id,retrieved_full,own_hit,own_rank,retrieved_removed,same_head_removed,same_pair_removed\n"
        "007,007,true,1,012,yes,no\n"
        "012,007,no,3,007,1,0\n"
        "100,100,1,1,007,no,no\n"
        "200,007,false,2,100,false,true\n"
    )
    table = read_retrieval(path)
    assert table["unit_id"].tolist() == ["007", "012", "100", "200"]
    assert table["retrieved_removed"].tolist() == ["012", "007", "007", "100"]
    assert table["own_hit"].tolist() == [True, False, True, False]
    m = retrieval_metrics(table)
    # top-1 own unit: 2 of 4; same head: 2 of 4; same pair: 1 of 4; mean rank (1+3+1+2)/4
    assert (m["top1_accuracy"], m["removed_same_head"], m["removed_same_pair"]) == (0.5, 0.5, 0.25)
    assert m["mean_own_rank"] == 1.75


def test_read_retrieval_rejects_bad_rows(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("unit_id,own_hit\n007,true\n008,\n")
    with pytest.raises(InputError, match="row 2, field 'own_hit'"):
        read_retrieval(bad)
    dup = tmp_path / "dup.csv"
    dup.write_text("unit_id,own_hit\n007,true\n007,false\n")
    with pytest.raises(InputError, match="duplicate"):
        read_retrieval(dup)
    only = tmp_path / "only.csv"
    only.write_text("unit_id,own_hit\n1,no\n")
    m = retrieval_metrics(read_retrieval(only))
    assert (
        m["top1_accuracy"] == 0.0 and m["removed_same_head"] is None and m["mean_own_rank"] is None
    )
