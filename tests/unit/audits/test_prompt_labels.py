"""IMPLICIT-Bench B.3 on a run's own triplets: the simulated labellers, the LLM labellers through a
real local server (matching and independent protocols), and the statistics by hand.

Labeller A right on all six prompts of two units, labeller B answering "neutral" always: B's
accuracy is 1 on neutral prompts, 0 on the others, 2 of 6 overall. Fleiss' kappa of A and B: the
two neutral prompts agree (P_i = 1), the four others do not (P_i = 0), mean 1/3; category shares
neutral 8/12, stereotype 2/12, anti 2/12, so P_e = 4/9 + 1/36 + 1/36 = 1/2 and
kappa = (1/3 - 1/2) / (1/2) = -1/3.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from implicit_bench.audits.prompt_labels import (
    VARIANTS,
    PromptLabelParams,
    label_report,
    llm_labels,
    matching_order,
    sim_labels,
)

UNITS = pd.DataFrame(
    {
        "unit_id": ["u1", "u2"],
        "bias_type": ["gender", "race"],
        "head": ["nurse", "chef"],
        "prompt_neutral": ["N one", "N two"],
        "prompt_stereotype": ["S one", "S two"],
        "prompt_anti_stereotype": ["A one", "A two"],
    }
)


def _frame(model, labels):
    rows = [
        (u, t, v, model, labels(v)) for u, t in (("u1", "gender"), ("u2", "race")) for v in VARIANTS
    ]
    return pd.DataFrame(rows, columns=["unit_id", "bias_type", "variant", "model", "label"])


def test_statistics_of_two_labellers_by_hand():
    frame = pd.concat([_frame("a", lambda v: v), _frame("b", lambda v: "neutral")])
    report = label_report({"matching": frame}, {"matching": {"a": 0, "b": 0}})["matching"]
    b = report["accuracy"]["b"]
    assert b["neutral"]["value"] == 1.0 and b["stereotype"]["value"] == 0.0
    assert b["all"]["value"] == pytest.approx(1 / 3) and b["all"]["n"] == 6
    assert report["accuracy"]["a"]["all"]["value"] == 1.0
    assert report["fleiss_kappa"]["kappa"] == pytest.approx(-1 / 3)
    assert report["fleiss_kappa"]["n_prompts"] == 6
    assert report["flips"]["b"]["total"] == 0 and report["invalid_answers"] == {"a": 0, "b": 0}


def test_simulated_labellers_are_right_with_their_class_accuracy():
    perfect = PromptLabelParams(sim_accuracy={v: 1.0 for v in VARIANTS})
    labels = sim_labels(UNITS, "sim_a", "matching", perfect)
    assert (labels["label"] == labels["variant"]).all() and len(labels) == 6
    never = PromptLabelParams(sim_accuracy={v: 0.0 for v in VARIANTS})
    wrong = sim_labels(UNITS, "sim_a", "matching", never)
    assert (wrong["label"] != wrong["variant"]).all()


def test_llm_labellers_through_a_local_server(tmp_path):
    from implicit_bench.backends.llm import build_llm
    from tests.helpers.chat_server import ChatServer, completion

    name = {"N": "neutral", "S": "stereotype", "A": "anti_stereotype"}

    def answer(body, n):
        text = body["messages"][-1]["content"]
        if "1. " in text:  # matching: label the three shown prompts right, except for u2
            lines = [ln for ln in text.splitlines() if ln[:3] in ("1. ", "2. ", "3. ")]
            got = [name[ln[3]] for ln in lines]
            if "two" in text:
                return 200, completion("no JSON")
            return 200, completion(
                json.dumps(dict(zip(("first", "second", "third"), got, strict=True)))
            )
        prompt = text.split("Prompt: ")[1].split("\n")[0]
        return 200, completion(json.dumps({"label": name[prompt[0]]}))

    params = PromptLabelParams(labellers=["m"])
    with ChatServer(answer) as server:
        config = {
            "backend": "openai",
            "model": "m",
            "base_url": server.base_url,
            "cache": str(tmp_path / "llm.sqlite"),
            "backoff_s": 0.0,
        }
        client = build_llm(config)
        matching, bad = llm_labels(UNITS, "m", "matching", client, params)
        independent, bad_ind = llm_labels(UNITS, "m", "independent", client, params)
    u1 = matching[matching["unit_id"] == "u1"]
    assert (u1["label"] == u1["variant"]).all()
    assert matching[matching["unit_id"] == "u2"]["label"].isna().all() and bad == 1
    assert (independent["label"] == independent["variant"]).all() and bad_ind == 0
    assert sorted(matching_order(42, "u1")) == sorted(VARIANTS)


def test_cli_writes_the_report_with_simulated_labellers(tmp_path):
    from implicit_bench.cli.main import main

    UNITS.to_csv(tmp_path / "units.csv", index=False)
    (tmp_path / "params.yaml").write_text(
        f"llms: {{}}\nprompt_labels:\n  units: {tmp_path / 'units.csv'}\n"
        "  labellers: [sim_a, sim_b]\n",
        encoding="utf-8",
    )
    out = tmp_path / "labels.json"
    result = CliRunner().invoke(
        main, ["prompt-labels", "--params", str(tmp_path / "params.yaml"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["units"] == 2 and report["simulated"] == ["sim_a", "sim_b"]
    assert set(report["protocols"]) == {"matching", "independent"}
    assert report["protocols"]["matching"]["fleiss_kappa"]["n_prompts"] == 6
    # leaving one of two labellers out leaves one rater: no kappa (null, never NaN)
    assert report["protocols"]["matching"]["fleiss_kappa_leave_one_out"]["sim_a"]["kappa"] is None
