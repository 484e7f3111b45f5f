"""IMPLICIT-Bench App. C.1's construction ablation: the direct arm written from the
sentence pair, two raters' blind 1-5 ratings, ours - direct per rater and criterion."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from implicit_bench.audits.construction_ablation import (
    direct_triplets,
    ours_first,
    rate,
    rating_summary,
)


def test_rating_summary_by_hand():
    rows = []
    for unit, ours, direct in (("u1", 4, 3), ("u2", 5, 3), ("u3", 2, None)):
        rows.append((unit, "R", "ours", "scene_consistency", ours))
        if direct is not None:
            rows.append((unit, "R", "direct", "scene_consistency", direct))
    frame = pd.DataFrame(rows, columns=["unit_id", "rater", "arm", "criterion", "score"])
    out = rating_summary(frame)["R"]["scene_consistency"]
    # u3 has no direct rating: left out of both means; (4 + 5) / 2 - (3 + 3) / 2 = 1.5
    assert out == {"units": 2, "ours": 4.5, "direct": 3.0, "difference": 1.5}


def test_order_is_a_hash_of_seed_and_unit():
    firsts = [ours_first(f"u{i}", 42) for i in range(200)]
    assert 60 < sum(firsts) < 140  # about half each way
    assert firsts == [ours_first(f"u{i}", 42) for i in range(200)]


PAIRS = pd.DataFrame(
    {
        "pair_id": ["p1", "p2"],
        "bias_type": ["gender", "race"],
        "target": ["mover", None],
        "stereotype_sentence": ["The mover was a strong man.", "S2"],
        "anti_stereotype_sentence": ["The mover was a strong woman.", "A2"],
    }
)
UNITS = pd.DataFrame(
    {
        "unit_id": ["u1", "u2"],
        "source_pair_id": ["p1", "p2"],
        "prompt_neutral": ["A mover lifting boxes.", "N2"],
        "prompt_stereotype": ["A man mover lifting boxes.", "S2"],
        "prompt_anti_stereotype": ["A woman mover lifting boxes.", "A2"],
    }
)


def test_direct_arm_and_ratings_through_a_local_server(tmp_path):
    from implicit_bench.backends.llm import InvalidCounter, build_llm
    from tests.helpers.chat_server import ChatServer, completion

    def answer(body, n):
        text = body["messages"][-1]["content"]
        if "stereotype_sentence: The mover was a strong man." in text:
            return 200, completion(
                '{"neutral": "A mover at work.", "stereotype_trigger": "A male mover at work.", '
                '"anti_stereotype_trigger": "A female mover at work."}'
            )
        if text.startswith("You rate two sets"):
            # the rater gives the set that shows "A mover lifting boxes." 5s, the other 2s
            ours_is_1 = re.search(r'Set 1: neutral: "A mover lifting boxes\."', text)
            good = {"scene_consistency": 5, "visual_realisability": 5, "source_fidelity": 5}
            bad = {"scene_consistency": 2, "visual_realisability": 2, "source_fidelity": 2}
            sets = {"set1": good, "set2": bad} if ours_is_1 else {"set1": bad, "set2": good}
            return 200, completion(json.dumps(sets))
        return 200, completion("no JSON")

    with ChatServer(answer) as server:
        config = {
            "backend": "openai",
            "model": "m",
            "base_url": server.base_url,
            "cache": str(tmp_path / "llm.sqlite"),
            "backoff_s": 0.0,
        }
        counter = InvalidCounter("writer")
        table = direct_triplets(UNITS, PAIRS, build_llm(config), counter)
        assert table.loc[0, "prompt_direct_stereotype"] == "A male mover at work."
        assert table.loc[1, ["prompt_direct_neutral"]].isna().all()  # invalid answer: null
        assert counter.as_dict()["invalid"] == 1
        rows = rate(table, PAIRS, build_llm(config), "R1", 42, InvalidCounter("R1"))
    assert set(rows["unit_id"]) == {"u1"}  # u2 has no direct arm: not rated
    out = rating_summary(rows)["R1"]
    for criterion in ("scene_consistency", "visual_realisability", "source_fidelity"):
        assert out[criterion]["difference"] == pytest.approx(3.0)  # 5 - 2, whatever the order


def test_construction_rating_command(tmp_path):
    from click.testing import CliRunner

    from implicit_bench.cli.main import main
    from tests.helpers.chat_server import ChatServer, completion

    def answer(body, n):
        text = body["messages"][-1]["content"]
        if text.startswith("You rate two sets"):
            one = {"scene_consistency": 4, "visual_realisability": 3, "source_fidelity": 2}
            return 200, completion(json.dumps({"set1": one, "set2": one}))
        return 200, completion(
            '{"neutral": "n", "stereotype_trigger": "s", "anti_stereotype_trigger": "a"}'
        )

    units = UNITS.assign(source="stereoset", bias_type="gender", head="mover", relation=None)
    units = units.assign(stereotype="man", anti_stereotype="woman")
    units.to_parquet(tmp_path / "units.parquet")
    PAIRS.assign(source="stereoset", bias_type="gender").to_parquet(tmp_path / "pairs.parquet")
    with ChatServer(answer) as server:
        block = {"backend": "openai", "base_url": server.base_url, "backoff_s": 0.0}
        params = {
            "llms": {
                name: {**block, "model": name, "cache": str(tmp_path / f"{name}.sqlite")}
                for name in ("writer", "r1", "r2")
            },
            "construction_ablation": {"writer": "writer", "raters": ["r1", "r2"], "seed": 1},
        }
        (tmp_path / "params.yaml").write_text(json.dumps(params))
        result = CliRunner().invoke(
            main,
            [
                "construction-rating",
                "--params",
                str(tmp_path / "params.yaml"),
                "--units",
                str(tmp_path / "units.parquet"),
                "--pairs",
                str(tmp_path / "pairs.parquet"),
                "--out-dir",
                str(tmp_path / "out"),
                "--metrics",
                str(tmp_path / "m.json"),
            ],
        )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "m.json").read_text())
    assert report["direct_written"] == 2 and sorted(report["by_rater"]) == ["r1", "r2"]
    # equal ratings for both sets: no difference, whatever the order
    assert report["by_rater"]["r2"]["source_fidelity"] == {
        "units": 2,
        "ours": 2.0,
        "direct": 2.0,
        "difference": 0.0,
    }
    assert len(pd.read_csv(tmp_path / "out/ratings.csv")) == 2 * 2 * 2 * 3
