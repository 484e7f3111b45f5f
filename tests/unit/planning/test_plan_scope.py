"""Outputs follow the plan: an image store holds the current plan only (items of earlier plans
wait in a pool in the model-call cache for reuse), readers see only the published index; run-state
figures stay out of tracked files."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from implicit_bench.backends.judges.params import JudgeStageParams
from implicit_bench.backends.judges.stage import executor_dispatch, run_judge_stage
from implicit_bench.render.images import (
    ImageKey,
    ImageStore,
    published_stores,
    read_index,
    unpublish,
)
from implicit_bench.runtime.runlog import log_run, split_run_state, write_metrics
from tests.helpers.chat_server import ChatServer, completion
from tests.helpers.judge_fixtures import UNITS, make_inputs
from tests.helpers.run_log import last_run


def _answer(body, n):
    prompt = body["messages"][0]["content"][1]["text"]
    if "two descriptions" in prompt:
        return 200, completion('{"choice": "A"}')
    return 200, completion('{"score": 3}')


def _publish(root, seeds) -> None:
    """Re-finalize the store with the plan of ``seeds`` as the render stage does: the plan's
    items come back from the pool, the others move there."""
    pool = root / "cache/image_pool/base"
    with ImageStore(root / "data/images/base") as store:
        source = ImageStore(pool)
        every = {r.key for r in store.records()} | {r.key for r in source.records()}
        keys = sorted(k for k in every if k.seed in seeds)
        store.adopt(source, keys, lambda record: True)
        source.close()
        store.finalize(keys=keys, pool=pool)


def test_judge_sees_only_the_published_plan_and_reuses_the_rest(tmp_path):
    make_inputs(tmp_path, seeds=(42, 1042, 2042), refused=())
    _publish(tmp_path, {42, 1042})
    params = JudgeStageParams(
        judges={
            "api": {
                "backend": "openai",
                "model": "m",
                "api_key_env": None,
                "backoff_s": 0.0,
                "max_retries": 1,
            }
        },
        tasks={"rubric": None},
        configs=None,
        progress=False,
    )
    dispatch = executor_dispatch({}, progress=False)
    with ChatServer(_answer) as server:
        params.judges["api"]["base_url"] = server.base_url
        two = run_judge_stage(params, tmp_path, dispatch=dispatch)
        # 2 units x 3 variants x 2 seeds, although the store holds 3 seeds
        assert len(two.frame) == 12 and set(two.frame["seed"]) == {42, 1042}
        assert two.metrics["images"]["base"]["ok"] == 12 and server.hits == 12
        _publish(tmp_path, {42, 1042, 2042})
        three = run_judge_stage(params, tmp_path, dispatch=dispatch)
        assert set(three.frame["seed"]) == {42, 1042, 2042} and len(three.frame) == 18
        assert three.model_calls == 6 and three.cache_hits == 12  # only the new seed is asked
        _publish(tmp_path, {42, 1042})
        back = run_judge_stage(params, tmp_path, dispatch=dispatch)
        assert back.model_calls == 0 and back.frame.equals(two.frame)


def test_unpublished_store_leaves_the_folder_and_keeps_its_items_in_the_pool(tmp_path):
    make_inputs(tmp_path, config="base")
    make_inputs(tmp_path, config="other")
    assert [p.name for p in published_stores(tmp_path / "data/images")] == ["base", "other"]
    pool = tmp_path / "cache/image_pool/other"
    assert unpublish(tmp_path / "data/images/other", pool) and not unpublish(
        tmp_path / "data/images/other", pool
    )
    assert [p.name for p in published_stores(tmp_path / "data/images")] == ["base"]
    assert not (tmp_path / "data/images/other").exists()  # the output holds the plan only
    with ImageStore(pool) as store:
        assert len(store) == len(UNITS) * 3 * 2  # the items stay for reuse, in the pool
    with pytest.raises(FileNotFoundError):
        read_index(tmp_path / "data/images/other")
    index = read_index(tmp_path / "data/images/base")
    assert index["unit_id"].map(type).eq(str).all() and index["seed"].dtype == "int64"


def test_render_all_unpublishes_configs_left_out_of_the_plan(tmp_path, monkeypatch):
    import implicit_bench.render.params as render_params
    import implicit_bench.render.stage as render

    monkeypatch.chdir(tmp_path)  # a store under the working directory: pooled in its cache
    monkeypatch.setenv("IMPLICIT_BENCH_CACHE_DIR", str(tmp_path / "cache"))
    images = tmp_path / "data/images"
    make_inputs(tmp_path, config="dropped")
    rendered = []
    monkeypatch.setattr(render_params, "validate_config", lambda config, where=None: config)
    monkeypatch.setattr(render, "render_config", lambda name, *a, **k: rendered.append(name) or {})
    params = render.RenderParams(
        configs={"kept": {"backend": "x"}, "dropped": {"backend": "x"}}, run=["kept"]
    )
    render.render_all(params, pd.DataFrame(), images)
    assert rendered == ["kept"] and published_stores(images) == []
    assert not (images / "dropped").exists()
    assert (tmp_path / "cache/image_pool/data/images/dropped/journal.jsonl").exists()


def test_run_state_is_split_out_of_tracked_metrics(tmp_path, monkeypatch):
    monkeypatch.setenv("IMPLICIT_BENCH_RUN_LOG", str(tmp_path / "logs/runs.jsonl"))
    payload = {
        "configs": {"tiny": {"items": 24, "run": {"seconds": 1.5, "skipped_done": 3}}},
        "answers": {"valid": 2, "cache_hits": 1},
        "embedded_now": 7,
        "list": [{"seconds": 2, "n": 1}],
    }
    tracked, taken = split_run_state(payload)
    assert tracked == {
        "configs": {"tiny": {"items": 24}},
        "answers": {"valid": 2},
        "list": [{"n": 1}],
    }
    assert taken == {
        "configs.tiny.run": {"seconds": 1.5, "skipped_done": 3},
        "answers.cache_hits": 1,
        "embedded_now": 7,
        "list.0.seconds": 2,
    }
    figures = write_metrics(tmp_path / "m.json", payload, "render", note="x")
    assert json.loads((tmp_path / "m.json").read_text()) == tracked
    assert figures["note"] == "x" and last_run("render")["embedded_now"] == 7
    log_run("render", {"n": 2})
    assert last_run("render")["n"] == 2 and last_run("judge") is None


def test_index_holds_exactly_the_planned_keys(tmp_path):
    make_inputs(tmp_path, seeds=(42, 1042, 2042), refused=())
    _publish(tmp_path, {1042})
    index = read_index(tmp_path / "data/images/base")
    assert set(index["seed"]) == {1042} and len(index) == len(UNITS) * 3
    assert ImageKey("base", "u1", "neutral", 1042) in {
        ImageKey(r.config, r.unit_id, r.variant, int(r.seed)) for r in index.itertuples()
    }
