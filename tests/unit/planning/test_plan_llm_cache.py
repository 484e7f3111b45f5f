"""`plan` looks up the kg stage's LLM answers in its disk cache, under the stage's own keys
(a real run against tests/helpers/chat_server.py, then the plan)."""

from __future__ import annotations

import json

import pandas as pd

from implicit_bench.construction.kg.params import KGParams
from implicit_bench.construction.kg.stage import run_kg
from implicit_bench.planning.plan import _llm_stages
from implicit_bench.protocol.tables import PAIRS, PAIRS_PATH
from tests.helpers.chat_server import ChatServer, completion
from tests.helpers.construction_fixtures import crows, stereoset


def _pairs():
    return [
        crows("cp-1", "Jerome was very fast and athletic.", "Tom was very fast and athletic."),
        crows("cp-2", "Poor people are lazy.", "Rich people are lazy.", "socioeconomic"),
        stereoset("ss-1", "nurse", "The nurse was caring.", "The nurse was rude."),
    ]


def test_kg_plan_counts_the_cached_llm_answers(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pairs = _pairs()
    (tmp_path / PAIRS_PATH).parent.mkdir(parents=True)
    PAIRS.write(pd.DataFrame([p.model_dump() for p in pairs]), tmp_path / PAIRS_PATH)
    cache = tmp_path / "llm.sqlite"
    with ChatServer(lambda body, n: (200, completion(json.dumps({"units": []})))) as server:
        llms = {
            "t": {
                "backend": "openai",
                "model": "gpt-test",
                "base_url": server.base_url,
                "api_key_env": None,
                "cache": str(cache),
            }
        }
        params = {"llms": llms, "kg": {"extractor": "llm", "llm": "t", "max_pairs": 2}}
        [before] = _llm_stages(params, tmp_path)
        assert (before.items, before.cached, before.model_calls) == (
            2,
            0,
            2,
        ) and not cache.exists()  # nothing created
        run_kg(
            pairs, KGParams(extractor="llm", llm="t", max_pairs=2), llms
        )  # the stage's answers: 2 pairs
        assert server.hits == 2
        params["kg"]["max_pairs"] = 0  # all 3 pairs: 2 cached, 1 to ask
        [after] = _llm_stages(params, tmp_path)
        assert server.hits == 2  # the plan asked nothing
    assert (after.stage, after.items, after.cached, after.model_calls) == ("kg", 3, 2, 1)
    assert after.calls_by_model == {"llms.t": 1}


def test_kg_plan_without_the_pairs_table_is_the_estimate(tmp_path):
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics/sources.json").write_text(json.dumps({"pairs_total": 40}))
    params = {
        "llms": {"t": {"backend": "openai", "model": "m"}},
        "kg": {"extractor": "llm", "llm": "t", "max_pairs": 10},
    }
    [plan] = _llm_stages(params, tmp_path)
    assert (plan.items, plan.cached, plan.model_calls) == (10, None, 10)


def test_triplets_plan_counts_the_cached_llm_answers(tmp_path, monkeypatch):
    from implicit_bench.construction.kg.table import units_frame
    from implicit_bench.construction.triplets.params import TripletsParams
    from implicit_bench.construction.triplets.stage import run_triplets
    from implicit_bench.params import SubsetParams
    from implicit_bench.protocol.tables import KG_UNITS_PATH
    from tests.helpers.construction_fixtures import unit

    monkeypatch.chdir(tmp_path)
    pairs = _pairs()
    units = [
        unit("cp-1-u0", "person", ["fast"], ["slow"]),
        unit("ss-1-u0", "nurse", ["caring"], ["rude"]),
    ]
    (tmp_path / PAIRS_PATH).parent.mkdir(parents=True)
    PAIRS.write(pd.DataFrame([p.model_dump() for p in pairs]), tmp_path / PAIRS_PATH)
    units_frame(units).to_parquet(tmp_path / KG_UNITS_PATH)
    cache = tmp_path / "llm.sqlite"
    good = {
        "neutral": "a person",
        "stereotype_trigger": "a fast person",
        "anti_stereotype_trigger": "a slow person",
    }
    with ChatServer(lambda body, n: (200, completion(json.dumps(good)))) as server:
        llms = {
            "t": {
                "backend": "openai",
                "model": "gpt-test",
                "base_url": server.base_url,
                "api_key_env": None,
                "cache": str(cache),
            }
        }
        params = {"llms": llms, "triplets": {"writer": "llm", "llm": "t"}}
        pair_table = PAIRS.read(tmp_path / PAIRS_PATH)
        run_triplets(
            units[:1],
            pair_table,
            TripletsParams(writer="llm", llm="t"),
            SubsetParams(max_units=0),
            llms,
        )
        assert server.hits == 1
        [plan] = _llm_stages(params, tmp_path)
        assert server.hits == 1  # the plan asked nothing
    assert (plan.stage, plan.items, plan.cached, plan.model_calls) == ("triplets", 2, 1, 1)
    assert plan.calls_by_model == {"llms.t": 1}
