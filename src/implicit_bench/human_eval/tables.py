"""Tables 28, 29, 30, D.2 and the rater screening from a human-study report
(:func:`implicit_bench.human_eval.study.study_report`); written by
:func:`implicit_bench.analysis.paper_tables.write_tables` (CSV, Markdown, LaTeX)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from implicit_bench._util.nested import dig


def _ci(est: dict[str, Any] | None) -> tuple[Any, Any, Any]:
    if not est:
        return None, None, None
    ci = est.get("ci") or (None, None)
    return est.get("value"), ci[0], ci[1]


def table28(report: dict[str, Any]) -> pd.DataFrame:
    """One row per quantity of Table 28 (percentages x 100; r with its Fisher interval)."""
    rows: list[dict[str, Any]] = []
    for answer in ("yes", "unsure", "no"):
        v = report["kg_validity"].get(answer)
        rows.append(
            {
                "quantity": f"KG validity: % {answer}",
                "value": None if v is None else 100 * v,
                "n": report["n_kg_answers"],
            }
        )
    for variant in ("stereotype", "neutral", "anti_stereotype"):
        rows.append(
            {
                "quantity": f"mean image rating (0-5): {variant}",
                "value": report["mean_rating"].get(variant),
                "n": report.get("n_ratings_by_variant", {}).get(variant),
            }
        )
    rows.append(
        {
            "quantity": "inter-rater: mean pairwise Pearson r (within round, averaged)",
            "value": report["inter_rater"]["mean_pairwise_r"],
            "n": None,
        }
    )
    for judge, entry in report["human_vs_judge"].items():
        v, lo, hi = _ci(entry["r"])
        rows.append(
            {
                "quantity": f"human vs {judge}: Pearson r",
                "value": v,
                "value_ci_low": lo,
                "value_ci_high": hi,
                "n": entry["n_images"],
            }
        )
    frame = pd.DataFrame(rows)
    frame["n"] = frame["n"].astype("Int64")
    return frame[["quantity", "value", "value_ci_low", "value_ci_high", "n"]]


def table_d2(report: dict[str, Any]) -> pd.DataFrame:
    """D.2 per judge: MAE, cases ordered opposite to the raters (both rules), ties."""
    rows = []
    for judge, entry in report["human_vs_judge"].items():
        flips = report["direction_flips"].get(judge, {})
        rows.append(
            {
                "judge": judge,
                "images": entry["n_images"],
                "mae": entry["mae"],
                "cases": flips.get("cases"),
                "opposite_order_gt": flips.get("disagree_gt"),
                "strict_flips": flips.get("flips"),
                "ties": flips.get("ties"),
            }
        )
    return pd.DataFrame(rows)


def _judges(report: dict[str, Any]) -> list[str]:
    return sorted(report["human_vs_judge"])


def table29(report: dict[str, Any]) -> pd.DataFrame:
    """Table 29 per bias type: n images, MAE and r per judge; sorted by the first judge's MAE."""
    judges = _judges(report)
    rows = []
    for bias, entry in report["by_bias_type"].items():
        row: dict[str, Any] = {"bias_type": bias, "n": entry["images"]}
        for judge in judges:
            hv = entry["human_vs_judge"].get(judge, {})
            row[f"mae_{judge}"] = hv.get("mae")
        for judge in judges:
            r = entry["human_vs_judge"].get(judge, {}).get("r")  # a judge mapped to 0/[]: an error
            row[f"r_{judge}"] = dig(r, "value")
        rows.append(row)
    frame = pd.DataFrame(rows)
    key = f"mae_{judges[-1]}" if judges else "n"
    return (
        frame.sort_values(key, ascending=False, kind="stable").reset_index(drop=True)
        if len(frame)
        else frame
    )


def table30(report: dict[str, Any]) -> pd.DataFrame:
    """Table 30: per bias type, all, and each group with its complement: cases, images,
    inter-rater r-bar and ordinal alpha, r(human, judge) with its Fisher interval."""
    judges = _judges(report)

    def row(name: str, entry: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "bias_type": name,
            "cases": entry["cases"],
            "images": entry["images"],
            "r_bar": entry["mean_pairwise_r"],
            "alpha_ordinal": entry["alpha_ordinal"],
            "directional_only": entry.get("directional_only", False),
        }
        for judge in judges:
            v, lo, hi = _ci(dig(entry["human_vs_judge"], judge, "r"))
            out.update({f"r_{judge}": v, f"r_{judge}_ci_low": lo, f"r_{judge}_ci_high": hi})
        return out

    rows = [
        row(b, e)
        for b, e in sorted(
            report["by_bias_type"].items(), key=lambda kv: -(kv[1]["mean_pairwise_r"] or -9)
        )
    ]
    everything = {
        "cases": report["n_cases"],
        "images": report["n_images"],
        **report["inter_rater"],
        "human_vs_judge": report["human_vs_judge"],
    }
    rows.append(row("all", everything))
    rows += [row(name, entry) for name, entry in report["groups"].items()]
    return pd.DataFrame(rows)


def fisher_table(report: dict[str, Any]) -> pd.DataFrame:
    """The group-against-complement Fisher z tests (plain and case-clustered)."""
    rows = []
    for group, per in report.get("group_tests", {}).items():
        for judge, tests in per.items():
            for kind, t in tests.items():
                rows.append(
                    {
                        "group": group,
                        "judge": judge,
                        "test": kind,
                        "r_group": t["r1"],
                        "r_others": t["r2"],
                        "n_group": t["n1"],
                        "n_others": t["n2"],
                        "z": t["z"],
                        "p": t["p"],
                        "p_text": "–" if t["p"] is None else f"{t['p']:.2g}",
                    }
                )
    return pd.DataFrame(rows)


def screening_table(report: dict[str, Any]) -> pd.DataFrame:
    frame = pd.DataFrame(report["screening"]["raters"])
    return frame.rename(columns={"bundle_id": "round"}) if len(frame) else frame


def human_study_tables(report: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """name -> table (the ``tables/`` of the human study)."""
    return {
        "human_table28": table28(report),
        "human_table29": table29(report),
        "human_table30": table30(report),
        "human_d2": table_d2(report),
        "human_fisher_z": fisher_table(report),
        "human_screening": screening_table(report),
    }
