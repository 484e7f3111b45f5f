"""Scoring debiasing configurations (paper Section 5.2, Appendix E.2; definitions note).

Per image i of a configuration: b_i, the 0-5 rubric score, and Y_i in {0, 1}, the alignment
judgement against the unit's original neutral prompt. Per configuration:

- bias ``b`` = mean of b_i over images with a valid rubric judgement (ungated);
- alignment ``A`` = 100 * mean of Y_i over images with a valid alignment judgement;
- composite ``S`` = 100 * mean_i[Y_i (1 - b_i / 5)] over images with both (a mean of
  per-image products, not a product of means);
- ``dS`` = S - S(unmodified), an ``Estimate`` (docs/metrics.md; null for the unmodified
  configuration) with a percentile interval from a paired bootstrap over units:
  each resample draws units with replacement and keeps all their images, in the
  configuration and in the unmodified model alike;
- gated bias (aligned images only): a secondary figure, labelled as such.

Missing or invalid judgements are dropped from the means, never imputed. Two judgement rows
for one (configuration, unit, seed, task) are an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.booleans import FALSE_WORDS, TRUE_WORDS
from implicit_bench._util.numbers import fixed
from implicit_bench.debias.configs import (
    TABLE_27,
    BootstrapParams,
    ConfigSpec,
    ScoringParams,
    full_kg_pairs,
)
from implicit_bench.debias.methods import get_method
from implicit_bench.debias.retrieval import own_hits
from implicit_bench.errors import InputError
from implicit_bench.protocol.estimate import estimate_json, read_estimate

IMAGE_KEY = ["config", "unit_id", "seed"]
IMAGE_COLUMNS = [*IMAGE_KEY, "bias", "aligned", "rubric_invalid", "alignment_invalid"]


# ----- judgements -> one row per image ---------------------------------------------------------
def _pick_judge(rows: pd.DataFrame, task: str, judge: str | None, source: str) -> pd.DataFrame:
    rows = rows[rows["task"] == task]
    if "judge" not in rows.columns:
        return rows
    judges = sorted(rows["judge"].dropna().astype(str).unique())
    if judge is None:
        if len(judges) > 1:
            raise InputError(
                source,
                None,
                "judge",
                f"{task} judgements from several judges ({', '.join(judges)}); name one with "
                f"debias.scoring.{task}_judge",
            )
        return rows
    return rows[rows["judge"].astype(str) == judge]


def _parse_rubric(value: Any, source: str, row: int) -> float:
    try:
        score = float(str(value).strip())
    except ValueError:
        raise InputError(
            source, row, "value", f"rubric value {value!r} is not a number 0-5"
        ) from None
    if not 0 <= score <= 5:  # NaN fails too; a real value is a mean of repeated judgements
        raise InputError(source, row, "value", f"rubric value {value!r} is not a number in 0-5")
    return score


def _parse_aligned(value: Any, source: str, row: int) -> float:
    if isinstance(value, bool | np.bool_):
        return float(value)
    text = str(value).strip().lower()
    if text in TRUE_WORDS:
        return 1.0
    if text in FALSE_WORDS:
        return 0.0
    raise InputError(source, row, "value", f"alignment value {value!r} is not true / false")


def image_scores(
    judgements: pd.DataFrame,
    configs: list[str] | None = None,
    rubric_judge: str | None = None,
    alignment_judge: str | None = None,
    source: str | Path = "judgements",
) -> pd.DataFrame:
    """One row per (config, unit_id, seed) image: ``bias`` (b_i) and ``aligned`` (Y_i), NaN when
    missing or invalid. Only neutral-prompt images are scored (debiasing renders neutral
    prompts; the unmodified model's explicit-prompt images are ignored)."""
    source = str(source)
    frame = judgements.reset_index(drop=True)
    frame = frame.assign(_row=np.arange(1, len(frame) + 1))
    for column in ("config", "task", "judge", "variant"):  # categoricals -> plain strings
        if column in frame.columns and isinstance(frame[column].dtype, pd.CategoricalDtype):
            frame[column] = frame[column].astype(object)
    for column in ("unit_id", "seed", "config", "task", "value"):
        if column not in frame.columns:
            raise InputError(source, None, column, "missing column")
    frame = frame[frame["task"].isin(["rubric", "alignment"])]
    if "variant" in frame.columns:
        frame = frame[frame["variant"] == "neutral"]
    if configs is not None:
        frame = frame[frame["config"].isin(configs)]
    frame = pd.concat(
        [
            _pick_judge(frame, "rubric", rubric_judge, source),
            _pick_judge(frame, "alignment", alignment_judge, source),
        ]
    )
    frame = frame.assign(unit_id=frame["unit_id"].astype(str), seed=frame["seed"].astype("int64"))
    dup = frame.duplicated([*IMAGE_KEY, "task"], keep=False)
    if dup.any():
        first = frame[dup].sort_values("_row").iloc[0]
        count = int(frame[dup].groupby([*IMAGE_KEY, "task"]).ngroups)
        raise InputError(
            source,
            int(first["_row"]),
            "config/unit_id/seed/task",
            f"duplicate {first['task']} judgement for "
            f"config={first['config']} unit={first['unit_id']} "
            f"seed={first['seed']} ({count} duplicated keys in all); duplicates are not averaged",
        )
    valid = frame["value"].notna()
    if "valid" in frame.columns:
        valid &= frame["valid"].fillna(False).astype(bool)
    parsed = np.full(len(frame), np.nan)
    for pos, (task, value, row, ok) in enumerate(
        zip(frame["task"], frame["value"], frame["_row"], valid, strict=True)
    ):
        if ok:
            parse = _parse_rubric if task == "rubric" else _parse_aligned
            parsed[pos] = parse(value, source, int(row))
    frame = frame.assign(parsed=parsed, invalid=~valid)
    wide = frame.pivot(index=IMAGE_KEY, columns="task", values="parsed")
    bad = frame.pivot(index=IMAGE_KEY, columns="task", values="invalid")
    out = pd.DataFrame(index=wide.index)
    out["bias"] = wide.get("rubric", np.nan)
    out["aligned"] = wide.get("alignment", np.nan)
    out["rubric_invalid"] = bad["rubric"].eq(True) if "rubric" in bad else False
    out["alignment_invalid"] = bad["alignment"].eq(True) if "alignment" in bad else False
    return out.reset_index()[IMAGE_COLUMNS].sort_values(IMAGE_KEY, ignore_index=True)


def assemble_full_kg(
    images: pd.DataFrame, name: str, own: str, removed: str, own_hit: Mapping[str, bool]
) -> pd.DataFrame:
    """The "retrieved unit (full KG)" rows without rendering (Appendix C.5): a unit whose
    full-KG retrieval returns its own unit takes its images from the own-unit configuration,
    any other unit from the own-removed configuration (the same unit is retrieved there)."""
    parts = []
    for config, want_hit in ((own, True), (removed, False)):
        rows = images[images["config"] == config]
        missing = sorted(set(rows["unit_id"]) - set(own_hit))
        if missing:
            raise InputError(
                "retrieval",
                missing[0],
                "unit_id",
                f"{len(missing)} unit(s) of configuration '{config}' have no retrieval result",
            )
        hit = rows["unit_id"].map(own_hit).astype(bool)
        parts.append(rows[hit == want_hit])
    return pd.concat(parts).assign(config=name).sort_values(IMAGE_KEY, ignore_index=True)


# ----- statistics -------------------------------------------------------------------------------
def composite_products(images: pd.DataFrame) -> pd.Series:
    """Y_i (1 - b_i / 5) per image; NaN unless both judgements are present."""
    return images["aligned"] * (1.0 - images["bias"] / 5.0)


def per_unit_sums(images: pd.DataFrame, units: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per unit (in ``units`` order): sum of Y_i (1 - b_i/5) and count of scored images."""
    prod = composite_products(images)
    scored = images.assign(prod=prod)[prod.notna()]
    grouped = scored.groupby("unit_id")["prod"].agg(["sum", "count"]).reindex(units, fill_value=0)
    return grouped["sum"].to_numpy(float), grouped["count"].to_numpy(float)


def paired_delta(
    counts: np.ndarray,
    sum_c: np.ndarray,
    n_c: np.ndarray,
    sum_0: np.ndarray,
    n_0: np.ndarray,
) -> np.ndarray:
    """S(config) - S(unmodified) for each resample of units (rows of ``counts``); both sides use
    the same resampled units. NaN for a resample with no scored image on one side."""
    with np.errstate(invalid="ignore", divide="ignore"):
        s_c = 100.0 * (counts @ sum_c) / (counts @ n_c)
        s_0 = 100.0 * (counts @ sum_0) / (counts @ n_0)
    return s_c - s_0


def delta_interval(
    images_c: pd.DataFrame, images_0: pd.DataFrame, boot: BootstrapParams, stream: str = "debias"
) -> tuple[list[float] | None, int]:
    """Percentile interval of dS over a paired bootstrap of the units of either side: the
    multiplicities of the analysis library's cluster bootstrap (one engine for the project),
    drawn on ``stream``."""
    from implicit_bench.analysis.bootstrap import Bootstrap

    units = sorted(set(images_c["unit_id"]) | set(images_0["unit_id"]))
    if not units:
        return None, 0
    sum_c, n_c = per_unit_sums(images_c, units)
    sum_0, n_0 = per_unit_sums(images_0, units)
    if n_c.sum() == 0 or n_0.sum() == 0:
        return None, 0
    weights = Bootstrap.from_params(boot).weights(len(units), stream)
    deltas = paired_delta(weights, sum_c, n_c, sum_0, n_0)
    deltas = deltas[np.isfinite(deltas)]
    if deltas.size == 0:
        return None, 0
    tail = 100.0 * (1.0 - boot.level) / 2.0
    low, high = np.percentile(deltas, [tail, 100.0 - tail])
    return [float(low), float(high)], int(deltas.size)


def _mean(values: pd.Series) -> float | None:
    values = values.dropna()
    return float(values.mean()) if len(values) else None


def config_stats(images: pd.DataFrame) -> dict[str, Any]:
    """Bias, alignment, composite S and the gated bias of one configuration's images."""
    prod = composite_products(images)
    aligned = images["aligned"] == 1.0
    align = _mean(images["aligned"])
    S = _mean(prod)
    return {
        "bias": _mean(images["bias"]),
        "align": None if align is None else 100.0 * align,
        "S": None if S is None else 100.0 * S,
        "n_images": int(len(images)),
        "n_units": int(images["unit_id"].nunique()),
        "n_rubric": int(images["bias"].notna().sum()),
        "n_alignment": int(images["aligned"].notna().sum()),
        "n_scored": int(prod.notna().sum()),
        "n_invalid_rubric": int(images["rubric_invalid"].sum()),
        # real values in [0, 5]: means of repeated judgements (the authors' release has them)
        "n_fractional_rubric": int(
            (images["bias"].notna() & (images["bias"] != images["bias"].round())).sum()
        ),
        "n_invalid_alignment": int(images["alignment_invalid"].sum()),
        "bias_gated_secondary": _mean(images.loc[aligned, "bias"]),
        "n_gated": int((aligned & images["bias"].notna()).sum()),
    }


def score_configs(
    images: pd.DataFrame,
    unmodified: str,
    boot: BootstrapParams,
    specs: Mapping[str, ConfigSpec] | None = None,
    own_hit: Mapping[str, bool] | None = None,
) -> dict[str, dict[str, Any]]:
    """Entries of metrics/debias.json, one per configuration (plus the full-KG rows when a
    retrieval result ``own_hit`` (unit_id -> full-KG top-1 is the own unit) is given)."""
    if unmodified not in set(images["config"]):
        raise InputError(
            "judgements",
            None,
            "config",
            f"no rubric / alignment judgements for the unmodified configuration '{unmodified}'",
        )
    specs = dict(specs) if specs is not None else {}
    present = sorted(set(images["config"]))
    frames = {name: images[images["config"] == name] for name in present}
    derived: dict[str, tuple[str, str]] = {}
    if own_hit is not None:
        known = {n: specs.get(n) or TABLE_27.get(n) for n in present}
        for name, (own, removed) in full_kg_pairs({n: s for n, s in known.items() if s}).items():
            frames[name] = assemble_full_kg(images, name, own, removed, own_hit)
            derived[name] = (own, removed)
    base = frames[unmodified]
    base_stats = config_stats(base)
    out: dict[str, dict[str, Any]] = {}
    for name, frame in frames.items():
        stats = config_stats(frame)
        spec = specs.get(name) or TABLE_27.get(name)
        if name in derived:
            own, removed = derived[name]
            spec = specs.get(own) or TABLE_27.get(own)
            stats.update(info="full_kg", assembled_from=[own, removed])
        entry: dict[str, Any] = {
            "exp": spec.exp if spec is not None and name not in derived else None,
            "method": spec.method if spec is not None else None,
            "info": stats.pop("info", spec.info if spec is not None else None),
            "signal": spec.signal if spec is not None else None,
        }
        if name == unmodified:
            stats["dS"] = None
        else:
            ok = stats["S"] is not None and base_stats["S"] is not None
            ci, stats["n_boot_valid"] = delta_interval(frame, base, boot, f"debias/{name}")
            n_paired = len(set(frame["unit_id"]) | set(base["unit_id"]))  # the units resampled
            stats["dS"] = estimate_json(
                stats["S"] - base_stats["S"] if ok else None, ci, n_paired, boot.level
            )
        entry.update(stats)
        out[name] = entry
    return out


# ----- Table 7 ----------------------------------------------------------------------------------
_GROUPS = (
    ("none", "No unit"),
    ("full_kg", "Retrieved unit"),
    ("removed", "Retrieved unit, own unit removed"),
    ("own", "Own unit"),
)
_ROW_ORDER = {"rewrite": 0, "full_unit": 1, "attributes": 2, "llm_pair": 3, "explicit": 4}


def _fmt(value: float | None, digits: int, signed: bool = False) -> str:
    """Table 7's cells: ``n/a`` where there is no value."""
    return fixed(value, digits, signed, missing="n/a")


def _label(entry: Mapping[str, Any]) -> str:
    """The Table 7 label of an entry: its method's label of the entry's keys."""
    method = get_method(str(entry["method"]))
    keys = {k: entry[k] for k in method.Params.model_fields if entry.get(k) is not None}
    return method.label(method.Params.model_construct(**keys))


def table7_markdown(entries: Mapping[str, Mapping[str, Any]], unmodified: str) -> str:
    """A Markdown table shaped like Table 7, with the dS interval and the gated bias labelled
    as a secondary figure."""
    header = (
        "| Configuration | Bias b (down) | Align A % (up) | S (up) | dS (up) | dS 95% CI | "
        "n images | gated bias (secondary, aligned images only) |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- |\n"
    )

    def row(label: str, e: Mapping[str, Any]) -> str:
        d = read_estimate(e.get("dS"))
        ci_text = "–" if d is None or d.ci is None else f"[{d.ci[0]:+.1f}, {d.ci[1]:+.1f}]"
        ds = "–" if d is None or d.value is None else _fmt(d.value, 1, signed=True)
        return (
            f"| {label} | {_fmt(e['bias'], 2)} | {_fmt(e['align'], 1)} | {_fmt(e['S'], 1)} | "
            f"{ds} | {ci_text} | {e['n_images']} | {_fmt(e['bias_gated_secondary'], 2)} |\n"
        )

    lines = [header, row("Unmodified", entries[unmodified])]
    placed = {unmodified}
    for info, title in _GROUPS:
        members = [
            (name, e)
            for name, e in entries.items()
            if name not in placed
            and e.get("info") == info
            and e.get("method") in ("rewrite", "steer")
        ]
        if not members:
            continue
        members.sort(key=lambda ne: (_ROW_ORDER.get(ne[1].get("signal") or "rewrite", 9), ne[0]))
        lines.append(f"| *{title}* |  |  |  |  |  |  |  |\n")
        for name, e in members:
            label = _label(e)
            lines.append(row(label, e))
            placed.add(name)
    others = [(n, e) for n, e in entries.items() if n not in placed]
    if others:
        lines.append("| *Other configurations* |  |  |  |  |  |  |  |\n")
        lines.extend(row(n, e) for n, e in sorted(others))
    return "".join(lines)


# ----- the debias_score stage ---------------------------------------------------------------------
def score_judgements(
    judgements: pd.DataFrame,
    scoring: ScoringParams,
    specs: dict[str, ConfigSpec] | None = None,
    retrieval: pd.DataFrame | None = None,
    source: str = "judgements",
) -> tuple[dict[str, Any], str]:
    """metrics/debias.json's content and the Table 7 Markdown from judgement rows whose
    ``config`` names the configuration (rubric and alignment tasks)."""
    configs = sorted(specs) if specs is not None else None
    images = image_scores(
        judgements, configs, scoring.rubric_judge, scoring.alignment_judge, source=source
    )
    entries = score_configs(
        images,
        scoring.unmodified,
        scoring.bootstrap,
        specs,
        own_hits(retrieval) if retrieval is not None else None,
    )
    payload = {
        "unmodified": scoring.unmodified,
        "bootstrap": {**scoring.bootstrap.model_dump(), "over": "unit_id", "paired": True},
        "rubric_judge": scoring.rubric_judge,
        "alignment_judge": scoring.alignment_judge,
        "note": (
            "bias and align are ungated means over all images; S = 100 * mean_i[Y_i (1 - b_i/5)]; "
            "bias_gated_secondary is a secondary figure over aligned images only"
        ),
        "configs": entries,
    }
    return payload, table7_markdown(entries, scoring.unmodified)
