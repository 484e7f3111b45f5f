"""Reads of the release beyond the kept units' judgements (docs/import.md, "Pre-filter CLIP,
lean by source, SD3 kept vs rejected"):

- ``data/pre_filter/{stereoset,crows-pairs}/clip_similarities.csv``: the CLIP similarities of
  every candidate unit's neutral image to its stereotype and anti-stereotype images on
  Qwen-Image (``id, seed, sim_neutral_stereotype, sim_neutral_anti_stereotype, ...``; StereoSet
  with a ``split`` column): Table 3's CLIP column, "All" (every candidate) and "Kept" (the ids of
  ``benchmark_prompts.csv``), and the rejected units apart;
- the lean per bias type and source dataset (Appendix B.4's cross-dataset check) of the kept
  units' construction scores (``benchmark_scores.csv``: Qwen3-VL, Gemma-4, CLIP);
- SD3 kept vs rejected (Tables 3 and 25): only where an SD3 file of the release scores units
  outside the kept set; the released SD3 files (``sd3_eval.csv``, experiment 13) hold kept units
  only, so the comparison says why it is absent.

A candidate id is keyed by its source (CrowS-Pairs ids are row numbers, StereoSet ids hashes).
The CLIP lean of an image pair is ``sim_neutral_stereotype - sim_neutral_anti_stereotype``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.analysis.lean import lean_summary, scorer_values
from implicit_bench.errors import InputError
from implicit_bench.release import layout

EVAL_DIR = "cache/eval_results"  # as release.importer's (not imported: importer uses this module)
PRE_FILTER = {
    "stereoset": "data/pre_filter/stereoset/clip_similarities.csv",
    "crows_pairs": "data/pre_filter/crows-pairs/clip_similarities.csv",
}
SIMS = ("sim_neutral_stereotype", "sim_neutral_anti_stereotype")
#: SD3 files of the release: (file, score column, variant column or None)
SD3_FILES = (
    (f"{EVAL_DIR}/sd3_eval.csv", "score", "image_type"),
    (f"{EVAL_DIR}/exp_13_eval.csv", "score", None),
)


def read_prefilter(release: Any) -> pd.DataFrame | None:
    """Every candidate (source, unit_id, seed index, seed, dx) of the pre-filter CLIP files;
    None when the release has neither file. A non-numeric similarity is an error naming the row."""
    frames = []
    for source, rel in PRE_FILTER.items():
        if not release.exists(rel):
            continue
        t = release.table(rel, ("id", "seed", *SIMS))
        where = release.where(rel)
        sims = {}
        for col in SIMS:
            values = pd.to_numeric(t[col], errors="coerce")
            bad = values.isna()
            if bad.any():
                row = int(np.flatnonzero(bad.to_numpy())[0]) + 1
                raise InputError(where, row, col, f"not a number: {t[col][bad].iloc[0]!r}")
            sims[col] = values
        index = pd.to_numeric(t["seed"], errors="coerce")
        bad = index.isna() | (index < 0) | (index != index.round())
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0]) + 1
            raise InputError(
                where, row, "seed", f"expected a seed index, got {t['seed'][bad].iloc[0]!r}"
            )
        frames.append(
            pd.DataFrame(
                {
                    "source": source,
                    "unit_id": t["id"].str.strip(),
                    "seed_index": index.astype("int64"),
                    "seed": index.astype("int64").map(layout.seed_of),
                    "dx": sims[SIMS[0]] - sims[SIMS[1]],
                }
            )
        )
    return pd.concat(frames, ignore_index=True) if frames else None


def prefilter_clip(
    release: Any, units: pd.DataFrame, boot: Bootstrap | None
) -> dict[str, Any] | None:
    """Table 3's CLIP lean before and after selection, from the pre-filter files: "all"
    candidates, "kept" (benchmark ids) and "rejected", each on every row and on the three
    selection seeds (index 0-2; some StereoSet candidates have up to ten seeds)."""
    values = read_prefilter(release)
    if values is None:
        return None
    kept_keys = set(zip(units["source"], units["unit_id"], strict=True))
    keys = list(zip(values["source"], values["unit_id"], strict=True))
    values = values.assign(
        kept=[k in kept_keys for k in keys],
        # a cluster per candidate: the same id may occur in both sources
        unit_id=[f"{s}:{u}" for s, u in keys],
    )
    three = values[values["seed_index"] <= 2]
    out: dict[str, Any] = {
        "files": [PRE_FILTER[s] for s in PRE_FILTER if release.exists(PRE_FILTER[s])],
        "rows": int(len(values)),
        "units": int(values["unit_id"].nunique()),
        "units_by_source": {
            str(k): int(v) for k, v in values.groupby("source")["unit_id"].nunique().items()
        },
        "rows_by_seed_index": {
            str(k): int(v) for k, v in values["seed_index"].value_counts().sort_index().items()
        },
        "kept_units_found": int(values.loc[values["kept"], "unit_id"].nunique()),
        "kept_units_missing": int(len(kept_keys) - values.loc[values["kept"], "unit_id"].nunique()),
        "lean": "CLIP lean = sim_neutral_stereotype - sim_neutral_anti_stereotype (Qwen-Image)",
        "groups": {},
    }
    for name, frame in (("all_seeds", values), ("selection_seeds", three)):
        out["groups"][name] = {
            group: _summary(sub, boot, f"release/prefilter_clip/{name}/{group}")
            for group, sub in (
                ("all", frame),
                ("kept", frame[frame["kept"]]),
                ("rejected", frame[~frame["kept"]]),
            )
        }
    return out


def _summary(values: pd.DataFrame, boot: Bootstrap | None, stream: str) -> dict[str, Any]:
    if not len(values):
        return {"n": 0, "n_units": 0}
    entry = lean_summary(values[["unit_id", "seed", "dx"]], boot, stream)
    entry["mean_of_unit_means"] = float(values.groupby("unit_id")["dx"].mean().mean())
    return entry


def lean_by_source(
    judgements: pd.DataFrame, units: pd.DataFrame, boot: Bootstrap | None
) -> dict[str, Any]:
    """Appendix B.4's cross-dataset check: per bias type and source dataset, each scorer's lean
    (n of (unit, seed) values, lean S%, mean, Cohen's d) on the kept units' construction scores
    (Qwen3-VL, Gemma-4 rubric dx; CLIP lean)."""
    if "score" not in judgements.columns:  # the importer's rows: numbers as written
        judgements = judgements.assign(score=pd.to_numeric(judgements["value"], errors="coerce"))
    values = scorer_values(
        judgements,
        layout.BASE_CONFIG,
        list(layout.RUBRIC_JUDGES.values()),
        list(units["unit_id"]),
        None,
    )
    info = units.set_index("unit_id")[["bias_type", "source"]]
    out: dict[str, Any] = {}
    for scorer, v in values.items():
        typed = v.join(info, on="unit_id")
        rows = {}
        for (bias, source), sub in typed.groupby(["bias_type", "source"], sort=True):
            rows.setdefault(str(bias), {})[str(source)] = lean_summary(
                sub[["unit_id", "seed", "dx"]],
                boot,
                f"release/lean_by_source/{scorer}/{bias}/{source}",
            )
        out[scorer] = rows
    return out


def lean_by_source_table(report: dict[str, Any]) -> pd.DataFrame:
    """One row per bias type x source: n and Cohen's d (and lean S%) of every scorer."""
    records: dict[tuple[str, str], dict[str, Any]] = {}
    for scorer, by_type in report.items():
        for bias, by_source in by_type.items():
            for source, entry in by_source.items():
                rec = records.setdefault((bias, source), {"bias_type": bias, "source": source})
                rec["n"] = max(rec.get("n", 0), entry["n"])
                rec[f"d_{scorer}"] = _value(entry.get("cohens_d"))
                rec[f"lean_s_{scorer}"] = _value(entry.get("lean_s"))
    return pd.DataFrame(list(records.values())).sort_values(["bias_type", "source"])


def _value(entry: Any) -> float | None:
    if isinstance(entry, dict):
        entry = entry.get("value")
    return None if entry is None else round(float(entry), 4)


def sd3_kept_vs_rejected(release: Any, units: pd.DataFrame) -> dict[str, Any]:
    """Table 3's SD3 column (mean neutral Qwen3-VL score, all vs kept) and Table 25, where an
    SD3 file of the release scores candidates outside the kept set; else why not."""
    kept = set(units["unit_id"])
    files = {}
    for rel, column, variant_col in SD3_FILES:
        if not release.exists(rel):
            continue
        t = release.table(rel, ("case_id", "seed", column))
        if variant_col is not None and variant_col in t.columns:
            t = t[t[variant_col].str.strip() == "neutral"]
        score = pd.to_numeric(t[column].replace("", np.nan), errors="coerce")
        ids = t["case_id"].str.strip()
        inside = ids.isin(kept)
        entry: dict[str, Any] = {
            "neutral_rows": int(len(t)),
            "units": int(ids.nunique()),
            "units_outside_kept_set": int(ids[~inside].nunique()),
            "mean_neutral_kept": _mean(score[inside]),
        }
        if (~inside).any():
            entry["mean_neutral_rejected"] = _mean(score[~inside])
            entry["mean_neutral_all"] = _mean(score)
        files[rel] = entry
    available = any(e["units_outside_kept_set"] for e in files.values())
    return {
        "available": available,
        "files": files,
        "reason": None
        if available
        else "the release's SD3 files score the kept units only (no SD3 image of a rejected "
        "candidate): Table 3's SD3 'All' value (1.86) and Table 25 need the SD3 run on all "
        "4,705 candidates",
    }


def _mean(values: pd.Series) -> float | None:
    values = values.dropna()
    return round(float(values.mean()), 4) if len(values) else None


def prefilter_table(report: dict[str, Any]) -> pd.DataFrame:
    """Table 3's CLIP column: all / kept / rejected, on the selection seeds and on every row."""
    records = []
    for seeds, groups in report["groups"].items():
        for group, entry in groups.items():
            if not entry.get("n"):
                continue
            rec: dict[str, Any] = {
                "units": group,
                "seeds": seeds,
                "n_units": entry["n_units"],
                "n": entry["n"],
            }
            # the CLIP lean in thousandths (Table 3: -0.003 -> -3), lean S in percent
            for key, name, scale in (
                ("mean", "mean_lean_x1000", 1000.0),
                ("lean_s", "lean_s_pct", 100.0),
                ("cohens_d", "cohens_d", 1.0),
            ):
                e = entry[key]
                value = e.get("value") if isinstance(e, dict) else e
                ci = (e.get("ci") if isinstance(e, dict) else None) or [None, None]
                rec[name] = _scaled(value, scale)
                rec[f"{name}_ci_low"], rec[f"{name}_ci_high"] = (_scaled(c, scale) for c in ci)
            rec["mean_of_unit_means_x1000"] = _scaled(entry["mean_of_unit_means"], 1000.0)
            records.append(rec)
    return pd.DataFrame(records)


def _scaled(value: Any, scale: float) -> float | None:
    return None if value is None else round(float(value) * scale, 4)
