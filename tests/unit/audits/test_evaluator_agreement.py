"""NegT2IBench's evaluator audit on four images worked out by hand (tests/ comments give the
arithmetic): judge modes, element-level agreement, the negated-question probe, annotators."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from implicit_bench._util.agreement import kappa_from_counts
from implicit_bench.audits.evaluator_agreement import (
    evaluator_audit,
    fleiss,
    leave_one_out_kappa,
    negated_probe,
    rank_agreement,
    read_labels,
)
from implicit_bench.errors import InputError

# image, element, kind, polarity, setting, category, p_pos, p_neg, p_whole, three raters
ROWS = [
    ("I1", "o", "object", "positive", "1:0", "color", 0.9, None, 0.7, 1, 1, 1),
    ("I1", "s", "statement", "positive", "1:0", "color", 0.8, None, 0.7, 1, 1, 0),
    ("I2", "o", "object", "positive", "0:1", "color", 0.9, None, 0.4, 1, 1, 1),
    ("I2", "s", "statement", "negated", "0:1", "color", 0.7, 0.6, 0.4, 1, 1, 1),
    ("I3", "o", "object", "positive", "1:1", "material", 0.2, None, 0.6, 1, 0, 0),
    ("I3", "s1", "statement", "positive", "1:1", "material", 0.6, None, 0.6, 0, 0, 1),
    ("I3", "s2", "statement", "negated", "1:1", "material", 0.3, 0.2, 0.6, 1, 1, 1),
    ("I4", "o", "object", "positive", "0:1", "material", 0.95, None, 0.3, 1, 1, 1),
    ("I4", "s", "statement", "negated", "0:1", "material", 0.1, 0.8, 0.3, 0, 1, 0),
]
COLUMNS = [
    "image_id", "element_id", "kind", "polarity", "setting", "category",
    "p_pos", "p_neg", "p_whole", "rater_1", "rater_2", "rater_3",
]  # fmt: skip


def frame() -> pd.DataFrame:
    return pd.DataFrame(ROWS, columns=COLUMNS)


def test_judge_modes_by_hand() -> None:
    a = evaluator_audit(frame())
    # human image labels: each annotator passes an image when all its elements are satisfied;
    # I1 2 of 3, I2 3 of 3, I3 0, I4 1 of 3 -> [1, 1, 0, 0]
    whole, pos, neg = (a["modes"][m] for m in ("whole", "pos", "neg"))
    # whole: p_whole >= .5 -> [1, 0, 1, 0]: TP I1, FN I2, FP I3, TN I4; kappa 0
    assert (whole["tp"], whole["fn"], whole["fp"], whole["tn"]) == (1, 1, 1, 1)
    assert whole["kappa"] == pytest.approx(0.0) and whole["accuracy"] == 0.5
    # pos: I2's negated statement asked "is it red?" with p .7 fails; I3's object .2 fails
    assert (pos["tp"], pos["fn"], pos["fp"], pos["tn"]) == (1, 1, 1, 1)
    # neg: I2's "is it not red?" .6 passes -> [1, 1, 0, 1]: po .75, pe .5, kappa .5
    assert (neg["tp"], neg["fn"], neg["fp"], neg["tn"]) == (2, 0, 1, 1)
    assert neg["kappa"] == pytest.approx(0.5)
    assert neg["precision"] == pytest.approx(2 / 3) and neg["recall"] == 1.0
    assert neg["called_correct"] == 0.75 and neg["human_pass"] == 0.5
    assert a["modes"]["delta_neg_minus_pos"]["kappa"] == pytest.approx(0.5)
    # Kendall tau: human scores 5/6, 1, 5/9, 2/3 against p_whole .7 .4 .6 .3: 3 concordant and
    # 3 discordant pairs -> 0 (pos scores .72 .27 .084 .855 and neg .72 .54 .024 .76 alike)
    for m in ("whole", "pos", "neg"):
        assert a["modes"][m]["rank"]["kendall_tau"] == pytest.approx(0.0)
        assert a["modes"][m]["rank"]["pairwise_accuracy"] == pytest.approx(0.5)
    assert set(a["modes"]["pos"]["kendall_tau_by_category"]) == {"color", "material"}
    assert set(a["modes"]["pos"]["kendall_tau_by_setting"]) == {"0:1", "1:0", "1:1"}


def test_element_level_and_probe_by_hand() -> None:
    a = evaluator_audit(frame())
    el = a["element_level"]["pos"]["all"]
    # human majorities [1,1,1,1,0,0,1,1,0], pos decisions [1,1,1,0,0,1,1,1,1]
    assert el["satisfied_right"] == pytest.approx(5 / 6)
    assert el["unsatisfied_right"] == pytest.approx(1 / 3)
    assert el["balanced_accuracy"] == pytest.approx(7 / 12)
    negated = a["element_level"]["neg"]["negated"]
    # negated statements: human [1, 1, 0]; neg decisions [1, 0, 1]
    assert (negated["tp"], negated["fn"], negated["fp"], negated["tn"]) == (1, 1, 1, 0)
    probe = a["negated_probe"]
    # (p_pos, p_neg) = (.7, .6) (.3, .2) (.1, .8): only the last answer changes; errors .3 .5 .1
    assert probe["n"] == 3 and probe["flip_rate"] == pytest.approx(1 / 3)
    assert probe["complementarity_error"] == pytest.approx(0.3)
    assert probe["called_correct"] == {"whole": 0.5, "pos": 0.5, "neg": 0.75}
    assert probe["human_pass"] == 0.5


def test_annotator_agreement_by_hand() -> None:
    r = frame()[["rater_1", "rater_2", "rater_3"]].to_numpy()
    # P-bar 19/27, P_e 449/729 -> kappa 64/280
    assert fleiss(r) == pytest.approx(64 / 280)
    loo = leave_one_out_kappa(r)
    # raters 1 and 2 are constant on the items the others decide (kappa 0); rater 3: -1/6
    assert loo["per_rater"] == pytest.approx([0.0, 0.0, -1 / 6])
    assert loo["kappa"] == pytest.approx(-1 / 18) and loo["ties"] == [3, 3, 2]
    ia = evaluator_audit(frame())["inter_annotator"]
    assert ia["all"]["unanimous"] == pytest.approx(5 / 9) and ia["negated"]["n"] == 3


def test_rank_agreement_with_ties_by_hand() -> None:
    got = rank_agreement([1, 2, 3, 4], [1, 3, 2, 2])
    # 3 concordant (1-2, 1-3, 1-4), 2 discordant (2-3, 2-4), 1 tie in the score (3-4):
    # tau-b = (3 - 2) / sqrt(6 x 5); pairwise accuracy (3 + 1/2) / 6
    assert got["kendall_tau"] == pytest.approx(1 / math.sqrt(30))
    assert got["pairwise_accuracy"] == pytest.approx(3.5 / 6)
    assert negated_probe([], [])["flip_rate"] is None


def test_kappa_counts_and_bootstrap() -> None:
    from sklearn.metrics import cohen_kappa_score

    from implicit_bench.analysis.bootstrap import Bootstrap

    y = np.array([1, 1, 0, 0, 1, 0, 1, 1])
    p = np.array([1, 0, 0, 1, 1, 0, 1, 0])
    tp, tn = np.sum(y & p), np.sum((1 - y) & (1 - p))
    fp, fn = np.sum((1 - y) & p), np.sum(y & (1 - p))
    table = np.array([tp, fn, fp, tn], dtype=float)  # 2x2, rows = truth
    assert kappa_from_counts(table, 2) == pytest.approx(cohen_kappa_score(y, p))
    a = evaluator_audit(frame(), Bootstrap(n=300, seed=1))
    iv = a["modes"]["neg"]["kappa_interval"]
    assert iv["value"] == pytest.approx(0.5) and iv["n"] == 4


def test_labels_file_errors(tmp_path) -> None:
    path = tmp_path / "labels.csv"
    frame().to_csv(path, index=False)
    assert len(read_labels(str(path))) == 9
    bad = frame()
    bad.loc[3, "p_neg"] = 1.5
    bad.to_csv(path, index=False)
    with pytest.raises(InputError, match="row 4, field 'p_neg'"):
        read_labels(str(path))
    bad = frame()
    bad.loc[0, "polarity"] = "negated"
    bad.to_csv(path, index=False)
    with pytest.raises(InputError, match="row 1, field 'polarity'"):
        read_labels(str(path))


def test_cli_and_negation_params(tmp_path) -> None:
    import json

    from click.testing import CliRunner

    from implicit_bench.audits.params import NegationParams
    from implicit_bench.cli.main import main

    path = tmp_path / "labels.csv"
    frame().to_csv(path, index=False)
    out = tmp_path / "evaluator.json"
    result = CliRunner().invoke(
        main, ["audit", "evaluator", str(path), "--out", str(out), "--n-boot", "50"]
    )
    assert result.exit_code == 0, result.output
    got = json.loads(out.read_text())
    assert got["modes"]["neg"]["kappa"] == pytest.approx(0.5)
    assert got["bootstrap"]["n_boot"] == 50
    assert NegationParams(evaluator_labels=str(path)).evaluator_labels == str(path)
    bad = CliRunner().invoke(main, ["audit", "evaluator", str(tmp_path / "x.csv"), "--out", "o"])
    assert bad.exit_code != 0


def test_simulated_evaluation_set_and_its_planted_truth() -> None:
    from implicit_bench.analysis.bootstrap import Bootstrap
    from implicit_bench.audits.params import NegationParams
    from implicit_bench.audits.stage import evaluator_report
    from implicit_bench.world.negprobe import negprobe_truth, planted_labels
    from implicit_bench.world.params import NegProbeWorld, WorldParams
    from implicit_bench.world.recovery.stage import negprobe_entries

    # a perfect, complementary evaluator: every negated answer flips, no complementarity error,
    # and the per-element modes pass exactly the images whose elements all hold
    perfect = NegProbeWorld(images=64, accuracy=1.0, complement=1.0, whole_accuracy=1.0)
    truth = negprobe_truth(perfect, 5)
    assert truth["flip_rate"] == 1.0 and truth["complementarity_error"] == 0.0
    labels = planted_labels(perfect, 5)
    a = evaluator_audit(labels)
    assert a["negated_probe"]["flip_rate"] == 1.0
    assert a["negated_probe"]["complementarity_error"] == pytest.approx(0.0)
    assert a["modes"]["pos"]["called_correct"] == pytest.approx(truth["called_correct"]["pos"])
    assert a["modes"]["whole"]["called_correct"] == pytest.approx(truth["called_correct"]["whole"])
    assert set(labels["setting"]) == {"1:0", "0:1", "2:0", "1:1", "0:2", "2:1", "1:2", "2:2"}
    # the default evaluator: the stage's block beside the truth (recovery)
    world = WorldParams(negprobe=NegProbeWorld(images=400))
    block = evaluator_report(NegationParams(evaluator_source="sim"), world, Bootstrap(n=400))
    assert block["simulated"] is True and "SIMULATED" in block["note"]
    entries = negprobe_entries({"evaluator_agreement": block}, world)
    assert len(entries) == 5
    assert sum(e["covered"] for e in entries) >= 4
    with pytest.raises(Exception, match="world.negprobe.images"):
        evaluator_report(NegationParams(evaluator_source="sim"), WorldParams(), None)


def test_cli_evaluator_sim(tmp_path, monkeypatch) -> None:
    import json

    import yaml
    from click.testing import CliRunner

    from implicit_bench.cli.main import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"world": {"negprobe": {"images": 40}}}))
    res = CliRunner().invoke(
        main, ["audit", "evaluator", "--sim", "--out", "e.json", "--n-boot", "50"]
    )
    assert res.exit_code == 0, res.output
    got = json.loads((tmp_path / "e.json").read_text())
    assert got["simulated"] is True and got["images"] == 40


def test_evaluator_cost_by_hand(tmp_path) -> None:
    from implicit_bench.audits.evaluator_agreement import validate_labels

    # seconds per image: I1 1.0 (2 questions), I2 2.0 (2), I3 3.0 (3), I4 0.6 (2)
    f = frame().assign(
        seconds=frame()["image_id"].map({"I1": 1.0, "I2": 2.0, "I3": 3.0, "I4": 0.6}),
        gpu_gib=16.5,
        load_s=12.0,
    )
    cost = evaluator_audit(validate_labels(f, "x"))["cost"]
    assert cost["s_per_image"] == pytest.approx(6.6 / 4)
    assert cost["s_per_question"] == pytest.approx(6.6 / 9)
    assert cost["questions_per_image"] == pytest.approx(9 / 4)
    assert cost["gpu_gib"] == 16.5 and cost["load_s"] == 12.0
    assert evaluator_audit(validate_labels(frame(), "x"))["cost"] is None
    bad = f.copy()
    bad.loc[1, "seconds"] = 5.0  # I1's second row disagrees with its first
    with pytest.raises(InputError, match="row 1, field 'seconds': differs between rows"):
        validate_labels(bad, "x")
    bad = f.copy()
    bad.loc[3, "gpu_gib"] = -1
    with pytest.raises(InputError, match="row 4, field 'gpu_gib'"):
        validate_labels(bad, "x")


def test_simulated_evaluator_clock_matches_its_planted_mean() -> None:
    from implicit_bench.audits.evaluator_agreement import validate_labels
    from implicit_bench.world.negprobe import negprobe_truth, planted_labels
    from implicit_bench.world.params import NegProbeWorld

    world = NegProbeWorld(images=400)
    labels = planted_labels(world, 5)
    cost = evaluator_audit(validate_labels(labels, "sim"))["cost"]
    truth = negprobe_truth(world, 5)
    assert cost["s_per_question"] == pytest.approx(truth["s_per_question"], rel=0.05)
    assert cost["s_per_image"] == pytest.approx(truth["s_per_image"], rel=0.05)
    assert cost["gpu_gib"] == world.gpu_gib
    # the clock has a stream of its own: the labels are those of a world without it
    same = planted_labels(world.model_copy(update={"seconds_per_question": 9.0}), 5)
    assert same.drop(columns=["seconds"]).equals(labels.drop(columns=["seconds"]))
