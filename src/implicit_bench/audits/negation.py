"""The negation audit: success measures of the negated prompts' images (docs/audits.md).

The prompts are written by ``triplets.negated`` (a triplets variant hook); each scored variant is
one NegT2IBench polarity setting (``SETTINGS``: 1:0, 0:1, 1:1). Read with the blind labels of
the rendered images and a subject-presence judgement (the alignment judgement of the same
image): strict success = read as a; lenient success (the paper's pass rule) = every statement
passes with the subject present (an image cannot pass by omission); forbidden rendered = read as
s, as a share of the FAILED images, NegT2IBench's 41.5%; and the failed statements by cause
(``statement_outcomes``, ``negation_rates``).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from implicit_bench._util.closed_form import share
from implicit_bench.protocol.estimate import estimate_json


def default_strength(primary: pd.DataFrame) -> pd.DataFrame:
    """Per (judge, config, unit): how many of its labelled neutral images read as s.

    Groups: "0" (none), "1-{n-1}" (some), "{n}" (all) with n the unit's labelled neutral
    images (the paper's 0, 1-2, 3 for three seeds); "unlabelled" when none parsed.
    """
    neutral = primary[primary["variant"] == "neutral"].assign(
        is_s=lambda f: f["label"].eq("s").fillna(False).astype(int),
        labelled=lambda f: f["label"].notna().astype(int),
    )
    frame = (
        neutral.groupby(["judge", "config", "unit_id"], sort=True)[["is_s", "labelled"]]
        .sum()
        .rename(columns={"is_s": "n_s", "labelled": "n_labelled"})
        .reset_index()
    )

    def group(n_s: int, n: int) -> str:
        if n == 0:
            return "unlabelled"
        if n_s == 0:
            return "0"
        if n_s == n:
            return str(n)
        return "1" if n == 2 else f"1-{n - 1}"

    frame["strength"] = [
        group(s, n) for s, n in zip(frame["n_s"], frame["n_labelled"], strict=True)
    ]
    return frame


def subject_presence(
    judgements: pd.DataFrame, judge: str | None = None, source: str = "judgements"
) -> pd.DataFrame:
    """Per image (config, unit_id, variant, seed): ``present`` = the alignment judgement of
    that image (judged against the unit's neutral prompt: is its subject and scene there?),
    parsed strictly; invalid answers are left out. ``judge``: the alignment judge to read
    (None: the only one; several without a choice is an error)."""
    from implicit_bench._util.booleans import parse_bool
    from implicit_bench.errors import InputError

    cols = ["config", "unit_id", "variant", "seed", "present"]
    rows = judgements[judgements["task"].astype(str) == "alignment"]
    if "valid" in rows.columns:
        rows = rows[rows["valid"].map(lambda v: parse_bool(v) is not False)]
    rows = rows[rows["value"].notna()]
    judges = sorted(rows["judge"].astype(str).unique())
    if judge is None and len(judges) > 1:
        raise InputError(
            source, None, "judge", f"several alignment judges {judges}: set negation.presence_judge"
        )
    if judge is not None:
        rows = rows[rows["judge"].astype(str) == judge]
    present = rows["value"].map(parse_bool)
    rows = rows.assign(present=present)[present.notna()]
    out = rows.assign(
        unit_id=rows["unit_id"].astype(str),
        seed=rows["seed"].astype(int),
        config=rows["config"].astype(str),
        variant=rows["variant"].astype(str),
    )[cols]
    return out.drop_duplicates(["config", "unit_id", "variant", "seed"], keep=False).reset_index(
        drop=True
    )


def with_presence(primary: pd.DataFrame, presence: pd.DataFrame | None) -> pd.DataFrame:
    """``primary`` with a ``present`` column (True / False / None when not judged)."""
    if presence is None or not len(presence):
        return primary.assign(present=None)
    key = ["config", "unit_id", "variant", "seed"]
    merged = primary.astype({"unit_id": str}).merge(presence, on=key, how="left")
    merged["present"] = merged["present"].astype(object).where(merged["present"].notna(), None)
    return merged


# NegT2IBench's polarity settings P:N (P positive, N negated statements) that a single unit can
# write: variant -> (setting, its statements). The positive statement is "the subject is a", the
# negated one "the subject is not s". The load-2+ settings (2:0, 0:2, 2:1, 1:2, 2:2) are not
# writable from one unit (docs/audits.md, NOT_WRITABLE).
SETTINGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "anti_stereotype": ("1:0", ("positive",)),
    "negated_0_1": ("0:1", ("negated",)),
    "negated_1_1": ("1:1", ("positive", "negated")),
}
NOT_WRITABLE: dict[str, str] = {
    setting: "needs a second statement: a unit has one subject and one "
    "attribute axis (s, a); NegT2IBench puts "
    "each further attribute statement on another object, which needs per-object judgements: "
    "scored on NegT2IBench's own corpus instead (metrics/negation.json: corpus)"
    for setting in ("2:0", "0:2", "2:1", "1:2", "2:2")
}
# the failure causes computable from a blind label and a presence judgement (docs/audits.md);
# NegT2IBench's dead zones (relation statements only) need its detectors and cannot occur here
FAILURE_CAUSES: tuple[str, ...] = (
    "missing_object",
    "forbidden_rendered",
    "wrong_value",
    "value_not_rendered",
)


def negation_settings() -> dict[str, Any]:
    """The ``settings`` block of metrics/negation.json: which NegT2IBench settings are scored,
    which are not (and why), and the failure causes counted."""
    return {
        "scored": {
            variant: {"setting": setting, "statements": list(statements)}
            for variant, (setting, statements) in SETTINGS.items()
        },
        "not_writable": dict(NOT_WRITABLE),
        "failure_causes": list(FAILURE_CAUSES),
        "not_computable": {
            "dead_zone": "a relation evaluator returning no predicate (NegT2IBench's detectors); "
            "the paper's dead zones affect relation statements only, "
            "and ours are attribute statements"
        },
    }


def statement_outcomes(
    label: str | None, present: bool | None, statements: tuple[str, ...]
) -> list[tuple[str, str | None]]:
    """Per statement of one image: ("pass" | "fail" | "unknown", failure cause or None).

    Read as s: a negated statement renders what it forbids (``forbidden_rendered``), a positive
    one renders the other value (``wrong_value``). Otherwise a subject judged absent fails every
    statement (``missing_object``: no pass by omission); with the subject present a negated
    statement passes and a positive one passes only when read as a (else ``value_not_rendered``);
    without a presence judgement the outcome is unknown."""
    out: list[tuple[str, str | None]] = []
    for kind in statements:
        if label == "s":
            out.append(("fail", "forbidden_rendered" if kind == "negated" else "wrong_value"))
        elif present is None or (isinstance(present, float) and math.isnan(present)):
            out.append(("unknown", None))
        elif not present:
            out.append(("fail", "missing_object"))
        elif kind == "negated" or label == "a":
            out.append(("pass", None))
        else:
            out.append(("fail", "value_not_rendered"))
    return out


def _statements(frame: pd.DataFrame) -> tuple[str, ...]:
    variants = frame["variant"].dropna().astype(str).unique() if "variant" in frame.columns else []
    if len(variants) > 1:
        raise ValueError(f"negation rates of one variant at a time, got {sorted(variants)}")
    return SETTINGS.get(variants[0], ("", ("negated",)))[1] if len(variants) else ("negated",)


def negation_rates(frame: pd.DataFrame) -> dict[str, float | int | None]:
    """The negation measures of the labelled images in ``frame`` (one variant;
    NegT2IBench's definitions).

    The variant's statements (``SETTINGS``; a variant not listed: one negated statement) are
    judged per image by ``statement_outcomes``; the image passes when every statement passes
    (NegT2IBench: "positive statements pass when condition holds, negated ones when it does not"
    and "an image cannot pass by omission"). Hence:

    - ``strict_success``: read as a, over labelled images;
    - ``lenient_success`` (the paper's pass rule): every statement passes, over the labelled
      images whose outcome is known (read as s, or presence judged); 0:1: not read as s and the
      subject present; 1:0 and 1:1: read as a and the subject present;
    - ``forbidden_rendered``: read as s, over the FAILED images (read as s, or failing with the
      subject judged absent or, for a positive statement, not read as a); NegT2IBench: 41.5%;
    - ``forbidden_rendered_of_images``: read as s, over all labelled images (a secondary figure);
    - ``failed_statements`` and, per cause of ``FAILURE_CAUSES``, ``failed_<cause>`` (count) and
      ``share_<cause>`` (of the failed statements; each failed statement counted once).

    The presence-based figures are None when no image not read as s has a presence judgement
    (``n_presence_unknown`` counts those images).
    """
    statements = _statements(frame)
    labelled = frame[frame["label"].notna()]
    n = len(labelled)
    present = _present(labelled)
    image_status: list[str] = []
    causes = dict.fromkeys(FAILURE_CAUSES, 0)
    for label, pres in zip(labelled["label"], present, strict=True):
        outcomes = statement_outcomes(label, pres, statements)
        status = {o for o, _ in outcomes}
        image_status.append(
            "fail" if "fail" in status else "unknown" if "unknown" in status else "pass"
        )
        for o, cause in outcomes:
            if o == "fail":
                causes[str(cause)] += 1
    forbidden = int((labelled["label"] == "s").sum())
    failed = image_status.count("fail")
    determinable = failed + image_status.count("pass")
    unknown = image_status.count("unknown")
    usable = determinable > forbidden or n - forbidden == 0
    n_failed_statements = sum(causes.values())
    rates: dict[str, float | int | None] = {
        "n": n,
        "n_unlabelled": int(frame["label"].isna().sum()),
        "strict_success": share(int((labelled["label"] == "a").sum()), n),
        "lenient_success": share(image_status.count("pass"), determinable) if usable else math.nan,
        "forbidden_rendered": share(forbidden, failed) if usable else math.nan,
        "forbidden_rendered_of_images": share(forbidden, n),
        "n_failed": failed if usable else None,
        "n_subject_absent": int((labelled["label"].ne("s") & present.eq(False)).sum()),
        "n_presence_unknown": unknown,
        "failed_statements": n_failed_statements if usable else None,
    }
    for cause in FAILURE_CAUSES:
        rates[f"failed_{cause}"] = causes[cause] if usable else None
        rates[f"share_{cause}"] = share(causes[cause], n_failed_statements) if usable else math.nan
    return rates


COMPARED_VARIANTS: tuple[str, ...] = tuple(SETTINGS)  # 1:0, 0:1, 1:1


def _negation_frame(primary: pd.DataFrame, units: pd.DataFrame) -> pd.DataFrame:
    strength = default_strength(primary)
    frame = (
        primary[primary["variant"].isin(COMPARED_VARIANTS)]
        .merge(units[["unit_id", "bias_type"]].astype({"unit_id": str}), on="unit_id", how="left")
        .merge(
            strength[["judge", "config", "unit_id", "strength"]],
            on=["judge", "config", "unit_id"],
            how="left",
        )
    )
    frame["strength"] = frame["strength"].astype(object).fillna("unlabelled")
    frame["overall"] = "all"
    return frame


def negation_table(primary: pd.DataFrame, units: pd.DataFrame) -> pd.DataFrame:
    """Long table: judge, variant, grouping (overall | bias_type | strength), group, rates."""
    frame = _negation_frame(primary, units)
    rows: list[dict[str, Any]] = []
    for grouping in ("overall", "bias_type", "strength"):
        for (judge, variant, group), g in frame.groupby(["judge", "variant", grouping], sort=True):
            rows.append(
                {
                    "judge": judge,
                    "variant": variant,
                    "setting": SETTINGS[str(variant)][0],
                    "grouping": grouping,
                    "group": group,
                    **negation_rates(g),
                }
            )
    return pd.DataFrame(
        rows, columns=["judge", "variant", "setting", "grouping", "group", *RATE_COLUMNS]
    )


RATE_COLUMNS: tuple[str, ...] = (
    "n",
    "n_unlabelled",
    "strict_success",
    "lenient_success",
    "forbidden_rendered",
    "forbidden_rendered_of_images",
    "n_failed",
    "n_subject_absent",
    "n_presence_unknown",
    "failed_statements",
    *(f"{p}_{c}" for c in FAILURE_CAUSES for p in ("failed", "share")),
)


def _present(f: pd.DataFrame) -> pd.Series:
    return f["present"] if "present" in f.columns else pd.Series(None, index=f.index, dtype=object)


def _positive(f: pd.DataFrame) -> pd.Series:
    """Whether each row's variant asserts the positive statement "is a" (1:0, 1:1)."""
    return (
        f["variant"]
        .astype(str)
        .map(lambda v: "positive" in SETTINGS.get(v, ("", ()))[1])
        .astype(bool)
    )


def _passed(f: pd.DataFrame) -> pd.Series:
    return _present(f).eq(True) & f["label"].ne("s") & (~_positive(f) | f["label"].eq("a"))


def _failed(f: pd.DataFrame) -> pd.Series:
    return (
        f["label"].eq("s")
        | _present(f).eq(False)
        | (_present(f).eq(True) & _positive(f) & f["label"].ne("a"))
    )


def _determinable(f: pd.DataFrame) -> pd.Series:
    return f["label"].eq("s") | _present(f).notna()


# name -> (numerator mask, denominator mask) over the labelled images of a group
NEGATION_MEASURES: dict[str, Any] = {
    "strict_success": (lambda f: f["label"].eq("a"), None),
    "lenient_success": (_passed, _determinable),
    "forbidden_rendered": (lambda f: f["label"].eq("s"), _failed),
    "forbidden_rendered_of_images": (lambda f: f["label"].eq("s"), None),
}


def negation_intervals(
    primary: pd.DataFrame, units: pd.DataFrame, boot: Any
) -> dict[tuple[str, str, str, str], Any]:
    """(judge, variant, grouping, group) -> {measure: interval}, resampling each group's units."""
    from implicit_bench.audits.intervals import rate_intervals

    frame = _negation_frame(primary, units)
    out = {}
    for grouping in ("overall", "bias_type", "strength"):
        for (judge, variant, group), g in frame.groupby(["judge", "variant", grouping], sort=True):
            out[(judge, variant, grouping, str(group))] = rate_intervals(
                boot, g, NEGATION_MEASURES, f"negation/{judge}/{variant}/{grouping}/{group}"
            )
            rates = negation_rates(g)
            for name in ("lenient_success", "forbidden_rendered"):  # undefined without presence
                if rates[name] is None or (
                    isinstance(rates[name], float) and math.isnan(rates[name])
                ):
                    out[(judge, variant, grouping, str(group))][name] = estimate_json(None)
    return out


def negation_summary(table: pd.DataFrame, intervals: dict | None = None) -> dict[str, Any]:
    """Nested JSON of ``negation_table``: judge -> grouping -> group -> variant -> rates."""
    out: dict[str, Any] = {}
    for row in table.to_dict("records"):
        rec = {"setting": row["setting"], **{k: row[k] for k in RATE_COLUMNS}}
        rec = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in rec.items()}
        if (
            intervals is not None
        ):  # the rates as Estimates: the point value of the table, the interval
            found = intervals.get(
                (row["judge"], row["variant"], row["grouping"], str(row["group"])), {}
            )
            for name, iv in found.items():
                rec[name] = estimate_json(rec.get(name), iv["ci"], iv["n"], iv["level"])
        out.setdefault(row["judge"], {}).setdefault(row["grouping"], {}).setdefault(
            str(row["group"]), {}
        )[row["variant"]] = rec
    return out
