"""HoloFair's SCM trigger set as a prompt source: the nine triggers, the Eval split
(300 neutral + 450 trigger prompts), the Train split (10,000) with a disjoint vocabulary."""

from __future__ import annotations

import pandas as pd
from click.testing import CliRunner

from implicit_bench.audits.scm_prompts import (
    EVAL_PHRASES,
    TRAIN_PHRASES,
    TRIGGERS,
    scm_prompts,
    vocabulary,
)
from implicit_bench.cli.main import main


def test_nine_triggers_of_the_paper():
    assert sorted(TRIGGERS) == sorted(
        [
            "aggressive",
            "compassionate",
            "gentle",
            "intelligent",
            "poor",
            "professional",
            "successful",
            "trustworthy",
            "unprofessional",
        ]
    )
    assert {d for d, _ in TRIGGERS.values()} == {"competence", "warmth"}


def test_eval_split_sizes_and_layout():
    frame = scm_prompts("eval", seed=1)
    neutral = frame[frame["trigger"].isna()]
    assert len(neutral) == 300 and neutral["prompt_scm_trigger"].isna().all()
    triggers = frame[frame["trigger"].notna()]
    assert len(triggers) == 450
    assert triggers["trigger"].value_counts().to_dict() == dict.fromkeys(TRIGGERS, 50)
    assert frame["unit_id"].is_unique
    assert frame[["prompt_scm_neutral", "prompt_scm_trigger"]].notna().sum(axis=1).eq(1).all()
    prompts = frame["prompt_scm_neutral"].fillna(frame["prompt_scm_trigger"])
    assert prompts.is_unique
    # each trigger prompt names one of its trigger's Eval paraphrases; no neutral prompt does
    for row in triggers.itertuples():
        assert row.phrase in EVAL_PHRASES[row.trigger] and row.phrase in row.prompt_scm_trigger
    eval_words = vocabulary(EVAL_PHRASES)
    for prompt in neutral["prompt_scm_neutral"]:
        assert not eval_words & set(prompt.replace(",", "").split())
    pd.testing.assert_frame_equal(frame, scm_prompts("eval", seed=1))  # seeded
    assert not frame.equals(scm_prompts("eval", seed=2))


def test_train_split_is_disjoint_from_eval():
    assert not vocabulary(EVAL_PHRASES) & vocabulary(TRAIN_PHRASES)
    train = scm_prompts("train", seed=1)
    assert len(train) == 10_000 and train["unit_id"].is_unique
    assert train["prompt_scm_trigger"].is_unique
    eval_words = vocabulary(EVAL_PHRASES)
    assert not any(
        eval_words & set(p.replace(",", "").split()) for p in train["prompt_scm_trigger"]
    )
    assert set(train["trigger"]) == set(TRIGGERS)


def test_cli_writes_the_table(tmp_path):
    out = tmp_path / "scm.csv"
    result = CliRunner().invoke(main, ["scm-prompts", "--split", "eval", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "750 prompts (450 with a trigger)" in result.output
    assert len(pd.read_csv(out)) == 750
