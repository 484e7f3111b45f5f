"""Rating bundle export and the form round trip in headless Chromium: the answers the form's
own JavaScript saves (Blob download) import without loss."""

from __future__ import annotations

import json
import shutil
import time

import pandas as pd
import pytest

from implicit_bench.errors import InputError
from implicit_bench.human_eval.answers import load_manifests, read_answers
from implicit_bench.human_eval.bundle import HumanEvalParams, export_bundle
from implicit_bench.human_eval.study import human_eval_report
from tests.helpers.chromium import Chromium, require_chromium
from tests.helpers.paths import REPO_ROOT
from tests.helpers.synthetic_project import build_synthetic_project


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("he")
    build_synthetic_project(root, n_units=24, image_size=24, debias_configs=(), with_metrics=False)
    return root


def _params(root, **kw):
    # every path inside the synthetic project: the repository's own pipeline outputs
    # (e.g. data/processed/selected_units.parquet after `make repro`) must not leak in
    return HumanEvalParams(
        units=str(root / "data/interim/units.parquet"),
        image_roots=[str(root / "data/images")],
        selected_units=str(root / "data/processed/selected_units.parquet"),
        judgements=[str(root / "data/judgements/*.parquet")],
        **kw,
    )


def test_export_is_stratified_seeded_and_hides_variants(project, tmp_path):
    info = export_bundle(_params(project, sample_size=12, seed=7), tmp_path / "b")
    manifest = json.loads((tmp_path / "b/manifest.json").read_text())
    units = pd.read_parquet(project / "data/interim/units.parquet").set_index("unit_id")
    cases = manifest["cases"]
    assert info["n_cases"] == len(cases) == 12
    # allocation per stratum is followed exactly, and covers every bias type with >= 1 unit
    drawn = (
        pd.Series([units.loc[c["unit_id"], "bias_type"] for c in cases]).value_counts().to_dict()
    )
    assert drawn == {k: v for k, v in manifest["sampling"]["allocation"].items() if v}
    for case in cases:
        assert sorted(case["order"]) == ["anti_stereotype", "neutral", "stereotype"]
        assert [i["variant"] for i in case["images"]] == case["order"]
    # orders are random across cases, not one fixed permutation
    assert len({tuple(c["order"]) for c in cases}) > 1
    # the form never names a variant nor an image hash; images are inlined (no network)
    form = (tmp_path / "b/form.html").read_text()
    assert '"variant"' not in form and "anti_stereotype" not in form
    assert not any(img["sha256"] in form for c in cases for img in c["images"])
    assert form.count("data:image/jpeg;base64,") == 36
    assert "http://" not in form and "https://" not in form
    # same seed, same sample; different seed, different sample; exclusion removes rated units
    again = export_bundle(_params(project, sample_size=12, seed=7), tmp_path / "b2")
    assert again["bundle_id"] == info["bundle_id"]
    other = export_bundle(
        _params(project, sample_size=12, seed=8, exclude=[str(tmp_path / "b/manifest.json")]),
        tmp_path / "b3",
    )
    rated = {c["unit_id"] for c in cases}
    fresh = {c["unit_id"] for c in json.loads((tmp_path / "b3/manifest.json").read_text())["cases"]}
    assert other["n_cases"] == 12 and not (rated & fresh)


def test_form_round_trip_in_chromium(project, tmp_path):
    binary = require_chromium()
    if binary is None:
        pytest.skip(
            "chromium not installed (apt-get install chromium); CI sets IB_REQUIRE_CHROMIUM=1"
        )
    export_bundle(_params(project, sample_size=6, seed=3), tmp_path / "b")
    manifest = json.loads((tmp_path / "b/manifest.json").read_text())
    cases = [c["case"] for c in manifest["cases"]]
    plan = {}  # (case, item) -> answer; the last case's third image is left unanswered
    for k, case in enumerate(cases):
        plan[(case, "kg_valid")] = ("yes", "no", "unsure")[k % 3]
        for pos in (1, 2, 3):
            if not (k == len(cases) - 1 and pos == 3):
                plan[(case, f"rating_{pos}")] = (k + 2 * pos) % 6
    rater = 'Ann, "B" é'
    downloads = tmp_path / "downloads"
    with Chromium(binary) as browser:
        browser.allow_downloads(downloads)
        browser.navigate(tmp_path / "b/form.html", wait_for="document.body.dataset.ready === '1'")
        browser.evaluate(
            f"var r = document.getElementById('rater'); r.value = {json.dumps(rater)}; "
            f"r.dispatchEvent(new Event('change', {{bubbles: true}}))"
        )
        browser.evaluate("document.getElementById('start').click()")
        assert browser.evaluate("document.querySelector('.case.on').id") == cases[0]
        for case in cases:
            for (c, item), value in plan.items():
                if c == case:
                    browser.evaluate(
                        f'document.querySelector(\'input[data-case="{c}"][data-item="{item}"][value="{value}"]\').click()'
                    )
            browser.evaluate("document.querySelector('.case.on [data-nav=\"1\"]').click()")
        assert browser.evaluate("document.getElementById('end').classList.contains('on')")
        assert "Incomplete: " + cases[-1] in browser.evaluate(
            "document.getElementById('summary').textContent"
        )
        shot = browser.screenshot(tmp_path / "rating_form_end.png")
        artifacts = REPO_ROOT / "tests/artifacts"
        artifacts.mkdir(exist_ok=True)
        shutil.copy(shot, artifacts / shot.name)
        browser.evaluate("document.getElementById('download').click()")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            done = [p for p in downloads.glob("*.csv") if not p.name.endswith(".crdownload")]
            if done:
                break
            time.sleep(0.1)
    assert done, "the form did not save a CSV"
    saved = done[0]
    assert saved.name.startswith(f"answers-{manifest['bundle_id']}-Ann")
    ratings, kg, counts = read_answers([saved], load_manifests([tmp_path / "b/manifest.json"]))
    assert counts["rows"] == len(cases) and counts["unanswered_items"] == 1
    assert set(ratings["rater"]) == {rater} and set(kg["rater"]) == {rater}
    got = {(r.case, f"rating_{r.position}"): int(r.rating) for r in ratings.itertuples()}
    got.update({(r.case, "kg_valid"): r.answer for r in kg.itertuples()})
    assert got == plan
    # each rating sits on the variant the manifest put at that position
    by_case = {c["case"]: c for c in manifest["cases"]}
    for r in ratings.itertuples():
        assert r.variant == by_case[r.case]["order"][r.position - 1]
    report = human_eval_report(
        load_manifests([tmp_path / "b/manifest.json"]), [saved], _params(project), tmp_path
    )
    assert report["n_ratings"] == len(cases) * 3 - 1
    assert set(report["human_vs_judge"]) == {"judge-a", "judge-b"}


def test_export_replaces_only_its_own_bundle_folder(project, tmp_path):
    """A second export into the same folder swaps the bundle in whole; a folder holding files
    the export does not write is refused (one line naming them), and nothing in it changes."""
    out = tmp_path / "b"
    first = export_bundle(_params(project, sample_size=6, seed=3), out)
    second = export_bundle(_params(project, sample_size=6, seed=4), out)
    assert first["bundle_id"] != second["bundle_id"]
    assert sorted(p.name for p in out.iterdir()) == ["README.txt", "form.html", "manifest.json"]
    assert json.loads((out / "manifest.json").read_text())["bundle_id"] == second["bundle_id"]
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError, match="notes.txt"):
        export_bundle(_params(project, sample_size=6, seed=5), out)
    assert (out / "notes.txt").read_text() == "mine"
    assert json.loads((out / "manifest.json").read_text())["bundle_id"] == second["bundle_id"]
