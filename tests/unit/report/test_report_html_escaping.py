"""Every metrics value the Leaderboard and Human evaluation sections put into HTML goes through
``report.markup.show`` / ``esc``, numbers included: markup in another run's
``leaderboard`` counts or in ``human_eval.json``'s counts, threshold and flips stays text,
checked as text and in headless Chromium (no element, no script run)."""

from __future__ import annotations

import pytest

from implicit_bench.report.leaderboard import Run, leaderboard_section
from implicit_bench.report.markup import show
from implicit_bench.report.stage import _page
from implicit_bench.report.summary_page import fmt_num, render_human_eval
from tests.helpers.chromium import Chromium, require_chromium

PAYLOAD = "<img src=x onerror=alert(1)>"
EST = {"value": 0.5, "ci": [0.4, 0.6], "n": 3, "level": 0.95}


def hostile_board_section() -> str:
    """The Leaderboard section of a run whose rows and pairs carry markup as unit counts (the
    renderer alone: ``BenchmarkFile.from_json`` refuses such a file before rendering)."""
    row = {"config": "g", "n_units": PAYLOAD, "default_rate": EST}
    pair = {
        "a": "g",
        "b": "h",
        "metric": "default_rate",
        "n_units": PAYLOAD,
        "difference": EST,
        "p": PAYLOAD,
        "p_holm": PAYLOAD,
        "resolved": False,
    }
    run = Run("x", {"leaderboard": {"rows": [row], "pairs": [pair], "alpha": PAYLOAD}})
    return leaderboard_section([run])


def hostile_human_eval_section() -> str:
    return render_human_eval(
        {
            "n_raters": PAYLOAD,
            "n_cases": PAYLOAD,
            "n_ratings": PAYLOAD,
            "screening": {"threshold": PAYLOAD, "rule": PAYLOAD, "excluded": []},
            "human_vs_judge": {"j": {"r": EST, "mae": PAYLOAD}},
            "direction_flips": {"j": {"flips": PAYLOAD, "cases": PAYLOAD}},
            "mean_rating": {"stereotype": PAYLOAD},
            "by_bias_type": {"age": {"cases": PAYLOAD, "images": PAYLOAD, "human_vs_judge": {}}},
        }
    )


def test_show_formats_numbers_and_escapes_everything():
    assert show(0.1234, ".1f", scale=100.0) == "12.3"
    assert show(None) == "–" and show(float("nan")) == "–"
    assert show(PAYLOAD) == "&lt;img src=x onerror=alert(1)&gt;"
    assert show(10**400, ".1f") == "too large"
    assert fmt_num(10**400).startswith("10,000") and fmt_num(PAYLOAD).startswith("&lt;img")


def test_leaderboard_unit_counts_with_markup_are_escaped():
    html = hostile_board_section()
    assert "<img" not in html
    assert html.count("&lt;img src=x onerror=alert(1)&gt;") >= 4  # rows, pairs, p, alpha


def test_human_eval_counts_threshold_and_flips_with_markup_are_escaped():
    html = hostile_human_eval_section()
    assert "<img" not in html
    assert "&lt;img src=x onerror=alert(1)&gt; raters kept" in html
    assert "&lt;img src=x onerror=alert(1)&gt; of &lt;img" in html  # direction flips


@pytest.mark.slow
def test_hostile_leaderboard_and_human_eval_make_no_element_in_chromium(tmp_path):
    binary = require_chromium()
    if binary is None:
        pytest.skip(
            "chromium not installed (apt-get install chromium); CI sets IB_REQUIRE_CHROMIUM=1"
        )
    page = tmp_path / "index.html"
    body = hostile_board_section() + hostile_human_eval_section()
    page.write_text(_page("escaping", body), encoding="utf-8")
    with Chromium(binary) as browser:
        browser.navigate(page, wait_for="document.readyState === 'complete'")
        assert browser.evaluate("document.querySelectorAll('img').length") == 0
        assert browser.evaluate("document.body.textContent.includes('<img src=x')")
        assert not [m for m in browser.console if "alert" in m or m.startswith("EXCEPTION")]
