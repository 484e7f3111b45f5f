"""The release's human study (paper Section 3.4, Appendix D): two Google Form rounds of 50 cases
-> the long-form frames of :func:`implicit_bench.human_eval.study.study_report` (docs/import.md).

Per round (``data/human_eval/``, ``data/human_eval_round2/``):

- ``manifest.csv``: one row per form question, in form order by ``(section_id, sub_q)``:
  ``question_kind`` (``kg_validity`` | ``image_rating``), ``case_id``, ``condition``
  (``neutral`` | ``stereotype_trigger`` | ``anti_stereotype_trigger``), ``seed`` (index),
  ``bias_type``, ``vlm_qwen_score``, ``vlm_gemma_score`` (the judges' rubric scores of that image);
- ``Stereotype Image Evaluation ... (Responses) - Form responses 1.csv``: the Google Form export,
  a ``Timestamp`` column and one column per question (headers repeat the question text, so the
  manifest order maps column k to question k); one row per submission. Answers: ``Yes`` /
  ``No`` / ``Unsure``, ratings ``0 - Not at all``, ``1`` .. ``4``, ``5 - Extremely``.

Raters are named ``r1_rater_<k>`` / ``r2_rater_<k>`` by submission order (the form keeps no
rater identity), as the authors' ``scripts/analyze_human_eval.py`` does.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench.errors import InputError
from implicit_bench.human_eval.answers import KG_ANSWER_COLUMNS, RATING_COLUMNS
from implicit_bench.release import layout

ROUNDS: dict[str, str] = {"round1": "data/human_eval", "round2": "data/human_eval_round2"}
MANIFEST_COLUMNS = (
    "section_id",
    "sub_q",
    "question_kind",
    "case_id",
    "condition",
    "seed",
    "bias_type",
    "vlm_qwen_score",
    "vlm_gemma_score",
)
CONDITIONS = {
    "neutral": "neutral",
    "stereotype_trigger": "stereotype",
    "anti_stereotype_trigger": "anti_stereotype",
}
KINDS = {
    "kg_validity": "Is this a real societal stereotype?",
    "image_rating": "How strongly does the image above reflect the stereotype?",
}
JUDGE_COLUMNS = {
    "vlm_qwen_score": layout.RUBRIC_JUDGES["qwen"],
    "vlm_gemma_score": layout.RUBRIC_JUDGES["gemma"],
}
RATING = re.compile(r"^\s*([0-5])(\s*-.*)?$")


def responses_file(release: Any, folder: str) -> str:
    """The one Google Form export (``*(Responses)*.csv``) of a round folder."""
    names = [n for n in release.listdir(folder) if "(Responses)" in n and n.endswith(".csv")]
    if len(names) != 1:
        raise InputError(
            release.where(folder), None, None, f"expected one '(Responses)' CSV, found {len(names)}"
        )
    return f"{folder}/{names[0]}"


def _form_rows(data: bytes, where: str) -> pd.DataFrame:
    """The Google Form export as strings, header row first; a row with more or fewer cells
    than the header (a truncated export would read as unanswered items) names the file and row
    (the 1-based submission; 0 is the header)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(where, None, None, f"not UTF-8 text (byte {exc.start})") from None
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise InputError(where, None, None, f"not a valid CSV file: {exc}") from None
    rows = [r for r in rows if r]  # blank lines
    if not rows:
        raise InputError(where, None, None, "empty Google Form export")
    width = len(rows[0])
    for slot, row in enumerate(rows[1:], start=1):
        if len(row) != width:
            raise InputError(
                where, slot, None, f"{len(row)} cells but the header has {width} columns"
            )
    return pd.DataFrame(rows, dtype=str)


def read_round(
    release: Any, bundle: str, folder: str
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(ratings, kg answers, judge scores) of one round, checked against its manifest."""
    rel_m = f"{folder}/manifest.csv"
    manifest = release.table(rel_m, MANIFEST_COLUMNS)
    where_m = release.where(rel_m)
    for field in ("section_id", "sub_q", "seed"):
        bad = ~manifest[field].str.strip().str.fullmatch(r"\d+")
        if bad.any():
            raise InputError(
                where_m,
                int(np.flatnonzero(bad.to_numpy())[0]) + 1,
                field,
                f"expected an integer, got {manifest[field][bad].iloc[0]!r}",
            )
    kinds = ~manifest["question_kind"].isin(KINDS)
    if kinds.any():
        raise InputError(
            where_m,
            int(np.flatnonzero(kinds.to_numpy())[0]) + 1,
            "question_kind",
            f"expected one of {', '.join(KINDS)}",
        )
    manifest = manifest.assign(
        _s=manifest["section_id"].astype(int),
        _q=manifest["sub_q"].astype(int),
        _row=np.arange(1, len(manifest) + 1),
    )
    manifest = manifest.sort_values(["_s", "_q"], kind="stable").reset_index(drop=True)
    first = manifest.groupby("_s")["case_id"].transform("first")
    mixed = manifest["case_id"] != first
    if mixed.any():
        row = manifest[mixed].iloc[0]
        raise InputError(
            where_m,
            int(row["_row"]),
            "case_id",
            f"section {row['_s']} lists cases {first[mixed].iloc[0]!r} and {row['case_id']!r}",
        )
    dup = manifest.duplicated(["_s", "_q"])
    if dup.any():
        raise InputError(
            where_m,
            int(manifest.loc[dup, "_row"].iloc[0]),
            "sub_q",
            "question (section_id, sub_q) listed twice",
        )

    rel_r = responses_file(release, folder)
    where_r = release.where(rel_r)
    resp = _form_rows(release.read_bytes(rel_r), where_r)
    header = [h.strip() for h in resp.iloc[0]]
    if header[0] != "Timestamp":
        raise InputError(
            where_r, None, header[0], "expected the Google Form export: first column 'Timestamp'"
        )
    if len(header) - 1 != len(manifest):
        raise InputError(
            where_r,
            None,
            None,
            f"{len(header) - 1} answer columns but {len(manifest)} questions in {rel_m}",
        )
    for k, (kind, text) in enumerate(
        zip(manifest["question_kind"], header[1:], strict=True), start=1
    ):
        if text != KINDS[kind]:
            raise InputError(
                where_r,
                None,
                f"column {k + 1}",
                f"header {text!r} does not match question {k} of the manifest ({kind})",
            )

    ratings, kg, counts = [], [], {"submissions": len(resp) - 1, "unanswered_items": 0}
    tag = bundle.replace("round", "r")
    for slot in range(1, len(resp)):
        rater = f"{tag}_rater_{slot}"
        for k, q in enumerate(manifest.itertuples(index=False), start=1):
            raw = str(resp.iat[slot, k]).strip()
            field = f"column {k + 1} ({q.section_id}.{q.sub_q})"
            base = {
                "bundle_id": bundle,
                "rater": rater,
                "case": f"{int(q.section_id):03d}",
                "unit_id": q.case_id.strip(),
                "bias_type": q.bias_type.strip(),
            }
            if raw == "":
                counts["unanswered_items"] += 1
                continue
            if q.question_kind == "kg_validity":
                answer = raw.lower()
                if answer not in ("yes", "no", "unsure"):
                    raise InputError(where_r, slot, field, f"{raw!r} is not Yes / No / Unsure")
                kg.append({**base, "answer": answer})
                continue
            m = RATING.match(raw)
            if m is None:
                raise InputError(where_r, slot, field, f"{raw!r} is not a rating 0-5")
            if q.condition not in CONDITIONS:
                raise InputError(
                    where_m,
                    int(q._row),
                    "condition",
                    f"expected one of {', '.join(CONDITIONS)}, got {q.condition!r}",
                )
            ratings.append(
                {
                    **base,
                    "seed": layout.seed_of(int(q.seed)),
                    "position": int(q.sub_q) - 1,
                    "variant": CONDITIONS[q.condition],
                    "rating": float(m.group(1)),
                }
            )

    images = manifest[manifest["question_kind"] == "image_rating"]
    scores = []
    for col, judge in JUDGE_COLUMNS.items():
        value = pd.to_numeric(images[col].replace("", np.nan), errors="coerce")
        bad = value.isna() & images[col].str.strip().ne("")
        if bad.any():
            raise InputError(
                where_m,
                int(images.loc[bad, "_row"].iloc[0]),
                col,
                f"not a number: {images.loc[bad, col].iloc[0]!r}",
            )
        scores.append(
            pd.DataFrame(
                {
                    "unit_id": images["case_id"].str.strip(),
                    "variant": images["condition"].map(CONDITIONS),
                    "seed": images["seed"].astype(int).map(layout.seed_of),
                    "judge": judge,
                    "score": value,
                }
            )
        )
    out_r = pd.DataFrame(
        ratings,
        columns=list(RATING_COLUMNS),
    )
    out_k = pd.DataFrame(kg, columns=list(KG_ANSWER_COLUMNS))
    out_r.attrs["counts"] = counts
    return out_r, out_k, pd.concat(scores, ignore_index=True)


def read_human_study(release: Any) -> dict[str, Any] | None:
    """Every round the release holds: ratings, kg, scores (all rounds), counts per round, files
    read; None when the release has no human-study folder."""
    present = {b: f for b, f in ROUNDS.items() if release.exists(f"{f}/manifest.csv")}
    if not present:
        return None
    parts = [read_round(release, b, f) for b, f in present.items()]
    ratings = pd.concat([p[0] for p in parts], ignore_index=True)
    kg = pd.concat([p[1] for p in parts], ignore_index=True)
    scores = pd.concat([p[2] for p in parts], ignore_index=True)
    dup = scores.duplicated(["unit_id", "variant", "seed", "judge"], keep=False)
    if dup.any():
        row = scores[dup].iloc[0]
        raise InputError(
            release.where("data/human_eval*/manifest.csv"),
            None,
            "case_id",
            f"case {row['unit_id']} rated in two rounds",
        )
    counts = {b: p[0].attrs["counts"] for b, p in zip(present, parts, strict=True)}
    files = [f"{f}/manifest.csv" for f in present.values()] + [
        responses_file(release, f) for f in present.values()
    ]
    return {"ratings": ratings, "kg": kg, "scores": scores, "counts": counts, "files": files}
