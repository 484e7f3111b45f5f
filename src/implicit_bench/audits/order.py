"""Judge order audit (When the Judge Acts): position bias, order flips and agreement gates.

The blind question offers s and a as options A and B in one of two orders (``sa``: s is A)
and "neither" as C. Asked under both orders, a judge without position bias gives the same
attribute in both, and picks slot A for half of its s/a answers.

With ``judge.blind_orders: cyclic3`` the three candidates s, a and neither are shown in the
three cyclic orders (``cyclic_audit``): per image the agreement q = (count of the most frequent
answer) / 3, the unanimity gate (q = 1), the 2-of-3 gate (q >= 2/3) and the majority vote
(always acts; a three-way split returns the order-1 answer), each acting only when all three
calls parsed; position bias over three slots against 1/3.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.closed_form import chisquare_uniform, share, wilson_interval
from implicit_bench._util.files import nan_to_none  # noqa: F401 - re-exported (the audit stages import it from here)
from implicit_bench._util.nested import dig
from implicit_bench.audits.labels import (
    IMAGE_KEY,
    OrderOf,
    order_pairs,
    primary_labels,
    slot_of,
)
from implicit_bench.audits.rates import RANDOM_RATES, rates
from implicit_bench.protocol.estimate import estimate_json
from implicit_bench.protocol.schema import CANDIDATE_LABELS, CYCLIC_ORDERS, ORDERS


def slot_a_unit_bootstrap(asked: pd.DataFrame, boot: Any, stream: str) -> dict[str, Any]:
    """The slot-A share of the A/B answers with a cluster bootstrap over units (each unit's A
    and B counts resampled together). Beside the Wilson interval of the definition: an image
    asked under both orders gives one A and one B whenever the judge sees s or a, so its two
    calls are negatively correlated and the Wilson interval over calls is too wide
    (benchmarks/README.md, "Coverage")."""
    counts = (
        asked.assign(A=asked["slot"] == "A", B=asked["slot"] == "B")
        .groupby("unit_id", sort=True)[["A", "B"]]
        .sum()
        .to_numpy(dtype=float)
    )

    def share_a(t: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(t[..., 0] / (t[..., 0] + t[..., 1]), dtype=float)

    return boot.of_sums(counts, share_a, stream)


def position_bias(
    blind: pd.DataFrame, confidence: float = 0.95, boot: Any = None
) -> dict[str, Any]:
    """Per judge: share of s/a answers in slot A vs 50% (an Estimate with its Wilson interval over
    the A/B answers; chi-square on A/B); with ``boot``, also the share with a cluster bootstrap
    over units (``slot_A_share_unit_bootstrap``)."""
    out: dict[str, Any] = {}
    frame = blind.assign(slot=slot_of(blind["label"], blind["order"]))
    for judge, rows in frame.groupby("judge", sort=True):
        asked = rows[rows["order"].isin(ORDERS)]
        n_a = int((asked["slot"] == "A").sum())
        n_b = int((asked["slot"] == "B").sum())
        n_c = int((asked["slot"] == "C").sum())
        by_order: dict[str, Any] = {}
        for order in ORDERS:
            o = asked[asked["order"] == order]
            valid = int(o["label"].notna().sum())
            by_order[order] = {
                "calls": len(o),
                "valid": valid,
                "neither": int((o["label"] == "neither").sum()),
                "neither_share": share(int((o["label"] == "neither").sum()), valid),
                "slot_A": int((o["slot"] == "A").sum()),
                "slot_B": int((o["slot"] == "B").sum()),
            }
        out[str(judge)] = {
            "calls": len(asked),
            "invalid": int(asked["label"].isna().sum()),
            "slot_counts": {"A": n_a, "B": n_b, "C": n_c},
            "slot_A_share": estimate_json(
                share(n_a, n_a + n_b),
                wilson_interval(n_a, n_a + n_b, confidence),
                n_a + n_b,
                confidence,
            ),
            "uniform": 0.5,
            "chi_square": chisquare_uniform([n_a, n_b]),
            # When the Judge Acts counts every call ("picks the first image shown in 49% of
            # calls"): slot A over all valid answers, "neither" (slot C) included, against 1/3
            "slot_A_share_all_calls": estimate_json(
                share(n_a, n_a + n_b + n_c),
                wilson_interval(n_a, n_a + n_b + n_c, confidence),
                n_a + n_b + n_c,
                confidence,
            ),
            "uniform_all_calls": 1 / 3,
            "by_order": by_order,
        }
        if boot is not None and len(asked):
            out[str(judge)]["slot_A_share_unit_bootstrap"] = slot_a_unit_bootstrap(
                asked, boot, f"position_bias/{judge}"
            )
    return out


def order_flips(blind: pd.DataFrame) -> dict[str, Any]:
    """Per judge, over images asked under both orders with both answers valid: flip rates."""
    pairs = order_pairs(blind)
    out: dict[str, Any] = {}
    for judge, rows in pairs.groupby("judge", sort=True):
        both = rows[rows["label_sa"].notna() & rows["label_as"].notna()]
        differ = both["label_sa"] != both["label_as"]
        sa_swap = differ & both["label_sa"].isin(["s", "a"]) & both["label_as"].isin(["s", "a"])
        out[str(judge)] = {
            "images_both_orders": len(rows),
            "images_both_valid": len(both),
            "flips": int(differ.sum()),
            "flip_rate": share(int(differ.sum()), len(both)),
            "s_a_swaps": int(sa_swap.sum()),
            "s_a_swap_rate": share(int(sa_swap.sum()), len(both)),
            "flip_rate_by_variant": {
                str(v): share(int((g["label_sa"] != g["label_as"]).sum()), len(g))
                for v, g in both.groupby("variant", sort=True)
            },
        }
    return out


def _report(
    gated: pd.DataFrame,
    kept: pd.Series,
    ungated: pd.DataFrame,
    boot: Any = None,
    stream: str = "gate",
) -> dict[str, Any]:
    """Coverage and rates on kept images against rejected ones, the ungated judge and random.

    With ``boot`` (the analysis ``Bootstrap``), coverage and the rates of ``gated_kept``,
    ``ungated_rejected`` and ``ungated_all`` are ``Estimate``s with percentile intervals over units.
    """
    n = len(kept)
    report = {
        "images": n,
        "kept": int(kept.sum()),
        "coverage": share(int(kept.sum()), n),
        "gated_kept": rates(gated[kept.to_numpy()], "gated"),
        "ungated_kept": rates(ungated[kept.to_numpy()], "label"),
        "ungated_rejected": rates(ungated[~kept.to_numpy()], "label"),
        "ungated_all": rates(ungated, "label"),
        "random": dict(RANDOM_RATES),
    }
    if boot is not None and n:
        from implicit_bench.audits.intervals import blind_rate_intervals, coverage_interval

        mask = kept.to_numpy()
        report["coverage"] = _with_value(
            report["coverage"], coverage_interval(boot, gated, kept, f"{stream}/coverage")
        )
        for key, frame, label, part in (
            ("gated_kept", gated[mask], "gated", "kept"),
            ("ungated_rejected", ungated[~mask], "label", "rejected"),
            ("ungated_all", ungated, "label", "all"),
        ):
            for name, iv in blind_rate_intervals(boot, frame, label, f"{stream}/{part}").items():
                report[key][name] = _with_value(report[key][name], iv)
    return report


def _with_value(value: float | None, interval: dict[str, Any]) -> dict[str, Any]:
    """The Estimate of ``interval`` around the audit's own point value (the same ratio)."""
    return estimate_json(value, interval["ci"], interval["n"], interval["level"])


def unanimity_gate(
    blind: pd.DataFrame, order_of: OrderOf | None = None, boot: Any = None
) -> dict[str, Any]:
    """Per judge: keep an image when both orders parsed and gave the same attribute."""
    pairs = order_pairs(blind)
    primary = primary_labels(blind, order_of)
    out: dict[str, Any] = {}
    for judge, rows in pairs.groupby("judge", sort=True):
        frame = rows.merge(
            primary.loc[primary["judge"] == judge, [*IMAGE_KEY, "label"]],
            on=list(IMAGE_KEY),
            how="left",
        )
        kept = (
            frame["label_sa"].notna()
            & frame["label_as"].notna()
            & (frame["label_sa"] == frame["label_as"])
        )
        frame["gated"] = frame["label_sa"].where(kept)
        out[str(judge)] = _report(frame, kept, frame, boot, f"unanimity/{judge}")
    return out


def cross_judge_gate(
    blind: pd.DataFrame, order_of: OrderOf | None = None, boot: Any = None
) -> dict[str, Any]:
    """Per pair of judges: keep an image when both judges' primary-order answers parsed and agree.

    Rates of the ungated policy are those of the first judge of the pair (and of the second
    under ``ungated_second_*``).
    """
    primary = primary_labels(blind, order_of)
    judges = sorted(primary["judge"].astype(str).unique())
    out: dict[str, Any] = {}
    for first, second in itertools.combinations(judges, 2):
        a = primary.loc[primary["judge"] == first, [*IMAGE_KEY, "label"]]
        b = primary.loc[primary["judge"] == second, [*IMAGE_KEY, "label"]].rename(
            columns={"label": "label_2"}
        )
        frame = a.merge(b, on=list(IMAGE_KEY), how="inner")
        kept = (
            frame["label"].notna() & frame["label_2"].notna() & (frame["label"] == frame["label_2"])
        )
        frame["gated"] = frame["label"].where(kept)
        report = _report(frame, kept, frame, boot, f"cross/{first}|{second}")
        second_view = frame.drop(columns=["label"]).rename(columns={"label_2": "label"})
        report["ungated_second_kept"] = rates(second_view[kept.to_numpy()], "label")
        report["ungated_second_rejected"] = rates(second_view[~kept.to_numpy()], "label")
        report["agreement"] = share(
            int(kept.sum()), int((frame["label"].notna() & frame["label_2"].notna()).sum())
        )
        out[f"{first}|{second}"] = report
    return out


GATES: dict[str, float] = {"unanimity": 1.0, "two_of_three": 2 / 3, "majority": 1 / 3}
# When the Judge Acts: "ties in the majority are broken by canonical identifier order": the
# canonical order sorts the candidate identifiers (a, n, s = CYCLIC_ORDERS[0]), so a three-way
# split returns the first of them, never an answer that depends on the draw of order 1.
CANONICAL: tuple[str, ...] = tuple(CANDIDATE_LABELS[c] for c in sorted(CANDIDATE_LABELS))


def cyclic_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """One judge's images asked under all three cyclic orders: the three answers (``label_ans``,
    ``label_nsa``, ``label_san``), the order-1 answer ``label`` (the hash-drawn rotation,
    ``schema.cyclic_order``), ``parsed`` (all three valid), ``q`` and ``majority``."""
    from implicit_bench.protocol.schema import cyclic_order

    cyc = rows[rows["order"].isin(CYCLIC_ORDERS)]
    counts = cyc.groupby(list(IMAGE_KEY))["order"].transform("nunique")
    cyc = cyc[counts == len(CYCLIC_ORDERS)]
    wide = (
        cyc.set_index([*IMAGE_KEY, "order"])["label"]
        .unstack("order")
        .reindex(columns=list(CYCLIC_ORDERS))
    )
    wide.columns = [f"label_{o}" for o in CYCLIC_ORDERS]
    frame = wide.reset_index()
    answers = frame[[f"label_{o}" for o in CYCLIC_ORDERS]].astype(object)
    frame["parsed"] = answers.notna().all(axis=1)
    first = [
        f"label_{cyclic_order(u, int(sd), v)}"
        for u, sd, v in zip(frame["unit_id"], frame["seed"], frame["variant"], strict=True)
    ]
    frame["label"] = [frame.at[i, col] for i, col in zip(frame.index, first, strict=True)]
    q, majority = [], []
    for row in answers.itertuples(index=False):
        values = [v for v in row if v is not None and v == v]
        if len(values) < len(CYCLIC_ORDERS):
            q.append(np.nan)
            majority.append(None)
            continue
        tally = pd.Series(values).value_counts()
        top = int(tally.iloc[0])
        q.append(top / len(CYCLIC_ORDERS))
        tied = [label for label, n in tally.items() if n == top]
        majority.append(min(tied, key=CANONICAL.index))
    frame["q"] = q
    frame["majority"] = majority
    frame["label"] = frame["label"].astype(object).where(frame["label"].notna(), None)
    return frame


def cyclic_audit(blind: pd.DataFrame, boot: Any = None, confidence: float = 0.95) -> dict[str, Any]:
    """Per judge asked under the three cyclic orders: agreement, flips, gates, position bias."""
    out: dict[str, Any] = {}
    rows_all = blind[blind["order"].isin(CYCLIC_ORDERS)]
    for judge, rows in rows_all.groupby("judge", sort=True):
        frame = cyclic_frame(rows)
        parsed = frame["parsed"]
        q = frame.loc[parsed, "q"]
        report: dict[str, Any] = {
            "images_three_orders": int(len(frame)),
            "images_all_parsed": int(parsed.sum()),
            "q_distribution": {
                f"{k}/3": int((q.round(6) == round(k / 3, 6)).sum()) for k in (1, 2, 3)
            },
            "flip_rate": share(int((q < 1).sum()), int(parsed.sum())),
            "three_way_split_rate": share(
                int((q.round(6) == round(1 / 3, 6)).sum()), int(parsed.sum())
            ),
            "gates": {},
        }
        for name, tau in GATES.items():
            kept = parsed & (frame["q"] >= tau - 1e-9)
            gated = frame.assign(gated=frame["majority"].where(kept, None))
            report["gates"][name] = {
                "threshold": tau,
                **_report(gated, kept, frame, boot, f"cyclic/{judge}/{name}"),
            }
        slots = slot_of(rows["label"], rows["order"])
        counts = [int((slots == s).sum()) for s in "ABC"]
        valid = sum(counts)
        report["position_bias"] = {
            "calls": int(len(rows)),
            "invalid": int(rows["label"].isna().sum()),
            "slot_counts": dict(zip("ABC", counts, strict=True)),
            "slot_A_share": estimate_json(
                share(counts[0], valid),
                wilson_interval(counts[0], valid, confidence),
                valid,
                confidence,
            ),
            "uniform": 1 / 3,
            "chi_square": chisquare_uniform(counts),
        }
        out[str(judge)] = report
    return out


def position_plot_rows(blind: pd.DataFrame) -> pd.DataFrame:
    """Plot data: per judge and order, the share of valid answers in slots A, B and C.

    ``series`` ("judge, order sa") colours the bars of the DVC ``bar_grouped`` template.
    """
    frame = blind[blind["order"].isin(ORDERS)].assign(slot=slot_of(blind["label"], blind["order"]))
    rows = []
    for (judge, order), g in frame.groupby(["judge", "order"], sort=True):
        valid = int(g["label"].notna().sum())
        for slot in ("A", "B", "C"):
            count = int((g["slot"] == slot).sum())
            rows.append(
                {
                    "judge": judge,
                    "order": order,
                    "slot": slot,
                    "series": f"{judge}, order {order}",
                    "count": count,
                    "share": count / valid if valid else np.nan,
                }
            )
    return pd.DataFrame(rows, columns=["judge", "order", "slot", "series", "count", "share"])


def _value_of(x: Any) -> Any:
    return x.get("value") if isinstance(x, dict) else x


def risk_coverage(report: dict[str, Any], measure: str = "success_a") -> list[dict[str, Any]]:
    """When the Judge Acts' risk-coverage view (its Fig. 14, Table 22) of every gate of the
    audit: one operating point per gate, with coverage and the selective outcome on the kept
    images next to the same judge ungated on them and on the rejected ones, and random choice.

    The benchmark has no human rating to take a regret from, so the outcome is a blind rate
    (``measure``: ``success_a``, the share of anti-stereotype images read as a, by default;
    ``default_rate`` is the other natural one); risk = 1 - that rate for a success measure."""
    points: list[dict[str, Any]] = []

    def point(
        judge: str, protocol: str, gate: str, threshold: float | None, g: dict[str, Any]
    ) -> None:
        gated_entry = dig(g, "gated_kept", measure)  # a value, or an Estimate when bootstrapped
        gated = _value_of(gated_entry)
        points.append(
            {
                "judge": judge,
                "protocol": protocol,
                "gate": gate,
                "threshold": threshold,
                "images": g.get("images"),
                "kept": g.get("kept"),
                "coverage": g.get("coverage"),
                f"{measure}_gated_kept": gated_entry,
                f"{measure}_ungated_kept": _value_of(dig(g, "ungated_kept", measure)),
                f"{measure}_ungated_rejected": _value_of(dig(g, "ungated_rejected", measure)),
                f"{measure}_random": dig(g, "random", measure),
                "risk": None if gated is None or measure == "default_rate" else 1 - gated,
            }
        )

    for judge, g in (dig(report, "unanimity_gate") or {}).items():
        point(judge, "two orders (sa, as)", "unanimity", 1.0, g)
    for judge, per in (dig(report, "cyclic_orders") or {}).items():
        for name, g in (dig(per, "gates") or {}).items():
            point(judge, "three cyclic orders", name, g.get("threshold"), g)
    for pair, g in (dig(report, "cross_judge_gate") or {}).items():
        point(pair, "two judges", "cross-judge agreement", None, g)

    def cover(p: dict[str, Any]) -> float:
        value = _value_of(p["coverage"])
        return -1.0 if value is None else float(value)

    return sorted(points, key=lambda p: (p["judge"], p["protocol"], -cover(p)))
