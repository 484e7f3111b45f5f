"""The negation audit: success measures of the negated prompts' images (docs/audits.md).

The prompts are written by ``triplets.negated`` (a triplets variant hook). Read with the blind
labels of the rendered images and a subject-presence judgement (the
alignment judgement of the same image): strict success = read as a; lenient success = not read
as s with the subject present (an image cannot pass by omission); forbidden rendered = read as
s, as a share of the FAILED negated statements (read as s, or subject absent), NegT2IBench's
41.5% (``negation_rates``).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from implicit_bench.estimate import estimate_json
from implicit_bench.stats import share


def default_strength(primary: pd.DataFrame) -> pd.DataFrame:
    """Per (judge, config, unit): how many of its labelled neutral images read as s.

    Groups: "0" (none), "1-{n-1}" (some), "{n}" (all) with n the unit's labelled neutral
    images (the paper's 0, 1-2, 3 for three seeds); "unlabelled" when none parsed.
    """
    neutral = primary[primary["variant"] == "neutral"].assign(
        is_s=lambda f: f["label"].eq("s").fillna(False).astype(int), labelled=lambda f: f["label"].notna().astype(int))
    frame = (neutral.groupby(["judge", "config", "unit_id"], sort=True)[["is_s", "labelled"]].sum()
             .rename(columns={"is_s": "n_s", "labelled": "n_labelled"}).reset_index())

    def group(n_s: int, n: int) -> str:
        if n == 0:
            return "unlabelled"
        if n_s == 0:
            return "0"
        if n_s == n:
            return str(n)
        return "1" if n == 2 else f"1-{n - 1}"

    frame["strength"] = [group(s, n) for s, n in zip(frame["n_s"], frame["n_labelled"], strict=True)]
    return frame


def subject_presence(judgements: pd.DataFrame, judge: str | None = None, source: str = "judgements") -> pd.DataFrame:
    """Per image (config, unit_id, variant, seed): ``present`` = the alignment judgement of
    that image (judged against the unit's neutral prompt: is its subject and scene there?),
    parsed strictly; invalid answers are left out. ``judge``: the alignment judge to read
    (None: the only one; several without a choice is an error)."""
    from implicit_bench.booleans import parse_bool
    from implicit_bench.errors import InputError

    cols = ["config", "unit_id", "variant", "seed", "present"]
    rows = judgements[judgements["task"].astype(str) == "alignment"]
    if "valid" in rows.columns:
        rows = rows[rows["valid"].map(lambda v: parse_bool(v) is not False)]
    rows = rows[rows["value"].notna()]
    judges = sorted(rows["judge"].astype(str).unique())
    if judge is None and len(judges) > 1:
        raise InputError(source, None, "judge", f"several alignment judges {judges}: set negation.presence_judge")
    if judge is not None:
        rows = rows[rows["judge"].astype(str) == judge]
    present = rows["value"].map(parse_bool)
    rows = rows.assign(present=present)[present.notna()]
    out = rows.assign(unit_id=rows["unit_id"].astype(str), seed=rows["seed"].astype(int),
                      config=rows["config"].astype(str), variant=rows["variant"].astype(str))[cols]
    return out.drop_duplicates(["config", "unit_id", "variant", "seed"], keep=False).reset_index(drop=True)


def with_presence(primary: pd.DataFrame, presence: pd.DataFrame | None) -> pd.DataFrame:
    """``primary`` with a ``present`` column (True / False / None when not judged)."""
    if presence is None or not len(presence):
        return primary.assign(present=None)
    key = ["config", "unit_id", "variant", "seed"]
    merged = primary.astype({"unit_id": str}).merge(presence, on=key, how="left")
    merged["present"] = merged["present"].astype(object).where(merged["present"].notna(), None)
    return merged


def negation_rates(frame: pd.DataFrame) -> dict[str, float | int | None]:
    """The negation measures of the labelled images in ``frame`` (NegT2IBench's definitions).

    The negated statement "not s" fails when the image is read as s (it renders what the
    prompt forbids) or when the subject is absent (an image cannot pass by omission; presence
    from ``present``, the subject-presence judgement). Hence:

    - ``strict_success``: read as a, over labelled images;
    - ``lenient_success``: not read as s AND the subject present, over the labelled images
      whose outcome is known (read as s, or presence judged);
    - ``forbidden_rendered``: read as s, over the FAILED statements (read as s, or subject
      absent); NegT2IBench: 41.5% of failed statements;
    - ``forbidden_rendered_of_images``: read as s, over all labelled images (a secondary figure).

    Both presence-based figures are None when no image that is not read as s has a presence
    judgement (``n_presence_unknown`` counts those images).
    """
    labelled = frame[frame["label"].notna()]
    n = len(labelled)
    present = labelled["present"] if "present" in labelled.columns else pd.Series(None, index=labelled.index, dtype=object)
    forbidden = labelled["label"] == "s"
    known = present.notna()
    other = ~forbidden
    absent = other & known & present.eq(False)
    passed = other & known & present.eq(True)
    unknown = int((other & ~known).sum())
    n_other_known = int((other & known).sum())
    determinable = int(forbidden.sum()) + n_other_known
    failed = int(forbidden.sum()) + int(absent.sum())
    usable = n_other_known > 0 or int(other.sum()) == 0
    return {
        "n": n,
        "n_unlabelled": int(frame["label"].isna().sum()),
        "strict_success": share(int((labelled["label"] == "a").sum()), n),
        "lenient_success": share(int(passed.sum()), determinable) if usable else math.nan,
        "forbidden_rendered": share(int(forbidden.sum()), failed) if usable else math.nan,
        "forbidden_rendered_of_images": share(int(forbidden.sum()), n),
        "n_failed": failed if usable else None,
        "n_subject_absent": int(absent.sum()),
        "n_presence_unknown": unknown,
    }


COMPARED_VARIANTS: tuple[str, ...] = ("anti_stereotype", "negated_0_1", "negated_1_1")


def _negation_frame(primary: pd.DataFrame, units: pd.DataFrame) -> pd.DataFrame:
    strength = default_strength(primary)
    frame = primary[primary["variant"].isin(COMPARED_VARIANTS)].merge(
        units[["unit_id", "bias_type"]].astype({"unit_id": str}), on="unit_id", how="left"
    ).merge(strength[["judge", "config", "unit_id", "strength"]], on=["judge", "config", "unit_id"], how="left")
    frame["strength"] = frame["strength"].astype(object).fillna("unlabelled")
    frame["overall"] = "all"
    return frame


def negation_table(primary: pd.DataFrame, units: pd.DataFrame) -> pd.DataFrame:
    """Long table: judge, variant, grouping (overall | bias_type | strength), group, rates."""
    frame = _negation_frame(primary, units)
    rows: list[dict[str, Any]] = []
    for grouping in ("overall", "bias_type", "strength"):
        for (judge, variant, group), g in frame.groupby(["judge", "variant", grouping], sort=True):
            rows.append({"judge": judge, "variant": variant, "grouping": grouping, "group": group, **negation_rates(g)})
    return pd.DataFrame(rows, columns=["judge", "variant", "grouping", "group", *RATE_COLUMNS])


RATE_COLUMNS: tuple[str, ...] = ("n", "n_unlabelled", "strict_success", "lenient_success", "forbidden_rendered",
                                 "forbidden_rendered_of_images", "n_failed", "n_subject_absent", "n_presence_unknown")


def _present(f: pd.DataFrame) -> pd.Series:
    return f["present"] if "present" in f.columns else pd.Series(None, index=f.index, dtype=object)


def _failed(f: pd.DataFrame) -> pd.Series:
    return f["label"].eq("s") | ((f["label"] != "s") & _present(f).eq(False))


def _determinable(f: pd.DataFrame) -> pd.Series:
    return f["label"].eq("s") | _present(f).notna()


# name -> (numerator mask, denominator mask) over the labelled images of a group
NEGATION_MEASURES: dict[str, Any] = {
    "strict_success": (lambda f: f["label"].eq("a"), None),
    "lenient_success": (lambda f: f["label"].ne("s") & _present(f).eq(True), _determinable),
    "forbidden_rendered": (lambda f: f["label"].eq("s"), _failed),
    "forbidden_rendered_of_images": (lambda f: f["label"].eq("s"), None),
}


def negation_intervals(primary: pd.DataFrame, units: pd.DataFrame, boot: Any) -> dict[tuple[str, str, str, str], Any]:
    """(judge, variant, grouping, group) -> {measure: interval}, resampling each group's units."""
    from implicit_bench.audits.intervals import rate_intervals

    frame = _negation_frame(primary, units)
    out = {}
    for grouping in ("overall", "bias_type", "strength"):
        for (judge, variant, group), g in frame.groupby(["judge", "variant", grouping], sort=True):
            out[(judge, variant, grouping, str(group))] = rate_intervals(
                boot, g, NEGATION_MEASURES, f"negation/{judge}/{variant}/{grouping}/{group}")
            rates = negation_rates(g)
            for name in ("lenient_success", "forbidden_rendered"):  # undefined without presence
                if rates[name] is None or (isinstance(rates[name], float) and math.isnan(rates[name])):
                    out[(judge, variant, grouping, str(group))][name] = estimate_json(None)
    return out


def negation_summary(table: pd.DataFrame, intervals: dict | None = None) -> dict[str, Any]:
    """Nested JSON of ``negation_table``: judge -> grouping -> group -> variant -> rates."""
    out: dict[str, Any] = {}
    for row in table.to_dict("records"):
        rec = {k: row[k] for k in RATE_COLUMNS}
        rec = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in rec.items()}
        if intervals is not None:  # the rates as Estimates: the point value of the table, the interval
            found = intervals.get((row["judge"], row["variant"], row["grouping"], str(row["group"])), {})
            for name, iv in found.items():
                rec[name] = estimate_json(rec.get(name), iv["ci"], iv["n"], iv["level"])
        out.setdefault(row["judge"], {}).setdefault(row["grouping"], {}).setdefault(str(row["group"]), {})[row["variant"]] = rec
    return out

