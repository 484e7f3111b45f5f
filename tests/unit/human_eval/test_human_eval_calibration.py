"""Calibration bundles: the blind A / B / C question for the images of a calibration
sheet, answered in headless Chromium, imported into the calibration table with rater ids, and
the evaluate stage's corrected block from people's labels; bad answer files are one-line
errors naming file, row and field."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from implicit_bench._util.agreement import rater_agreement
from implicit_bench._util.files import read_json
from implicit_bench.cli.main import main as cli_main
from implicit_bench.human_eval.blind_form import BLIND_ANSWER_COLUMNS, question_parts
from implicit_bench.human_eval.blind_import import (
    image_labels,
    import_calibration,
    load_calibration_manifests,
)
from implicit_bench.protocol.benchmark_file import BenchmarkFile
from implicit_bench.protocol.judge_tasks import load_task
from implicit_bench.protocol.schema import BLIND_LABELS
from implicit_bench.protocol.tables import CALIBRATION
from implicit_bench.report.corrected import corrected_section
from tests.helpers.chromium import Chromium, require_chromium
from tests.helpers.paths import REPO_ROOT
from tests.helpers.synthetic_project import build_synthetic_project

KEY = ["config", "unit_id", "variant", "seed"]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A tiny run (8 units, 2 blind judges) with a 15-image calibration sheet and its bundle."""
    root = tmp_path_factory.mktemp("calbundle")
    build_synthetic_project(root, n_units=8, image_size=24, debias_configs=(), with_metrics=False)
    params = {
        "evaluate": {
            "units": "data/interim/units.parquet",
            "judgements": ["data/judgements/judgements.parquet"],
            "selected_units": None,
            "blind_judges": ["judge-a", "judge-b"],
            "bootstrap": {"n": 200, "seed": 3},
            "calibration": "calibration.csv",
        },
        "human_eval": {
            "units": "data/interim/units.parquet",
            "selected_units": "data/processed/selected_units.parquet",
            "image_roots": ["data/images"],
            "judgements": ["data/judgements/*.parquet"],
            "image_size": 64,
        },
    }
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    cwd = Path.cwd()
    os.chdir(root)
    try:
        run = CliRunner()
        res = run.invoke(cli_main, ["calibration", "sample", "--images", "15", "--seed", "0"])
        assert res.exit_code == 0, res.output
        res = run.invoke(
            cli_main,
            ["human-eval", "export", "--calibration", "calibration.csv", "--out", "bundle"],
        )
        assert res.exit_code == 0, res.output
        assert "calibration bundle" in res.output and "15 images" in res.output
    finally:
        os.chdir(cwd)
    return root


def _manifest(root: Path) -> dict:
    return json.loads((root / "bundle/manifest.json").read_text())


def _judged(root: Path) -> dict[tuple, str]:
    """judge-a's stored blind label per image key."""
    j = pd.read_parquet(root / "data/judgements/judgements.parquet")
    j = j[(j["judge"] == "judge-a") & (j["task"] == "blind") & j["valid"]]
    return {(r.config, r.unit_id, r.variant, int(r.seed)): r.value for r in j.itertuples()}


def _letter(item: dict, label: str) -> str:
    return next(k for k, v in item["options"].items() if v == label)


def test_bundle_asks_the_judges_question_with_recorded_shuffled_options(workspace):
    manifest = _manifest(workspace)
    items = manifest["items"]
    sheet = CALIBRATION.read(workspace / "calibration.csv")
    assert manifest["kind"] == "calibration" and len(items) == len(sheet) == 15
    assert {tuple(it[k] for k in KEY) for it in items} == set(
        sheet[KEY].itertuples(index=False, name=None)
    )
    # both option orders occur; C is always neither; the order decides which text is option A
    assert {it["order"] for it in items} == {"sa", "as"}
    units = pd.read_parquet(workspace / "data/interim/units.parquet").set_index("unit_id")
    form = (workspace / "bundle/form.html").read_text()
    blind = load_task("blind")
    assert manifest["question"] == blind.prompt
    for it in items:
        assert it["options"]["C"] == "neither"
        s_text = units.loc[it["unit_id"], "stereotype"]
        a_text = units.loc[it["unit_id"], "anti_stereotype"]
        first = s_text if it["order"] == "sa" else a_text
        assert f"A: {first}" in it["prompt"]
        before, options, after = question_parts(it["prompt"])
        assert options["A"] == first and options["C"].startswith("Neither description")
        # the judge's wording, word for word, in the form (the JSON-format line left out)
        head = units.loc[it["unit_id"], "head"]
        assert f"Look at this image and focus on the main subject: {head}." in form
        assert after == ["Judge only what is visible in the image."]
    assert "Which of the following two descriptions better matches" in form
    assert "Respond with a JSON object" not in form
    # the rater is never told which option is the stereotype, the variant or the image hash
    assert "anti_stereotype" not in form and '"variant"' not in form and '"order"' not in form
    assert not any(it["image_sha256"] in form for it in items)
    assert form.count("data:image/jpeg;base64,") == 15
    assert "http://" not in form and "https://" not in form


def test_form_in_chromium_then_import_then_corrected_block(workspace, tmp_path):
    binary = require_chromium()
    if binary is None:
        pytest.skip(
            "chromium not installed (apt-get install chromium); CI sets IB_REQUIRE_CHROMIUM=1"
        )
    manifest = _manifest(workspace)
    items = manifest["items"]
    judged = _judged(workspace)
    # Ann answers what judge-a says on every image but the last, which she leaves blank
    plan = {it["item"]: _letter(it, judged[tuple(it[k] for k in KEY)]) for it in items[:-1]}
    downloads = tmp_path / "downloads"
    with Chromium(binary) as browser:
        browser.allow_downloads(downloads)
        browser.navigate(
            workspace / "bundle/form.html", wait_for="document.body.dataset.ready === '1'"
        )
        browser.evaluate(
            "var r = document.getElementById('rater'); r.value = 'Ann'; "
            "r.dispatchEvent(new Event('change', {bubbles: true}))"
        )
        browser.evaluate("document.getElementById('start').click()")
        shot = browser.screenshot(tmp_path / "calibration_form_item.png")
        artifacts = REPO_ROOT / "tests/artifacts"
        artifacts.mkdir(exist_ok=True)
        shutil.copy(shot, artifacts / shot.name)
        for it in items:
            assert browser.evaluate("document.querySelector('.case.on').id") == it["item"]
            if it["item"] in plan:
                sel = f'input[data-item="{it["item"]}"][value="{plan[it["item"]]}"]'
                browser.evaluate(f"document.querySelector('{sel}').click()")
            browser.evaluate("document.querySelector('.case.on [data-nav=\"1\"]').click()")
        summary = browser.evaluate("document.getElementById('summary').textContent")
        assert "14 of 15 images answered" in summary and items[-1]["item"] in summary
        browser.evaluate("document.getElementById('download').click()")
        deadline = time.monotonic() + 15
        done: list[Path] = []
        while time.monotonic() < deadline and not done:
            done = [p for p in downloads.glob("*.csv") if not p.name.endswith(".crdownload")]
            time.sleep(0.1)
    assert done, "the form did not save a CSV"
    ann = pd.read_csv(done[0], dtype=str, keep_default_na=False)
    assert list(ann.columns) == list(BLIND_ANSWER_COLUMNS) and len(ann) == 15
    assert dict(zip(ann["item"], ann["choice"], strict=True)) == {
        **plan,
        items[-1]["item"]: "",
    }
    # Bob answers four images: three as Ann, one with the other attribute (a tie)
    bob_rows = []
    for n, it in enumerate(items[:4]):
        label = judged[tuple(it[k] for k in KEY)]
        if n == 3:
            label = "a" if label != "a" else "s"
        bob_rows.append([manifest["bundle_id"], "Bob", it["item"], it["unit_id"], "", ""])
        bob_rows[-1][4] = _letter(it, label)
    bob = tmp_path / "bob.csv"
    pd.DataFrame(bob_rows, columns=BLIND_ANSWER_COLUMNS).to_csv(bob, index=False)

    cwd = Path.cwd()
    os.chdir(workspace)
    try:
        res = CliRunner().invoke(
            cli_main,
            [
                "human-eval", "import", "--manifest", "bundle/manifest.json",
                "--out", str(tmp_path / "agree.json"), str(done[0]), str(bob),
            ],
        )  # fmt: skip
    finally:
        os.chdir(cwd)
    assert res.exit_code == 0, res.output
    assert "14 images labelled" in res.output and "1 ties" in res.output
    table = CALIBRATION.read(workspace / "calibration.csv")
    labelled = table[table["reference"].notna()]
    assert len(labelled) == 14 and set(labelled["source"]) == {"human"}
    by_key = {tuple(r[k] for k in KEY): r for r in labelled.to_dict("records")}
    for n, it in enumerate(items[:-1]):
        row = by_key[tuple(it[k] for k in KEY)]
        raters = json.loads(row["raters"])
        assert raters["Ann"] == judged[tuple(it[k] for k in KEY)]
        assert set(raters) == ({"Ann", "Bob"} if n < 4 else {"Ann"})
        assert row["reference"] in raters.values()
        if n != 3:
            assert row["reference"] == raters["Ann"]
    report = read_json(tmp_path / "agree.json")
    pair = report["agreement"]["pairs"]
    assert report["ties"] == 1 and report["unanswered"] == 1
    assert [(p["raters"], p["items"], p["agreement"]) for p in pair] == [(["Ann", "Bob"], 4, 0.75)]

    proc = subprocess.run(
        [sys.executable, str(REPO_ROOT / "stages" / "evaluate.py")],
        cwd=workspace,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    bench = read_json(workspace / "metrics" / "benchmark.json")
    block = bench["corrected"]
    cal = block["calibration"]
    assert cal["items"] == 14 and cal["by_source"] == {"human": 14} and cal["unlabelled"] == 1
    assert cal["raters"]["pairs"] == report["agreement"]["pairs"]
    # the matrix is the row shares of (people's label, judge-a's label) over the 14 images
    counts = pd.crosstab(
        labelled["reference"],
        [judged[k] for k in labelled[KEY].itertuples(index=False, name=None)],
    )
    for ref in counts.index:
        for lab in counts.columns:
            share = counts.loc[ref, lab] / counts.loc[ref].sum()
            assert cal["matrix"][ref][lab]["value"] == pytest.approx(share)
    # the report's "Corrected for judge error" section names the people's agreement
    html = corrected_section(BenchmarkFile.from_json(bench, "metrics/benchmark.json"))
    assert "Labelled by 2 people; 4 images with two or more raters" in html
    assert "mean Cohen's kappa 0.50 over 1 pair of raters" in html
    judged_all = bench["judges"]["judge-a"]["all"]
    assert set(block["all"]) >= {"default_rate", "success_stereotype", "gap"}
    if (counts.to_numpy() == 0).sum() == counts.size - len(counts) == 6:  # M = identity
        for name in ("default_rate", "success_stereotype", "success_anti", "gap"):
            assert block["all"][name]["value"] == pytest.approx(judged_all[name]["value"])


def test_agreement_and_ties_by_hand():
    # Ann s s a neither, Bob s a a neither: p_o = 3/4; marginals Ann (2, 1, 1), Bob (1, 2, 1):
    # p_e = (2*1 + 1*2 + 1*1) / 16 = 5/16; kappa = (3/4 - 5/16) / (11/16) = 7/11
    long = pd.DataFrame(
        [(f"i{k}", r, lab) for r, labs in (("Ann", "s s a neither"), ("Bob", "s a a neither"))
         for k, lab in enumerate(labs.split())],
        columns=["image", "rater", "label"],
    )  # fmt: skip
    got = rater_agreement(long, BLIND_LABELS)
    assert got["images_two_or_more_raters"] == 4 and got["raters"] == 2
    assert got["pairs"][0]["agreement"] == 0.75
    assert got["pairs"][0]["kappa"] == pytest.approx(7 / 11, abs=1e-4)
    # a pair that only ever says s has no kappa (undefined), not NaN in JSON
    same = pd.DataFrame([("i1", "A", "s"), ("i1", "B", "s")], columns=long.columns)
    assert rater_agreement(same, BLIND_LABELS)["pairs"][0]["kappa"] is None
    # majority wins; a two-way tie is broken by a seeded draw among the tied labels
    answers = pd.DataFrame(
        [
            ("gen", "u1", "neutral", 42, r, lab)
            for r, lab in (("A", "s"), ("B", "s"), ("C", "neither"))
        ]
        + [("gen", "u2", "neutral", 42, r, lab) for r, lab in (("A", "a"), ("B", "s"))],
        columns=[*KEY, "rater", "label"],
    )
    labels = image_labels(answers).set_index("unit_id")
    assert labels.loc["u1", "reference"] == "s" and not labels.loc["u1", "tie"]
    assert labels.loc["u2", "tie"] and labels.loc["u2", "reference"] in {"a", "s"}
    assert image_labels(answers).equals(image_labels(answers))
    assert json.loads(labels.loc["u1", "raters"]) == {"A": "s", "B": "s", "C": "neither"}


@pytest.mark.parametrize(
    ("row", "where"),
    [
        ({"bundle_id": "k-nope"}, "row 1, field 'bundle_id'"),
        ({"item": "k9999"}, "row 1, field 'item'"),
        ({"choice": "D"}, "row 1, field 'choice'"),
        ({"rater": " "}, "row 1, field 'rater'"),
        ({"unit_id": "u99999"}, "row 1, field 'unit_id'"),
    ],
)
def test_bad_answer_files_are_one_line_errors(workspace, tmp_path, row, where):
    manifest = _manifest(workspace)
    it = manifest["items"][0]
    good = {
        "bundle_id": manifest["bundle_id"],
        "rater": "Ann",
        "item": it["item"],
        "unit_id": it["unit_id"],
        "choice": "A",
        "saved_at": "",
    }
    bad = tmp_path / "bad.csv"
    pd.DataFrame([{**good, **row}], columns=BLIND_ANSWER_COLUMNS).to_csv(bad, index=False)
    proc = subprocess.run(
        [
            sys.executable, "-m", "implicit_bench.cli.main", "human-eval", "import",
            "--manifest", str(workspace / "bundle/manifest.json"),
            "--sheet", str(tmp_path / "unused.csv"), str(bad),
        ],
        cwd=workspace,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")},
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert proc.returncode != 0
    assert "bad.csv" in proc.stderr and where in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_a_rater_labelling_an_image_twice_and_a_redrawn_sheet_are_errors(workspace, tmp_path):
    from implicit_bench.errors import InputError

    manifest = _manifest(workspace)
    it = manifest["items"][0]
    row = [manifest["bundle_id"], "Ann", it["item"], it["unit_id"], "A", ""]
    twice = tmp_path / "twice.csv"
    pd.DataFrame([row, row], columns=BLIND_ANSWER_COLUMNS).to_csv(twice, index=False)
    manifests = load_calibration_manifests([workspace / "bundle/manifest.json"])
    with pytest.raises(InputError, match=r"twice.csv, row 2, field 'item'.*twice"):
        import_calibration(manifests, [twice])
    once = tmp_path / "once.csv"
    pd.DataFrame([row], columns=BLIND_ANSWER_COLUMNS).to_csv(once, index=False)
    other = tmp_path / "other.csv"
    sheet = CALIBRATION.read(workspace / "calibration.csv")
    sheet.drop(index=it["sheet_row"] - 1).to_csv(other, index=False)  # the item's image gone
    with pytest.raises(InputError, match=r"other.csv.*not in the sheet"):
        import_calibration(manifests, [once], str(other))
    with pytest.raises(InputError, match="not a calibration-bundle manifest"):
        rating = tmp_path / "rating.json"
        rating.write_text(json.dumps({"bundle_id": "b1", "cases": [], "sampling": {}}))
        load_calibration_manifests([rating])


def test_bad_raters_cell_in_the_table_names_file_row_and_field(tmp_path):
    from implicit_bench.errors import InputError

    table = pd.DataFrame(
        [
            ("gen", "u1", "neutral", 42, "s", "human", None, '{"Ann": "s"}'),
            ("gen", "u2", "neutral", 42, "a", "human", None, '{"Ann": "maybe"}'),
        ],
        columns=[*KEY, "reference", "source", "image_sha256", "raters"],
    )
    path = tmp_path / "calibration.csv"
    table.to_csv(path, index=False)
    with pytest.raises(InputError, match=r"calibration.csv, row 2, field 'raters'"):
        CALIBRATION.read(path)


def test_manifest_errors_name_the_file(workspace, tmp_path):
    from implicit_bench.errors import InputError
    from implicit_bench.human_eval.blind_import import read_manifest

    with pytest.raises(InputError, match=r"nope.json: manifest not found"):
        read_manifest(tmp_path / "nope.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(InputError, match=r"bad.json: not a JSON manifest"):
        read_manifest(tmp_path / "bad.json")
    rating = tmp_path / "rating.json"
    rating.write_text(json.dumps({"bundle_id": "b1", "cases": [], "sampling": {}}))
    res = CliRunner().invoke(
        cli_main,
        [
            "human-eval", "import", "--manifest", str(rating),
            "--manifest", str(workspace / "bundle/manifest.json"), str(rating),
        ],
    )  # fmt: skip
    assert res.exit_code != 0 and "separately" in res.output
