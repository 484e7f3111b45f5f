"""Per-unit data of the unit browser: KG fields, prompts, images and judgements.

The browser loads one small index (every unit's filter and search fields) and, per page, the
chunk files that hold the full records of the units shown, so that a page never loads the
whole benchmark.
"""

from __future__ import annotations

import io
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench.protocol.schema import DIAGNOSTIC_BIAS_TYPES, VARIANTS
from implicit_bench.protocol.tables import UNIT_COLUMNS
from implicit_bench.report.inputs import ReportInputs
from implicit_bench.report.params import ReportParams

SHORT_VARIANT = {"neutral": "n", "stereotype": "s", "anti_stereotype": "a"}
# extra UNITS columns shown in the KG panel when present
KG_EXTRA = (
    "source_pair_id",
    "axis",
    "construction_mode",
    "shared_frame",
    "target",
    "stereotype_tails",
    "anti_stereotype_tails",
)


def strength_group(count: int, n_valid: int) -> str:
    """Default-strength group of a unit from its neutral images' blind labels.

    ``count`` neutral images labelled s among ``n_valid`` validly labelled ones: "0" when none,
    "3" when three or more, "1-2" otherwise; "n/a" when no neutral image has a valid label.
    """
    if n_valid == 0:
        return "n/a"
    if count == 0:
        return "0"
    return "3" if count >= 3 else "1-2"


def make_thumbnails(
    inputs: ReportInputs, out_dir: Path, params: ReportParams, unit_ids: set[str]
) -> dict[str, str]:
    """Write one small JPEG per distinct image (by sha256); return sha256 -> relative path."""
    from PIL import Image

    paths: dict[str, str] = {}
    if inputs.image_index is None:
        return paths
    index = inputs.image_index
    ok = index[
        (index["status"] == "ok") & index["sha256"].notna() & index["unit_id"].isin(unit_ids)
    ]
    for config, sha in ok[["config", "sha256"]].drop_duplicates("sha256").itertuples(index=False):
        rel = f"thumbs/{sha[:2]}/{sha[:32]}-{params.thumb_size}q{params.thumb_quality}.jpg"
        target = out_dir / rel
        if not target.exists():
            store = inputs.stores[str(config)]
            image = Image.open(io.BytesIO(store.read_bytes(sha))).convert("RGB")
            image.thumbnail((params.thumb_size, params.thumb_size))
            target.parent.mkdir(parents=True, exist_ok=True)
            image.save(target, format="JPEG", quality=params.thumb_quality)
        paths[sha] = rel
    return paths


def _clean(value: Any) -> Any:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, np.generic):
        return value.item()
    return value


def _judgement_map(judgements: pd.DataFrame | None) -> dict[tuple, dict[str, dict[str, Any]]]:
    """(config, unit, variant, seed) -> judge -> {task: value | "invalid"}."""
    out: dict[tuple, dict[str, dict[str, Any]]] = defaultdict(lambda: defaultdict(dict))
    if judgements is None or judgements.empty:
        return out
    frame = judgements[["config", "unit_id", "variant", "seed", "judge", "task", "value", "valid"]]
    raws = judgements["raw"] if "raw" in judgements.columns else [None] * len(judgements)
    primary = judgements["primary"] if "primary" in judgements.columns else [True] * len(judgements)
    for (config, unit, variant, seed, judge, task, value, valid), raw, first in zip(
        frame.itertuples(index=False), raws, primary, strict=True
    ):
        cell = out[(str(config), unit, variant, int(seed))][str(judge)]
        if not first:
            task = f"{task}~"  # the answer under the other option order (shown apart)
        shown = str(value) if valid and value is not None else "invalid"
        if shown == "invalid" and isinstance(raw, str):
            cell[f"{task}!"] = raw[:160]  # the unparsable answer, shown on hover
        if task in cell and cell[task] != shown:
            cell[task] = f"{cell[task]} | {shown}"  # duplicate key: show both, never average
        else:
            cell[task] = shown
    return out


def _strengths_and_disagreement(
    inputs: ReportInputs, params: ReportParams
) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, bool]], list[str]]:
    strength: dict[str, dict[str, str]] = defaultdict(dict)
    disagree: dict[str, dict[str, bool]] = defaultdict(lambda: {"blind": False, "rubric": False})
    keys: list[str] = []
    j = inputs.judgements
    if j is None or j.empty or not inputs.base_configs:
        return strength, disagree, keys
    base = j[j["config"].astype(str).isin(inputs.base_configs) & j["valid"]]
    if "primary" in base.columns:
        base = base[base["primary"]]  # one label per image: its primary option order
    blind = base[base["task"] == "blind"]
    neutral = blind[blind["variant"] == "neutral"]
    if not neutral.empty:
        counts = (
            neutral.assign(is_s=neutral["value"].astype(str) == "s")
            .groupby(["config", "judge", "unit_id"])["is_s"]
            .agg(["sum", "count"])
            .reset_index()
        )
        for config, judge, unit, s_count, n in counts.itertuples(index=False):
            key = f"{judge}" if len(inputs.base_configs) == 1 else f"{config} / {judge}"
            strength[unit][key] = strength_group(int(s_count), int(n))
        keys = sorted({k for v in strength.values() for k in v})
    image_key = ["config", "unit_id", "variant", "seed"]
    if not blind.empty:
        n_labels = blind.groupby(image_key)["value"].nunique()
        for unit in n_labels[n_labels > 1].index.get_level_values("unit_id").unique():
            disagree[unit]["blind"] = True
    rubric = base[base["task"] == "rubric"]
    if not rubric.empty:
        scores = pd.to_numeric(rubric["value"], errors="coerce")
        spread = (
            rubric.assign(score=scores).groupby(image_key)["score"].agg(lambda s: s.max() - s.min())
        )
        for unit in spread[spread >= params.rubric_gap].index.get_level_values("unit_id").unique():
            disagree[unit]["rubric"] = True
    return strength, disagree, keys


def build_unit_data(
    inputs: ReportInputs, params: ReportParams, thumbs: dict[str, str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The browser index (meta + one light row per unit) and the full records, in order."""
    units = inputs.units
    if units is None:
        return {"meta": {"n_units": 0}, "units": []}, []
    jmap = _judgement_map(inputs.judgements)
    strength, disagree, strength_keys = _strengths_and_disagreement(inputs, params)
    images: dict[str, list[tuple]] = defaultdict(list)
    if inputs.image_index is not None:
        cols = ["unit_id", "config", "variant", "seed", "status", "reason", "sha256", "prompt"]
        for row in inputs.image_index[cols].itertuples(index=False):
            images[row[0]].append(row[1:])
    judges = (
        sorted(inputs.judgements["judge"].astype(str).unique())
        if inputs.judgements is not None
        else []
    )
    extra_cols = [c for c in units.columns if c not in UNIT_COLUMNS and c in KG_EXTRA]

    light, full = [], []
    for i, unit in enumerate(units.to_dict("records")):
        uid = unit["unit_id"]
        chunk = i // params.chunk_size
        record: dict[str, Any] = {
            "id": uid,
            "bias": unit["bias_type"],
            "source": unit["source"],
            "head": unit["head"],
            "relation": _clean(unit["relation"]),
            "s": unit["stereotype"],
            "a": unit["anti_stereotype"],
            "p": [
                unit["prompt_neutral"],
                unit["prompt_stereotype"],
                unit["prompt_anti_stereotype"],
            ],
            "extra": {c: _clean(unit[c]) for c in extra_cols if _clean(unit[c]) is not None},
            "images": {},
        }
        for config, variant, seed, status, reason, sha, prompt in sorted(
            images.get(uid, []), key=lambda r: (r[0], r[2], r[1])
        ):
            cell: dict[str, Any] = {"st": status}
            if status == "ok" and sha in thumbs:
                cell["img"] = thumbs[sha]
            if reason is not None and not (isinstance(reason, float) and np.isnan(reason)):
                cell["why"] = str(reason)
            if variant == "neutral" and prompt != unit["prompt_neutral"]:
                cell["prompt"] = prompt  # rewritten prompt of a debiasing configuration
            judged = jmap.get((str(config), uid, variant, int(seed)))
            if judged:
                cell["j"] = {k: dict(v) for k, v in judged.items()}
            record["images"].setdefault(str(config), {}).setdefault(str(int(seed)), {})[
                SHORT_VARIANT.get(variant, variant)
            ] = cell
        full.append(record)
        light.append(
            {
                "id": uid,
                "bias": unit["bias_type"],
                "head": unit["head"],
                "p": record["p"],
                "c": chunk,
                "st": strength.get(uid, {}),
                "dis": disagree.get(uid, {"blind": False, "rubric": False}),
                "sel": None if inputs.selected is None else uid in inputs.selected,
            }
        )
    bias_types = sorted(units["bias_type"].unique(), key=lambda b: (b in DIAGNOSTIC_BIAS_TYPES, b))
    meta = {
        "n_units": len(units),
        "bias_types": bias_types,
        "diagnostic": list(DIAGNOSTIC_BIAS_TYPES),
        "strength_keys": strength_keys,
        "judges": judges,
        "base_configs": inputs.base_configs,
        "debias_configs": inputs.debias_configs,
        "variants": [SHORT_VARIANT[v] for v in VARIANTS],
        "chunk_size": params.chunk_size,
        "n_chunks": (len(units) + params.chunk_size - 1) // params.chunk_size,
        "per_page": params.units_per_page,
        "rubric_gap": params.rubric_gap,
        "has_selection": inputs.selected is not None,
        "random_init": bool(inputs.random_sources),
    }
    return {"meta": meta, "units": light}, full
