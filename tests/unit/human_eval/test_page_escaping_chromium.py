"""Ids that reach HTML / JS are escaped for that context, in real headless Chromium:
the rating form runs with ``<!--<script>`` / ``</script>`` in its data, and a judge named
``__proto__`` keeps its labels in the unit browser."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from implicit_bench.human_eval.bundle import HumanEvalParams, export_bundle
from implicit_bench.human_eval.form import script_json
from implicit_bench.report.params import ReportParams
from implicit_bench.report.stage import build_report
from tests.helpers.chromium import Chromium, require_chromium
from tests.helpers.synthetic_project import build_synthetic_project

READY = "document.body.dataset.ready === '1'"
HOSTILE = '<!--<script>"x"</script><!--'


@pytest.fixture(scope="module")
def browser():
    binary = require_chromium()
    if binary is None:
        pytest.skip(
            "chromium not installed (apt-get install chromium); CI sets IB_REQUIRE_CHROMIUM=1"
        )
    with Chromium(binary) as b:
        yield b


def test_script_json_has_no_markup_characters():
    text = script_json({"id": HOSTILE, "k": "a & b \u2028"})
    assert not any(ch in text for ch in "<>&\u2028")
    assert json.loads(text) == {"id": HOSTILE, "k": "a & b \u2028"}


def test_rating_form_runs_with_a_hostile_bundle_id(tmp_path, browser):
    root = tmp_path / "p"
    build_synthetic_project(root, n_units=6, image_size=16, debias_configs=(), with_metrics=False)
    params = HumanEvalParams(
        units=str(root / "data/interim/units.parquet"),
        image_roots=[str(root / "data/images")],
        selected_units=str(root / "data/processed/selected_units.parquet"),
        judgements=[str(root / "data/judgements/*.parquet")],
        sample_size=3,
    )
    export_bundle(params, tmp_path / "b", bundle_id=HOSTILE)
    browser.navigate(tmp_path / "b/form.html", wait_for=READY)  # the script ran to its end
    assert browser.evaluate("window.BUNDLE.bundle_id") == HOSTILE
    assert browser.evaluate("Object.getPrototypeOf(IBForm.answers)") is None


def test_a_judge_named_proto_keeps_its_labels_in_the_unit_browser(tmp_path, browser):
    build_synthetic_project(tmp_path, n_units=4, image_size=16)
    path = tmp_path / "data/judgements/judgements.parquet"
    frame = pd.read_parquet(path)
    first = sorted(frame["judge"].unique())[0]
    frame.loc[frame["judge"] == first, "judge"] = "__proto__"
    frame.to_parquet(path)
    build_report(ReportParams(units_per_page=10), tmp_path)
    browser.navigate(tmp_path / "report/units.html", wait_for=READY)
    browser.wait_for("document.querySelectorAll('article.unit').length > 0")
    shown = browser.evaluate(
        "Array.from(document.querySelectorAll('.j .jn')).filter(e => "
        "e.textContent === '__proto__:').length"
    )
    assert shown > 0
