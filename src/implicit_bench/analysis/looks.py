"""``analyze --order FILE --looks N1,N2,...``: anytime-valid intervals at every look of a run.

A sequential run renders and judges the units of a unit set in a fixed order (FILE: unit ids,
one per line). At each look (the first ``N_k`` units of the order) every estimand gets its
estimate, its anytime-valid interval (``analysis.anytime``: valid at every look at once, so
looking does not cost level) and, beside it, the fixed-n interval (normal, with the finite
population correction: valid only for one look fixed in advance). Written to
``anytime.json`` in ``--out``; docs/analysis.md, "Anytime-valid intervals".

Estimands are means over units of a per-unit value (the mean over the unit's valid images):

- headline rates of the primary blind judge on the analysed configuration: ``default_rate``,
  ``success_stereotype``, ``success_anti`` (shares, [0, 1]) and ``gap`` (their difference per
  unit, [-1, 1]);
- per generator (configuration with neutral rubric scores), Table 4's ``bias_score`` (mean
  neutral 0-5 rubric score of its first rubric judge, [0, 5]) and ``alignment`` (share of
  neutral images judged aligned, [0, 1]);
- for every pair of generators, the paired differences of both on the units both have.

An estimand's population is the order's units with a value: a unit whose images have no valid
answer (all refused or invalid) is left out once it has been seen; units the run has not
reached yet are assumed to have one (exact once the run is complete).

**Image orders.** An order file of ``unit_id,seed`` lines draws images (one seed of one unit)
instead of units: every estimand is then a mean over the order's images of a per-image value
(the image's valid rubric score, whether its alignment answer is true, the blind label of its
seed's A/B/C answer for the headline rates; a paired difference on the (unit, seed) both
generators rendered), which for Table 4's scores is the table's own definition (a mean over
every judged neutral image). The three seeds of a unit resemble each other far more than two
units do, so a uniformly random order of images reaches a width with fewer images than an
order of units with every seed rendered (benchmarks/README.md, "Covariate-assisted
sequences"). A unit's covariates are each of its images' covariates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench.analysis.assisted import THETA, assisted_sequence, design_matrix
from implicit_bench.analysis.context import EvalContext
from implicit_bench.analysis.covariates import Covariates
from implicit_bench.analysis.views import rows
from implicit_bench.errors import ConfigError, InputError

METHOD = (
    "betting confidence sequence for the mean of a finite population sampled without "
    "replacement in a uniformly random order (Waudby-Smith & Ramdas 2020) on the residuals of "
    "a predictable regression on the covariates (coefficients fitted on the units seen before "
    "each draw; an intercept only without covariates), variance-adaptive bets (plug-in, or "
    "tuned to --target-width), each draw losing at most "
    f"{THETA} of the capital, intersected over the looks and with the values the unseen units "
    "can still give (analysis.assisted)"
)
FIXED_N = (
    "normal interval of the regression (difference) estimator with the finite population "
    "correction (the sample mean without covariates; valid for one fixed n only)"
)
DIGITS = 10


@dataclass
class Estimand:
    """One estimand's per-unit values, aligned on the order (NaN: no value)."""

    name: str
    values: np.ndarray
    scale: tuple[float, float]
    group: str  # headline | generator | paired


Draw = str | tuple[str, int]  # a unit id, or an image: (unit id, seed)
Order = list[str] | list[tuple[str, int]]


def is_image_order(order: Order) -> bool:
    """Whether the order draws images (``(unit, seed)``) rather than units."""
    return bool(order) and isinstance(order[0], tuple)


def order_units(order: Order) -> list[str]:
    """The unit of each draw, in order (a unit order is its own)."""
    return [d[0] for d in order] if is_image_order(order) else list(order)  # type: ignore[index,arg-type]


def describe_draw(draw: Draw) -> str:
    return f"image '{draw[0]}' seed {draw[1]}" if isinstance(draw, tuple) else f"unit '{draw}'"


def _parse_draw(line: str, path: Path, number: int) -> Draw:
    """``unit_id`` or ``unit_id,seed`` (a comma or a tab between them)."""
    parts = [p.strip() for p in re.split(r"[,\t]", line)]
    if len(parts) == 1:
        return parts[0]
    if len(parts) != 2 or not re.fullmatch(r"-?[0-9]+", parts[1]):
        raise InputError(path, number, "seed", f"'{line}' is not 'unit_id' or 'unit_id,seed'")
    return parts[0], int(parts[1])


def read_order(path: str | Path, unit_ids: set[str]) -> Order:
    """The draws of FILE in order (one per line, row = line number; blank lines skipped): unit
    ids, or ``unit_id,seed`` images; every line of one form, each unit an analysed unit, no
    draw twice. A UTF-8 byte order mark (as Windows editors write) is not part of the first
    id."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, None, f"cannot read the order file ({exc})") from None
    order: list = []
    seen: dict[Draw, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        draw = _parse_draw(line.strip(), path, number)
        if order and isinstance(draw, tuple) != isinstance(order[0], tuple):
            first = "images (unit_id,seed)" if isinstance(order[0], tuple) else "unit ids"
            why = f"the rows above are {first}; this one is not"
            raise InputError(path, number, "unit_id", why)
        unit = draw[0] if isinstance(draw, tuple) else draw
        if unit not in unit_ids:
            raise InputError(path, number, "unit_id", f"unit '{unit}' is not an analysed unit")
        if draw in seen:
            raise InputError(
                path, number, "unit_id", f"{describe_draw(draw)} already on row {seen[draw]}"
            )
        seen[draw] = number
        order.append(draw)
    if not order:
        raise InputError(path, None, None, "the order file names no unit")
    return order


def parse_counts(text: str, option: str) -> list[int]:
    """``N1,N2,...``: positive, increasing unit counts (``--looks``, ``run --rounds``). Spaces
    around a count are allowed (``' 20'`` is 20); an empty text or part, and anything but
    ASCII digits (``1_000``, ``+20``, ``２０``, which ``int`` would take), are refused."""
    parts = [part.strip() for part in text.split(",")]
    if not all(re.fullmatch(r"[0-9]+", part) for part in parts):
        raise ConfigError(f"{option}: '{text}' is not a comma-separated list of unit counts")
    counts = [int(part) for part in parts]
    if counts != sorted(set(counts)) or counts[0] < 1:
        raise ConfigError(f"{option} {text}: unit counts must be positive and increase")
    return counts


def parse_looks(text: str, n_units: int) -> list[int]:
    """``N1,N2,...``: increasing unit counts within 1..n_units."""
    looks = parse_counts(text, "--looks")
    if looks[-1] > n_units:
        raise ConfigError(f"--looks {text}: past the {n_units} units of the order")
    return looks


def _unit_means(frame: pd.DataFrame, order: list[str]) -> np.ndarray:
    """Mean valid score per unit of ``frame`` (neutral rows), aligned on ``order``."""
    sub = frame[(frame["variant"] == "neutral") & frame["valid"]]
    means = sub.groupby("unit_id")["score"].mean()
    return means.reindex(order).to_numpy(float)


def _share(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan
        )


def estimands(ctx: EvalContext, order: Order) -> list[Estimand]:
    """The headline rates, each generator's Table 4 scores and their paired differences, per
    draw of the order (a unit, or an image of an image order)."""
    if not is_image_order(order):
        return _unit_estimands(ctx, order)  # type: ignore[arg-type]
    units = sorted(set(order_units(order)))
    where = {u: k for k, u in enumerate(units)}
    per_seed = {
        seed: {e.name: e for e in _unit_estimands(ctx, units, [seed])}
        for seed in sorted({s for _, s in order})  # type: ignore[misc]
    }
    names: dict[str, Estimand] = {}
    for found in per_seed.values():
        for name, est in found.items():
            names.setdefault(name, est)
    out = []
    for name, first in names.items():
        values = np.array(
            [
                per_seed[seed][name].values[where[unit]] if name in per_seed[seed] else np.nan
                for unit, seed in order  # type: ignore[misc]
            ],
            dtype=float,
        )
        out.append(Estimand(name, values, first.scale, first.group))
    return out


def _unit_estimands(
    ctx: EvalContext, order: list[str], seeds: list[int] | None = None
) -> list[Estimand]:
    """Per unit of ``order``: the mean over its valid images of ``seeds`` (default: the
    analysed seeds)."""
    seeds = ctx.seeds if seeds is None else seeds
    out: list[Estimand] = []
    judge = ctx.primary_judge
    if judge is not None:
        c = ctx.counts(judge, seeds=seeds)
        at = pd.Index(c.unit_ids).get_indexer(order)
        label, valid = c.label, c.valid
        rates = {
            "default_rate": _share(label[("neutral", "s")], valid["neutral"]),
            "success_stereotype": _share(label[("stereotype", "s")], valid["stereotype"]),
            "success_anti": _share(label[("anti_stereotype", "a")], valid["anti_stereotype"]),
        }
        rates["gap"] = rates["success_stereotype"] - rates["success_anti"]
        for name, per_unit in rates.items():
            scale = (-1.0, 1.0) if name == "gap" else (0.0, 1.0)
            values = np.where(at >= 0, per_unit[np.maximum(at, 0)], np.nan)  # unseen: no value
            out.append(Estimand(name, values, scale, "headline"))
    j = ctx.judgements
    rubric = rows(j, "rubric", seeds=seeds)
    configs = sorted(rubric.loc[rubric["variant"] == "neutral", "config"].astype(str).unique())
    scores: dict[str, dict[str, np.ndarray]] = {}
    for cfg in configs:
        present = sorted(rubric.loc[rubric["config"] == cfg, "judge"].astype(str).unique())
        bias_judge = next((r for r in ctx.rubric_judges if r in present), present[0])
        per = {"bias_score": _unit_means(rows(rubric, "rubric", cfg, bias_judge), order)}
        aligned = rows(j, "alignment", cfg, seeds=seeds)
        align_judges = sorted(aligned["judge"].astype(str).unique())
        align_judge = bias_judge if bias_judge in align_judges else None
        if align_judge is None and len(align_judges) == 1:
            align_judge = align_judges[0]
        if align_judge is not None:
            per["alignment"] = _unit_means(rows(aligned, "alignment", judge=align_judge), order)
        scores[cfg] = per
        for metric, values in per.items():
            scale = (0.0, 5.0) if metric == "bias_score" else (0.0, 1.0)
            out.append(Estimand(f"{metric}/{cfg}", values, scale, "generator"))
    for a, b in combinations(configs, 2):
        for metric in ("bias_score", "alignment"):
            if metric in scores[a] and metric in scores[b]:
                top = 5.0 if metric == "bias_score" else 1.0
                diff = scores[a][metric] - scores[b][metric]
                out.append(Estimand(f"{metric}/{a}-{b}", diff, (-top, top), "paired"))
    return out


def present_prefix(ctx: EvalContext, order: Order) -> int:
    """How many leading draws of the order have judgements (the run's progress): units with
    any judgement row, or images ((unit, seed)) with one or in the image index (``--refusals``:
    a refused or failed image was rendered, and has no value)."""
    j = ctx.judgements
    if is_image_order(order):
        have: set = set(zip(j["unit_id"].astype(str), j["seed"].astype(int), strict=True))
        index = ctx.tables.images
        if index is not None and len(index):
            have |= set(zip(index["unit_id"].astype(str), index["seed"].astype(int), strict=True))
    else:
        have = set(j["unit_id"].astype(str))
    for position, draw in enumerate(order):
        if draw not in have:
            return position
    return len(order)


def _r(value: float) -> float:
    return round(float(value), DIGITS)


def anytime_report(
    ctx: EvalContext,
    order: Order,
    looks: list[int],
    order_file: str,
    reached: int | None = None,
    covariates: Covariates | None = None,
    target: float | None = None,
) -> dict[str, Any]:
    """``anytime.json``: per estimand and look, the estimate, both intervals, their width
    ratio and n (``reached``: the draws of the order judged so far; default: the leading draws
    with judgements; ``covariates``: known for every unit, used by the Table 4 scores and
    their paired differences; ``target``: a half-width fixed in advance, on each estimand's
    own scale, the bets are tuned to)."""
    alpha = round(1 - ctx.boot.level, 12)
    reached = present_prefix(ctx, order) if reached is None else reached
    if looks[-1] > reached:
        kind = "images" if is_image_order(order) else "units"
        raise ConfigError(
            f"--looks {looks[-1]}: the judgements reach only the first {reached} {kind} of "
            f"{order_file} ({describe_draw(order[reached])} at position {reached + 1} has none)"
        )
    report: dict[str, Any] = {
        "anytime_valid": True,
        "method": METHOD,
        "fixed_n_method": FIXED_N,
        "level": ctx.boot.level,
        # units / judged: the order's draws (units, or images of an image order)
        "order": {
            "file": order_file,
            "draw": "image" if is_image_order(order) else "unit",
            "units": len(order),
            "judged": reached,
        },
        "config": ctx.config,
        "primary_judge": ctx.primary_judge,
        "looks": looks,
        "covariates": covariates.source if covariates is not None else None,
        "bets": (
            {"rule": "target", "target_half_width": target}
            if target is not None
            else {"rule": "plugin"}
        ),
        "estimands": {},
    }
    for est in estimands(ctx, order):
        cov = _estimand_covariates(est, order, covariates)
        report["estimands"][est.name] = _estimand_looks(est, looks, reached, alpha, cov, target)
    return report


def _estimand_covariates(
    est: Estimand, order: Order, covariates: Covariates | None
) -> pd.DataFrame | None:
    """The covariate columns of a Table 4 score or paired difference, one row per draw of the
    order (an image gets its unit's; the estimand's own configurations left out); None for the
    headline rates."""
    if covariates is None or est.group == "headline":
        return None
    metric, _, configs = est.name.partition("/")
    own = set(configs.split("-")) if est.group == "paired" else {configs}
    frame = covariates.for_estimand(metric, own)
    return None if frame is None else frame.reindex(order_units(order))


def _estimand_looks(
    est: Estimand,
    looks: list[int],
    reached: int,
    alpha: float,
    covariates: pd.DataFrame | None = None,
    target: float | None = None,
) -> dict[str, Any]:
    lo_scale, hi_scale = est.scale
    width = hi_scale - lo_scale
    defined = ~np.isnan(est.values)
    seen_undefined = int((~defined[:reached]).sum())
    population = len(est.values) - seen_undefined
    # the population: the units seen with a value and every unit not seen yet (assumed to
    # have one); the drawn units are its first rows, in order
    keep = defined.copy()
    keep[reached:] = True
    x = (est.values[defined] - lo_scale) / width  # the defined values in order, in [0, 1]
    draws = np.cumsum(defined)  # defined units among the first n
    counts = [int(draws[n - 1]) for n in looks]
    cov = None if covariates is None else covariates.to_numpy(float)[keep]
    design = design_matrix(cov, population)
    entry: dict[str, Any] = {
        "group": est.group,
        "scale": [lo_scale, hi_scale],
        "population_units": population,
        "population_value": (
            _r(np.mean(est.values[defined])) if reached == len(est.values) and x.size else None
        ),
        "covariates": [] if covariates is None else [str(c) for c in covariates.columns],
        "looks": [],
    }
    distinct = sorted({t for t in counts if t > 0})
    ends = {}
    if distinct:
        t_max = distinct[-1]
        rule, w = ("target", target / width) if target is not None else ("plugin", None)
        run = assisted_sequence(
            np.clip(x[:t_max], 0, 1), np.arange(t_max), design, distinct, alpha, rule, w
        )
        ends = {
            t: (run.lo[k], run.hi[k], run.estimate[k], run.fixed_half[k])
            for k, t in enumerate(distinct)
        }
    for n, t in zip(looks, counts, strict=True):
        row: dict[str, Any] = {
            "look": n,
            "n": t,
            "estimate": None,
            "anytime": None,
            "fixed_n": None,
            "width_ratio": None,
        }
        if t:
            lo, hi, estimate, half = ends[t]
            row["estimate"] = _r(lo_scale + width * estimate)
            row["anytime"] = (
                [_r(lo_scale + width * lo), _r(lo_scale + width * hi)] if lo <= hi else None
            )
            row["anytime_empty"] = bool(lo > hi)  # probability at most alpha over the looks
            if t >= 2 and np.isfinite(half):
                row["fixed_n"] = [
                    _r(lo_scale + width * max(0.0, estimate - half)),
                    _r(lo_scale + width * min(1.0, estimate + half)),
                ]
                if half > 0 and lo <= hi:  # anytime-valid width / fixed-n width
                    row["width_ratio"] = round(float((hi - lo) / (2 * half)), 4)
        entry["looks"].append(row)
    return entry
