"""NegT2IBench's accuracy of a text-to-image model on its prompt corpus (Table 3, Figure 3,
Table 19), from per-object judgements of each image.

Judgements: one row per image and element of its prompt (audits/negation_corpus.elements):
``image_id``, ``prompt_id``, ``element_id`` and ``holds``: for an object, 1 = present, 0 =
absent; for a statement, 1 = its condition holds (the cup is red; the laptop is right of the
zebra), 0 = it does not, empty = the evaluator emits no predicate for the pair (a dead zone).

Scoring (Table 14: "positive statements pass when condition holds, negated ones when it does
not"; Figure 2: "Both objects are present, so the image cannot pass by omission"):

- a statement whose object (or, for a relation, subject or target) is absent fails
  (``missing_object``);
- otherwise a positive statement passes when ``holds`` = 1, fails with ``not_rendered`` when 0
  and with ``dead_zone`` when empty; a negated statement passes when ``holds`` = 0 and when empty
  (a dead-zone pass, Table 19), and fails with ``forbidden_rendered`` when 1;
- an image passes when every required object is present and every statement passes.

Accuracy: the share of images passing, by polarity setting, by statement load (P + N), by
category and overall, with a percentile bootstrap over prompts (a prompt's images travel
together; the same resamples for every figure). Failed statements are split by cause per
setting and category (each failed statement counted once; satisfied ones never). Our copy of
the paper names three of Figure 3's five causes (missing object, forbidden rendered, dead zone);
``not_rendered`` is ours, and there is no fifth.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.files import read_table
from implicit_bench.audits.negation_corpus import CATEGORIES, SETTINGS
from implicit_bench.errors import InputError
from implicit_bench.protocol.estimate import estimate_json

CAUSES = ("missing_object", "forbidden_rendered", "not_rendered", "dead_zone")
REQUIRED = ("image_id", "prompt_id", "element_id", "holds")


def read_judgements(path: str, elements: pd.DataFrame) -> pd.DataFrame:
    """A per-object judgements file checked against the corpus's elements (one line naming file,
    row and field for a bad row; every element of a judged image must be present once)."""
    frame = read_table(path).reset_index(drop=True)
    for col in REQUIRED:
        if col not in frame.columns:
            raise InputError(path, None, col, "column missing from the judgements file")
    return validate_judgements(frame, elements, path)


def validate_judgements(frame: pd.DataFrame, elements: pd.DataFrame, path: str) -> pd.DataFrame:
    frame = frame.reset_index(drop=True).astype({"prompt_id": str, "element_id": str})
    raw = frame["holds"]
    holds = pd.to_numeric(raw, errors="coerce")
    bad = (raw.notna() & (raw.astype(str).str.strip() != "") & ~holds.isin([0, 1])) | (
        holds.notna() & ~holds.isin([0, 1])
    )
    _fail(path, bad, "holds", "not 1, 0 or empty")
    keys = elements[["prompt_id", "element_id", "kind"]]
    merged = frame.merge(keys, on=["prompt_id", "element_id"], how="left")
    _fail(path, merged["kind"].isna(), "element_id", "not an element of that prompt")
    _fail(path, (merged["kind"] == "object") & holds.isna(), "holds", "empty for an object")
    _fail(path, frame.duplicated(["image_id", "element_id"]), "element_id", "twice for one image")
    _fail(
        path,
        frame.groupby("image_id")["prompt_id"].transform("nunique") > 1,
        "prompt_id",
        "one image under two prompts",
    )
    per_prompt = elements.groupby("prompt_id").size()
    got = frame.groupby("image_id")["element_id"].transform("size")
    want = frame["prompt_id"].map(per_prompt)
    _fail(path, got != want, "image_id", "does not judge every element of its prompt")
    return frame.assign(holds=holds)


def _fail(path: str, mask: pd.Series, field: str, reason: str) -> None:
    mask = mask.to_numpy(dtype=bool)
    if mask.any():
        raise InputError(path, int(np.flatnonzero(mask)[0]) + 1, field, reason)


def score(judgements: pd.DataFrame, elements: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per image: prompt, category, setting, load, passed; per statement: its pass and cause)."""
    j = judgements.merge(
        elements, on=["prompt_id", "element_id"], how="left", validate="many_to_one"
    )
    obj = j[j["kind"] == "object"]
    present = {
        (img, o): h == 1
        for img, o, h in zip(obj["image_id"], obj["object"], obj["holds"], strict=True)
    }
    st = j[j["kind"] == "statement"].copy()
    have = [
        present.get((img, o), False) and (t is None or pd.isna(t) or present.get((img, t), False))
        for img, o, t in zip(st["image_id"], st["object"], st["target"], strict=True)
    ]
    st["objects_present"] = have
    neg = st["polarity"] == "negated"
    h = st["holds"]
    cause = np.select(
        [
            ~st["objects_present"],
            neg & (h == 1),
            ~neg & (h == 0),
            ~neg & h.isna(),
        ],
        list(CAUSES),
        default="",
    )
    st["cause"] = cause
    st["passed"] = cause == ""
    st["dead_zone_pass"] = st["passed"] & neg & h.isna()
    objects_ok = obj.groupby("image_id")["holds"].apply(lambda x: bool((x == 1).all()))
    statements_ok = st.groupby("image_id")["passed"].all()
    images = (
        j.drop_duplicates("image_id")[["image_id", "prompt_id", "category", "setting"]]
        .set_index("image_id")
        .assign(
            passed=lambda f: (
                objects_ok.reindex(f.index).fillna(True).astype(bool)
                & statements_ok.reindex(f.index).fillna(True).astype(bool)
            )
        )
        .reset_index()
    )
    images["load"] = images["setting"].map(lambda s: sum(int(x) for x in s.split(":")))
    return images, st


def accuracy_report(
    judgements: pd.DataFrame, elements: pd.DataFrame, boot: Any = None
) -> dict[str, Any]:
    """Table 3 (by setting, load, category, overall), the 1:0 minus 0:1 gap, Figure 3's failed
    statements by cause, Table 19's dead-zone passes. No judged image: the same keys, empty."""
    if judgements.empty:
        return {
            "images": 0,
            "prompts": 0,
            "overall": estimate_json(None, None, 0, None),
            "by_setting": {},
            "by_load": {},
            "by_category": {},
            "failed_statements": {
                "total": 0,
                "forbidden_rendered_share": None,
                "by_setting": {},
                "by_category": {},
            },
            "dead_zone_passes": {},
        }
    images, st = score(judgements, elements)
    prompts = sorted(images["prompt_id"].unique())
    pidx = images["prompt_id"].map({p: i for i, p in enumerate(prompts)}).to_numpy()
    n = len(prompts)
    w = boot.weights(n, "negt2i/accuracy") if boot is not None and n else None
    passed = images["passed"].to_numpy(dtype=float)

    def acc(mask: np.ndarray, tag: str) -> dict[str, Any]:
        k, m = np.bincount(pidx, passed * mask, n), np.bincount(pidx, mask.astype(float), n)
        value = float(k.sum() / m.sum()) if m.sum() else None
        if w is None or value is None:
            return estimate_json(value, None, n, None)
        with np.errstate(invalid="ignore", divide="ignore"):
            reps = (w @ k) / (w @ m)
        return boot.interval(value, reps, f"negt2i/{tag}", n)

    settings = [f"{p}:{q}" for p, q in SETTINGS]
    out: dict[str, Any] = {
        "images": int(len(images)),
        "prompts": n,
        "overall": acc(np.ones(len(images), bool), "overall"),
        "by_setting": {
            s: acc((images["setting"] == s).to_numpy(), s)
            for s in settings
            if (images["setting"] == s).any()
        },
        "by_load": {
            str(k): acc((images["load"] == k).to_numpy(), f"load{k}")
            for k in sorted(images["load"].unique())
        },
        "by_category": {
            c: acc((images["category"] == c).to_numpy(), c)
            for c in CATEGORIES
            if (images["category"] == c).any()
        },
    }
    one, neg = (images["setting"] == "1:0").to_numpy(), (images["setting"] == "0:1").to_numpy()
    if one.any() and neg.any():
        m1, m0 = np.bincount(pidx, one.astype(float), n), np.bincount(pidx, neg.astype(float), n)
        k1, k0 = np.bincount(pidx, passed * one, n), np.bincount(pidx, passed * neg, n)
        value = float(k1.sum() / m1.sum() - k0.sum() / m0.sum())
        reps = None
        if w is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                reps = (w @ k1) / (w @ m1) - (w @ k0) / (w @ m0)
        gap = (
            boot.interval(value, reps, "negt2i/gap", n)
            if reps is not None
            else estimate_json(value, None, n, None)
        )
        out["positive_minus_negated"] = gap
    failed = st[~st["passed"]]
    out["failed_statements"] = {
        "total": int(len(failed)),
        "forbidden_rendered_share": float((failed["cause"] == "forbidden_rendered").mean())
        if len(failed)
        else None,
        "by_setting": _causes(failed, "setting"),
        "by_category": _causes(failed, "category"),
    }
    rel = st[(st["polarity"] == "negated") & st["objects_present"] & st["target"].notna()]
    out["dead_zone_passes"] = {
        str(c): {
            "evaluable": int(len(f)),
            "passed": int(f["passed"].sum()),
            "dead_zone_passes": int(f["dead_zone_pass"].sum()),
            "share_of_passes": float(f["dead_zone_pass"].sum() / f["passed"].sum())
            if f["passed"].sum()
            else None,
        }
        for c, f in rel.groupby("category")
    }
    return out


def _causes(failed: pd.DataFrame, by: str) -> dict[str, Any]:
    out = {}
    for key, f in failed.groupby(by):
        counts = {c: int((f["cause"] == c).sum()) for c in CAUSES}
        out[str(key)] = {
            "failed": int(len(f)),
            **counts,
            **{f"share_{c}": counts[c] / len(f) for c in CAUSES},
        }
    return out
