"""Write the static report site: ``index.html`` (summary), ``units.html`` (unit browser),
``assets/``, ``data/index.js`` + ``data/chunk-NNNN.js`` and ``thumbs/``.

Everything is opened from disk (``file://``) with no network: no CDN, scripts and styles are
files shipped in this package, plots are inline SVG, and data are JavaScript files loaded by
``<script>`` tags (``fetch`` of ``file://`` is blocked by browsers).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from importlib import resources
from pathlib import Path
from typing import Any

from implicit_bench._util.dirswap import check_owned, staged_dir
from implicit_bench._util.files import atomic_write_text, write_json
from implicit_bench.protocol.estimate import Estimate
from implicit_bench.protocol.schema import BLIND_LABELS
from implicit_bench.report.confine import Scope
from implicit_bench.report.corrected import corrected_section
from implicit_bench.report.inputs import ReportInputs, load_inputs
from implicit_bench.report.leaderboard import Run, leaderboard_section
from implicit_bench.report.params import ReportParams
from implicit_bench.report.summary_page import (
    esc,
    headline_cards,
    render_debias,
    render_human_eval,
    render_metrics_file,
    render_plot,
    render_table,
)
from implicit_bench.report.units_data import build_unit_data, make_thumbnails
from implicit_bench.runtime.provenance import RANDOM_INIT_WARNING, SIMULATED_NOTE
from implicit_bench.runtime.runlog import split_run_state

# every file the report writes (relative POSIX paths); a folder holding others is refused
REPORT_FILES = (
    r"index\.html",
    r"units\.html",
    r"report\.json",
    r"assets/(?:app\.js|style\.css|sort\.js)",
    r"data/index\.js",
    r"data/chunk-\d{4,}\.js",
    r"thumbs/[0-9a-f]{2}/[0-9a-f]{32}-\d+q\d+\.jpg",
    r"(?:.*/)?\.[^/]+\.tmp",  # a file of ours half-written when a run was killed
)

CONTENT_WARNING = (
    "Content warning: this report shows prompts and images that deliberately depict social "
    "stereotypes (discrimination and stereotypes about gender, race, religion, profession, age, "
    "disability, sexual orientation, nationality, socioeconomic status and appearance), some of "
    "them offensive. They were constructed to elicit stereotyped depictions so that bias can be "
    "measured. The stereotype and anti-stereotype labels describe associations recorded in "
    "StereoSet and CrowS-Pairs; they do not describe social groups or define a correct "
    "demographic mix. Do not redistribute the prompts or images as a generative-content dataset."
)


def _json(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def _js_data(payload: Any) -> str:
    """Data for a ``.js`` file as ``JSON.parse("...")``: in an object literal a key
    ``__proto__`` would set the prototype (a judge so named vanished from the unit browser);
    JSON.parse makes every key an own property."""
    return f"JSON.parse({json.dumps(_json(payload), ensure_ascii=False)})"


def _page(title: str, body: str, scripts: tuple[str, ...] = ()) -> str:
    tags = "".join(f'<script src="{esc(s)}"></script>' for s in scripts)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title>"
        '<link rel="stylesheet" href="assets/style.css"></head><body>'
        '<header class="top"><h1>IMPLICIT-Bench report</h1><nav><a href="index.html">Summary</a>'
        '<a href="units.html">Unit browser</a></nav></header>'
        f"<main>{body}</main>{tags}</body></html>\n"
    )


def _provenance_html(inputs: ReportInputs) -> str:
    if inputs.random_sources:
        listed = "".join(f"<li>{esc(s)}</li>" for s in inputs.random_sources)
        return (
            '<div class="danger" id="random-init">RANDOMLY INITIALISED '
            f"MODELS. {esc(RANDOM_INIT_WARNING)}"
            f'<ul class="small">{listed}</ul></div>'
        )
    return (
        '<p class="small" id="provenance">Provenance: no input says it '
        "came from randomly initialised models.</p>"
    )


def _is_simulated(payload: Any, depth: int = 0) -> bool:
    if depth > 3 or not isinstance(payload, dict):
        return False
    if payload.get("simulated") is True:
        return True
    return any(_is_simulated(v, depth + 1) for v in payload.values() if isinstance(v, dict))


def simulated_sources(inputs: ReportInputs) -> list[str]:
    """The metrics files that say they were computed from the simulated world."""
    return [
        f"metrics/{name}.json" for name, payload in inputs.metrics.items() if _is_simulated(payload)
    ]


def _simulated_html(inputs: ReportInputs) -> str:
    sources = simulated_sources(inputs)
    if not sources:
        return ""
    listed = ", ".join(esc(s) for s in sources)
    return (
        '<div class="danger" id="simulated">SIMULATED. '
        f'{esc(SIMULATED_NOTE)}<p class="small">{listed}</p></div>'
    )


def recovery_table(recovery: dict[str, Any] | None) -> str:
    """Each estimate beside the planted truth (metrics/recovery.json)."""
    if not recovery or not recovery.get("estimands"):
        return '<p class="na">not available (metrics/recovery.json)</p>'

    def num(x: Any) -> str:
        return "n/a" if x is None else f"{x:.3f}"

    rows = []
    for e in recovery["estimands"]:
        est = Estimate.from_json(e["estimate"])
        ci = est.ci
        covered = {True: "yes", False: "NO", None: "n/a"}[e.get("covered")]
        if est.value is None:
            estimate, interval = "n/a", "n/a"
        else:
            estimate = num(est.value)
            interval = "n/a (one value)" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]"
        rows.append(
            f"<tr><td>{esc(e['group'])}</td><th>{esc(e['estimand'])}</th><td>{num(e.get('truth'))}</td>"
            f"<td>{num(e.get('truth_rendered'))}</td><td>{estimate}</td><td>{interval}</td>"
            f'<td>{covered}</td><td class="small">{esc(e.get("note") or "")}</td></tr>'
        )
    s = recovery.get("summary") or {}
    head = (
        "<tr><th>group</th><th>estimand</th><th>planted truth</th><th>truth (perfect judge)</th>"
        "<th>estimate</th><th>95% interval</th><th>covers truth</th><th>note</th></tr>"
    )
    return (
        f'<p class="small">{s.get("covered", 0)} of '
        f"{s.get('with_interval', 0)} intervals cover the planted "
        f"truth. Truth: {esc(recovery.get('truth', ''))}. n/a: not estimable from this run or not "
        "defined for the row (the note says which); truth "
        "(perfect judge): what the pictures show, "
        f"for the rates a blind judge reads.</p>{calibration_note(recovery.get('calibration'))}"
        f'<table class="recovery" id="recovery">{head}{"".join(rows)}</table>'
    )


def calibration_note(block: dict[str, Any] | None) -> str:
    """One line on the judge-error correction's calibration set (docs/correction.md): the
    corrected rates ("... (corrected)") sit in the table beside the judged ones."""
    if not block:
        return ""
    cond = block.get("condition_number")
    diag = ", ".join(
        f"{c}->{c} {((block.get('matrix') or {}).get(c) or {}).get(c, {}).get('value') or 0:.3f}"
        for c in BLIND_LABELS
    )
    warn = f" <strong>{esc(block['warning'])}</strong>" if block.get("warning") else ""
    return (
        '<p class="small" id="calibration">Judge-error correction '
        f"({esc(block.get('judge', ''))}): "
        f"{block.get('items', 0)} calibration images answered by the simulated human rater (error "
        f"{block.get('rater_error', 0)}); misclassification matrix "
        f"diagonal {esc(diag)}; condition number "
        f'{"–" if cond is None else f"{cond:.2f}"}. Rows "(corrected)" '
        "are corrected for the judge's errors and "
        f"compared with the rendered truth.{warn}</p>"
    )


def _inputs_table(inputs: ReportInputs) -> str:
    na = ' class="na"'
    rows = "".join(
        f"<tr><th>{esc(k)}</th><td{na if v.startswith('not available') else ''}>{esc(v)}</td></tr>"
        for k, v in inputs.available.items()
    )
    return f'<table class="inputs">{rows}</table>'


def summary_page(
    inputs: ReportInputs, others: list[Run] | None = None, label: str = "this run"
) -> str:
    """The summary page; no build time in it (the report is a DVC output: a pure function of
    its inputs; run times go to the run log, implicit_bench.runtime.runlog). ``others``: runs or
    imported releases whose generators join the leaderboard, labelled with their source."""
    parts = [
        f'<div class="warn" id="content-warning"><b>{esc(CONTENT_WARNING)}</b></div>',
        _simulated_html(inputs),
        _provenance_html(inputs),
    ]
    n_units = len(inputs.units) if inputs.units is not None else 0
    parts.append(
        "<p>Built from the pipeline outputs below. "
        f'<a href="units.html">Browse the {n_units:,} units</a> '
        "with their images and judgements.</p>"
    )
    parts.append("<h2>Headline metrics</h2>")
    parts.append(headline_cards(inputs.benchmark))
    parts.append(corrected_section(inputs.benchmark))
    this = Run(label, inputs.metrics.get("benchmark"), bool(simulated_sources(inputs)))
    parts.append(leaderboard_section([this, *(others or [])]))
    if inputs.metrics.get("recovery", {}).get("simulated"):
        parts.append("<h2>Truth beside estimates (simulated world)</h2>")
        parts.append(recovery_table(inputs.metrics.get("recovery")))
    by_type = inputs.benchmark.by_bias_type if inputs.benchmark else None
    parts.append("<h2>Per bias type</h2>")
    if by_type is not None:
        parts.append(
            '<p class="small">The four diagnostic types '
            "(socioeconomic, disability, sexual orientation, "
            "nationality) are reported apart: images rarely show "
            "their contrasts, so a low default rate "
            "there does not show that the model avoids the stereotype (paper Section 4.2).</p>"
        )
        parts.append(render_table(by_type, focus=True))
    else:
        parts.append('<p class="na">not available (metrics/benchmark.json: by_bias_type)</p>')
    parts.append("<h2>Debiasing</h2>")
    debias = inputs.metrics.get("debias")
    parts.append(
        render_debias(debias) if debias else '<p class="na">not available (metrics/debias.json)</p>'
    )
    parts.append("<h2>Plots</h2>")
    if inputs.plots:
        parts.extend(
            render_plot(name, frame, inputs.plot_specs.get(name))
            for name, frame in inputs.plots.items()
        )
    else:
        parts.append('<p class="na">not available (plots/*.csv)</p>')
    parts.append("<h2>Human evaluation</h2>")
    human = inputs.metrics.get("human_eval")
    parts.append(
        render_human_eval(human)
        if human
        else '<p class="na">not available (metrics/human_eval.json; see docs/human-eval.md)</p>'
    )
    parts.append("<h2>All metrics</h2>")
    for name, payload in inputs.metrics.items():
        if name in ("debias", "human_eval"):
            continue
        parts.append(
            f'<section class="metricsfile"><details{" open" if name == "benchmark" else ""}>'
            f"<summary><b>metrics/{esc(name)}.json</b>"
            f"</summary>{render_metrics_file(name, payload)}</details>"
            "</section>"
        )
    parts.append("<h2>Inputs</h2>" + _inputs_table(inputs))
    return _page("IMPLICIT-Bench report", "".join(parts), scripts=("assets/sort.js",))


def units_page(inputs: ReportInputs) -> str:
    body = (
        f'<div class="warn small" id="content-warning">{esc(CONTENT_WARNING)}</div>'
        + _simulated_html(inputs)
        + (_provenance_html(inputs) if inputs.random_sources else "")
        + '<div id="controls" class="controls"></div><div class="pager"></div><div id="units">'
        '<p class="na">Loading…</p></div><div class="pager"></div>'
        '<noscript><p class="danger">The unit browser needs '
        "JavaScript (no network is used).</p></noscript>"
    )
    return _page("IMPLICIT-Bench units", body, scripts=("data/index.js", "assets/app.js"))


def build_report(
    params: ReportParams,
    root: str | Path = ".",
    others: list[Run] | None = None,
    label: str = "this run",
    scope: Scope | None = None,
) -> dict[str, Any]:
    """Build the site under ``root / params.out``; return a small summary of what was built.
    ``others`` join the leaderboard beside this run (``label``): ``implicit-bench report``;
    ``scope``: the folder it was given, out of which nothing is read (``report.confine``)."""
    t0 = time.perf_counter()
    root = Path(root)
    target = root / params.out
    inputs = load_inputs(params, root, scope)
    check_owned(target, REPORT_FILES, "the report")
    with staged_dir(target) as out:
        summary = _build_into(out, target, inputs, params, t0, others, label)
    return summary


def _build_into(
    out: Path,
    previous: Path,
    inputs: ReportInputs,
    params: ReportParams,
    t0: float,
    others: list[Run] | None = None,
    label: str = "this run",
) -> dict[str, Any]:
    """Write the site into the fresh folder ``out`` (thumbnails of ``previous`` reused)."""
    _reuse_thumbs(previous, out)
    (out / "data").mkdir()
    (out / "assets").mkdir()
    assets = resources.files("implicit_bench.report") / "assets"
    for name in ("app.js", "style.css", "sort.js"):
        (out / "assets" / name).write_bytes((assets / name).read_bytes())

    unit_ids = set(inputs.units["unit_id"]) if inputs.units is not None else set()
    t1 = time.perf_counter()
    thumbs = make_thumbnails(inputs, out, params, unit_ids)
    _prune_thumbs(out, set(thumbs.values()))
    t2 = time.perf_counter()
    index, records = build_unit_data(inputs, params, thumbs)
    atomic_write_text(out / "data/index.js", f"window.IB_INDEX = {_js_data(index)};\n")
    for chunk in range(index["meta"].get("n_chunks", 0)):
        part = records[chunk * params.chunk_size : (chunk + 1) * params.chunk_size]
        payload = _js_data({r["id"]: r for r in part})
        atomic_write_text(out / f"data/chunk-{chunk:04d}.js", f"IB.addChunk({chunk}, {payload});\n")
    atomic_write_text(out / "index.html", summary_page(inputs, others, label))
    atomic_write_text(out / "units.html", units_page(inputs))
    t3 = time.perf_counter()
    summary = {
        "n_units": index["meta"].get("n_units", 0),
        "n_thumbnails": len(thumbs),
        "n_chunks": index["meta"].get("n_chunks", 0),
        "random_init": bool(inputs.random_sources),
        "random_sources": inputs.random_sources,
        "simulated": bool(simulated_sources(inputs)),
        "inputs": inputs.available,
        "seconds": {
            "inputs": round(t1 - t0, 2),
            "thumbnails": round(t2 - t1, 2),
            "pages": round(t3 - t2, 2),
        },
    }
    tracked, _ = split_run_state(summary)
    write_json(out / "report.json", tracked)  # the seconds go to the run log (stages/report.py)
    return summary


def _reuse_thumbs(previous: Path, out: Path) -> None:
    """Hard-link (or copy) the previous report's thumbnails into the new folder."""
    base = previous / "thumbs"
    if not base.is_dir() or base.is_symlink():
        return
    for path in base.glob("*/*.jpg"):
        if path.is_symlink() or not path.is_file():
            continue
        dest = out / path.relative_to(previous)
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, dest)
        except OSError:
            shutil.copyfile(path, dest)


def _prune_thumbs(out: Path, keep: set[str]) -> None:
    base = out / "thumbs"
    if not base.is_dir():
        return
    for path in base.glob("*/*.jpg"):
        if path.relative_to(out).as_posix() not in keep:
            path.unlink()
