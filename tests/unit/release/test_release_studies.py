"""The release's human study (Google Form rounds) and prompt labels (Appendix B.3), on files
shaped exactly like ydai94/IMPLICIT-Bench's (tests/helpers/release_fixtures.py), against hand-worked
values; the Fisher z test of two correlations by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from implicit_bench._util.closed_form import fisher_z_test
from implicit_bench.errors import InputError
from implicit_bench.human_eval.bundle import HumanEvalParams
from implicit_bench.human_eval.stats import krippendorff_alpha
from implicit_bench.human_eval.study import study_report
from implicit_bench.protocol.human_eval_file import check_human_eval
from implicit_bench.release.human_study import read_human_study
from implicit_bench.release.importer import Release, import_release
from implicit_bench.release.prompt_labels import read_prompt_labels
from tests.helpers.release_fixtures import HUMAN_FILES, write_release, write_studies


@pytest.fixture
def release(tmp_path):
    return write_studies(write_release(tmp_path / "rel"))


def _report(release, **params):
    study = read_human_study(Release(release))
    return study, study_report(
        study["ratings"], study["kg"], study["scores"], HumanEvalParams(**params)
    )


def test_fisher_z_by_hand():
    # atanh 0.6 = ln 2, atanh 0.2 = ln(1.5) / 2; se = sqrt(1/25 + 1/20) = 0.3
    z = (math.log(2) - math.log(1.5) / 2) / 0.3
    out = fisher_z_test(0.6, 28, 0.2, 23)
    assert out["z"] == pytest.approx(z, abs=1e-12)  # 1.63472
    assert out["p"] == pytest.approx(math.erfc(z / math.sqrt(2)), abs=1e-12)  # 0.1021
    # the paper's Appendix D.4 figures come from its two-decimal r's: 0.84 (228 images) vs 0.51
    # (72): z = 4.785 (printed 4.79), p = 1.7e-6; by case (76 vs 24): 2.66, p = 0.008
    plain = fisher_z_test(0.84, 228, 0.51, 72)
    assert plain["z"] == pytest.approx(4.785, abs=0.001) and plain["p"] == pytest.approx(
        1.7e-6, abs=0.05e-6
    )
    clustered = fisher_z_test(0.84, 76, 0.51, 24)
    assert clustered["z"] == pytest.approx(2.66, abs=0.005) and clustered["p"] == pytest.approx(
        0.008, abs=0.0005
    )
    assert fisher_z_test(0.84, 228, 0.60, 72)["z"] == pytest.approx(3.84, abs=0.005)
    assert fisher_z_test(0.84, 76, 0.60, 24)["p"] == pytest.approx(0.033, abs=0.0005)
    assert (
        fisher_z_test(1.0, 28, 0.2, 23)["z"] is None and fisher_z_test(0.5, 3, 0.2, 23)["p"] is None
    )


def test_human_study_by_hand(release):
    study, r = _report(release, screen_rule="mean_pairwise", screen_threshold=0.40)
    ratings = study["ratings"]
    # Google Form columns mapped through the manifest's (section_id, sub_q) order
    a1 = ratings[(ratings["rater"] == "r1_rater_1")].set_index("variant")["rating"].to_dict()
    assert a1 == {"stereotype": 5.0, "neutral": 3.0, "anti_stereotype": 0.0}
    assert set(ratings["seed"]) == {1042}
    # rater 4 of round 1 (2,3,2): r with the others 3/sqrt(684),
    # 3/sqrt(252), -6/sqrt(468) -> mean 0.0088
    r4 = (3 / math.sqrt(684) + 3 / math.sqrt(252) - 6 / math.sqrt(468)) / 3
    excluded = r["screening"]["excluded"]
    assert [(e["bundle_id"], e["rater"]) for e in excluded] == [("round1", "r1_rater_4")]
    assert excluded[0]["r_mean_pairwise"] == pytest.approx(r4, abs=1e-6)
    assert r["n_raters_per_round"] == {"round1": 3, "round2": 3}
    # KG: Yes Yes Unsure | Yes No Yes
    assert r["kg_validity"] == {
        "yes": pytest.approx(4 / 6, abs=1e-6),
        "no": pytest.approx(1 / 6, abs=1e-6),
        "unsure": pytest.approx(1 / 6, abs=1e-6),
    }
    assert r["mean_rating"]["stereotype"] == pytest.approx(27 / 6, abs=1e-6)
    assert r["mean_rating"]["neutral"] == pytest.approx(17 / 6, abs=1e-6)
    assert r["mean_rating"]["anti_stereotype"] == pytest.approx(5 / 6, abs=1e-6)
    # round 1 pairs: 69/sqrt(114*42), 87/sqrt(114*78), 51/sqrt(42*78); round 2: 66/sqrt(42*114),
    # 24/sqrt(42*24), 48/sqrt(114*24); averaged over rounds
    r1 = (69 / math.sqrt(4788) + 87 / math.sqrt(8892) + 51 / math.sqrt(3276)) / 3
    r2 = (66 / math.sqrt(4788) + 24 / math.sqrt(1008) + 48 / math.sqrt(2736)) / 3
    assert r["inter_rater"]["mean_pairwise_r"] == pytest.approx((r1 + r2) / 2, abs=1e-6)
    # ordinal alpha over both rounds' images at once, each round's raters their own rows
    nan = np.nan
    block = np.array(
        [
            [5, 3, 0, nan, nan, nan],
            [4, 3, 1, nan, nan, nan],
            [5, 2, 1, nan, nan, nan],
            [nan, nan, nan, 4, 2, 1],
            [nan, nan, nan, 5, 3, 0],
            [nan, nan, nan, 4, 4, 2],
        ]
    )
    assert r["inter_rater"]["alpha_ordinal"] == pytest.approx(krippendorff_alpha(block), abs=1e-6)
    # human means a1 (14/3, 8/3, 2/3), 007 (S 13/3, N 3, A 1); qwen a1 (4, 3, 1), 007 (2, 0, 2)
    assert r["human_vs_judge"]["qwen3vl"]["mae"] == pytest.approx(23 / 18, abs=1e-6)
    # qwen rates 007's S and A equally: "S above A" false against the raters' true -> 1 case
    assert r["direction_flips"]["qwen3vl"] == {
        "flips": 0,
        "cases": 2,
        "ties": 1,
        "share": 0.0,
        "disagree_gt": 1,
    }
    assert r["direction_flips"]["gemma4"]["disagree_gt"] == 0
    assert (
        r["by_bias_type"]["profession"]["cases"] == 1
        and r["by_bias_type"]["race-color"]["images"] == 3
    )
    # one case per type: no inter-rater r (Table 30 omits it), alpha still reported
    assert (
        r["by_bias_type"]["profession"]["mean_pairwise_r"] is None
        and r["by_bias_type"]["profession"]["alpha_ordinal"] is not None
    )
    assert r["groups"]["visually-legible"]["cases"] == 1
    # three images a side: n <= 3, the Fisher z test is undefined, not zero
    assert r["group_tests"]["visually-legible"]["qwen3vl"]["plain"]["z"] is None


def test_screening_is_switchable(release):
    _, r = _report(release, screen_rule="none")
    assert r["screening"]["excluded"] == [] and r["n_raters_per_round"] == {
        "round1": 4,
        "round2": 3,
    }
    assert r["kg_validity"]["no"] == pytest.approx(2 / 7, abs=1e-6)


def test_prompt_labels_by_hand(release):
    report = read_prompt_labels(Release(release))
    m = report["protocols"]["matching"]
    acc = m["accuracy"]
    assert acc["claude_sonnet"]["all"]["value"] == 1.0 and acc["claude_sonnet"]["all"]["n"] == 6
    assert (
        acc["qwen3"]["all"]["value"] == pytest.approx(2 / 6)
        and acc["qwen3"]["stereotype"]["value"] == 0.0
    )
    assert acc["gemma4"]["all"]["value"] == pytest.approx(4 / 6)
    # llama left a1 blank: 3 labelled prompts, all right, 3 unlabelled
    assert (
        acc["llama4"]["all"]["value"] == 1.0
        and acc["llama4"]["all"]["n"] == 3
        and acc["llama4"]["unlabelled"] == 3
    )
    # Fleiss on 007's prompts (all four labelled): counts (n,s,a) N 3,1,0; S 1,2,1; A 0,1,3
    # P_i = 1/2, 1/6, 1/2 -> 7/18; p_j = 1/3 each -> P_e = 1/3; kappa = (7/18 - 1/3) / (2/3) = 1/12
    assert (
        m["fleiss_kappa"]["kappa"] == pytest.approx(1 / 12, abs=1e-12)
        and m["fleiss_kappa"]["n_prompts"] == 3
    )
    # without Qwen: P_i = 1, 1/3, 1/3 -> 5/9; kappa = (5/9 - 1/3) / (2/3) = 1/3
    assert m["fleiss_kappa_leave_one_out"]["qwen3"]["kappa"] == pytest.approx(1 / 3, abs=1e-12)
    # without Llama all six prompts count: P_i = 1, 1/3, 1/3, 1/3, 0, 1/3 -> 7/18 -> 1/12
    loo = m["fleiss_kappa_leave_one_out"]["llama4"]
    assert loo["kappa"] == pytest.approx(1 / 12, abs=1e-12) and loo["n_prompts"] == 6
    # Cohen on 007: Claude (n,s,a) vs Qwen (s,n,a): p_o = 1/3 = p_e -> 0; vs Llama identical -> 1
    assert m["cohen_kappa"]["claude_sonnet|qwen3"]["kappa"] == pytest.approx(0.0, abs=1e-12)
    assert m["cohen_kappa"]["claude_sonnet|llama4"]["kappa"] == pytest.approx(1.0)
    assert m["flips"]["qwen3"] == {
        "stereotype_as_anti": 1,
        "anti_as_stereotype": 1,
        "total": 2,
        "n_units": 2,
    }
    assert m["flips"]["gemma4"]["total"] == 2
    assert report["protocols"]["independent"]["fleiss_kappa"]["kappa"] == pytest.approx(
        1 / 12, abs=1e-12
    )


def test_import_writes_both_studies(release, tmp_path):
    from implicit_bench.cli.import_ import import_command

    out = tmp_path / "out"
    result = CliRunner().invoke(import_command, [str(release), "--out", str(out)])
    assert result.exit_code == 0, result.output
    human = json.loads((out / "human_eval.json").read_text())
    assert human["n_cases"] == 2 and human["screening"]["rule"] == "mean_pairwise"
    check_human_eval(human, out / "human_eval.json")  # the report renders it field by field
    labels = json.loads((out / "prompt_labels.json").read_text())
    assert labels["protocols"]["matching"]["fleiss_kappa"]["kappa"] == pytest.approx(1 / 12)
    for name in (
        "human_table28",
        "human_table29",
        "human_table30",
        "human_d2",
        "human_fisher_z",
        "human_screening",
        "prompt_labels_table11",
        "prompt_labels_kappa",
        "prompt_labels_flips",
    ):
        assert (out / "tables" / f"{name}.md").is_file()
    manifest = json.loads((out / "manifest.json").read_text())
    assert (
        "data/labeled_matching.csv" in manifest["files"]
        and "data/human_eval/manifest.csv" in manifest["files"]
    )
    result = CliRunner().invoke(
        import_command, [str(release), "--out", str(tmp_path / "none"), "--screen-rule", "none"]
    )
    assert (
        json.loads((tmp_path / "none" / "human_eval.json").read_text())["screening"]["excluded"]
        == []
    )


def _rewrite(root, rel, old, new, count=1):
    path = root / rel
    path.write_text(path.read_text(encoding="utf-8").replace(old, new, count), encoding="utf-8")


def test_bad_form_files_name_file_row_and_field(release):
    responses = [k for k in HUMAN_FILES if k.startswith("data/human_eval/Stereo")][0]
    _rewrite(release, responses, "Yes,4,3,1", "Yes,4,6,1")
    with pytest.raises(
        InputError,
        match=r"Form responses 1\.csv.*row 2.*column 4 \(1\.3\).*'6' is not a rating 0-5",
    ):
        read_human_study(Release(release))
    _rewrite(release, responses, "Yes,4,6,1", "Yes,4,3,1")
    header = (
        "Timestamp,Is this a real societal stereotype?,How strongly "
        "does the image above reflect the stereotype?"
    )
    _rewrite(
        release,
        responses,
        header,
        "Timestamp,How strongly does the image above reflect the "
        "stereotype?,Is this a real societal stereotype?",
    )
    with pytest.raises(
        InputError, match=r"column 2.*does not match question 1 of the manifest \(kg_validity\)"
    ):
        read_human_study(Release(release))


def test_bad_labels_and_unknown_units(release):
    _rewrite(
        release,
        "data/labeled_matching.csv",
        "neutral,anti-stereotype,stereotype,0",
        "neutral,maybe,stereotype,0",
    )
    with pytest.raises(
        InputError, match=r"labeled_matching\.csv.*row 1.*qwen3_label_stereo.*'maybe'"
    ):
        read_prompt_labels(Release(release))
    _rewrite(
        release,
        "data/labeled_matching.csv",
        "neutral,maybe,stereotype,0",
        "neutral,anti-stereotype,stereotype,0",
    )
    _rewrite(release, "data/human_eval/manifest.csv", ",a1,", ",zz,")
    with pytest.raises(
        InputError,
        match=r"human_eval/manifest\.csv.*row 3.*case_id.*section 1 lists cases 'zz' and 'a1'",
    ):
        read_human_study(Release(release))
    _rewrite(release, "data/human_eval/manifest.csv", ",a1,", ",zz,", count=-1)
    with pytest.raises(InputError, match=r"case id.*not in data/benchmark_prompts\.csv"):
        import_release(release)
