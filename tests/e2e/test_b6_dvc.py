"""Stage b6 (Appendix B.6) in a DVC workspace of the default profile: the
simulated third judge re-scores the subset, Tables 15 and 17 are written and labelled simulated."""

from __future__ import annotations

import pytest

from tests.helpers.dvc_workspace import Workspace, small_workspace

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ws(dvc_base, tmp_path_factory) -> Workspace:
    return small_workspace(tmp_path_factory, dvc_base, "b6")


def test_b6_stage_writes_tables_15_and_17(ws):
    params = ws.params()["b6"]
    payload = ws.json("metrics/b6.json")
    subset = ws.table("data/b6/subset_units.parquet")
    baseline = ws.table("data/b6/baseline_units.parquet")
    selected = ws.table("data/processed/selected_units.parquet")
    assert len(subset) == payload["n_subset_units"] > 0
    assert set(subset["unit_id"]) <= set(baseline["unit_id"]) <= set(selected["unit_id"])
    assert subset["bias_type"].value_counts().max() <= params["max_per_bias_type"]
    stores = [params["baseline"], *params["generators"]]
    assert [r["config"] for r in payload["table15"]["rows"]] == stores
    assert all(r["third"] is not None for r in payload["table15"]["rows"])
    assert [r["judge"] for r in payload["table16"]][-1] == params["judge"]
    rows = payload["table17"]["rows"]
    assert rows[0]["config"] == params["baseline"] and rows[0]["unmodified"]
    assert [r["config"] for r in rows[1:]] == params["debias_configs"]
    # the third judge's answers: the baseline's three variants, the other stores' neutral ones
    third = ws.table("data/b6/baseline.parquet")
    assert set(third["variant"]) == {"neutral", "stereotype", "anti_stereotype"}
    assert set(third["judge"]) == {params["judge"]}
    assert set(ws.table("data/b6/subset.parquet")["variant"]) <= {"neutral"}
    # simulated judges: the output says so
    assert payload["provenance"].get("simulated") is True
    assert "simulated" in (ws.root / "metrics/b6.md").read_text(encoding="utf-8").lower()
    # a second repro: nothing to do, nothing asked again
    assert "didn't change" in ws.run("dvc", "repro", "b6") or "up to date" in ws.run(
        "dvc", "status", "b6"
    )
