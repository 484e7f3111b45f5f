"""Summary page: headline metrics with intervals, per bias type, plots (inline SVG).

Metrics JSON are rendered by shape, not by a fixed schema, so that a stage can add keys
without breaking the report: a number, or an ``Estimate`` (``{"value", "ci", "n", "level"}``,
the one form every producer writes, docs/metrics.md), is a metric; an object whose keys are
bias types becomes a table with the four diagnostic types apart; other objects become tables
or nested sections.
"""

from __future__ import annotations

import io
import json
import math
import textwrap
from typing import Any

import pandas as pd

from implicit_bench.errors import ConfigError
from implicit_bench.protocol import metric_schema
from implicit_bench.protocol.benchmark_file import BenchmarkFile
from implicit_bench.protocol.estimate import Estimate, is_estimate
from implicit_bench.protocol.schema import BIAS_TYPES, BLIND_LABELS, DIAGNOSTIC_BIAS_TYPES
from implicit_bench.report.markup import esc, is_number, show

PREFERRED_Y = ("rate", "share", "success", "value", "mean", "score", "gap", "lean", "delta", "ds")
SKIP_KEYS = ("provenance",)
# fractions shown as percentages (as in tables/*): the headline rates and their per-type rows
RATE_KEYS = frozenset(
    {m.name for m in metric_schema.blind_rates()}
    | {"share", *BLIND_LABELS, "success_s", "success_a"}
)


def as_metric(value: Any) -> tuple[float | None, tuple[float, float] | None, dict[str, Any]] | None:
    """(point, interval, {"n": n}) if ``value`` is a number or an ``Estimate``, else None.

    An undefined estimate (``value`` null, e.g. no valid label) is a metric shown as "–".
    An Estimate's four keys holding something else (``value`` a string) and an integer beyond
    float range are not metrics: shown as they are, escaped."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:
            return None
        return (None if math.isnan(number) else number), None, {}
    if not is_estimate(value):
        return None
    try:
        e = Estimate.from_json(value)
    except ConfigError:
        return None
    return e.value, e.ci, ({"n": e.n} if e.n is not None else {})


def _value(entry: Any) -> float | None:
    """The point value of a number or an Estimate's JSON form (None when absent or neither:
    human_eval.json's ``r`` may be a plain number, protocol/human_eval_file.py)."""
    parts = as_metric(entry)
    return None if parts is None else parts[0]


def _is_num(x: Any) -> bool:
    return (
        isinstance(x, int | float)
        and not isinstance(x, bool)
        and not (isinstance(x, float) and math.isnan(x))
    )


def fmt_num(x: Any) -> str:
    """A number as HTML text: integers with thousands separators, else 3 decimals (1 from
    100 on); "–" for None / NaN; anything else escaped as text (:func:`markup.show`)."""
    if not is_number(x) or (isinstance(x, float) and math.isnan(x)):
        return show(x)
    if abs(x) >= 1 and (isinstance(x, int) or x.is_integer()):
        return show(int(x), ",")
    return show(x, ".3f" if abs(x) < 100 else ",.1f")


def fmt_pct(x: Any) -> str:
    """A fraction as a percentage with 1 decimal ("–" for None / NaN), escaped."""
    return show(x, ".1f", scale=100.0)


def not_estimable_reason(
    value: Any, point: float | None, ci: tuple[float, float] | None
) -> str | None:
    """Why a quantity is not shown as a finding: the estimate's own ``reason`` (or ``note``) when
    it has no value, or a degenerate interval (every bootstrap resample gives the point value:
    the quantity is fixed by construction, e.g. a "0 of 3" group's default rate, or cannot vary,
    e.g. CLIP's "neither" share). None when the estimate is a finding."""
    if isinstance(value, dict) and point is None:
        reason = value.get("reason") or value.get("note")
        if reason:
            return str(reason)
    if point is not None and ci is not None and ci[0] == ci[1] == point:
        return f"degenerate: every bootstrap resample gives {fmt_num(point)}"
    return None


def fmt_metric(value: Any, extras: bool = True, pct: bool = False) -> str:
    """A metric as text with its interval; ``pct``: a fraction shown as a percentage
    ("52.0% [40.1, 60.3]"), as in tables/*."""
    if isinstance(value, int) and not isinstance(value, bool) and not pct:
        return f'<span class="v">{show(value, ",")}</span>'
    if (
        isinstance(value, dict)
        and value.get("value") is None
        and (value.get("reason") or value.get("note"))
    ):
        return (
            '<span class="v na">n/a</span> '
            '<span class="why">('
            f"{esc(value.get('reason') or value.get('note'))})</span>"
        )
    metric = as_metric(value)
    if metric is None:
        if isinstance(value, list | dict):
            return f"<code>{esc(json.dumps(value)[:200])}</code>"
        return esc("–" if value is None else value)
    point, ci, others = metric
    num = fmt_pct if pct else fmt_num
    why = not_estimable_reason(value, point, ci)
    if why:
        return f'<span class="v na">n/a</span> <span class="why">({esc(why)})</span>'
    text = f'<span class="v">{num(point)}{"%" if pct and point is not None else ""}</span>'
    if ci is not None:
        text += f' <span class="ci">[{num(ci[0])}, {num(ci[1])}]</span>'
    shown = (
        [f"{k}={v}" for k, v in others.items() if k in ("n", "n_units", "n_images")]
        if extras
        else []
    )
    if shown:
        text += f' <span class="n">{esc(", ".join(shown))}</span>'
    return text


def _leaves(value: Any, prefix: str = "", depth: int = 0) -> dict[str, Any]:
    """Flatten nested objects down to metrics / scalars: {"a / b": leaf}."""
    if as_metric(value) is not None or not isinstance(value, dict) or depth > 2:
        return {prefix or "value": value}
    out: dict[str, Any] = {}
    for key, sub in value.items():
        if key in SKIP_KEYS:
            continue
        out.update(_leaves(sub, f"{prefix} / {key}" if prefix else str(key), depth + 1))
    return out


def _is_bias_keyed(value: dict) -> bool:
    keys = [k for k in value if k not in SKIP_KEYS]
    return bool(keys) and sum(k in BIAS_TYPES for k in keys) >= max(1, len(keys) - 2)


def _is_interval(value: Any) -> bool:
    metric = as_metric(value)
    return metric is not None and metric[1] is not None


def render_table(rows: dict[str, Any], caption: str = "", focus: bool = False) -> str:
    """Rows keyed by name; bias-type rows ordered with the diagnostic types apart (a row's own
    ``diagnostic`` flag first, else schema.DIAGNOSTIC_BIAS_TYPES), pooled rows (keys starting
    with ``_``) last. ``focus`` keeps only the columns holding intervals, plus unit counts."""
    flat = {str(k): _leaves(v) for k, v in rows.items() if k not in SKIP_KEYS}
    columns: list[str] = []
    for leaves in flat.values():
        columns.extend(c for c in leaves if c not in columns)
    if focus:
        kept = [c for c in columns if any(_is_interval(leaves.get(c)) for leaves in flat.values())]
        if kept:
            counts = [c for c in columns if c in ("n_units", "n", "units")]
            columns = counts + kept
    if len(columns) > 16:
        columns = columns[:16]
    names = list(flat)
    body = []
    if _is_bias_keyed(rows):

        def diagnostic(name: str) -> bool:
            own = rows[name].get("diagnostic") if isinstance(rows[name], dict) else None
            return bool(own) if isinstance(own, bool) else name in DIAGNOSTIC_BIAS_TYPES

        pooled = [n for n in names if n.startswith("_")]
        recoverable = [n for n in names if n not in pooled and not diagnostic(n)]
        diag = [n for n in names if n not in pooled and diagnostic(n)]
        groups = [
            ("Recoverable types", recoverable),
            ("Diagnostic types (Table 5: contrasts images rarely show)", diag),
            ("Pooled", pooled),
        ]
    else:
        groups = [("", names)]
    for title, group in groups:
        if not group:
            continue
        if title:
            body.append(
                f'<tr class="group"><th colspan="{len(columns) + 1}">{esc(title)}</th></tr>'
            )
        for name in group:
            cells = "".join(
                f"<td>{fmt_metric(flat[name].get(c), extras=False, pct=_is_rate(c))}</td>"
                for c in columns
            )
            body.append(
                "<tr>"
                "<th>"
                f"{esc(name.lstrip('_').replace('_', ' ') if name.startswith('_') else name)}"
                f"</th>{cells}</tr>"
            )
    head = "".join(
        f"<th>{esc(c.replace('_', ' '))}{' (%)' if _is_rate(c) else ''}</th>" for c in columns
    )
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return (
        f'<table class="metrics">{cap}<thead><tr><th></th>{head}</tr>'
        f"</thead><tbody>{''.join(body)}</tbody></table>"
    )


def _is_rate(column: str) -> bool:
    return column.split(".")[-1] in RATE_KEYS


def render_value(name: str, value: Any, depth: int = 0) -> str:
    """One key of a metrics file, by shape."""
    if as_metric(value) is not None or not isinstance(value, dict | list):
        return f'<div class="kv"><span class="k">{esc(name)}</span> {fmt_metric(value)}</div>'
    if isinstance(value, list):
        return (
            f"<details><summary>{esc(name)} ({len(value)} items)</summary>"
            f"<pre>{esc(json.dumps(value, indent=1)[:20000])}</pre></details>"
        )
    if all(as_metric(v) is not None or not isinstance(v, dict | list) for v in value.values()):
        items = "".join(
            f'<div class="kv"><span class="k">{esc(k)}</span> {fmt_metric(v)}</div>'
            for k, v in value.items()
        )
        return f'<div class="group"><h4>{esc(name)}</h4>{items}</div>'
    if all(isinstance(v, dict) for v in value.values()) and depth < 2:
        return f"<h4>{esc(name)}</h4>" + render_table(value)
    parts = [render_value(k, v, depth + 1) for k, v in value.items() if k not in SKIP_KEYS]
    return f'<div class="group"><h4>{esc(name)}</h4>{"".join(parts)}</div>'


CONTEXT_KEYS = (
    "config",
    "primary_judge",
    "blind_judges",
    "judges",
    "units",
    "n_units",
    "seeds",
    "n_seeds",
)


def headline_cards(benchmark: BenchmarkFile | None) -> str:
    """The run's context line and one card per headline metric (``metric_schema.headline()``);
    each card's value is the Estimate the contract guarantees (``protocol.benchmark_file``)."""
    if benchmark is None or not benchmark.model_fields_set:
        return (
            '<p class="na">Benchmark metrics: not available '
            "(metrics/benchmark.json; run the <code>evaluate</code> stage).</p>"
        )
    context = [
        f"{esc(k)}: <b>{esc(', '.join(map(str, v)) if isinstance(v, list) else v)}</b>"
        for k in CONTEXT_KEYS
        if isinstance((v := getattr(benchmark, k, None)), str | int | list)
        and not isinstance(v, bool)
        and (not isinstance(v, list) or len(v) <= 12)
    ]
    cards = [f'<p class="small" id="headline-context">{" · ".join(context)}</p>'] if context else []
    table4_row = benchmark.has("blind_judges") and not benchmark.blind_judges
    if table4_row and all(benchmark.rate(k) is None for k in metric_schema.headline()):
        # a Table 4 row (run --tables 4) asks no blind question
        none = (
            '<p class="na" id="headline-none">No blind question was asked (a Table 4 row: '
            "<code>--tables 4</code>), so the default rate, the success rates and the gap are "
            "not measured; the row's bias score and alignment are in the leaderboard below.</p>"
        )
        return "".join([*cards, none])
    for key in metric_schema.headline():
        title = metric_schema.metric(key).title
        if not benchmark.has(key):
            cards.append(
                f'<div class="card"><h3>{esc(title)}</h3><p class="na">not available</p></div>'
            )
            continue
        value = benchmark.rate(key)  # an Estimate's JSON form or null
        inner = f"<p>{esc(value)}</p>" if value is None else f"<p>{fmt_metric(value, pct=True)}</p>"
        cards.append(f'<div class="card"><h3>{esc(title)}</h3>{inner}</div>')
    intro = cards.pop(0) if context else ""
    return f'{intro}<div class="cards">{"".join(cards)}</div>'


def render_metrics_file(name: str, payload: Any) -> str:
    if not isinstance(payload, dict):
        return f"<pre>{esc(json.dumps(payload, indent=1)[:20000])}</pre>"
    parts = []
    prov = payload.get("provenance")
    if isinstance(prov, dict) and prov.get("random_init"):
        parts.append(f'<p class="warn small">{esc(prov.get("warning", "random_init: true"))}</p>')
    for key, value in payload.items():
        if key in SKIP_KEYS:
            continue
        if key == "by_bias_type" and isinstance(value, dict):
            parts.append("<h4>by bias type</h4>" + render_table(value))
        else:
            parts.append(render_value(key, value))
    return "".join(parts)


# ----- debiasing -----------------------------------------------------------------------------
DEBIAS_COLUMNS = (
    ("method", "method"),
    ("info", "KG unit"),
    ("bias", "bias"),
    ("align", "alignment (%)"),
    ("S", "S"),
    ("dS", "ΔS [95% CI]"),
    ("n_units", "units"),
    ("n_images", "images"),
    ("n_invalid_rubric", "invalid rubric"),
    ("n_invalid_alignment", "invalid alignment"),
)


def render_debias(d: dict[str, Any]) -> str:
    """Table 7 from metrics/debias.json: one row per configuration (the unmodified baseline
    first), dS with its paired-bootstrap interval; the settings above; the full file folded."""
    configs = d.get("configs") or {}
    baseline = d.get("unmodified")
    names = sorted(configs, key=lambda n: (n != baseline, str(configs[n].get("exp", "")), n))
    settings = [
        f"{esc(k.replace('_', ' '))}: <b>{esc(d[k])}</b>"
        for k in ("rubric_judge", "alignment_judge", "alpha", "seeds")
        if d.get(k) is not None
    ]
    parts = []
    prov = d.get("provenance")
    if isinstance(prov, dict) and prov.get("warning"):
        parts.append(f'<p class="warn small">{esc(prov["warning"])}</p>')
    if settings:
        parts.append(
            f'<p class="small">{" · ".join(settings)}; baseline: <b>{esc(baseline)}</b></p>'
        )
    if d.get("note"):
        parts.append(f'<p class="small">{esc(d["note"])}</p>')
    if not configs:
        return "".join(parts) + '<p class="na">no configurations</p>'
    head = "<th>configuration</th>" + "".join(
        f"<th>{esc(label)}</th>" for _, label in DEBIAS_COLUMNS
    )
    rows = []
    for name in names:
        c = configs[name]
        cells = []
        for key, _ in DEBIAS_COLUMNS:
            v = c.get(key)
            if (
                key == "dS" or isinstance(v, int | float) and not isinstance(v, bool)
            ):  # an Estimate (null for the baseline)
                text = fmt_metric(v, extras=False)
            else:
                text = esc("–" if v is None else v)
            cells.append(f"<td>{text}</td>")
        cls = ' class="baseline"' if name == baseline else ""
        rows.append(f"<tr{cls}><th>{esc(name)}</th>{''.join(cells)}</tr>")
    parts.append(
        '<div class="scroll"><table class="metrics debias">'
        "<caption>Debiasing configurations (paper Table 7): "
        "bias (rubric, lower is better), alignment with the original "
        "prompt, composite S and its change ΔS "
        f"against the baseline</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
    parts.append(
        "<details><summary>metrics/debias.json"
        f"</summary>{render_metrics_file('debias', d)}</details>"
    )
    return "".join(parts)


# ----- plots ----------------------------------------------------------------------------------
def _ci_columns(frame: pd.DataFrame, y: str) -> tuple[str, str] | None:
    cols = set(frame.columns)
    for lo, hi in (
        (f"{y}_ci_low", f"{y}_ci_high"),
        ("ci_low", "ci_high"),
    ):  # the one spelling (analysis.latex)
        if lo in cols and hi in cols:
            return lo, hi
    return None


def render_plot(name: str, frame: pd.DataFrame, spec: dict[str, Any] | None = None) -> str:
    """A plot CSV as inline SVG; an empty CSV or one that cannot be drawn is shown as its
    table with the reason, never an error (a report must build from whatever exists)."""
    if frame.empty:
        return _table_only(name, frame, "no rows")
    try:
        return _render_plot(name, frame, spec)
    except Exception as exc:  # noqa: BLE001 - any drawing failure degrades to the table
        return _table_only(name, frame, f"could not plot ({type(exc).__name__}: {exc})")


def _render_plot(name: str, frame: pd.DataFrame, spec: dict[str, Any] | None = None) -> str:
    """Grouped bars with intervals, a heatmap for confusion-style specs, lines for numeric x."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    spec = spec or {}
    frame = frame.copy()
    numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]
    categorical = [c for c in frame.columns if c not in numeric]
    template = str(spec.get("template", ""))
    x, y = spec.get("x"), spec.get("y")
    if isinstance(y, list):
        y = y[0] if y else None
    title = textwrap.fill(str(spec.get("title") or name), 60)  # long titles wrap, not clip
    fig = None
    try:
        if "confusion" in template and x in frame.columns and y in frame.columns:
            table = pd.crosstab(frame[y], frame[x])
            if table.empty:
                return _table_only(name, frame, "no pairs to count")
            fig, ax = plt.subplots(figsize=(4.5, 3.6))
            ax.imshow(table.values, cmap="Blues")
            ax.set_xticks(range(table.shape[1]), [str(c) for c in table.columns])
            ax.set_yticks(range(table.shape[0]), [str(c) for c in table.index])
            top = max(1, int(table.values.max()))
            for (r, c), v in pd.DataFrame(table.values).stack().items():
                ax.text(
                    c,
                    r,
                    str(v),
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if v > top / 2 else "black",
                )
            ax.set_xlabel(str(x))
            ax.set_ylabel(str(y))
        else:
            if x in numeric and y in categorical:  # horizontal bars: value on x, category on y
                x, y = y, x
            ycol = y if y in numeric else None
            if ycol is None:
                candidates = [c for c in numeric if not _looks_like_bound(c)]
                preferred = [c for c in candidates if any(t in c.lower() for t in PREFERRED_Y)]
                ycol = (preferred or candidates or [None])[0]
            if ycol is None and len(categorical) == 2 and len(frame):
                return _render_plot(
                    name,
                    frame,
                    {**spec, "template": "confusion", "x": categorical[1], "y": categorical[0]},
                )
            if ycol is None:
                return _table_only(name, frame, "no numeric column to plot")
            cat = x if x in categorical else (categorical[0] if categorical else None)
            if cat is None and x in numeric:
                fig, ax = plt.subplots(figsize=(6, 3.2))
                ax.plot(frame[x], frame[ycol], marker="o")
                ax.set_xlabel(str(x))
            elif cat is None:
                fig, ax = plt.subplots(figsize=(6, 3.2))
                ax.plot(range(len(frame)), frame[ycol], marker="o")
            else:
                rest = [c for c in categorical if c != cat]
                hue = None
                if rest:  # every other text column goes into the colour: no row is hidden
                    hue = " / ".join(rest)
                    frame[hue] = frame[rest].astype(str).agg(" / ".join, axis=1)
                fig, ax = _bars(plt, frame, cat, ycol, hue, _ci_columns(frame, ycol))
            ax.set_ylabel(
                str(spec.get("x_label") if spec.get("x") == ycol and spec.get("x_label") else ycol)
            )
        ax.set_title(str(title), fontsize=10)
        fig.tight_layout()
        buf = io.StringIO()
        # text stays text (smaller, searchable); a fixed hash salt and no Date make the SVG a pure
        # function of the data (matplotlib's clip-path ids are
        # random and its metadata dated otherwise)
        with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "implicit-bench"}):
            fig.savefig(
                buf, format="svg", bbox_inches="tight", metadata={"Date": None}
            )  # the title and an outside legend fit
        svg = buf.getvalue()
        svg = svg[svg.find("<svg") :]
    finally:
        if fig is not None:
            plt.close(fig)
    return (
        f'<figure class="plot">{svg}<figcaption>{esc(name)}'
        f"</figcaption>{_data_details(frame)}</figure>"
    )


def _looks_like_bound(col: str) -> bool:
    low = col.lower()
    return low.endswith(("ci_low", "ci_high")) or low == "n"


def _bars(
    plt, frame: pd.DataFrame, cat: str, ycol: str, hue: str | None, ci: tuple[str, str] | None
):
    import numpy as np

    cats = list(dict.fromkeys(frame[cat].astype(str)))
    if cat == "bias_type" or set(cats) <= set(BIAS_TYPES):
        cats = sorted(
            cats,
            key=lambda b: (
                b in DIAGNOSTIC_BIAS_TYPES,
                BIAS_TYPES.index(b) if b in BIAS_TYPES else 99,
            ),
        )
    hues = list(dict.fromkeys(frame[hue].astype(str))) if hue else [None]
    width = 0.8 / len(hues)
    fig, ax = plt.subplots(figsize=(max(5, 0.5 * len(cats) * max(1, len(hues) / 2) + 2), 3.4))
    positions = np.arange(len(cats))
    for h_i, h in enumerate(hues):
        part = frame if h is None else frame[frame[hue].astype(str) == h]
        part = (
            part.assign(_c=part[cat].astype(str))
            .drop_duplicates("_c")
            .set_index("_c")
            .reindex(cats)
        )
        values = part[ycol].to_numpy(dtype=float)
        err = None
        if ci is not None:
            lo, hi = part[ci[0]].to_numpy(dtype=float), part[ci[1]].to_numpy(dtype=float)
            err = np.vstack([np.clip(values - lo, 0, None), np.clip(hi - values, 0, None)])
        ax.bar(
            positions + (h_i - (len(hues) - 1) / 2) * width,
            values,
            width,
            yerr=err,
            capsize=2,
            label=h,
        )
    ax.set_xticks(positions, cats, rotation=35, ha="right", fontsize=8)
    if hue:  # beside the axes, never over the bars
        ax.legend(
            fontsize=7,
            title=hue,
            title_fontsize=7,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            borderaxespad=0.0,
        )
    return fig, ax


def _data_details(frame: pd.DataFrame) -> str:
    return (
        "<details><summary>data"
        "</summary>"
        f"{frame.head(200).to_html(index=False, classes='data', border=0)}"
        "</details>"
    )


def _table_only(name: str, frame: pd.DataFrame, why: str) -> str:
    return (
        f'<figure class="plot"><p class="na">{esc(name)}: {esc(why)}'
        f"</p>{_data_details(frame)}</figure>"
    )


# ----- human evaluation -----------------------------------------------------------------------
def _percent_cell(x: Any) -> str:
    return "–" if not _is_num(x) else f"{show(x, '.1f', scale=100.0)}%"


def render_human_eval(h: dict[str, Any]) -> str:
    """Tables 28-30 of the paper from metrics/human_eval.json, then the full file."""
    kg = h.get("kg_validity", {})
    mr = h.get("mean_rating", {})
    ir = h.get("inter_rater", {})
    judges = sorted(h.get("human_vs_judge", {}))
    rows = [
        (
            "KG validity",
            "% Yes / Unsure / No",
            " / ".join(_percent_cell(kg.get(k)) for k in ("yes", "unsure", "no")),
        ),
        (
            "Image rating (mean, 0-5)",
            "Stereotype / Neutral / Anti-stereotype",
            " / ".join(fmt_num(mr.get(v)) for v in ("stereotype", "neutral", "anti_stereotype")),
        ),
        (
            "Inter-rater agreement",
            "Mean pairwise Pearson r / Krippendorff's alpha (ordinal)",
            f"{fmt_num(ir.get('mean_pairwise_r'))} / {fmt_num(ir.get('alpha_ordinal'))}",
        ),
    ]
    for judge in judges:
        v = h["human_vs_judge"][judge]
        flips = h.get("direction_flips", {}).get(judge, {})
        rows.append(
            (
                f"Human vs. {judge}",
                "Pearson r [95% CI] / MAE / direction flips",
                f"{fmt_metric(v.get('r'))} / {fmt_num(v.get('mae'))} / "
                f"{show(flips.get('flips'))} of {show(flips.get('cases'))} cases",
            )
        )
    excluded = h.get("screening", {}).get("excluded", [])
    head = (
        f'<p class="small">{show(h.get("n_raters"))} raters kept ({len(excluded)} excluded '
        f"by the {esc(h.get('screening', {}).get('rule', ''))} screen at "
        f"{show(h.get('screening', {}).get('threshold'))}), "
        f"{show(h.get('n_cases'))} cases, {show(h.get('n_ratings'))} image ratings.</p>"
    )
    table = "".join(f"<tr><th>{esc(a)}</th><td>{esc(b)}</td><td>{c}</td></tr>" for a, b, c in rows)
    parts = [
        head,
        '<table class="metrics"><thead><tr><th>Aspect</th><th>Metric</th>'
        f"<th>Value</th></tr></thead><tbody>{table}</tbody></table>",
    ]
    by_type = h.get("by_bias_type") or {}
    if by_type:
        cols = "".join(f"<th>r {esc(j)}</th><th>|Δ| {esc(j)}</th>" for j in judges)
        body = []
        named = h.get("groups") or {}
        groups = [
            ("Recoverable types", by_type, [b for b in by_type if b not in DIAGNOSTIC_BIAS_TYPES]),
            ("Diagnostic types", by_type, [b for b in by_type if b in DIAGNOSTIC_BIAS_TYPES]),
            ("Groups", named, list(named)),
        ]
        for title, source, names in groups:
            if not names:
                continue
            body.append(
                f'<tr class="group"><th colspan="{5 + 2 * len(judges)}">{esc(title)}</th></tr>'
            )
            for name in names:
                e = source[name]  # an empty entry of by_bias_type stays its own (no fallback)
                versus = e.get("human_vs_judge") or {}
                cells = "".join(
                    f"<td>{fmt_num(_value((versus.get(j) or {}).get('r')))}"
                    f"</td><td>{fmt_num((versus.get(j) or {}).get('mae'))}"
                    "</td>"
                    for j in judges
                )
                flag = " *" if e.get("directional_only") else ""
                body.append(
                    f"<tr><th>{esc(name)}{flag}</th><td>{show(e.get('cases'))}</td>"
                    f"<td>{show(e.get('images'))}</td>"
                    f"<td>{fmt_num(e.get('mean_pairwise_r'))}</td><td>{fmt_num(e.get('alpha_ordinal'))}</td>{cells}</tr>"
                )
        parts.append(
            '<table class="metrics"><caption>Per bias type (paper Tables '
            "29-30); * directional only (few cases)</caption>"
            "<thead><tr><th></th><th>cases</th><th>images</th>"
            f"<th>inter-rater r̄</th><th>α</th>{cols}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>"
        )
    parts.append(
        "<details><summary>metrics/human_eval.json"
        f"</summary>{render_metrics_file('human_eval', h)}</details>"
    )
    return "".join(parts)
