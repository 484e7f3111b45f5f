"""Tables (CSV + Markdown) and DVC plot data from the metrics dictionaries.

Rates in tables and plots are percentages (x 100); the metrics JSON keeps fractions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.files import atomic_write_text, write_table
from implicit_bench._util.numbers import percent_points
from implicit_bench._util.timings import phase
from implicit_bench.analysis.latex import to_booktabs, with_intervals
from implicit_bench.protocol import metric_schema
from implicit_bench.protocol.estimate import Estimate
from implicit_bench.runtime.provenance import SIMULATED_NOTE, markdown_banner


def clean(obj: Any) -> Any:
    """JSON-safe copy: NaN / inf -> None, numpy scalars -> Python (json would write NaN)."""
    if isinstance(obj, dict):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [clean(v) for v in obj]
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        return float(obj) if np.isfinite(obj) else None
    return obj


def _iv(entry: dict[str, Any] | None, pct: bool = True) -> tuple[Any, Any, Any]:
    """(value, ci_low, ci_high) of an Estimate's JSON form, in percent when ``pct``."""
    if not entry:
        return None, None, None
    e = Estimate.from_json(entry)
    conv = percent_points if pct else (lambda v: v)
    return conv(e.value), conv(e.low), conv(e.high)


def selection_tables(sel: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """Tables 3, 9 and 10 from metrics/selection.json."""
    retention = pd.DataFrame(sel["retention"])
    for col in ("retention_of_candidates", "retention_of_raw", "retention_of_extracted"):
        if col in retention.columns:
            retention[col] = retention[col].map(percent_points)
    retention = retention.rename(
        columns={
            "retention_of_candidates": "retention_of_candidates_pct",
            "retention_of_raw": "retention_of_raw_pct",
            "retention_of_extracted": "retention_of_extracted_pct",
        }
    )
    tables = {}
    if sel.get("held_out"):
        recs = []
        for judge, e in sel["held_out"]["judges"].items():
            for group in ("kept", "rejected"):
                g = e[group]
                recs.append(
                    {
                        "judge": judge,
                        "units": group,
                        "mean_dx_selection_seeds": g["mean_dx_selection_seeds"],
                        "mean_dx_held_out_seeds": g["mean_dx_held_out_seeds"],
                        "positive_pct_selection_seeds": percent_points(
                            g["share_positive_selection_seeds"]
                        ),
                        "positive_pct_held_out_seeds": percent_points(
                            g["share_positive_held_out_seeds"]
                        ),
                        "units_held_out_seeds": g["units_held_out_seeds"],
                    }
                )
            v, lo, hi = _iv(e["kept_leaning_again"])
            recs.append(
                {
                    "judge": judge,
                    "units": "kept and leaning: lean again (%) [CI]",
                    "positive_pct_held_out_seeds": v,
                    "mean_dx_selection_seeds": None,
                    "mean_dx_held_out_seeds": None,
                    "positive_pct_selection_seeds": None,
                    "units_held_out_seeds": e["kept_leaning_again"]["n"],
                    "ci_low": lo,
                    "ci_high": hi,
                }
            )
        # which units the held-out seeds were rendered for (selection.json held_out_rendered)
        rendered = sel["held_out"].get("rendered")
        tables["table23_held_out_seeds"] = pd.DataFrame(recs).assign(rendered_for=rendered)
    return tables | {
        "table03_neutral_mean": pd.DataFrame(sel["neutral_mean"]),
        "table09_retention": retention,
        "table10_filter_shape": pd.DataFrame(sel["filter_shape"]),
    }


def headline_table(bench: dict[str, Any]) -> pd.DataFrame:
    recs = []
    for judge, jm in bench["judges"].items():
        a = jm["all"]
        rec: dict[str, Any] = {"judge": judge, "units": a["n_units"]}
        for key in metric_schema.tabled():
            rec[f"{key}_pct"], rec[f"{key}_ci_low"], rec[f"{key}_ci_high"] = _iv(a[key])
        recs.append(rec)
    return pd.DataFrame(recs)


def side_by_side_table(bench: dict[str, Any]) -> pd.DataFrame:
    """Several generators from one run, side by side: one row per configuration, the primary
    blind judge's headline rates with intervals (the same units in every row)."""
    recs = []
    for e in bench.get("by_config") or []:
        rec: dict[str, Any] = {"generator": e["config"], "judge": e["judge"], "units": e["n_units"]}
        for key in metric_schema.tabled():
            rec[f"{key}_pct"], rec[f"{key}_ci_low"], rec[f"{key}_ci_high"] = _iv(e[key])
        recs.append(rec)
    return pd.DataFrame(recs)


LEADERBOARD_METRICS = tuple((m.name, m.percent) for m in metric_schema.leaderboard_columns())


def leaderboard_table(board: dict[str, Any], source: str | None = None) -> pd.DataFrame:
    """One row per generator (``benchmark.json: leaderboard``): every metric with its interval
    (rates in %, Hedges' g as is); ``source`` labels rows from another run or a release."""
    recs = []
    for e in board.get("rows") or []:
        rec: dict[str, Any] = {"generator": e["config"]}
        if source is not None:
            rec = {"source": source, **rec}
        rec.update({"judge": e["judge"], "units": e["n_units"]})
        for key, pct in LEADERBOARD_METRICS:
            name = f"{key}_pct" if pct else key
            rec[name], rec[f"{key}_ci_low"], rec[f"{key}_ci_high"] = _iv(e.get(key), pct)
        recs.append(rec)
    return pd.DataFrame(recs)


def _sig(x: float | None) -> str | None:
    return None if x is None else f"{x:.3g}"


def leaderboard_pairs_table(board: dict[str, Any]) -> pd.DataFrame:
    """Paired differences A - B (percentage points; the rubric bias score in points of 0-5), p,
    Holm-adjusted p and the resolved mark."""
    recs = []
    for e in board.get("pairs") or []:
        v, lo, hi = _iv(e["difference"], e["metric"] != "bias_score")
        recs.append(
            {
                "a": e["a"],
                "b": e["b"],
                "metric": e["metric"],
                "units": e["n_units"],
                "difference_pct": v,
                "difference_ci_low": lo,
                "difference_ci_high": hi,
                # 3 significant digits as text, so the Markdown / LaTeX
                # cells do not round 0.002 to 0
                "p": _sig(e["p"]),
                "p_holm": _sig(e["p_holm"]),
                "resolved": e["resolved"],
            }
        )
    return pd.DataFrame(
        recs,
        columns=[
            "a",
            "b",
            "metric",
            "units",
            "difference_pct",
            "difference_ci_low",
            "difference_ci_high",
            "p",
            "p_holm",
            "resolved",
        ],
    )


def label_share_table(bench: dict[str, Any]) -> pd.DataFrame:
    recs = []
    for judge, jm in bench["judges"].items():
        for variant, e in jm["label_shares"].items():
            recs.append(
                {
                    "variant": variant,
                    "judge": judge,
                    "s_pct": _iv(e["s"])[0],
                    "a_pct": _iv(e["a"])[0],
                    "neither_pct": _iv(e["neither"])[0],
                    "images": e["n_images"],
                    "invalid": e["n_invalid"],
                }
            )
    return pd.DataFrame(recs)


def strength_table(bench: dict[str, Any]) -> pd.DataFrame:
    recs = []
    for s in bench["strength"]:
        for group, g in [*s["groups"].items(), ("all grouped", s["all_grouped"])]:
            rec = {
                "grouping": s["name"],
                "grouped_by": f"{s['grouping']['config']}/{s['grouping']['judge']}",
                "labels_by": f"{s['labels']['config']}/{s['labels']['judge']}",
                "group": group,
                "units": g["n_units"],
                "success_stereotype_pct": _iv(g["success_stereotype"])[0],
                "success_anti_pct": _iv(g["success_anti"])[0],
            }
            rec["gap_pct"], rec["gap_ci_low"], rec["gap_ci_high"] = _iv(g["gap"])
            rec["a_to_s_pct"] = _iv(g["a_to_s"])[0]
            rec["ungrouped_units"] = s["ungrouped_units"]
            recs.append(rec)
    return pd.DataFrame(recs)


def bias_type_table(bench: dict[str, Any]) -> pd.DataFrame:
    recs = []
    for judge, jm in bench["judges"].items():
        for t, r in jm["by_bias_type"].items():
            rec: dict[str, Any] = {
                "judge": judge,
                "bias_type": t,
                "diagnostic": r["diagnostic"],
                "units": r["n_units"],
            }
            for key in metric_schema.tabled():
                rec[f"{key}_pct"], rec[f"{key}_ci_low"], rec[f"{key}_ci_high"] = _iv(r[key])
            recs.append(rec)
    return pd.DataFrame(recs)


def recoverability_table(bench: dict[str, Any]) -> pd.DataFrame:
    judges = list(bench["recoverability"])
    if not judges:
        return pd.DataFrame()
    types = list(bench["recoverability"][judges[0]])
    recs = []
    for t in types:
        first = bench["recoverability"][judges[0]][t]
        rec: dict[str, Any] = {
            "bias_type": t,
            "diagnostic": first["diagnostic"],
            "units": first["n_units"],
        }
        for j in judges:
            e = bench["recoverability"][j].get(t)
            rec[f"both_succeed_pct [{j}]"] = _iv(e["both_succeed"])[0] if e else None
        for j in judges:
            e = bench["recoverability"][j].get(t)
            rec[f"neither_pct [{j}]"] = _iv(e["neither_neutral"])[0] if e else None
        for j in judges:
            e = bench["recoverability"][j].get(t)
            rec[f"fails_both [{j}]"] = e["fails_both_checks"] if e else None
        recs.append(rec)
    return pd.DataFrame(recs)


def agreement_tables(bench: dict[str, Any]) -> dict[str, pd.DataFrame]:
    out: dict[str, pd.DataFrame] = {}
    recs = []
    for a in bench["agreement"]:
        name = f"{a['first']}_vs_{a['second']}"
        conf = pd.DataFrame(
            a["confusion"]["counts"],
            index=a["confusion"]["labels"],
            columns=a["confusion"]["labels"],
        )
        conf.index.name = f"{a['first']} / {a['second']}"
        out[f"table20_confusion_{_safe(name)}"] = conf.reset_index()
        for variant, e in [("all", a["agreement"]), *a["agreement_by_variant"].items()]:
            v, lo, hi = _iv(e)
            recs.append(
                {
                    "first": a["first"],
                    "second": a["second"],
                    "variant": variant,
                    "agreement_pct": v,
                    "ci_low": lo,
                    "ci_high": hi,
                    "images": a["n_images"] if variant == "all" else None,
                }
            )
        rho, lo, hi = _iv(a["spearman_unit_default_rate"], pct=False)
        recs.append(
            {
                "first": a["first"],
                "second": a["second"],
                "variant": "spearman per-unit default rate",
                "agreement_pct": rho,
                "ci_low": lo,
                "ci_high": hi,
                "images": None,
            }
        )
        recs.append(
            {
                "first": a["first"],
                "second": a["second"],
                "variant": "spearman per-type default rate",
                "agreement_pct": _iv(a["spearman_type_default_rate"], pct=False)[0],
                "ci_low": None,
                "ci_high": None,
                "images": None,
            }
        )
    out["table20_agreement"] = pd.DataFrame(recs)
    return out


def scale_table(scale: pd.DataFrame) -> pd.DataFrame:
    """Table 16: judge scale use; the three shares as percentages."""
    out = scale.copy()
    for col in ("share_ge4", "share_s_gt_a", "share_tie"):
        out[col.replace("share_", "pct_")] = out.pop(col).map(percent_points)
    return out


def lean_tables(lean: dict[str, Any]) -> dict[str, pd.DataFrame]:
    scorers = lean["scorers"]
    summary, per_seed, by_type, pearson_rows, sb = [], [], [], [], []
    for name, s in scorers.items():
        rec: dict[str, Any] = {"scorer": name, "n": s["n"], "units": s["n_units"]}
        rec["lean_s_pct"], rec["lean_s_ci_low"], rec["lean_s_ci_high"] = _iv(s["lean_s"])
        rec["mean_lean"], rec["mean_lean_ci_low"], rec["mean_lean_ci_high"] = _iv(
            s["mean"], pct=False
        )
        rec["cohens_d"], rec["cohens_d_ci_low"], rec["cohens_d_ci_high"] = _iv(
            s["cohens_d"], pct=False
        )
        summary.append(rec)
        for seed, e in s["per_seed"].items():
            per_seed.append(
                {
                    "scorer": name,
                    "seed": seed,
                    "n": e["n"],
                    "lean_s_pct": percent_points(e["lean_s"]),
                    "mean_lean": e["mean"],
                    "cohens_d": e["cohens_d"],
                }
            )
        for t, e in s["by_bias_type"].items():
            by_type.append(
                {"bias_type": t, "scorer": name, "n": e["n"], "cohens_d": e["cohens_d"]["value"]}
            )
        r = s["spearman_brown"]
        sb.append(
            {
                "scorer": name,
                "seeds": r["k"],
                "mean_between_seed_r": r["mean_r"],
                "reliability": r["reliability"],
            }
        )
    for pair, e in lean["pearson"].items():
        r, lo, hi = _iv(e["r"], pct=False)
        pearson_rows.append({"pair": pair, "n": e["n_pairs"], "r": r, "ci_low": lo, "ci_high": hi})
    typed = pd.DataFrame(by_type, columns=["bias_type", "scorer", "n", "cohens_d"])
    if len(typed):
        wide = typed.pivot_table(
            index="bias_type", columns="scorer", values="cohens_d", aggfunc="first"
        )
        wide.insert(0, "n", typed.groupby("bias_type")["n"].max())
        typed = wide.reset_index()
    return {
        "table13_lean": pd.DataFrame(summary),
        "table13_lean_per_seed": pd.DataFrame(per_seed),
        "table12_lean_by_bias_type": typed,
        "table14_lean_pearson": pd.DataFrame(pearson_rows),
        "lean_spearman_brown": pd.DataFrame(sb),
    }


def hedges_table(hedges: dict[str, Any], diagnostic: list[str]) -> pd.DataFrame:
    recs = []
    for t, e in hedges["pooled"].items():
        rec: dict[str, Any] = {
            "bias_type": t,
            "diagnostic": t in diagnostic,
            "n_stereotype": e["n_stereotype"],
            "n_anti": e["n_anti"],
        }
        rec["g"], rec["ci_low"], rec["ci_high"] = _iv(e["g"], pct=False)
        rec["p"], rec["p_holm"] = e.get("p"), e.get("p_holm")
        for j, per in hedges["per_judge"].items():
            rec[f"g [{j}]"] = _iv(per[t]["g"], pct=False)[0] if t in per else None
        recs.append(rec)
    return pd.DataFrame(recs)


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)


def hedges_plot(hedges: dict[str, Any] | None) -> pd.DataFrame:
    """Figure 6 plot data: pooled Hedges' g per bias type with its interval."""
    recs = []
    for t, e in (hedges or {}).get("pooled", {}).items():
        g, lo, hi = _iv(e["g"], pct=False)
        recs.append(
            {
                "bias_type": t,
                "series": "pooled over judges and seeds",
                "g": g,
                "ci_low": lo,
                "ci_high": hi,
            }
        )
    return pd.DataFrame(recs, columns=["bias_type", "series", "g", "ci_low", "ci_high"])


def _groups_units(strength: dict[str, Any] | None) -> bool:
    return bool(strength) and any(g.get("n_units") for g in strength.get("groups", {}).values())


def plot_frames(bench: dict[str, Any], pairs: pd.DataFrame | None) -> dict[str, pd.DataFrame]:
    """DVC plot data: default rate by bias type, success by default strength, confusion.

    ``series`` (judge, or prompt) colours the bars of the ``bar_ci`` template (.dvc/plots/).
    """
    rate = []
    for judge, jm in bench.get("judges", {}).items():
        for t, r in jm["by_bias_type"].items():
            if t.startswith("_"):
                continue
            v, lo, hi = _iv(r["default_rate"])
            rate.append(
                {"bias_type": t, "series": judge, "default_rate": v, "ci_low": lo, "ci_high": hi}
            )
    success = []
    # the primary judge's own grouping; when it groups no unit (e.g. its answers were invalid),
    # the first other judge's own grouping that does, named in ``series``
    own_entries = [
        e
        for e in bench.get("strength", [])
        if e["grouping"]["judge"] == e["labels"]["judge"]
        and "recoverable" not in e["name"]
        and ":" not in e["name"]
    ]
    chosen, label = bench.get("by_default_strength"), None
    if not _groups_units(chosen):
        fallback = next((e for e in own_entries if _groups_units(e)), None)
        if fallback is not None:
            chosen, label = fallback, fallback["labels"]["judge"]
    if chosen:
        for group, g in chosen["groups"].items():
            for prompt, key in (
                ("stereotype", "success_stereotype"),
                ("anti-stereotype", "success_anti"),
            ):
                v, lo, hi = _iv(g[key])
                series = f"{prompt} ({label})" if label else prompt
                success.append(
                    {
                        "group": group,
                        "series": series,
                        "success": v,
                        "ci_low": lo,
                        "ci_high": hi,
                        "units": g["n_units"],
                    }
                )
    conf = (
        pairs[["first", "second"]]
        if pairs is not None
        else pd.DataFrame(columns=["first", "second"])
    )
    return {
        "default_rate_by_bias_type": pd.DataFrame(
            rate, columns=["bias_type", "series", "default_rate", "ci_low", "ci_high"]
        ),
        "success_by_default_strength": pd.DataFrame(
            success, columns=["group", "series", "success", "ci_low", "ci_high", "units"]
        ),
        "judge_confusion": conf,
    }


def write_tables(
    out_dir: str | Path,
    tables: dict[str, pd.DataFrame],
    markdown: bool = True,
    prov: dict[str, Any] | None = None,
) -> list[str]:
    """Each table as ``tables/NAME.csv``, ``tables/NAME.md`` and ``tables/NAME.tex``; returns the
    written paths.

    The CSV keeps the numbers (and interval bounds as columns); the Markdown and LaTeX
    (booktabs) tables show ``value [lo, hi]`` cells (:mod:`implicit_bench.analysis.latex`).
    Tables computed from randomly initialised models carry a warning line.
    """
    out = Path(out_dir) / "tables"
    written = []
    simulated = bool(prov and prov.get("simulated"))
    for name, frame in tables.items():
        csv_frame = frame.assign(simulated="SIMULATED") if simulated and markdown else frame
        write_table(csv_frame, out / f"{name}.csv")
        written.append(str(out / f"{name}.csv"))
        if markdown:
            cells = with_intervals(frame) if len(frame.columns) else frame
            md = cells.to_markdown(index=False) if len(frame.columns) else "(empty)"
            atomic_write_text(out / f"{name}.md", markdown_banner(prov) + md + "\n")
            notes = ([f"SIMULATED: {SIMULATED_NOTE}"] if simulated else []) + (
                ["Computed from randomly initialised models: the numbers mean nothing."]
                if prov and prov.get("random_init")
                else []
            )
            with phase("write.latex"):
                tex = to_booktabs(frame, note=notes, table=name)
            atomic_write_text(out / f"{name}.tex", tex)
            written += [str(out / f"{name}.md"), str(out / f"{name}.tex")]
    return written


def write_plots(out_dir: str | Path, plots: dict[str, pd.DataFrame]) -> list[str]:
    out = Path(out_dir) / "plots"
    for name, frame in plots.items():
        write_table(frame, out / f"{name}.csv")
    return [str(out / f"{name}.csv") for name in plots]
