"""``metrics/summary.json``: the headline numbers of a run, small enough for ``dvc metrics show``.

DVC declares only this file as ``metrics:``; the detail files (``metrics/benchmark.json`` and
the other stage metrics) are plain ``outs`` (docs/metrics.md). Every value is a number, a bool
or a short string; percentages end in ``_pct`` (0-100, like the tables), interval bounds in
``_lo`` / ``_hi``; a value that a run does not define is null. ``MAX_VALUES`` bounds the size.
The file's contract (what its readers may rely on) is ``protocol.summary_file``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from implicit_bench._util.nested import dig
from implicit_bench._util.numbers import percent_points, real_number
from implicit_bench.protocol import metric_schema
from implicit_bench.protocol.estimate import Estimate, read_estimate
from implicit_bench.protocol.summary_file import MAX_VALUES

#: detail metrics files the summary reads (missing ones give nulls)
SOURCES = (
    "kg",
    "triplets",
    "render",
    "benchmark",
    "lean",
    "judge_audit",
    "negation",
    "debias",
    "recovery",
)
#: recovery.json's group of judge-corrected rates on the benchmark's (selected) units
CORRECTED_GROUP = "benchmark corrected for judge error (selected units, primary blind judge)"
#: ``corrected_source`` when the corrected rates come from benchmark.json's ``corrected`` block
BENCHMARK_SOURCE = "benchmark.json (calibration table)"


def _percent(x: Any) -> float | None:
    """A headline share in percent points, two decimals (None unless a real number)."""
    return percent_points(real_number(x), 2)


def _value(entry: Any) -> float | None:
    """The point value of an Estimate's JSON form (docs/metrics.md) or of a plain number (a
    statistic reported without an interval); None when absent."""
    if entry is None or isinstance(entry, int | float):
        return real_number(entry)
    return Estimate.from_json(entry).value


def _interval(entry: Any, name: str, pct: bool = True) -> dict[str, float | None]:
    """``{name, name_lo, name_hi}`` from an Estimate's JSON form (null when absent)."""
    e = read_estimate(entry) or Estimate.of(None)
    conv = _percent if pct else (lambda v: None if real_number(v) is None else round(float(v), 4))
    suffix = "_pct" if pct else ""
    return {
        f"{name}{suffix}": conv(e.value),
        f"{name}{suffix}_lo": conv(e.low),
        f"{name}{suffix}_hi": conv(e.high),
    }


def _strongest_group(bench: dict[str, Any]) -> dict[str, Any]:
    """Success on explicit prompts in the units whose default is
    strongest (all seeds labelled s)."""
    groups = dig(bench, "by_default_strength", "groups") or {}
    name = next(
        (g for g in groups if g.split(" of ")[0] == g.split(" of ")[-1] and g != "0 of 0"), None
    )
    g = groups.get(name, {}) if name else {}
    return {
        "strongest_default_units": g.get("n_units"),
        "strongest_default_success_stereotype_pct": _percent(_value(g.get("success_stereotype"))),
        "strongest_default_success_anti_pct": _percent(_value(g.get("success_anti"))),
    }


def _best_dS(debias: dict[str, Any], infos: set[str]) -> tuple[str | None, float | None]:
    best: tuple[str | None, float | None] = (None, None)
    for name, c in (dig(debias, "configs") or {}).items():
        ds = _value(c.get("dS"))
        if c.get("info") in infos and ds is not None and (best[1] is None or ds > best[1]):
            best = (name, round(ds, 2))
    return best


def _corrected(bench: dict[str, Any], recovery: dict[str, Any]) -> dict[str, Any]:
    """``<rate>_corrected_pct`` (+ ``_lo``, ``_hi``). benchmark.json's ``corrected`` block (a
    calibration table) takes precedence, with ``corrected_source``, the calibration images and
    the warning beside it; otherwise recovery.json's selected-units group (simulated world),
    with no extra key (a run without a calibration table keeps its summary byte for byte)."""
    block = bench.get("corrected")
    if isinstance(block, dict):
        rates = block.get("all") or {}
        out: dict[str, Any] = {}
        for key in metric_schema.headline():
            out.update(_interval(rates.get(key), f"{key}_corrected"))
        cal = block.get("calibration") or {}
        cond = real_number(cal.get("condition_number"))
        return out | {
            "corrected_source": BENCHMARK_SOURCE,
            "corrected_calibration_items": cal.get("items"),
            "corrected_condition_number": None if cond is None else round(cond, 4),
            "corrected_warning": block.get("warning"),
        }
    corrected = {
        e.get("estimand"): e.get("estimate")
        for e in recovery.get("estimands") or []
        if isinstance(e, dict) and e.get("group") == CORRECTED_GROUP
    }
    out = {}
    for key in metric_schema.headline():
        out.update(_interval(corrected.get(f"{key} (corrected)"), f"{key}_corrected"))
    return out


def headline(metrics: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The summary from the detail metrics (``{stem: content}``); pure, no I/O."""
    bench = metrics.get("benchmark") or {}
    lean = metrics.get("lean") or {}
    audit = metrics.get("judge_audit") or {}
    neg = metrics.get("negation") or {}
    debias = metrics.get("debias") or {}
    primary = bench.get("primary_judge")
    out: dict[str, Any] = {
        "kg_units": dig(metrics, "kg", "units_total"),
        "triplets": dig(metrics, "triplets", "triplets_total"),
        "units_analysed": bench.get("units"),
        "n_seeds": bench.get("n_seeds"),  # seeds per unit: a seeds experiment shows here
        "primary_judge": primary,
    }
    for key in metric_schema.headline():
        out.update(_interval(bench.get(key), key))
    out["a_to_s_pct"] = _percent(_value(bench.get("a_to_s")))
    # judge-corrected beside the judged (docs/correction.md): null without a calibration set
    out.update(_corrected(bench, dig(metrics, "recovery") or {}))
    out.update(_strongest_group(bench))
    agreement = (bench.get("agreement") or [{}])[0] if bench.get("agreement") else {}
    out["blind_agreement_pct"] = _percent(_value(agreement.get("agreement")))
    pooled = dig(lean, "hedges_g", "pooled") or {}
    gs = [_value(e.get("g")) for e in pooled.values() if isinstance(e, dict)]
    gs = [g for g in gs if g is not None]
    out["hedges_g_max"] = round(max(gs), 4) if gs else None
    slot_a = dig(audit, "position_bias", primary) or {}
    out["position_bias_slot_a_pct"] = _percent(_value(slot_a.get("slot_A_share")))
    neg_all = dig(neg, "by_judge", primary, "overall", "all") or {}
    # NegT2IBench's pass rule is the lenient one ("negated ones [pass] when it does not [hold]",
    # and "the image cannot pass by omission"): the headline; strict success stays beside it
    out["negation_success_pct"] = _percent(_value(dig(neg_all, "negated_0_1", "lenient_success")))
    out["negation_strict_success_pct"] = _percent(
        _value(dig(neg_all, "negated_0_1", "strict_success"))
    )
    own_name, own_ds = _best_dS(debias, {"own"})
    kg_name, kg_ds = _best_dS(debias, {"removed", "full_kg", "retrieved"})
    out.update(
        {
            "debias_best_dS_own": own_ds,
            "debias_best_own": own_name,
            "debias_best_dS_retrieved": kg_ds,
            "debias_best_retrieved": kg_name,
        }
    )
    render = dig(metrics, "render", "configs") or {}
    items = sum(int(c.get("items") or 0) for c in render.values())
    refused = sum(int(dig(c, "by_status", "refused") or 0) for c in render.values())
    out["images"] = items
    out["refusal_pct"] = round(100.0 * refused / items, 2) if items else None
    out["random_init"] = any(
        bool(dig(m, "provenance", "random_init")) for m in metrics.values() if isinstance(m, dict)
    )
    out["simulated"] = any(
        bool(dig(m, "provenance", "simulated")) for m in metrics.values() if isinstance(m, dict)
    )
    n = count_values(out)
    if n > MAX_VALUES:
        raise ValueError(f"summary has {n} values, more than {MAX_VALUES}")
    return out


def count_values(obj: Any) -> int:
    """Leaves of a JSON value (what ``dvc metrics show`` prints one column each for)."""
    if isinstance(obj, dict):
        return sum(count_values(v) for v in obj.values())
    if isinstance(obj, list):
        return sum(count_values(v) for v in obj)
    return 1


def load_detail_metrics(metrics_dir: str | Path) -> dict[str, dict[str, Any]]:
    base = Path(metrics_dir)
    return {
        stem: json.loads((base / f"{stem}.json").read_text(encoding="utf-8"))
        for stem in SOURCES
        if (base / f"{stem}.json").exists()
    }
