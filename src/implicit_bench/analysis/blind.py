"""Benchmark metrics from the blind s / a / neither labels (paper Sections 4.2-4.4, App. C).

All rates are shares of images with a valid label (invalid and missing labels are left out of
numerator and denominator). Default rate: neutral images labelled s. Success of the stereotype
prompt: its images labelled s; of the anti-stereotype prompt: labelled a; gap = the first minus
the second; a->s: anti-stereotype images labelled s. Both-succeed (recoverability): share of
(unit, seed) pairs whose stereotype image is labelled s and anti-stereotype image a, among pairs
where both labels are valid. Intervals: cluster bootstrap over units (``bootstrap``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench._util.closed_form import safe_div
from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.analysis.views import rows
from implicit_bench.protocol import metric_schema
from implicit_bench.protocol.schema import BLIND_LABELS, VARIANTS


@dataclass
class LabelCounts:
    """Per-unit label counts of one (config, judge, seeds), aligned on ``unit_ids``."""

    unit_ids: np.ndarray
    valid: dict[str, np.ndarray]  # variant -> valid labels per unit
    label: dict[tuple[str, str], np.ndarray]  # (variant, label) -> count per unit
    invalid: dict[str, np.ndarray]  # variant -> invalid rows per unit
    pairs: np.ndarray  # (unit, seed) pairs with valid stereotype and anti-stereotype labels
    both: np.ndarray  # ... of which stereotype = s and anti-stereotype = a
    _matrix: tuple[dict[Any, int], np.ndarray] | None = field(
        default=None, repr=False, compare=False
    )

    def has_labels(self) -> np.ndarray:
        return sum(self.valid.values()) > 0

    def columns(self) -> tuple[dict[Any, int], np.ndarray]:
        """Every per-unit count as one ``n_units x k`` matrix and the column of each count
        (keys: ``("valid", variant)``, ``(variant, label)``, ``"pairs"``, ``"both"``), so that one
        matrix product gives the replicates of all of them (``Bootstrap.sums``)."""
        if self._matrix is None:
            keys: list[Any] = (
                [("valid", v) for v in self.valid] + list(self.label) + ["pairs", "both"]
            )
            values = [*self.valid.values(), *self.label.values(), self.pairs, self.both]
            self._matrix = (
                {key: j for j, key in enumerate(keys)},
                np.column_stack(values) if values else np.zeros((len(self.unit_ids), 0)),
            )
        return self._matrix


def label_counts(
    judgements: pd.DataFrame,
    config: str,
    judge: str,
    unit_ids: Sequence[str],
    seeds: Sequence[int] | None = None,
) -> LabelCounts:
    """Per-unit counts of valid labels, each label, invalid rows and (unit, seed) pairs of one
    judge's blind rows, by integer codes and ``bincount`` (a key occurs once per variant)."""
    sub = rows(judgements, "blind", config, judge, seeds, unit_ids)
    ids = list(unit_ids)
    n = len(ids)
    sub = sub[sub["variant"].isin(VARIANTS)]
    unit = pd.Index(ids).get_indexer(sub["unit_id"]).astype(np.int64)
    variant = pd.Categorical(sub["variant"], categories=list(VARIANTS)).codes.astype(np.int64)
    label = pd.Categorical(sub["value"], categories=list(BLIND_LABELS)).codes.astype(np.int64)
    has = sub["value"].notna().to_numpy()
    invalid_row = ~sub["valid"].to_numpy(dtype=bool)

    def per_unit(mask: np.ndarray) -> np.ndarray:
        return np.bincount(unit[mask], minlength=n).astype(float)

    valid = {v: per_unit(has & (variant == i)) for i, v in enumerate(VARIANTS)}
    labels = {
        (v, lab): per_unit((variant == i) & (label == k))
        for i, v in enumerate(VARIANTS)
        for k, lab in enumerate(BLIND_LABELS)
    }
    invalid = {v: per_unit(invalid_row & (variant == i)) for i, v in enumerate(VARIANTS)}
    seed = pd.factorize(sub["seed"])[0].astype(np.int64)
    key = unit * (int(seed.max()) + 1 if len(seed) else 1) + seed  # one (unit, seed) pair
    stereotype, anti = (
        variant == VARIANTS.index("stereotype"),
        variant == VARIANTS.index("anti_stereotype"),
    )
    s_label, a_label = label == BLIND_LABELS.index("s"), label == BLIND_LABELS.index("a")

    def pair_units(first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """Per unit: the (unit, seed) pairs with a row in both masks."""
        common = np.intersect1d(key[first], key[second], assume_unique=True)
        return np.bincount(unit[np.isin(key, common) & first], minlength=n).astype(float)

    pairs = pair_units(has & stereotype, has & anti)
    both = pair_units(stereotype & s_label, anti & a_label)
    return LabelCounts(np.asarray(ids), valid, labels, invalid, pairs, both)


def rates(c: LabelCounts, pos: np.ndarray, boot: Bootstrap, stream: str) -> dict[str, Any]:
    """The blind rates of the units at positions ``pos`` with intervals (shared resamples): each
    rate ``protocol.metric_schema`` declares (a ratio of counts or a difference of two rates)."""
    n = len(pos)
    col, matrix = c.columns()
    sub = matrix[pos]
    totals = sub.sum(axis=0)
    reps_all = boot.sums(sub, stream)  # every count's replicates from one draw, one product

    def ratio(num: Any, den: Any) -> tuple[dict[str, Any], float, np.ndarray]:
        i, k = col[num], col[den]
        reps = safe_div(reps_all[:, i], reps_all[:, k])
        interval = boot.interval(safe_div(totals[i], totals[k]), reps, stream, n)
        return interval, interval["value"] if interval["value"] is not None else np.nan, reps

    out: dict[str, Any] = {
        "n_units": n,
        "n_images": {v: int(c.valid[v][pos].sum()) for v in VARIANTS},
        "n_invalid": {v: int(c.invalid[v][pos].sum()) for v in VARIANTS},
    }
    values: dict[str, tuple[float, np.ndarray]] = {}
    for m in metric_schema.blind_rates():  # the declared rates, in their order
        if m.ratio is not None:
            est, v, r = ratio(*m.ratio)
        else:
            (va, ra), (vb, rb) = (values[name] for name in m.difference)  # type: ignore[union-attr]
            est = boot.interval(va - vb, ra - rb, stream, n)
            v, r = est["value"] if est["value"] is not None else np.nan, ra - rb
        out[m.name] = est
        values[m.name] = (v, r)
    out["n_pairs"] = int(c.pairs[pos].sum())
    return out


def label_shares(c: LabelCounts, pos: np.ndarray, boot: Bootstrap, stream: str) -> dict[str, Any]:
    """Table 21: share of each variant's images read as s, a, neither."""
    out: dict[str, Any] = {}
    col, matrix = c.columns()
    sub = matrix[pos]
    totals = sub.sum(axis=0)
    reps = boot.sums(sub, stream)
    for v in VARIANTS:
        entry: dict[str, Any] = {
            "n_images": int(c.valid[v][pos].sum()),
            "n_invalid": int(c.invalid[v][pos].sum()),
        }
        den = col[("valid", v)]
        for lab in BLIND_LABELS:
            num = col[(v, lab)]
            entry[lab] = boot.interval(
                safe_div(totals[num], totals[den]),
                safe_div(reps[:, num], reps[:, den]),
                stream,
                len(pos),
            )
        out[v] = entry
    return out


def group_names(k: int) -> list[str]:
    """Default-strength group names for k seeds: '0 of 3', '1-2 of 3', '3 of 3'."""
    if k == 1:
        return ["0 of 1", "1 of 1"]
    middle = f"1 of {k}" if k == 2 else f"1-{k - 1} of {k}"
    return [f"0 of {k}", middle, f"{k} of {k}"]


def strength_groups(
    grouping: LabelCounts,
    labels: LabelCounts,
    k: int,
    boot: Bootstrap,
    stream: str,
    keep: np.ndarray | None = None,
) -> dict[str, Any]:
    """Units grouped by how many of their k neutral images ``grouping`` labels s.

    Only units with exactly k valid neutral labels from ``grouping`` are grouped (the paper's
    rule for Table 25); the others are counted as ``ungrouped_units``. Within a group, the rates
    come from ``labels`` (the same judge, another judge = "Cross", or other seeds).
    """
    complete = grouping.valid["neutral"] == k
    n_s = grouping.label[("neutral", "s")]
    usable = labels.has_labels() if keep is None else labels.has_labels() & keep
    names = group_names(k)
    masks = [n_s == 0, n_s == k] if k == 1 else [n_s == 0, (n_s > 0) & (n_s < k), n_s == k]
    ungrouped = (~complete) & usable & grouping.has_labels()
    no_grouping = usable & ~grouping.has_labels()
    out: dict[str, Any] = {
        "rule": f"units with exactly {k} valid neutral labels from the "
        "grouping judge; others ungrouped",
        "ungrouped_units": int(ungrouped.sum()),
        "units_without_grouping_labels": int(no_grouping.sum()),
        "groups": {},
    }
    for name, mask in zip(names, masks, strict=True):
        pos = np.flatnonzero(complete & mask & usable)
        r = rates(labels, pos, boot, f"{stream}/{name}")
        out["groups"][name] = {
            "n_units": r["n_units"],
            "n_images": r["n_images"],
            # the tabled rates, the default rate last (the file's order since it was written)
            **{key: r[key] for key in (*metric_schema.tabled()[1:], metric_schema.tabled()[0])},
        }
    pos = np.flatnonzero(complete & usable)
    r = rates(labels, pos, boot, f"{stream}/all grouped")
    out["all_grouped"] = {
        key: r[key]
        for key in ("n_units", *metric_schema.tabled()[1:])  # no default rate
    }
    return out


def by_bias_type(
    c: LabelCounts,
    unit_types: np.ndarray,
    types: Sequence[str],
    diagnostic: Sequence[str],
    boot: Bootstrap,
    stream: str,
) -> dict[str, Any]:
    """Rates per bias type (and pooled recoverable / diagnostic types), with intervals."""
    has = c.has_labels()
    out: dict[str, Any] = {}
    for t in types:
        pos = np.flatnonzero(has & (unit_types == t))
        if len(pos):
            out[t] = {
                "diagnostic": t in diagnostic,
                **rates(c, pos, boot, f"{stream}/bias_type={t}"),
            }
    diag = np.isin(unit_types, list(diagnostic))
    out["_recoverable_types"] = {
        "diagnostic": False,
        **rates(c, np.flatnonzero(has & ~diag), boot, f"{stream}/recoverable"),
    }
    out["_diagnostic_types"] = {
        "diagnostic": True,
        **rates(c, np.flatnonzero(has & diag), boot, f"{stream}/diagnostic"),
    }
    return out


def recoverability(per_type: dict[str, Any], both_max: float, neither_min: float) -> dict[str, Any]:
    """Table 5 from one judge's per-type rates: both-succeed and neutral 'neither' shares."""
    out: dict[str, Any] = {}
    for t, r in per_type.items():
        both = r["both_succeed"]["value"]
        neither = r["neither_neutral"]["value"]
        out[t] = {
            "diagnostic": r["diagnostic"],
            "n_units": r["n_units"],
            "n_pairs": r["n_pairs"],
            "both_succeed": r["both_succeed"],
            "neither_neutral": r["neither_neutral"],
            "fails_both_checks": None
            if both is None or neither is None
            else bool(both <= both_max and neither > neither_min),
        }
    return out
