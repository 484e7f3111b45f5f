"""NegT2IBench's evaluator audit: an evaluator's yes/no probabilities against the majority of
human annotators, in three judge modes, and the negated-question probe.

Input (``read_labels``): one row per element (a required object or a statement) of an image:
``image_id``, ``element_id``, ``kind`` (object | statement), ``polarity`` (positive | negated;
objects are positive), ``setting`` (P:N, e.g. "1:1"), ``category``; the evaluator's P(yes)
``p_pos`` to the element asked in positive form (a negated statement "not red" is asked "is it
red?", which it passes with "no"), ``p_neg`` to a negated statement asked in negated form ("is
it not red?", passed with "yes"; null elsewhere) and ``p_whole`` to the whole prompt (per image,
the same on every row of it); ``rater_*`` columns: each annotator's verdict that the element is
satisfied (1 / 0; blank = not rated). Optional cost columns (Tables 2, 8), from the evaluator's
own run: ``seconds`` (its wall time on the image in the per-element mode, the same on every row
of the image), ``gpu_gib`` (its peak GPU memory, e.g. ``torch.cuda.max_memory_allocated`` / 2^30)
and ``load_s`` (model load time, excluded from s/img), the last two the same on every row.

Modes (Table 2, 6, 10): ``whole`` (the image passes when p_whole >= 0.5), ``pos`` (per element,
every question positive) and ``neg`` (per element, negated statements asked negated); an image
passes a per-element mode when every element passes (p >= 0.5 for the pass answer). The image's
continuous evaluator score is p_whole, or the product of its elements' pass probabilities.

Human side: an annotator passes an image when every element it rated is satisfied; the image's
label is the majority of the annotators' verdicts (a tie: not passed), an element's the majority
of its ratings (a tie: not satisfied); the continuous human score is the share of satisfied
ratings over the image's elements and annotators.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.agreement import kappa_from_counts
from implicit_bench._util.numbers import finite
from implicit_bench.errors import InputError

MODES = ("whole", "pos", "neg")
REQUIRED = ("image_id", "element_id", "kind", "polarity", "p_pos")


# ------------------------------------------------------------------------------ statistics


def binary_agreement(truth: Sequence[int], pred: Sequence[int]) -> dict[str, Any]:
    """Cohen's kappa, accuracy, confusion counts (positive = pass), precision, recall and the
    share the evaluator passes ("called correct"), with scikit-learn."""
    from sklearn.metrics import (
        accuracy_score,
        cohen_kappa_score,
        confusion_matrix,
        precision_recall_fscore_support,
    )

    y, p = np.asarray(truth, dtype=int), np.asarray(pred, dtype=int)
    if len(y) == 0:
        return {"n": 0}
    tn, fp, fn, tp = confusion_matrix(y, p, labels=[0, 1]).ravel()
    prec, rec, _, _ = precision_recall_fscore_support(
        y, p, average="binary", pos_label=1, zero_division=np.nan
    )
    kappa = cohen_kappa_score(y, p, labels=[0, 1]) if len(set(y) | set(p)) > 1 else math.nan
    return {
        "n": len(y),
        "kappa": finite(kappa),
        "accuracy": finite(accuracy_score(y, p)),
        "tp": int(tp),
        "tn": int(tn),
        "fp": int(fp),
        "fn": int(fn),
        "precision": finite(prec),
        "recall": finite(rec),
        "called_correct": finite(p.mean()),
        "human_pass": finite(y.mean()),
    }


def kappa_interval(
    truth: np.ndarray, pred: np.ndarray, clusters: np.ndarray, boot: Any, stream: str
) -> dict[str, Any]:
    """Cohen's kappa with a percentile interval resampling ``clusters`` (images): the four cell
    counts per cluster (the 2x2 table row by row, rows = truth: tp, fn, fp, tn), one matrix
    product per resample set; the kappa of counts is ``_util.agreement.kappa_from_counts``."""
    y, p = np.asarray(truth, dtype=int), np.asarray(pred, dtype=int)
    codes, uniq = pd.factorize(pd.Series(clusters).astype(str), sort=True)
    cells = np.zeros((len(uniq), 4))
    for j, mask in enumerate((y & p, y & (1 - p), (1 - y) & p, (1 - y) & (1 - p))):
        cells[:, j] = np.bincount(codes, weights=mask.astype(float), minlength=len(uniq))
    value = float(kappa_from_counts(cells.sum(axis=0), 2))
    reps = boot.sums(cells, stream)
    return boot.interval(value, kappa_from_counts(reps, 2), stream, len(uniq))


def mean_interval(
    values: np.ndarray, clusters: np.ndarray, boot: Any, stream: str
) -> dict[str, Any]:
    """The mean of ``values`` with a percentile interval resampling ``clusters`` (images)."""
    values = np.asarray(values, dtype=float)
    codes, uniq = pd.factorize(pd.Series(clusters).astype(str), sort=True)
    cols = np.column_stack(
        [
            np.bincount(codes, weights=values, minlength=len(uniq)),
            np.bincount(codes, minlength=len(uniq)).astype(float),
        ]
    )
    value = float(cols[:, 0].sum() / cols[:, 1].sum()) if len(values) else math.nan
    reps = boot.sums(cols, stream)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = reps[:, 0] / reps[:, 1]
    return boot.interval(value, ratio, stream, len(uniq))


def rank_agreement(human: Sequence[float], score: Sequence[float]) -> dict[str, Any]:
    """Kendall tau-b and Spearman rho (scipy) and pairwise ranking accuracy: over image pairs with
    different human scores, the share the evaluator orders the same way (evaluator ties: 1/2)."""
    from scipy.stats import kendalltau, spearmanr

    h, s = np.asarray(human, dtype=float), np.asarray(score, dtype=float)
    if len(h) < 2:
        return {"n": len(h), "kendall_tau": None, "spearman_rho": None, "pairwise_accuracy": None}
    constant = np.ptp(h) == 0 or np.ptp(s) == 0  # no rank correlation is defined
    i, j = np.triu_indices(len(h), k=1)
    dh, ds = np.sign(h[i] - h[j]), np.sign(s[i] - s[j])
    informative = dh != 0
    credit = np.where(ds == 0, 0.5, (dh == ds).astype(float))[informative]
    return {
        "n": len(h),
        "kendall_tau": None if constant else finite(kendalltau(h, s).statistic),
        "spearman_rho": None if constant else finite(spearmanr(h, s).statistic),
        "pairwise_accuracy": finite(credit.mean()) if credit.size else None,
        "pairs": int(informative.sum()),
    }


def element_agreement(truth: Sequence[int], pred: Sequence[int]) -> dict[str, Any]:
    """Element-level agreement (Table 13): kappa, accuracy, the share of satisfied and of
    unsatisfied elements called right, and their mean (balanced accuracy, scikit-learn)."""
    from sklearn.metrics import balanced_accuracy_score

    y, p = np.asarray(truth, dtype=int), np.asarray(pred, dtype=int)
    out = binary_agreement(y, p)
    sat, unsat = y == 1, y == 0
    out["satisfied_right"] = finite(p[sat].mean()) if sat.any() else None
    out["unsatisfied_right"] = finite((1 - p[unsat]).mean()) if unsat.any() else None
    out["balanced_accuracy"] = (
        finite(balanced_accuracy_score(y, p)) if sat.any() and unsat.any() else None
    )
    return out


def fleiss(ratings: np.ndarray) -> float | None:
    """Fleiss' kappa of an (items, raters) 0/1 matrix (statsmodels)."""
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    ratings = np.asarray(ratings, dtype=int)
    if len(ratings) == 0:
        return None
    table, _ = aggregate_raters(ratings, n_cat=2)
    return finite(fleiss_kappa(table, method="fleiss"))


def leave_one_out_kappa(ratings: np.ndarray) -> dict[str, Any]:
    """Per annotator, Cohen's kappa against the majority of the others, averaged (Table 5's
    leave-one-out score, the bar the evaluators are held to); items where the others tie are
    left out for that annotator (counted)."""
    from sklearn.metrics import cohen_kappa_score

    r = np.asarray(ratings, dtype=int)
    kappas, ties = [], []
    for i in range(r.shape[1]):
        others = np.delete(r, i, axis=1)
        yes = others.sum(axis=1)
        decided = yes * 2 != others.shape[1]
        ties.append(int((~decided).sum()))
        maj = (yes * 2 > others.shape[1]).astype(int)
        y, x = maj[decided], r[decided, i]
        kappas.append(
            cohen_kappa_score(y, x, labels=[0, 1]) if len(set(y) | set(x)) > 1 else np.nan
        )
    return {
        "kappa": finite(np.nanmean(kappas)) if kappas else None,
        "per_rater": kappas,
        "ties": ties,
    }


def inter_annotator(ratings: np.ndarray) -> dict[str, Any]:
    r = np.asarray(ratings, dtype=int)
    loo = leave_one_out_kappa(r)
    return {
        "n": len(r),
        "fleiss_kappa": fleiss(r),
        "unanimous": finite((r.min(axis=1) == r.max(axis=1)).mean()) if len(r) else None,
        "leave_one_out_kappa": loo["kappa"],
        "leave_one_out_ties": loo["ties"],
    }


def negated_probe(p_pos: Sequence[float], p_neg: Sequence[float]) -> dict[str, Any]:
    """Table 10's probe over negated statements asked both ways: flip = share whose yes/no
    answer changes between the wordings (complementary answers flip); complementarity error =
    mean |p_pos + p_neg - 1| (0 when the two answers are complementary)."""
    a, b = np.asarray(p_pos, dtype=float), np.asarray(p_neg, dtype=float)
    if len(a) == 0:
        return {"n": 0, "flip_rate": None, "complementarity_error": None}
    return {
        "n": len(a),
        "flip_rate": finite(((a >= 0.5) != (b >= 0.5)).mean()),
        "complementarity_error": finite(np.abs(a + b - 1).mean()),
    }


# ------------------------------------------------------------------------------ the table


def read_labels(path: str) -> pd.DataFrame:
    """Read and validate a labels file (errors: one line naming file, row and field)."""
    from implicit_bench._util.files import read_table

    return validate_labels(read_table(path), path)


def validate_labels(frame: pd.DataFrame, path: str) -> pd.DataFrame:
    """Check a labels table (a file's, or the simulated world's) and fill optional columns."""
    frame = frame.reset_index(drop=True)
    for col in REQUIRED:
        if col not in frame.columns:
            raise InputError(path, None, col, "column missing from the labels file")
    raters = [c for c in frame.columns if str(c).startswith("rater_")]
    if not raters:
        raise InputError(path, None, "rater_*", "no annotator column (rater_1, rater_2, ...)")

    def fail(mask: pd.Series, field: str, reason: str) -> None:
        if mask.any():
            raise InputError(path, int(np.flatnonzero(mask.to_numpy())[0]) + 1, field, reason)

    fail(~frame["kind"].isin(["object", "statement"]), "kind", "not object or statement")
    fail(~frame["polarity"].isin(["positive", "negated"]), "polarity", "not positive or negated")
    fail(
        (frame["kind"] == "object") & (frame["polarity"] != "positive"),
        "polarity",
        "an object is positive",
    )
    for col in ("p_pos", "p_neg", "p_whole"):
        if col not in frame.columns:
            frame[col] = np.nan
        num = pd.to_numeric(frame[col], errors="coerce")
        fail(
            frame[col].notna() & (num.isna() | (num < 0) | (num > 1)),
            col,
            "not a probability in [0, 1]",
        )
        frame[col] = num
    fail(frame["p_pos"].isna(), "p_pos", "missing")
    for col in raters:
        num = pd.to_numeric(frame[col], errors="coerce")
        fail(frame[col].notna() & ~num.isin([0, 1]), col, "not 0 or 1")
        frame[col] = num
    fail(frame[raters].isna().all(axis=1), raters[0], "no annotator rated this element")
    fail(frame.duplicated(["image_id", "element_id"]), "element_id", "duplicate in its image")
    spread = frame.groupby("image_id")["p_whole"].transform("nunique")
    fail(spread > 1, "p_whole", "differs between rows of one image")
    for col, per in (("seconds", "image_id"), ("gpu_gib", None), ("load_s", None)):
        if col not in frame.columns:
            continue
        num = pd.to_numeric(frame[col], errors="coerce")
        fail(num.isna() | (num < 0) | ~np.isfinite(num), col, "not a number >= 0")
        spread = num.groupby(frame[per]).transform("nunique") if per else num.nunique()
        fail(
            pd.Series(spread > 1, index=frame.index),
            col,
            "differs between rows of " + ("one image" if per else "the file"),
        )
        frame[col] = num
    for col in ("setting", "category"):
        if col not in frame.columns:
            frame[col] = None
    return frame.astype({"image_id": str, "element_id": str})


def evaluator_cost(frame: pd.DataFrame) -> dict[str, Any] | None:
    """Tables 2 and 8: seconds per image (mean over timed images), seconds per question (their
    total over the questions they carry: one per element in the per-element mode), questions
    per image, peak GPU memory (GiB) and load seconds; None without a ``seconds`` column."""
    if "seconds" not in frame.columns:
        return None
    per_image = frame.groupby("image_id").agg(
        seconds=("seconds", "first"), q=("element_id", "size")
    )
    total_q = int(per_image["q"].sum())
    return {
        "images_timed": len(per_image),
        "s_per_image": finite(per_image["seconds"].mean()),
        "s_per_question": finite(per_image["seconds"].sum() / total_q) if total_q else None,
        "questions_per_image": finite(per_image["q"].mean()),
        "gpu_gib": finite(frame["gpu_gib"].max()) if "gpu_gib" in frame.columns else None,
        "load_s": finite(frame["load_s"].iloc[0]) if "load_s" in frame.columns else None,
        "note": "s/img excludes model load; s/Q = s/img over the per-element questions (Table 8)",
    }


def element_pass_prob(frame: pd.DataFrame, mode: str) -> pd.Series:
    """P(the element passes) under a per-element mode."""
    neg = frame["polarity"] == "negated"
    p = frame["p_pos"].where(~neg, 1 - frame["p_pos"])
    if mode == "neg":
        p = p.where(~(neg & frame["p_neg"].notna()), frame["p_neg"])
    return p


def evaluator_audit(frame: pd.DataFrame, boot: Any = None) -> dict[str, Any]:
    """Image-level agreement per mode (kappa, confusion, precision / recall, called correct,
    Kendall tau, pairwise accuracy), by setting and category; element-level agreement by polarity;
    inter-annotator agreement; the negated-question probe."""
    raters = [c for c in frame.columns if str(c).startswith("rater_")]
    r = frame[raters].to_numpy(dtype=float)
    rated = ~np.isnan(r)
    n_rated = rated.sum(axis=1)
    yes = np.nansum(r, axis=1)
    frame = frame.assign(human_element=(yes * 2 > n_rated).astype(int), sat_share=yes / n_rated)
    # each annotator's image verdict: every element it rated satisfied
    fails = pd.DataFrame(np.where(rated, 1 - np.nan_to_num(r), 0), columns=raters)
    fails["image_id"] = frame["image_id"].to_numpy()
    rated_df = pd.DataFrame(rated, columns=raters).assign(image_id=frame["image_id"].to_numpy())
    per_rater_fail = fails.groupby("image_id")[raters].sum()
    per_rater_rated = rated_df.groupby("image_id")[raters].sum()
    verdict = (per_rater_fail == 0) & (per_rater_rated > 0)
    n_verdicts = (per_rater_rated > 0).sum(axis=1)
    images = pd.DataFrame(
        {
            "human": (verdict.sum(axis=1) * 2 > n_verdicts).astype(int),
            "human_score": frame.assign(y=yes, k=n_rated)
            .groupby("image_id")
            .apply(lambda g: g["y"].sum() / g["k"].sum(), include_groups=False),
            "setting": frame.groupby("image_id")["setting"].first(),
            "category": frame.groupby("image_id")["category"].first(),
            "p_whole": frame.groupby("image_id")["p_whole"].first(),
        }
    )
    for mode in ("pos", "neg"):
        p = element_pass_prob(frame, mode)
        g = frame.assign(p=p, ok=(p >= 0.5).astype(int)).groupby("image_id")
        images[f"score_{mode}"] = g["p"].prod()
        images[f"pass_{mode}"] = g["ok"].min()
    images["score_whole"] = images["p_whole"]
    images["pass_whole"] = (images["p_whole"] >= 0.5).astype(int)
    modes: dict[str, Any] = {}
    for mode in MODES:
        sub = images[images[f"score_{mode}"].notna()]
        if sub.empty:
            modes[mode] = None
            continue
        block = binary_agreement(sub["human"], sub[f"pass_{mode}"])
        if boot is not None and block["n"]:
            block["kappa_interval"] = kappa_interval(
                sub["human"].to_numpy(),
                sub[f"pass_{mode}"].to_numpy(),
                sub.index.to_numpy(),
                boot,
                f"evaluator/{mode}",
            )
            block["called_correct_interval"] = mean_interval(
                sub[f"pass_{mode}"].to_numpy(), sub.index.to_numpy(), boot, f"evaluator/{mode}/pass"
            )
        block["rank"] = rank_agreement(sub["human_score"], sub[f"score_{mode}"])
        for by in ("setting", "category"):
            block[f"kendall_tau_by_{by}"] = {
                str(k): rank_agreement(g["human_score"], g[f"score_{mode}"])["kendall_tau"]
                for k, g in sub.groupby(by, sort=True)
                if k is not None
            }
        modes[mode] = block
    if modes.get("pos") and modes.get("neg"):
        modes["delta_neg_minus_pos"] = {
            "kappa": None
            if None in (modes["neg"]["kappa"], modes["pos"]["kappa"])
            else modes["neg"]["kappa"] - modes["pos"]["kappa"],
            "kendall_tau": None
            if None in (modes["neg"]["rank"]["kendall_tau"], modes["pos"]["rank"]["kendall_tau"])
            else modes["neg"]["rank"]["kendall_tau"] - modes["pos"]["rank"]["kendall_tau"],
        }
    elements: dict[str, Any] = {}
    for mode in ("pos", "neg"):
        ok = (element_pass_prob(frame, mode) >= 0.5).astype(int)
        elements[mode] = {}
        for name, mask in (
            ("all", np.ones(len(frame), bool)),
            ("affirmative", (frame["polarity"] == "positive").to_numpy()),
            ("negated", (frame["polarity"] == "negated").to_numpy()),
        ):
            block = element_agreement(frame["human_element"][mask], ok[mask])
            if boot is not None and mask.any():
                block["kappa_interval"] = kappa_interval(
                    frame["human_element"][mask].to_numpy(),
                    ok[mask].to_numpy(),
                    frame["image_id"][mask].to_numpy(),
                    boot,
                    f"evaluator/elements/{mode}/{name}",
                )
            elements[mode][name] = block
    neg_rows = frame[(frame["polarity"] == "negated") & frame["p_neg"].notna()]
    complete = r[~np.isnan(r).any(axis=1)]
    pol = frame["polarity"].to_numpy()[~np.isnan(r).any(axis=1)]
    return {
        "images": len(images),
        "elements": len(frame),
        "annotators": len(raters),
        "cost": evaluator_cost(frame),
        "modes": modes,
        "element_level": elements,
        "negated_probe": {
            **negated_probe(neg_rows["p_pos"], neg_rows["p_neg"]),
            **(_probe_intervals(neg_rows, boot) if boot is not None and len(neg_rows) else {}),
            "accuracy": {m: (modes.get(m) or {}).get("accuracy") for m in MODES},
            "called_correct": {m: (modes.get(m) or {}).get("called_correct") for m in MODES},
            "human_pass": finite(images["human"].mean()) if len(images) else None,
        },
        "inter_annotator": {
            "all": inter_annotator(complete),
            "affirmative": inter_annotator(complete[pol == "positive"]),
            "negated": inter_annotator(complete[pol == "negated"]),
            "note": "elements rated by every annotator",
        },
    }


def _probe_intervals(rows: pd.DataFrame, boot: Any) -> dict[str, Any]:
    """Intervals of the probe's flip rate and complementarity error, images resampled."""
    a, b = rows["p_pos"].to_numpy(dtype=float), rows["p_neg"].to_numpy(dtype=float)
    images = rows["image_id"].to_numpy()
    return {
        "flip_rate_interval": mean_interval(
            ((a >= 0.5) != (b >= 0.5)).astype(float), images, boot, "evaluator/probe/flip"
        ),
        "complementarity_error_interval": mean_interval(
            np.abs(a + b - 1), images, boot, "evaluator/probe/complementarity"
        ),
    }
