"""Judge-error correction from a calibration set (docs/correction.md).

A calibration set is a random sample of the run's images, stratified by variant, with a
reference label (a person's blind answer or a reference judge) beside the judge's stored blind
label. From it, each judge's **misclassification matrix** ``M[i, j] = P(judge stores j | the
reference says i)`` over (s, a, neither). The judged label shares of a variant are
``q = pi @ M`` for the shares ``pi`` the reference would give, so the **corrected** shares are
``pi = q @ inv(M)``: Rogan and Gladen's (1978) estimator generalised to three classes.

Assumptions (documented in docs/correction.md): the judge's errors depend on what an image shows
only (not on the unit, model or variant within the calibration pool; checked per variant by
``matrix_by_variant``), the calibration images are a random sample of the judged images, and
the reference is right (a reference with error ``H`` gives the shares it would see, ``pi_true @
H``). Corrected shares are not clipped to [0, 1] (clipping biases them near the bounds).

An ill-conditioned or singular matrix (condition number above ``max_condition``, or a class
the calibration set never shows) gives a warning and no corrected figure. Intervals: a joint
bootstrap, the units' resample ``b`` (the cluster bootstrap of ``analysis.bootstrap``) paired
with an independent stratified resample ``b`` of the calibration items, so they carry both
sampling errors; a replicate whose matrix is singular is left out (and counted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from implicit_bench._util.closed_form import safe_div, wilson_interval
from implicit_bench._util.hashing import derive_seed
from implicit_bench.analysis.blind import LabelCounts, group_names
from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.protocol import metric_schema
from implicit_bench.protocol.estimate import estimate_json
from implicit_bench.protocol.schema import BLIND_LABELS, VARIANTS

K = len(BLIND_LABELS)  # s, a, neither
MAX_CONDITION = 10.0
CORRECTED = metric_schema.tabled()  # the rates corrected for judge error


@dataclass(frozen=True)
class CalibrationSet:
    """One judge's calibration items: reference and judged class indices (0 s, 1 a,
    2 neither; valid judge answers only) and each item's stratum (its variant)."""

    reference: np.ndarray
    judged: np.ndarray
    stratum: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.reference)
        if len(self.judged) != n or len(self.stratum) != n:
            raise ValueError(
                "reference, judged and stratum must have one entry per calibration item"
            )

    def __len__(self) -> int:
        return len(self.reference)


def confusion_counts(reference: np.ndarray, judged: np.ndarray, k: int = K) -> np.ndarray:
    """``k x k`` counts: row = reference class, column = judged class."""
    ref, jud = np.asarray(reference, dtype=np.int64), np.asarray(judged, dtype=np.int64)
    return np.bincount(ref * k + jud, minlength=k * k).reshape(k, k).astype(float)


def row_normalise(counts: np.ndarray) -> np.ndarray:
    """P(judged | reference) from counts (``..., k, k``); a row without items is NaN."""
    rows = counts.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rows > 0, counts / np.where(rows > 0, rows, 1), np.nan)


def condition(matrix: np.ndarray) -> float:
    """2-norm condition number of ``matrix`` (inf when singular or undefined)."""
    if not np.isfinite(matrix).all():
        return float("inf")
    c = float(np.linalg.cond(matrix))
    return c if np.isfinite(c) else float("inf")


def corrected_shares(q: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``q @ inv(M)``: the shares the reference would give, from judged shares ``q`` (``..., k``)
    and misclassification matrices ``M`` (``..., k, k``; broadcast). Solved as ``M^T x = q``;
    NaN where ``M`` is singular or undefined."""
    q = np.asarray(q, dtype=float)
    matrix = np.asarray(matrix, dtype=float)
    mt = np.swapaxes(matrix, -1, -2)
    out = np.full(np.broadcast_shapes(q.shape, matrix.shape[:-1]), np.nan)
    mt_b = np.broadcast_to(mt, out.shape[:-1] + mt.shape[-2:])
    q_b = np.broadcast_to(q, out.shape)
    ok = np.isfinite(mt_b).all(axis=(-1, -2)) & np.isfinite(q_b).all(axis=-1)
    if ok.any():
        m_ok, q_ok = mt_b[ok], q_b[ok]
        det = np.abs(np.linalg.det(m_ok))
        good = det > 1e-12
        sol = np.full(q_ok.shape, np.nan)
        if good.any():
            sol[good] = np.linalg.solve(m_ok[good], q_ok[good][..., None])[..., 0]
        out[ok] = sol
    return out


def matrix_json(counts: np.ndarray, level: float = 0.95) -> dict[str, Any]:
    """The misclassification matrix with a Wilson interval per cell (n = the row's items)."""
    out: dict[str, Any] = {}
    for i, ref in enumerate(BLIND_LABELS):
        n = int(counts[i].sum())
        out[ref] = {
            lab: estimate_json(
                counts[i, j] / n if n else None,
                wilson_interval(int(counts[i, j]), n, level),
                n,
                level,
            )
            for j, lab in enumerate(BLIND_LABELS)
        }
    return out


class Correction:
    """A judge's misclassification matrix from a calibration set and its bootstrap replicates."""

    def __init__(
        self,
        calibration: CalibrationSet,
        boot: Bootstrap,
        stream: str,
        max_condition: float = MAX_CONDITION,
    ):
        self.calibration = calibration
        self.boot = boot
        self.stream = f"{stream}/calibration"
        self.max_condition = max_condition
        self.counts = confusion_counts(calibration.reference, calibration.judged)
        self.matrix = row_normalise(self.counts)
        self.condition = condition(self.matrix)
        self._reps: np.ndarray | None = None

    @property
    def warning(self) -> str | None:
        """Why no corrected figure can be given (None when the matrix is usable)."""
        empty = [BLIND_LABELS[i] for i in range(K) if self.counts[i].sum() == 0]
        if empty:
            return (
                f"no calibration image shows {', '.join(empty)}: the "
                "misclassification matrix is not identified"
            )
        if self.condition > self.max_condition:
            return (
                "misclassification matrix ill-conditioned (condition "
                f"number {self.condition:.3g} > "
                f"{self.max_condition:g}): the judge cannot tell the "
                "classes apart; no corrected figure"
            )
        return None

    def replicates(self) -> np.ndarray:
        """``n_boot x k x k`` matrices from resampling the calibration items with replacement
        within each stratum (variant), from ``derive_seed(boot.seed, stream)``."""
        if self._reps is None:
            cal = self.calibration
            rng = np.random.default_rng(derive_seed(self.boot.seed, self.stream))
            codes = np.asarray(cal.reference, dtype=np.int64) * K + np.asarray(
                cal.judged, dtype=np.int64
            )
            counts = np.zeros((self.boot.n, K * K))
            for stratum in sorted(set(np.asarray(cal.stratum).tolist())):
                items = codes[np.asarray(cal.stratum) == stratum]
                draw = items[rng.integers(0, len(items), size=(self.boot.n, len(items)))]
                offsets = (np.arange(self.boot.n, dtype=np.int64) * K * K)[:, None]
                counts += np.bincount(
                    (draw + offsets).ravel(), minlength=self.boot.n * K * K
                ).reshape(self.boot.n, K * K)
            self._reps = row_normalise(counts.reshape(self.boot.n, K, K))
        return self._reps

    def describe(self) -> dict[str, Any]:
        """The JSON block: items per stratum, the matrix with per-cell
        intervals, condition number."""
        strata, n = np.unique(np.asarray(self.calibration.stratum), return_counts=True)
        return {
            "items": len(self.calibration),
            "items_per_variant": {str(s): int(k) for s, k in zip(strata, n, strict=True)},
            "matrix": matrix_json(self.counts, self.boot.level),
            "condition_number": _finite(self.condition),
            "max_condition": self.max_condition,
            "warning": self.warning,
        }


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


METHOD_KEY = "corrected"  # bootstrap.method key of every corrected rate (or "<rate>_corrected")


CORRECTED_METHODS = ("percentile", "bca", "basic")


def corrected_method(boot: Bootstrap, name: str) -> str:
    """The interval method of corrected rate ``name``: ``bootstrap.method["<name>_corrected"]``,
    else ``bootstrap.method["corrected"]``, else percentile (docs/correction.md); one of
    ``CORRECTED_METHODS`` (the studentized interval needs an SE per joint replicate: not built)."""
    method = boot.method.get(f"{name}_corrected", boot.method.get(METHOD_KEY, "percentile"))
    if method not in CORRECTED_METHODS:
        raise ValueError(
            f"bootstrap.method: {method!r} is not available for corrected rates "
            f"({' | '.join(CORRECTED_METHODS)})"
        )
    return method


def calibration_jackknife(corr: Correction) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-calibration-item-out matrices: one per (reference, judged) cell with items
    (``m x k x k``) and how many items each stands for (the cell's count)."""
    cells = np.flatnonzero(corr.counts.ravel() > 0)
    counts = np.repeat(corr.counts[None], len(cells), axis=0).reshape(len(cells), K * K)
    counts[np.arange(len(cells)), cells] -= 1
    return row_normalise(counts.reshape(-1, K, K)), corr.counts.ravel()[cells]


def _centred(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    ok = np.isfinite(values)
    w = np.where(ok, weights, 0.0)
    mean = np.sum(np.where(ok, values, 0.0) * w) / w.sum() if w.sum() > 0 else 0.0
    return np.repeat(np.where(ok, values - mean, np.nan), weights.astype(np.int64))


def corrected_rates(
    c: LabelCounts,
    pos: np.ndarray,
    boot: Bootstrap,
    stream: str,
    corr: Correction,
    methods: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Default rate, success of both prompts, gap and a->s of the units at ``pos``, corrected
    for the judge's misclassification; the units' resamples are ``analysis.blind.rates``'s
    (same ``stream``), paired with the calibration resamples. ``{"warning": ...}`` and null
    figures when the matrix is unusable. Interval method per rate: ``corrected_method``;
    ``bca`` reads the joint replicates at levels moved by z0 and by the acceleration of the
    two samples' jackknife (leave one unit out, leave one calibration item out; their centred
    values pooled, Efron and Tibshirani 1993, section 14.3). ``methods``: other methods' intervals
    from the same replicates, in ``by_method`` (the coverage benchmark compares them)."""
    n = len(pos)
    out: dict[str, Any] = {"n_units": n, "warning": corr.warning}
    if corr.warning is not None:
        return out | {name: estimate_json(None, None, n, boot.level) for name in CORRECTED}
    col, matrix = c.columns()
    sub = matrix[pos]
    totals = sub.sum(axis=0)
    reps_all = boot.sums(sub, stream)
    mats = corr.replicates()
    wanted = {corrected_method(boot, name) for name in CORRECTED} | set(methods)
    jack = "bca" in wanted
    if jack:
        loo_mats, loo_w = calibration_jackknife(corr)
    pi, pi_reps, pi_units, pi_cal = {}, {}, {}, {}
    for v in VARIANTS:
        num = [col[(v, lab)] for lab in BLIND_LABELS]
        den = col[("valid", v)]
        q = safe_div(totals[num], totals[den])
        q_reps = safe_div(reps_all[:, num], reps_all[:, [den]])
        pi[v] = corrected_shares(q, corr.matrix)
        pi_reps[v] = corrected_shares(q_reps, mats)
        if jack:
            left = totals[None, :] - sub
            pi_units[v] = corrected_shares(safe_div(left[:, num], left[:, [den]]), corr.matrix)
            pi_cal[v] = corrected_shares(q, loo_mats)

    def pick(block: dict[str, np.ndarray], which: tuple[str, int, str, int] | tuple[str, int]):
        x = block[which[0]][..., which[1]]
        return x - block[which[2]][..., which[3]] if len(which) == 4 else x

    def part(name: str) -> tuple[Any, ...]:
        """(variant, class) of a declared rate's numerator; a difference is two of them."""
        m = metric_schema.metric(name)
        if m.difference is not None:
            return (*part(m.difference[0]), *part(m.difference[1]))
        (variant, label), _ = m.ratio  # type: ignore[misc]
        return (variant, BLIND_LABELS.index(label))

    def est(name: str, method: str) -> dict[str, Any]:
        which = part(name)
        value, reps = float(pick(pi, which)), pick(pi_reps, which)
        if method != "bca":
            return boot.interval(value, reps, stream, n, method=method)
        d = np.concatenate(
            [
                _centred(pick(pi_units, which), np.ones(n)),
                _centred(pick(pi_cal, which), loo_w),
            ]
        )
        return boot.interval(value, reps, stream, n, jackknife=d, method="bca")

    for name in CORRECTED:
        out[name] = est(name, corrected_method(boot, name))
    if methods:
        out["by_method"] = {m: {name: est(name, m) for name in CORRECTED} for m in methods}
    out["undefined_replicates"] = int((~np.isfinite(pi_reps["neutral"][:, 0])).sum())
    return out


def corrected_strength_groups(
    grouping: LabelCounts,
    labels: LabelCounts,
    k: int,
    boot: Bootstrap,
    stream: str,
    corr: Correction,
    methods: tuple[str, ...] = (),
) -> dict[str, Any]:
    """``analysis.blind.strength_groups`` with corrected rates: the groups are the judged ones
    (how many of a unit's k neutral images the grouping judge labels s), the rates within them
    are corrected (same streams as the judged groups, so paired with them)."""
    complete = grouping.valid["neutral"] == k
    n_s = grouping.label[("neutral", "s")]
    usable = labels.has_labels()
    masks = [n_s == 0, n_s == k] if k == 1 else [n_s == 0, (n_s > 0) & (n_s < k), n_s == k]
    out = {}
    for name, mask in zip(group_names(k), masks, strict=True):
        pos = np.flatnonzero(complete & mask & usable)
        out[name] = corrected_rates(labels, pos, boot, f"{stream}/{name}", corr, methods)
    return out
