"""The unit browser in headless Chromium: it loads, filters change what is shown, images are
displayed, pages and chunks load lazily. A screenshot is kept as a test artifact."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from implicit_bench.report.params import ReportParams
from implicit_bench.report.stage import build_report
from tests.helpers.chromium import Chromium, require_chromium
from tests.helpers.paths import REPO_ROOT
from tests.helpers.synthetic_project import BASE_CONFIG, build_synthetic_project

READY = "document.body.dataset.ready === '1'"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    binary = require_chromium()
    if binary is None:
        pytest.skip(
            "chromium not installed (apt-get install chromium); CI sets IB_REQUIRE_CHROMIUM=1"
        )
    root = tmp_path_factory.mktemp("site")
    build_synthetic_project(root, n_units=30, image_size=48)
    build_report(ReportParams(units_per_page=10, chunk_size=8), root)
    units = pd.read_parquet(root / "data/interim/units.parquet")
    judgements = pd.read_parquet(root / "data/judgements/judgements.parquet")
    with Chromium(binary, height=1000) as browser:
        yield root, units, judgements, browser


def _set(browser, element_id, value):
    browser.evaluate(
        f"var e = document.getElementById('{element_id}'); e.value = {json.dumps(value)};"
        f"e.dispatchEvent(new Event(e.tagName === 'INPUT' ? 'input' : 'change', {{bubbles: true}}))"
    )


def _shown(browser):
    return browser.evaluate(
        "Array.from(document.querySelectorAll('article.unit')).map(a => a.dataset.unit)"
    )


def test_browser_loads_filters_and_shows_images(site, tmp_path):
    root, units, judgements, browser = site
    browser.navigate(root / "report/units.html", wait_for=READY)
    assert browser.evaluate("document.body.dataset.matched") == "30"
    first_page = _shown(browser)
    assert first_page == list(units["unit_id"][:10])
    # only the chunks of the first page are loaded (units 0-9 -> chunks 0 and 1 of 8 units)
    assert browser.evaluate("Object.keys(IB.chunks).sort()") == ["0", "1"]
    # an image is displayed: decoded with a real size
    browser.wait_for(
        "(() => { const i = document.querySelector('.cell img'); return i "
        "&& i.complete && i.naturalWidth > 0; })()"
    )
    assert browser.evaluate("document.querySelector('.cell img').naturalWidth") == 48
    shot = browser.screenshot(tmp_path / "unit_browser.png")
    artifacts = REPO_ROOT / "tests/artifacts"
    artifacts.mkdir(exist_ok=True)
    shutil.copy(shot, artifacts / "unit_browser.png")

    # bias-type filter
    bias = units["bias_type"].value_counts().index[0]
    _set(browser, "f-bias", bias)
    browser.wait_for(READY)
    expected = list(units.loc[units["bias_type"] == bias, "unit_id"])
    assert browser.evaluate("document.body.dataset.matched") == str(len(expected))
    assert _shown(browser) == expected[:10]
    assert "bias=" in browser.evaluate("location.hash")
    _set(browser, "f-bias", "")
    browser.wait_for(READY)

    # judge disagreement (blind labels): computed here independently from the judgements
    blind = judgements[
        (judgements["task"] == "blind")
        & judgements["valid"]
        & (judgements["config"] == BASE_CONFIG)
    ]
    differ = blind.groupby(["unit_id", "variant", "seed"])["value"].nunique()
    expected = sorted(set(differ[differ > 1].index.get_level_values("unit_id")))
    _set(browser, "f-dis", "blind")
    browser.wait_for(READY)
    assert browser.evaluate("document.body.dataset.matched") == str(len(expected))
    assert _shown(browser) == expected[:10]
    _set(browser, "f-dis", "")

    # default strength under judge-b: neutral images labelled s == 0
    neutral = blind[(blind["variant"] == "neutral") & (blind["judge"] == "judge-b")]
    s_counts = neutral.assign(s=neutral["value"] == "s").groupby("unit_id")["s"].sum()
    expected = sorted(s_counts[s_counts == 0].index)
    _set(browser, "f-skey", "judge-b")
    _set(browser, "f-sgroup", "0")
    browser.wait_for(READY)
    assert _shown(browser) == expected[:10]
    _set(browser, "f-sgroup", "")

    # search over heads and prompts
    _set(browser, "f-q", "trait s7")
    browser.wait_for("document.body.dataset.matched === '1'")
    browser.wait_for(READY)
    assert _shown(browser) == ["u00007"]
    _set(browser, "f-q", "")
    browser.wait_for("document.body.dataset.matched === '30'")
    browser.wait_for(READY)

    # next page: other units, their chunk loaded on demand
    browser.evaluate("document.querySelector('.pager [data-go=\"1\"]').click()")
    browser.wait_for(READY)
    assert _shown(browser) == list(units["unit_id"][10:20])
    assert "2" in browser.evaluate("Object.keys(IB.chunks)")

    # one unit by URL: its images per seed and the debiasing configurations side by side
    browser.navigate(root / "report/units.html#unit=u00003", wait_for=READY)
    assert _shown(browser) == ["u00003"]
    cells = browser.evaluate(
        "document.querySelectorAll('article.unit "
        "table.grid')[1].querySelectorAll('tr')[0].textContent"
    )
    assert "exp03_rewrite_own" in cells and "exp06_steer_full_own" in cells
    assert browser.evaluate("document.querySelectorAll('article.unit img').length") == 9 + 3 * 3
    assert not [m for m in browser.console if m.startswith("EXCEPTION")]


def test_refused_image_is_shown_as_refused(site):
    root, _, _, browser = site
    browser.navigate(root / "report/units.html#unit=u00001", wait_for=READY)
    text = browser.evaluate("document.querySelector('article.unit').textContent")
    assert "refused: safety" in text


def test_summary_page_renders(site, tmp_path):
    root, _, _, browser = site
    browser.navigate(root / "report/index.html", wait_for="document.readyState === 'complete'")
    assert (
        browser.evaluate("document.getElementById('content-warning').getBoundingClientRect().top")
        < 200
    )
    assert browser.evaluate("document.querySelectorAll('figure.plot svg').length") >= 3


def test_invalid_answer_shows_its_raw_text(site):
    root, _, judgements, browser = site
    bad = judgements[~judgements["valid"] & (judgements["config"] == BASE_CONFIG)].iloc[0]
    browser.navigate(root / f"report/units.html#unit={bad['unit_id']}", wait_for=READY)
    titles = browser.evaluate(
        "Array.from(document.querySelectorAll('.inv[title]')).map(e => e.title)"
    )
    assert f"unparsable answer: {bad['raw']}" in titles
