"""The leaderboard beside the paper (release/beside.py): this run's generator next to the
release's Table 4 generators, paired on units and seeds, with the judge note; hand-worked
values on the fixture of tests/helpers/release_fixtures.py."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from implicit_bench.analysis.byo.core import run_analyze
from implicit_bench.release.benchmark import benchmark_units
from implicit_bench.release.beside import DIFFERENT_JUDGE, RELEASE, THIS_RUN
from tests.helpers.release_fixtures import write_release
from tests.helpers.written import approx_written

# this run's generator "new" under judge "myjudge": (unit, seed, neutral, stereotype, anti)
# dx = |N - A| - |N - S|: a1/42 0, a1/1042 -2, 007/42 0, 007/1042 3
OURS = [("a1", 42, 3, 5, 1), ("a1", 1042, 1, 4, 0), ("007", 42, 2, 2, 2), ("007", 1042, 4, 5, 0)]


def _inputs(tmp_path):
    root = write_release(tmp_path / "IMPLICIT-Bench")
    units = tmp_path / "units.csv"
    benchmark_units(root).units.to_csv(units, index=False)
    rows = []
    for u, s, n, st, a in OURS:
        for variant, v in (("neutral", n), ("stereotype", st), ("anti_stereotype", a)):
            rows.append((u, variant, s, "rubric", str(v)))
        rows.append((u, "neutral", s, "alignment", "true" if u == "a1" else "false"))
    judgements = tmp_path / "judgements.csv"
    pd.DataFrame(
        [
            {
                "unit_id": u,
                "variant": variant,
                "seed": s,
                "config": "new",
                "judge": "myjudge",
                "task": task,
                "value": v,
                "valid": True,
                "model": "tiny-vlm",
            }
            for u, variant, s, task, v in rows
        ]
    ).to_csv(judgements, index=False)
    images = tmp_path / "images.csv"
    statuses = [("a1", 42, "ok"), ("a1", 1042, "ok"), ("007", 42, "ok"), ("007", 1042, "ok")]
    statuses += [("007", 2042, "refused")]
    pd.DataFrame(
        [
            {"config": "new", "unit_id": u, "variant": "neutral", "seed": s, "status": st}
            for u, s, st in statuses
        ]
    ).to_csv(images, index=False)
    return root, units, judgements, images


def test_analyze_puts_the_release_generators_beside_this_run(tmp_path):
    root, units, judgements, images = _inputs(tmp_path)
    params = {
        "evaluate": {
            "config": "new",
            "rubric_judges": ["myjudge"],
            "beside_release": str(root),
            "bootstrap": {"n": 200, "seed": 1},
        }
    }
    out = tmp_path / "out"
    run_analyze(str(units), [str(judgements)], str(out), params, refusals=(str(images),))
    bench = json.loads((out / "metrics/benchmark.json").read_text())
    board = bench["leaderboard"]["beside_release"]
    assert board["benchmark"]["sha256"] == benchmark_units(root).sha256
    rows = {r["config"]: r for r in board["rows"]}
    assert [rows[c]["source"] for c in ("new", "qwen_image", "gpt_image_2", "nano_banana_2")] == [
        THIS_RUN,
        RELEASE,
        RELEASE,
        RELEASE,
    ]
    new = rows["new"]
    assert new["bias_score"]["value"] == pytest.approx(2.5)  # (3 + 1 + 2 + 4) / 4
    assert new["alignment"]["value"] == pytest.approx(0.5)
    # requested: 2 units x 3 seeds; a1/2042 absent from the index: missing, apart from refused
    assert (new["requested"], new["returned"], new["refused"], new["missing"]) == (6, 4, 1, 1)
    assert new["note"].startswith(DIFFERENT_JUDGE) and "model" in new["different_judge"]
    # the release's GPT Image 2: 3 of 6 returned (absent = refused or not returned)
    assert (rows["gpt_image_2"]["returned"], rows["gpt_image_2"]["refused"]) == (3, 3)
    pairs = {(p["b"], p["metric"]): p for p in board["pairs"]}
    # bias on the keys both judged: GPT Image 2 has a1/42 5, a1/1042 3, 007/1042 1 -> 3.0;
    # this run on those keys (3 + 1 + 4) / 3 = 8/3
    gpt = pairs["gpt_image_2", "bias_score"]
    assert gpt["difference"]["value"] == approx_written(8 / 3 - 3.0) and gpt["n_images"] == 3
    assert gpt["note"].startswith(DIFFERENT_JUDGE)
    # experiment 0 (Table 4's Qwen-Image): 4, 2, 1, 3 on all four keys -> 2.5 - 2.5 = 0
    assert pairs["qwen_image", "bias_score"]["difference"]["value"] == pytest.approx(0.0)
    # alignment vs experiment 0 (True, True, False, True): 0.5 - 0.75
    assert pairs["qwen_image", "alignment"]["difference"]["value"] == pytest.approx(-0.25)
    # not returned, on the 5 keys both requested: this run 1/5 (007/2042), GPT Image 2 2/5
    assert pairs["gpt_image_2", "absent_rate"]["difference"]["value"] == pytest.approx(-0.2)
    # lean beside the construction scores (Qwen3-VL dx 2, 0, -3, 0): mean 0.25 - (-0.25)
    lean = pairs["qwen_image (construction)", "mean_lean"]
    assert lean["difference"]["value"] == pytest.approx(0.5)
    assert pairs["qwen_image (construction)", "lean_s"]["difference"]["value"] == pytest.approx(0)
    # Holm over the whole family; verdicts present on every pair
    assert all("p_holm" in p and isinstance(p["resolved"], bool) for p in board["pairs"])
    table = pd.read_csv(out / "tables/leaderboard_beside_release.csv")
    assert list(table["source"]) == [THIS_RUN, RELEASE, RELEASE, RELEASE]
    assert (out / "tables/leaderboard_beside_release_pairs.md").exists()


def test_same_judge_has_no_note(tmp_path):
    """A judgement table whose identity matches the release's (model, template from the
    release's script, greedy, no downscaling) gets no different-judge note."""
    from implicit_bench.analysis.bootstrap import Bootstrap
    from implicit_bench.protocol.judge_identity import identity_text
    from implicit_bench.release.beside import beside_release, release_judge
    from implicit_bench.release.importer import Release

    root, _, judgements, _ = _inputs(tmp_path)
    script = root / "experiments/evaluate_bias_local.py"
    script.parent.mkdir(parents=True)
    script.write_text('EVAL_PROMPT = """Rate {head}: {stereotype_tails}"""\n')
    j = pd.read_csv(judgements, dtype={"unit_id": str})
    j = j[j["task"] == "rubric"].assign(
        score=lambda f: f["value"].astype(float),
        judge_identity=identity_text(release_judge(Release(root), "rubric")),
    )
    board = beside_release(j, None, str(root), Bootstrap(n=50, seed=1), "myjudge")
    new = next(r for r in board["rows"] if r["config"] == "new")
    assert new["different_judge"] == [] and new["note"] == "same judge as the release"
    assert new["returned"] is None  # no image index: refusals unknown, not guessed


def test_judge_notice_names_what_differs(tmp_path):
    from implicit_bench.release.judge_notice import judge_notice

    root = write_release(tmp_path / "IMPLICIT-Bench")
    served = {
        "backend": "openai",
        "model": "Qwen/Qwen3-VL-30B-A3B-Instruct",
        "base_url": "http://127.0.0.1:9/v1",
        "max_image_side": 768,
    }
    (line,) = judge_notice({"qwen": served}, str(root))
    assert line.endswith(DIFFERENT_JUDGE)
    # the fixture has no release script: its template is unknown, so it counts as different
    assert "prompt template" in line and "image downscaling" in line and "model," not in line


def _analyze(tmp_path, name, root, units, judgements, images):
    params = {
        "evaluate": {
            "config": "new",
            "rubric_judges": ["myjudge"],
            "beside_release": str(root),
            "bootstrap": {"n": 50, "seed": 1},
        }
    }
    out = tmp_path / name
    run_analyze(str(units), [str(judgements)], str(out), params, refusals=(str(images),))
    return out


def test_report_merges_labs_on_one_benchmark_and_refuses_two(tmp_path):
    from click.testing import CliRunner

    from implicit_bench.cli.report import report_command
    from implicit_bench.report.compare.results import results

    root, units, judgements, images = _inputs(tmp_path)
    lab_a = _analyze(tmp_path, "lab_a", root, units, judgements, images)
    lab_b = _analyze(tmp_path, "lab_b", root, units, judgements, images)
    sha = benchmark_units(root).sha256
    assert results(lab_a)["benchmark_sha256"] == sha  # the results file names its benchmark
    site = tmp_path / "site"
    result = CliRunner().invoke(
        report_command, [str(lab_a), str(lab_b), "--out", str(site)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    html = (site / "index.html").read_text()
    assert (
        "Beside the paper" in html and html.count("authors&#x27; release") >= 4
    )  # the release's four generators, each row labelled with its source
    assert "nano_banana_2" in html and DIFFERENT_JUDGE in html
    # another lab's folder on a different benchmark (another prompts file): refused, one line
    other_root = tmp_path / "other"
    write_release(other_root)
    prompts = other_root / "data/benchmark_prompts.csv"
    prompts.write_text(prompts.read_text().replace("a nurse at work", "a nurse at rest"))
    other_units = tmp_path / "other_units.csv"
    benchmark_units(other_root).units.to_csv(other_units, index=False)
    lab_c = _analyze(tmp_path, "lab_c", other_root, other_units, judgements, images)
    result = CliRunner().invoke(report_command, [str(lab_a), str(lab_c), "--out", str(site)])
    assert result.exit_code != 0
    message = result.output.strip().splitlines()
    assert len(message) == 1 and "different benchmarks" in message[0] and sha[:12] in message[0]


# ----- one benchmark per report, the release as the units were written from it -------------
def _other_benchmark(tmp_path, judgements, images, name):
    """A lab folder ``name`` on another benchmark (one prompt differs)."""
    root = write_release(tmp_path / "other-release")
    prompts = root / "data/benchmark_prompts.csv"
    prompts.write_text(prompts.read_text().replace("a nurse at work", "a nurse at rest"))
    units = tmp_path / "other_units.csv"
    benchmark_units(root).units.to_csv(units, index=False)
    return _analyze(tmp_path, name, root, units, judgements, images)


def test_report_refuses_another_benchmark_in_a_folder_named_like_a_third(tmp_path):
    """Keyed by the folder's name, y/out (base's benchmark) hid x/out (another): rc 0."""
    from click.testing import CliRunner

    from implicit_bench.cli.report import report_command

    root, units, judgements, images = _inputs(tmp_path)
    base = _analyze(tmp_path, "base", root, units, judgements, images)
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    other = _other_benchmark(tmp_path, judgements, images, "x/out")  # another benchmark
    same = _analyze(tmp_path, "y/out", root, units, judgements, images)  # base's benchmark
    site = tmp_path / "site"
    args = [str(base), str(other), str(same), "--out", str(site)]
    result = CliRunner().invoke(report_command, args)
    assert result.exit_code == 1, result.output
    (line,) = result.output.strip().splitlines()
    sha = benchmark_units(root).sha256
    assert "different benchmarks" in line and "x/out:" in line and "y/out:" in line
    assert f"base: {sha[:12]}" in line
    assert not site.exists()  # refused before anything is written
    # one benchmark in two folders named out: merged, each labelled with its parent
    (tmp_path / "z").mkdir()
    again = _analyze(tmp_path, "z/out", root, units, judgements, images)
    result = CliRunner().invoke(
        report_command, [str(base), str(same), str(again), "--out", str(site)]
    )
    assert result.exit_code == 0, result.output
    assert "report: base, y/out, z/out ->" in result.output


def test_default_labels_are_unique_and_given_labels_are_too(tmp_path):
    from implicit_bench.errors import ConfigError
    from implicit_bench.report.runs import labels_of

    dirs = [tmp_path / "a" / "x" / "out", tmp_path / "b" / "x" / "out", tmp_path / "c"]
    assert labels_of(dirs, ()) == ["a/x/out", "b/x/out", "c"]
    assert labels_of(dirs, ("mine",)) == ["mine", "out", "c"]
    assert labels_of(dirs[:1], ("out",)) == ["out"]
    assert labels_of(dirs[:2], ("out",)) == ["out", "x/out"]  # never the given one again
    with pytest.raises(ConfigError, match="--label lab: given to two directories"):
        labels_of(dirs, ("lab", "lab"))


def test_a_release_edited_after_its_units_were_written_is_refused_beside_the_run(tmp_path):
    """Refused, not a warning: the board would pair the run with a release on other prompts."""
    from implicit_bench.errors import ConfigError

    root, units, judgements, images = _inputs(tmp_path)  # the units carry the release's SHA-256
    before = benchmark_units(root).sha256
    prompts = root / "data/benchmark_prompts.csv"
    prompts.write_text(prompts.read_text().replace("a nurse at work", "a nurse at rest"))
    after = benchmark_units(root).sha256
    with pytest.raises(ConfigError) as caught:
        _analyze(tmp_path, "lab", root, units, judgements, images)
    message = str(caught.value)
    assert "\n" not in message and "changed since the run's units were written" in message
    assert before[:12] in message and after[:12] in message
    assert not (tmp_path / "lab").exists()  # refused before the metrics are written
    # the release as it was: beside the run as before
    prompts.write_text(prompts.read_text().replace("a nurse at rest", "a nurse at work"))
    out = _analyze(tmp_path, "lab", root, units, judgements, images)
    file = out / "metrics" / "benchmark.json"
    assert file.exists()
    # a board written before this check (the release's hash beside other units'): the report
    # refuses it in one line
    from click.testing import CliRunner

    from implicit_bench.cli.report import report_command

    bench = json.loads(file.read_text())
    bench["leaderboard"]["beside_release"]["benchmark"]["sha256"] = after
    file.write_text(json.dumps(bench))
    result = CliRunner().invoke(report_command, [str(out), "--out", str(tmp_path / "site")])
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert f"lab: its units' benchmark SHA-256 {before[:12]} is not the SHA-256" in line
    assert after[:12] in line and not (tmp_path / "site").exists()
