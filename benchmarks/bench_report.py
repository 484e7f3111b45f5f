"""Benchmark: the report at paper scale (1,831 units) — build time, size, page loads in Chromium.

    python benchmarks/bench_report.py [--units 1831] [--workdir DIR] [--repeats 3]

Builds a synthetic project (units, an image store with 3 variants x 3 seeds, two debiasing
configurations' neutral images, judgements by two judges, metrics and plots), builds the
report, then opens it from disk in headless Chromium (fresh profile per repeat) and times:
the summary page, the unit browser until its first page is rendered (data/index.js + the
page's chunks), until the first page's images are decoded, a filter change, a search and the
next page. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(
    0, str(Path(__file__).resolve().parents[1])
)  # tests/: the browser driver and the synthetic project

from implicit_bench.report.inputs import ReportParams  # noqa: E402
from implicit_bench.report.stage import build_report  # noqa: E402
from tests.helpers.chromium import Chromium  # noqa: E402
from tests.helpers.synthetic_project import build_synthetic_project  # noqa: E402

READY = "document.body.dataset.ready === '1'"
IMAGES = (
    "Array.from(document.querySelectorAll('.cell img')).slice(0, "
    "9).every(i => i.complete && i.naturalWidth > 0)"
)


def _timed(browser: Chromium, action: str, until: str) -> float:
    browser.evaluate("document.body.dataset.ready = 'x'")
    start = time.monotonic()
    browser.evaluate(action)
    browser.wait_for(until, interval=0.005)
    return time.monotonic() - start


def measure(report: Path, repeats: int) -> dict[str, float]:
    runs: dict[str, list[float]] = {}
    for _ in range(repeats):
        with Chromium(height=1000) as browser:
            t = browser.navigate(
                report / "index.html", wait_for="document.readyState === 'complete'"
            )
            runs.setdefault("summary_page_s", []).append(t)
            start = time.monotonic()
            browser.navigate(report / "units.html", wait_for=READY)
            runs.setdefault("unit_browser_first_page_s", []).append(time.monotonic() - start)
            browser.wait_for(IMAGES, interval=0.005)
            runs.setdefault("unit_browser_first_images_s", []).append(time.monotonic() - start)
            start = time.monotonic()
            browser.navigate(report / "units.html#page=1", wait_for=READY)
            browser.wait_for(IMAGES, interval=0.005)
            runs.setdefault("unit_browser_reload_with_images_s", []).append(
                time.monotonic() - start
            )
            bias = browser.evaluate("IB.meta.bias_types[1]")
            runs.setdefault("filter_change_s", []).append(
                _timed(
                    browser,
                    "var e = document.getElementById('f-bias'); e.value = "
                    f"'{bias}'; e.dispatchEvent(new Event('change'))",
                    READY,
                )
            )
            runs.setdefault("search_s", []).append(
                _timed(
                    browser,
                    "var e = document.getElementById('f-q'); e.value = 'person "
                    "07'; e.dispatchEvent(new Event('input'))",
                    READY,
                )
                - 0.150  # the search box waits 150 ms after the last keystroke (debounce)
            )
            browser.evaluate(
                "var e = document.getElementById('f-q'); e.value = ''; "
                "e.dispatchEvent(new Event('input'))"
            )
            browser.evaluate(
                "var e = document.getElementById('f-bias'); e.value = ''; "
                "e.dispatchEvent(new Event('change'))"
            )
            browser.wait_for(READY)
            time.sleep(0.3)
            browser.wait_for(READY)
            runs.setdefault("next_page_s", []).append(
                _timed(browser, "document.querySelector('.pager [data-go=\"1\"]').click()", READY)
            )
    return {k: round(statistics.median(v), 3) for k, v in runs.items()} | {"repeats": repeats}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=1831)
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--image-size", type=int, default=64)
    args = parser.parse_args()
    root = Path(args.workdir or tempfile.mkdtemp(prefix="bench-report-"))
    t0 = time.monotonic()
    if not (root / "data/interim/units.parquet").exists():
        build_synthetic_project(root, n_units=args.units, image_size=args.image_size)
    t1 = time.monotonic()
    summary = build_report(ReportParams(), root)
    t2 = time.monotonic()
    report = root / "report"
    sizes = {
        "index_js_kb": round((report / "data/index.js").stat().st_size / 1024, 1),
        "largest_chunk_kb": round(
            max(p.stat().st_size for p in (report / "data").glob("chunk-*.js")) / 1024, 1
        ),
        "report_mb": round(
            sum(p.stat().st_size for p in report.rglob("*") if p.is_file()) / 2**20, 1
        ),
    }
    result = {
        "units": summary["n_units"],
        "thumbnails": summary["n_thumbnails"],
        "synthetic_project_s": round(t1 - t0, 1),
        "report_build_s": round(t2 - t1, 1),
        "build_breakdown_s": summary["seconds"],
        **sizes,
        **measure(report, args.repeats),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
