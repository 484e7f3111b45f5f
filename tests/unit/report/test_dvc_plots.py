"""DVC plots: every plot declares x and y, and `dvc plots show` renders each one offline in
headless Chromium (vendored vega, no CDN). Screenshots are kept under tests/artifacts/."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from implicit_bench.analysis.paper_tables import hedges_plot, plot_frames
from implicit_bench.report.plots_page import TEMPLATE_PATH, offline_template
from tests.helpers.chromium import Chromium, require_chromium
from tests.helpers.paths import REPO_ROOT

DVC_YAML = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text(encoding="utf-8"))
TOP_PLOTS = [(name, spec) for entry in DVC_YAML["plots"] for name, spec in entry.items()]

# plot data as the stages write it (columns checked against the writers below)
FIXTURES = {
    "default_rate_by_bias_type.csv": pd.DataFrame(
        [
            (t, j, v, v - 8, v + 9)
            for t, base in (("gender", 60.0), ("race", 45.0), ("age", 30.0))
            for j, v in (("qwen3vl", base), ("gpt54", base - 5))
        ],
        columns=["bias_type", "series", "default_rate", "ci_low", "ci_high"],
    ),
    "success_by_default_strength.csv": pd.DataFrame(
        [
            (g, s, v, v - 10, min(100.0, v + 10), 12)
            for g, vs in (
                ("0 of 3", (90.0, 80.0)),
                ("1-2 of 3", (92.0, 66.0)),
                ("3 of 3", (97.0, 54.0)),
            )
            for s, v in zip(("stereotype", "anti-stereotype"), vs, strict=True)
        ],
        columns=["group", "series", "success", "ci_low", "ci_high", "units"],
    ),
    "judge_confusion.csv": pd.DataFrame(
        [("s", "s")] * 9
        + [("s", "a")] * 2
        + [("a", "a")] * 6
        + [("neither", "s")] * 3
        + [("neither", "neither")] * 4,
        columns=["first", "second"],
    ),
    "hedges_g_by_bias_type.csv": pd.DataFrame(
        [
            ("gender", "pooled over judges and seeds", 1.2, 0.9, 1.5),
            ("race", "pooled over judges and seeds", 0.7, 0.4, 1.0),
        ],
        columns=["bias_type", "series", "g", "ci_low", "ci_high"],
    ),
    "position_bias.csv": pd.DataFrame(
        [
            (j, o, s, f"{j}, order {o}", c, c / 50)
            for j in ("qwen3vl", "gpt54")
            for o in ("sa", "as")
            for s, c in (("A", 30), ("B", 15), ("C", 5))
        ],
        columns=["judge", "order", "slot", "series", "count", "share"],
    ),
    "selection_errors.csv": pd.DataFrame(
        [
            (o, s, d, d - w, d + w)
            for o, d in (("stereotype", 0.012), ("missing explicit", -0.092))
            for s, w in (("pointwise", 0.02), ("Bonferroni", 0.027))
        ],
        columns=["outcome", "series", "difference", "ci_low", "ci_high"],
    ),
    "negation_by_strength.csv": pd.DataFrame(
        [
            (j, v, g, 10, x, x + 0.1, 1 - x, f"{j}: {v}")
            for j in ("qwen3vl",)
            for v in ("anti_stereotype", "negated_0_1")
            for g, x in (("0", 0.8), ("1-2", 0.5), ("3", 0.2))
        ],
        columns=[
            "judge",
            "variant",
            "strength",
            "n",
            "strict_success",
            "lenient_success",
            "forbidden_rendered",
            "series",
        ],
    ),
}


def test_every_plot_declares_x_and_y_and_its_file_is_a_stage_output():
    outs = {
        next(iter(o)) if isinstance(o, dict) else o
        for s in DVC_YAML["stages"].values()
        for o in s.get("outs", [])
    }
    declared = set()
    for name, spec in TOP_PLOTS:
        assert spec.get("x") and isinstance(spec.get("y"), dict), name
        assert "'" not in name and '"' not in name, (
            f"{name}: DVC writes the plot id into JavaScript"
        )
        for file, field in spec["y"].items():
            assert file in outs, f"{name}: {file} is no stage's output"
            declared.add(Path(file).name)
            assert (
                field in FIXTURES[Path(file).name].columns
                and spec["x"] in FIXTURES[Path(file).name].columns
            )
    produced = {Path(o).name for o in outs if str(o).startswith("plots/")}
    assert produced == declared == set(FIXTURES)
    for stage in DVC_YAML["stages"].values():
        assert "plots" not in stage  # no stage-level plot without x / y


def test_fixture_columns_match_the_writers():
    frames = {f"{k}.csv": v for k, v in plot_frames({}, None).items()}
    frames["hedges_g_by_bias_type.csv"] = hedges_plot(None)
    for name, frame in frames.items():
        assert list(frame.columns) == list(FIXTURES[name].columns), name


def test_offline_template_is_current_and_loads_nothing_from_the_network():
    committed = (REPO_ROOT / TEMPLATE_PATH).read_text(encoding="utf-8")
    assert committed == offline_template(), "run: python -m implicit_bench.report.plots_page"
    assert "{plot_divs}" in committed and "{scripts}" not in committed
    assert "<script src=" not in committed
    assert "html_template = plots_offline.html" in (REPO_ROOT / ".dvc/config").read_text(
        encoding="utf-8"
    )


@pytest.fixture(scope="module")
def plots_page(tmp_path_factory):
    root = tmp_path_factory.mktemp("dvcplots")
    (root / "dvc.yaml").write_text(
        yaml.safe_dump({"plots": DVC_YAML["plots"]}, sort_keys=False), encoding="utf-8"
    )
    (root / ".dvc").mkdir()
    shutil.copytree(REPO_ROOT / ".dvc/plots", root / ".dvc/plots")
    shutil.copy(REPO_ROOT / ".dvc/config", root / ".dvc/config")
    shutil.copy(REPO_ROOT / TEMPLATE_PATH, root / TEMPLATE_PATH)
    (root / "plots").mkdir()
    for name, frame in FIXTURES.items():
        frame.to_csv(root / "plots" / name, index=False)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    env = {
        **os.environ,
        "DVC_NO_ANALYTICS": "1",
        "NO_PROXY": "*",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
    }
    dvc = Path(sys.executable).with_name("dvc")
    subprocess.run(
        [str(dvc), "plots", "show", "-o", "out"],
        cwd=root,
        check=True,
        env=env,
        capture_output=True,
        timeout=300,
    )
    return root / "out" / "index.html"


@pytest.mark.slow
def test_dvc_plots_show_renders_every_plot_offline_in_chromium(plots_page, tmp_path):
    html = plots_page.read_text(encoding="utf-8")
    assert "cdn.jsdelivr" not in html and "<script src=" not in html
    binary = require_chromium()
    if binary is None:
        pytest.skip(
            "chromium not installed (apt-get install chromium); CI sets IB_REQUIRE_CHROMIUM=1"
        )
    n_plots = len(TOP_PLOTS)
    artifacts = REPO_ROOT / "tests/artifacts/dvc_plots"
    artifacts.mkdir(parents=True, exist_ok=True)
    with Chromium(binary, width=1100, height=900) as browser:
        browser.navigate(plots_page)
        try:
            browser.wait_for(
                f"document.querySelectorAll('.vega-embed canvas').length === {n_plots}", timeout=60
            )
        except Exception:
            pytest.fail(f"not every plot rendered; console: {browser.console}")
        assert not [m for m in browser.console if m.startswith("EXCEPTION")], browser.console
        # nothing was fetched over the network
        fetched = browser.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
        assert [u for u in fetched if u.startswith("http")] == []
        info = json.loads(
            browser.evaluate(
                "JSON.stringify(Array.from(document.querySelectorAll('.vega-embed')).map(e => {"
                " const r = e.getBoundingClientRect(); const c = e.querySelector('canvas, svg');"
                " return {id: e.parentElement ? e.parentElement.id : e.id, w: r.width, h: r.height,"
                " inked: (() => { const c = e.querySelector('canvas'); const d = "
                "c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
                "   let n = 0; for (let i = 0; i < d.length; i += 4) { if "
                "(d[i + 3] > 0 && (d[i] < 200 || d[i + 1] < 200 || d[i + 2] "
                "< 200)) n++; } return n; })(),"
                " x: r.left + window.scrollX, y: r.top + window.scrollY, kind: c.tagName}; }))"
            )
        )
        assert len(info) == n_plots
        for i, plot in enumerate(info):
            assert plot["w"] > 100 and plot["h"] > 100, plot
            assert plot["inked"] > 2000, plot  # axes, labels and marks were drawn
            browser.evaluate(f"window.scrollTo(0, {max(0, plot['y'] - 10)})")
            top = browser.evaluate("window.scrollY")
            shot = browser.send(
                "Page.captureScreenshot",
                session=True,
                format="png",
                clip={
                    "x": plot["x"],
                    "y": plot["y"] - top + browser.evaluate("window.scrollY"),
                    "width": plot["w"],
                    "height": plot["h"],
                    "scale": 1,
                },
            )["data"]
            import base64

            (artifacts / f"plot_{i:02d}.png").write_bytes(base64.b64decode(shot))
        browser.screenshot(tmp_path / "page.png", full_page=True)
        shutil.copy(tmp_path / "page.png", artifacts / "page.png")


def _strength(n_units: int, s: float | None, a: float | None) -> dict:
    def iv(v: float | None) -> dict:  # an Estimate
        return {"value": v, "ci": [v, v] if v is not None else None, "n": n_units, "level": 0.95}

    return {
        "groups": {
            "3 of 3": {"n_units": n_units, "success_stereotype": iv(s), "success_anti": iv(a)}
        }
    }


def test_success_plot_falls_back_to_a_judge_that_groups_units():
    empty = _strength(0, None, None)
    other = _strength(2, 0.9, 0.5)
    bench = {
        "judges": {},
        "by_default_strength": empty,
        "strength": [
            {
                "name": "j1 groups, j1 labels",
                "grouping": {"judge": "j1"},
                "labels": {"judge": "j1"},
                **empty,
            },
            {
                "name": "j2 groups, j1 labels (cross)",
                "grouping": {"judge": "j2"},
                "labels": {"judge": "j1"},
                **other,
            },
            {
                "name": "j2 groups, j2 labels",
                "grouping": {"judge": "j2"},
                "labels": {"judge": "j2"},
                **other,
            },
        ],
    }
    frame = plot_frames(bench, None)["success_by_default_strength"]
    assert frame["series"].tolist() == ["stereotype (j2)", "anti-stereotype (j2)"]
    assert frame["success"].tolist() == [90.0, 50.0]  # percent, not NaN
    bench["by_default_strength"] = other  # the primary judge groups units: its own, unlabelled
    assert plot_frames(bench, None)["success_by_default_strength"]["series"].tolist() == [
        "stereotype",
        "anti-stereotype",
    ]


# ---- dvc plots diff: the templates separate revisions -------------------------------------
BAR_PLOTS = {  # plot file -> (y field, x field) of the bar templates (bar_ci, bar_grouped)
    Path(next(iter(spec["y"]))).name: (next(iter(spec["y"].values())), spec["x"])
    for _, spec in TOP_PLOTS
    if spec.get("template") in ("bar_ci", "bar_grouped")
}
SHIFT = 7.0  # the second revision adds this to every bar


@pytest.fixture(scope="module")
def plots_diff_page(tmp_path_factory):
    root = tmp_path_factory.mktemp("dvcplotsdiff")
    (root / "dvc.yaml").write_text(
        yaml.safe_dump({"plots": DVC_YAML["plots"]}, sort_keys=False), encoding="utf-8"
    )
    (root / ".dvc").mkdir()
    shutil.copytree(REPO_ROOT / ".dvc/plots", root / ".dvc/plots")
    shutil.copy(REPO_ROOT / ".dvc/config", root / ".dvc/config")
    shutil.copy(REPO_ROOT / TEMPLATE_PATH, root / TEMPLATE_PATH)
    (root / "plots").mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    for rev in (0, 1):
        for name, frame in FIXTURES.items():
            frame = frame.copy()
            if name in BAR_PLOTS:
                x = BAR_PLOTS[name][1]
                frame[x] = frame[x] + rev * SHIFT
            frame.to_csv(root / "plots" / name, index=False)
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        subprocess.run([*git, "commit", "-qm", f"rev {rev}"], cwd=root, check=True)
    env = {
        **os.environ,
        "DVC_NO_ANALYTICS": "1",
        "NO_PROXY": "*",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
    }
    dvc = Path(sys.executable).with_name("dvc")
    subprocess.run(
        [str(dvc), "plots", "diff", "HEAD~1", "HEAD", "-o", "out"],
        cwd=root,
        check=True,
        env=env,
        capture_output=True,
        timeout=300,
    )
    return root / "out" / "index.html"


# every bar mark drawn by vega: its facet (rev), datum and the value its pixels encode
_BARS_JS = """
(() => {
  const out = {};
  for (const [id, view] of Object.entries(window.vegaViews)) {
    const bars = [];
    const walk = (node, facet) => {
      if (!node) return;
      if (node.marktype === 'group' && node.items) {
        for (const g of node.items) walk({items: g.items}, (g.datum && g.datum.rev) || facet);
        return;
      }
      if (node.marktype === 'rect' && node.role === 'mark') {
        for (const it of node.items) bars.push({facet, datum: it.datum, x: it.x, width: it.width});
        return;
      }
      for (const child of (node.items || [])) walk(child, facet);
    };
    walk(view.scenegraph().root, null);
    let scale = null;
    try { scale = view.scale('x'); } catch (e) {}
    if (!scale) {
      try { scale = view.scale('child_x'); } catch (e) {}
    }
    // a bar's value: the end farther from zero (a negative bar reaches left of the axis)
    const far = b => [scale.invert(b.x), scale.invert(b.x + b.width)]
      .reduce((a, c) => Math.abs(c) > Math.abs(a) ? c : a);
    out[id] = {bars: bars.map(b => ({facet: b.facet, datum: b.datum,
                                     value: scale ? far(b) : null})),
               domain: scale ? scale.domain() : null};
  }
  return JSON.stringify(out);
})()
"""


@pytest.mark.slow
def test_dvc_plots_diff_separates_revisions_in_chromium(plots_diff_page):
    binary = require_chromium()
    if binary is None:
        pytest.skip(
            "chromium not installed (apt-get install chromium); CI sets IB_REQUIRE_CHROMIUM=1"
        )
    artifacts = REPO_ROOT / "tests/artifacts/dvc_plots"
    artifacts.mkdir(parents=True, exist_ok=True)
    with Chromium(binary, width=1400, height=1000) as browser:
        browser.navigate(plots_diff_page)
        browser.wait_for(
            f"Object.keys(window.vegaViews || {{}}).length === {len(TOP_PLOTS)}", timeout=60
        )
        browser.wait_for(
            f"document.querySelectorAll('.vega-embed canvas').length === {len(TOP_PLOTS)}",
            timeout=60,
        )
        assert not [m for m in browser.console if m.startswith("EXCEPTION")], browser.console
        drawn = json.loads(browser.evaluate(_BARS_JS))
        browser.screenshot(artifacts / "diff_page.png", full_page=True)
    checked = 0
    for plot in drawn.values():
        bars = plot["bars"]
        if not bars or "series" not in bars[0]["datum"]:
            continue  # the confusion matrix (DVC's own template, faceted by rev already)
        file = next(
            name
            for name, (y, x) in BAR_PLOTS.items()
            if y in bars[0]["datum"] and x in bars[0]["datum"]
        )
        y, x = BAR_PLOTS[file]
        frame = FIXTURES[file]
        # one bar per (revision, category, series), each in its revision's panel
        assert len(bars) == 2 * len(frame), (file, len(bars))
        for bar in bars:
            assert bar["facet"] == bar["datum"]["rev"] in ("HEAD~1", "HEAD"), bar
            row = frame[
                (frame[y].astype(str) == str(bar["datum"][y]))
                & (frame["series"] == bar["datum"]["series"])
            ]
            expected = float(row[x].iloc[0]) + (SHIFT if bar["datum"]["rev"] == "HEAD" else 0.0)
            assert float(bar["datum"][x]) == pytest.approx(expected), (file, bar)
            assert bar["value"] == pytest.approx(expected, abs=1e-6 + 1e-6 * abs(expected)), (
                file,
                bar,
            )  # the pixels, not stacked (a negative bar: its left end)
        # the axis ends near the largest bar, not at the sum of two revisions' bars
        top = float(frame[x].max()) + SHIFT
        assert plot["domain"][1] < 1.5 * top, (file, plot["domain"])
        checked += 1
    assert checked == len(BAR_PLOTS)
