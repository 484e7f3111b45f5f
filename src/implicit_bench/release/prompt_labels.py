"""Appendix B.3 of the paper from the release's ``data/labeled_{matching,independent}.csv``:
four LLMs label each prompt of a unit's triplet as neutral / stereotype / anti-stereotype
(docs/import.md, "Prompt labels").

- Table 11: per-class accuracy (N, S, A) and All, over the prompts a model labelled (a blank
  label, the model gave no parsable answer, is counted and left out), with Wilson intervals;
- Fleiss' kappa over the four models (``statsmodels``) and leaving each model out, on the
  prompts every model in the computation labelled;
- pairwise Cohen's kappa (``sklearn.metrics.cohen_kappa_score``) on the prompts all four
  labelled (the paper's 0.501 for Claude Sonnet 4.6 vs Qwen3-30B; 0.491 on the prompts the two
  labelled);
- flips: stereotype prompts labelled anti-stereotype and anti-stereotype prompts labelled
  stereotype, per model.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.closed_form import wilson_interval
from implicit_bench.errors import InputError
from implicit_bench.protocol.estimate import estimate_json
from implicit_bench.protocol.schema import VARIANTS

FILES = {"matching": "data/labeled_matching.csv", "independent": "data/labeled_independent.csv"}
MODELS: dict[str, str] = {
    "claude_sonnet": "Claude Sonnet 4.6",
    "qwen3": "Qwen3-30B",
    "gemma4": "Gemma-4",
    "llama4": "Llama-4-Maverick",
}
# protocol -> variant -> column suffix (``{model}_{suffix}``)
COLUMNS: dict[str, dict[str, str]] = {
    "matching": {
        "neutral": "label_neutral",
        "stereotype": "label_stereo",
        "anti_stereotype": "label_anti",
    },
    "independent": {
        "neutral": "ind_neutral",
        "stereotype": "ind_stereotype",
        "anti_stereotype": "ind_anti_stereotype",
    },
}
LABELS = {
    "neutral": "neutral",
    "stereotype": "stereotype",
    "anti-stereotype": "anti_stereotype",
    "anti_stereotype": "anti_stereotype",
}
# ``{model}_correct`` of the matching file as the release writes it (pandas writes a column
# with blanks as floats, and a bool column as True / False)
CORRECT = ("", "0", "1", "0.0", "1.0", "true", "false")
LEVEL = 0.95


def read_labels(release: Any, protocol: str) -> pd.DataFrame:
    """Long form: unit_id, bias_type, variant (the prompt's true class), model, label (None =
    blank)."""
    rel = FILES[protocol]
    cols = {m: {v: f"{m}_{s}" for v, s in COLUMNS[protocol].items()} for m in MODELS}
    frame = release.table(
        rel, ("id", "bias_type", *[c for per in cols.values() for c in per.values()])
    )
    where = release.where(rel)
    dup = frame["id"].duplicated()
    if dup.any():
        raise InputError(
            where,
            int(np.flatnonzero(dup.to_numpy())[0]) + 1,
            "id",
            f"duplicate id {frame['id'][dup].iloc[0]!r}",
        )
    if protocol == "matching":  # the authors' per-unit verdict: 0 / 1 (blank: no labels)
        for model in MODELS:
            col = f"{model}_correct"
            if col not in frame.columns:
                continue
            raw = frame[col].str.strip().str.lower()
            bad = ~raw.isin(CORRECT)
            if bad.any():
                raise InputError(
                    where,
                    int(np.flatnonzero(bad.to_numpy())[0]) + 1,
                    col,
                    f"{frame[col][bad].iloc[0]!r} is not 0 / 1 (or blank)",
                )
    rows = []
    for model, per in cols.items():
        for variant, col in per.items():
            raw = frame[col].str.strip().str.lower()
            bad = (raw != "") & ~raw.isin(LABELS)
            if bad.any():
                raise InputError(
                    where,
                    int(np.flatnonzero(bad.to_numpy())[0]) + 1,
                    col,
                    f"{frame[col][bad].iloc[0]!r} is not neutral / stereotype / anti-stereotype",
                )
            rows.append(
                pd.DataFrame(
                    {
                        "unit_id": frame["id"].str.strip(),
                        "bias_type": frame["bias_type"].str.strip(),
                        "variant": variant,
                        "model": model,
                        "label": raw.map(LABELS).where(raw != "", None),
                    }
                )
            )
    return pd.concat(rows, ignore_index=True)


def _accuracy(part: pd.DataFrame) -> dict[str, Any]:
    labelled = part["label"].notna()
    n = int(labelled.sum())
    k = int((part["label"] == part["variant"])[labelled].sum())
    return estimate_json(
        k / n if n else None, wilson_interval(k, n, LEVEL) if n else None, n, LEVEL
    )


def fleiss(wide: pd.DataFrame, models: list[str]) -> dict[str, Any]:
    """Fleiss' kappa of ``models`` on the prompts each of them labelled."""
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    sub = wide[models].dropna()
    if len(sub) == 0:
        return {"kappa": None, "n_prompts": 0, "models": models}
    table, _ = aggregate_raters(sub.to_numpy(dtype=str))
    return {
        "kappa": float(fleiss_kappa(table, method="fleiss")),
        "n_prompts": int(len(sub)),
        "models": models,
    }


def protocol_report(labels: pd.DataFrame) -> dict[str, Any]:
    """Accuracies, Fleiss' kappa (all, leave-one-out), pairwise Cohen's kappa and flips."""
    from sklearn.metrics import cohen_kappa_score

    models = [m for m in MODELS if m in set(labels["model"])]
    accuracy = {}
    for model in models:
        part = labels[labels["model"] == model]
        accuracy[model] = {v: _accuracy(part[part["variant"] == v]) for v in VARIANTS}
        accuracy[model]["all"] = _accuracy(part)
        accuracy[model]["unlabelled"] = int(part["label"].isna().sum())
    wide = labels.pivot(index=["unit_id", "variant"], columns="model", values="label")
    complete = wide[models].dropna()
    pairwise = {}
    for a, b in combinations(models, 2):
        pairwise[f"{a}|{b}"] = {
            "kappa": float(cohen_kappa_score(complete[a], complete[b])),
            "n_prompts": int(len(complete)),
        }
    flips = {}
    for model in models:
        part = labels[labels["model"] == model]
        s_as_a = int(
            ((part["variant"] == "stereotype") & (part["label"] == "anti_stereotype")).sum()
        )
        a_as_s = int(
            ((part["variant"] == "anti_stereotype") & (part["label"] == "stereotype")).sum()
        )
        flips[model] = {
            "stereotype_as_anti": s_as_a,
            "anti_as_stereotype": a_as_s,
            "total": s_as_a + a_as_s,
            "n_units": int(part["unit_id"].nunique()),
        }
    return {
        "n_units": int(labels["unit_id"].nunique()),
        "n_prompts": int(len(wide)),
        "accuracy": accuracy,
        "fleiss_kappa": fleiss(wide, models),
        "fleiss_kappa_leave_one_out": {
            m: fleiss(wide, [x for x in models if x != m]) for m in models
        },
        "cohen_kappa": pairwise,
        "flips": flips,
    }


def read_prompt_labels(release: Any) -> dict[str, Any] | None:
    """Both protocols' reports (those the release holds) and each protocol's unit ids (the
    caller checks them against the units); None when it holds neither."""
    labels = {p: read_labels(release, p) for p, rel in FILES.items() if release.exists(rel)}
    if not labels:
        return None
    return {
        "models": MODELS,
        "protocols": {p: protocol_report(frame) for p, frame in labels.items()},
        "files": [FILES[p] for p in labels],
        "unit_ids": {p: set(frame["unit_id"]) for p, frame in labels.items()},
    }


def table11(report: dict[str, Any]) -> pd.DataFrame:
    """Table 11: accuracy (%) per model, class and protocol, with Wilson intervals."""
    rows = []
    for model, name in report["models"].items():
        row: dict[str, Any] = {"model": name}
        for protocol, per in report["protocols"].items():
            acc = per["accuracy"].get(model)
            if acc is None:
                continue
            for key, short in (
                ("neutral", "N"),
                ("stereotype", "S"),
                ("anti_stereotype", "A"),
                ("all", "All"),
            ):
                est = acc[key]
                ci = est["ci"] or (None, None)
                row[f"{protocol}_{short}_pct"] = (
                    None if est["value"] is None else 100 * est["value"]
                )
                row[f"{protocol}_{short}_pct_ci_low"] = None if ci[0] is None else 100 * ci[0]
                row[f"{protocol}_{short}_pct_ci_high"] = None if ci[1] is None else 100 * ci[1]
        rows.append(row)
    return pd.DataFrame(rows)


def kappa_table(report: dict[str, Any]) -> pd.DataFrame:
    """Fleiss' kappa (all models, each left out) and pairwise Cohen's kappa per protocol."""
    names = report["models"]
    rows = []
    for protocol, per in report["protocols"].items():
        rows.append(
            {
                "protocol": protocol,
                "statistic": "Fleiss kappa, all models",
                "kappa": per["fleiss_kappa"]["kappa"],
                "n_prompts": per["fleiss_kappa"]["n_prompts"],
            }
        )
        for model, entry in per["fleiss_kappa_leave_one_out"].items():
            rows.append(
                {
                    "protocol": protocol,
                    "statistic": f"Fleiss kappa, without {names[model]}",
                    "kappa": entry["kappa"],
                    "n_prompts": entry["n_prompts"],
                }
            )
        for pair, entry in per["cohen_kappa"].items():
            a, b = pair.split("|")
            rows.append(
                {
                    "protocol": protocol,
                    "statistic": f"Cohen kappa, {names[a]} vs {names[b]}",
                    "kappa": entry["kappa"],
                    "n_prompts": entry["n_prompts"],
                }
            )
    return pd.DataFrame(rows)


def flips_table(report: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for protocol, per in report["protocols"].items():
        for model, entry in per["flips"].items():
            rows.append(
                {
                    "protocol": protocol,
                    "model": report["models"][model],
                    "stereotype_as_anti": entry["stereotype_as_anti"],
                    "anti_as_stereotype": entry["anti_as_stereotype"],
                    "total": entry["total"],
                    "n_units": entry["n_units"],
                }
            )
    return pd.DataFrame(rows)
