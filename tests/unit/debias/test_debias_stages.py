"""The debiasing stages end to end on the tiny pipeline: retrieve (real MiniLM), rewrite (replayed
LLM answers), debias_render for several configurations, debias_score."""

from __future__ import annotations

import importlib.util
import json

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from implicit_bench._util.files import read_json, read_table
from implicit_bench.backends.llm import request_hash
from implicit_bench.debias.rewriting import pair_messages, rewrite_messages
from implicit_bench.render.images import ImageStore
from tests.helpers.paths import REPO_ROOT
from tests.helpers.render_fixtures import tiny_config, units_frame

SEEDS = [42, 1042]
CONFIGS = {
    "unmodified": {"exp": 0, "method": "none", "reads": "debias.seeds"},
    "rewrite_own": {"exp": 3, "method": "rewrite", "info": "own", "reads": "debias.seeds"},
    "sv_attributes_removed": {
        "exp": 5,
        "method": "steer",
        "info": "removed",
        "signal": "attributes",
        "reads": "debias.alpha",
    },
    "sv_attributes_own": {
        "exp": 7,
        "method": "steer",
        "info": "own",
        "signal": "attributes",
        "reads": "debias.alpha",
    },
    "sv_llm_pair_own": {
        "exp": 9,
        "method": "steer",
        "info": "own",
        "signal": "llm_pair",
        "reads": "debias.alpha",
    },
}


def _stage(name):
    spec = importlib.util.spec_from_file_location(
        f"stage_{name}", REPO_ROOT / "stages" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def _run(name, *args):
    result = CliRunner().invoke(_stage(name), list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory):
    from implicit_bench.backends.tiny.stage import build

    return build("vlm", tmp_path_factory.mktemp("models") / "vlm", seed=0)


@pytest.fixture
def repo(tmp_path, tiny_generator_dir, tiny_vlm, monkeypatch):
    units = units_frame()
    (tmp_path / "data" / "interim").mkdir(parents=True)
    units.to_parquet(tmp_path / "data" / "interim" / "units.parquet", index=False)
    answers = {}
    for unit in units.to_dict("records"):
        answers[request_hash(rewrite_messages(unit["prompt_neutral"], unit))] = (
            f"{unit['prompt_neutral']}, of any gender"
        )
        pair = (
            json.dumps(
                {
                    "stereotype_prompt": f"A {unit['stereotype']}.",
                    "anti_stereotype_prompt": f"A {unit['anti_stereotype']}.",
                }
            )
            if unit["unit_id"] != "u3"
            else "I cannot help with that."
        )
        answers[request_hash(pair_messages(unit))] = pair
    (tmp_path / "replay.jsonl").write_text(
        "".join(json.dumps({"request_hash": k, "text": v}) + "\n" for k, v in answers.items())
    )
    params = {
        "base": {"profile": "default"},
        "llms": {"replay": {"backend": "replay", "path": "replay.jsonl"}},
        "generators": {"tiny": tiny_config(tiny_generator_dir)},
        "render": {"seeds": SEEDS, "executor": {"kind": "local", "progress": False}},
        "debias": {
            "units": "data/interim/units.parquet",
            "subset": {"max_units": 0},
            "seeds": SEEDS,
            "alpha": 2.0,
            "generator": "tiny",
            "configs": CONFIGS,
            "rewriter": "replay",
            "scoring": {
                "rubric_judge": "qwen3vl",
                "alignment_judge": "qwen3vl",
                "bootstrap": {"n": 200, "seed": 1},
            },
        },
        "judges": {
            "qwen3vl": {
                "backend": "transformers",
                "model": str(tiny_vlm),
                "device": "cpu",
                "max_new_tokens": 24,
                "batch_size": 8,
            },
            "gemma4": {"backend": "transformers", "model": str(tiny_vlm), "device": "cpu"},
        },
        "judge": {
            "tasks": {"rubric": {"judges": ["qwen3vl", "gemma4"]}, "blind": None},
            "progress": False,
        },
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_stages_end_to_end(repo):
    _run("retrieve")
    retrieval = read_table("data/processed/retrieval.parquet")
    assert len(retrieval) == 4 and (retrieval["retrieved_removed"] != retrieval["unit_id"]).all()
    metrics = read_json("metrics/retrieval.json")
    assert metrics["n_queries"] == 4 and 0 <= metrics["top1_accuracy"] <= 1

    _run("rewrite")
    rewrites = read_table("data/processed/rewrites.parquet")
    assert rewrites["info"].unique().tolist() == ["own"] and rewrites["valid"].all()
    pairs = read_table("data/processed/llm_pairs.parquet")
    assert pairs.set_index("unit_id")["valid"].to_dict() == {
        "u0": True,
        "u1": True,
        "u2": True,
        "u3": False,
    }
    assert read_json("metrics/rewrite.json")["llm_pairs"]["invalid"] == 1

    for name in CONFIGS:
        _run("debias_render", "--config", name)
    index = {n: ImageStore(f"data/debias/images/{n}").index() for n in CONFIGS}
    assert len(index["unmodified"]) == 8 and (index["unmodified"]["variant"] == "neutral").all()
    assert index["rewrite_own"]["prompt"].str.endswith(", of any gender").all()
    assert len(index["sv_llm_pair_own"]) == 6  # u3's pair is invalid: not rendered, counted
    summary = read_json("data/debias/images/sv_llm_pair_own/summary.json")
    assert summary["units_not_rendered"] == {"LLM pair invalid or missing": 1}
    assert summary["provenance"]["random_init"] is True
    steered = index["sv_attributes_own"].set_index(["unit_id", "seed"])["sha256"]
    plain = index["unmodified"].set_index(["unit_id", "seed"])["sha256"]
    assert (steered != plain).all()

    # the judge machinery on two configurations (tiny random VLM: noise answers, kept)
    for name in ("unmodified", "rewrite_own"):
        _run("debias_judge", "--config", name)
    judged = pd.concat(
        read_table(f"data/debias/judgements/{n}.parquet") for n in ("unmodified", "rewrite_own")
    )
    assert set(judged["task"]) == {"rubric", "alignment"} and set(judged["judge"]) == {"qwen3vl"}
    assert len(judged) == 2 * 2 * 8
    align = judged[judged["task"] == "alignment"].pivot_table(
        index=["unit_id", "seed"], columns="config", values="prompt_hash", aggfunc="first"
    )
    # alignment is asked against the original neutral prompt, also for rewritten prompts
    assert (align["unmodified"] == align["rewrite_own"]).all()

    # judgements in the JUDGEMENTS schema with known values, then the score
    rows = []
    for name, frame in index.items():
        for r in frame.itertuples():
            b = 4 if name == "unmodified" else 2
            rows.append(
                dict(
                    unit_id=r.unit_id,
                    variant="neutral",
                    seed=r.seed,
                    config=name,
                    judge="qwen3vl",
                    task="rubric",
                    value=str(b),
                    valid=True,
                )
            )
            rows.append(
                dict(
                    unit_id=r.unit_id,
                    variant="neutral",
                    seed=r.seed,
                    config=name,
                    judge="qwen3vl",
                    task="alignment",
                    value="true",
                    valid=True,
                )
            )
    out = repo / "data" / "debias" / "judgements"
    out.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(rows)
    for name in CONFIGS:
        frame[frame["config"] == name].to_parquet(out / f"{name}.parquet", index=False)
    _run("debias_score")
    scored = read_json("metrics/debias.json")["configs"]
    # unmodified: b = 4, Y = 1 -> S = 100 (1 - 4/5) = 20; the others b = 2 -> S = 60, dS = 40
    assert scored["unmodified"]["S"] == pytest.approx(20.0)
    assert scored["sv_attributes_own"]["dS"]["value"] == pytest.approx(40.0)
    assert scored["sv_attributes_own"]["dS"]["ci"] == pytest.approx([40.0, 40.0])
    assert scored["sv_attributes_full_kg"]["n_images"] == 8
    assert "Own unit" in (repo / "metrics" / "debias.md").read_text()
