"""``implicit-bench diff``: each headline metric's change between two revisions, with both
intervals and a verdict.

The headline is ``metrics/summary.json`` (docs/metrics.md): a value ``X`` with an interval has
``X_lo`` / ``X_hi`` beside it. The verdict of a change with both intervals treats the two runs
as independent estimates: each interval's half-width / z gives a standard error, and the change
is **beyond noise** when ``|change| > z x sqrt(se_a^2 + se_b^2)`` (z of the intervals' level;
the normal approximation of the bootstrap intervals), **within noise** otherwise. This is not
the leaderboard's **resolved** (a paired bootstrap p, Holm-adjusted, within one run:
``analysis.bootstrap.resolve_differences``); the two rules answer different questions and so
carry different names. Two runs on the
same units are positively correlated, so the independent test is conservative; the paired test
is the leaderboard's, within one run (docs/compare.md). A value without an interval gets no
verdict (``no interval``), nor does one whose interval on either side is degenerate
(``lo == hi``: every resample gave one value; ``degenerate interval``); unchanged values are
``unchanged``.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

from implicit_bench._util.numbers import real_number

LEVEL = 0.95  # the intervals of metrics/summary.json (bootstrap.level of the run)


def interval_keys(summary: dict[str, Any]) -> list[str]:
    """Keys ``X`` of ``summary`` that have ``X_lo`` and ``X_hi``."""
    return [k for k in summary if f"{k}_lo" in summary and f"{k}_hi" in summary]


def verdict(
    a: float | None,
    a_ci: tuple[Any, Any],
    b: float | None,
    b_ci: tuple[Any, Any],
    level: float = LEVEL,
) -> tuple[str, float | None]:
    """(verdict, z-score of the change) for values ``a`` -> ``b`` with their intervals."""
    if a is None or b is None:
        return ("undefined" if a != b else "unchanged"), None
    if a == b:
        return "unchanged", 0.0
    bounds = [real_number(v) for v in (*a_ci, *b_ci)]
    if any(v is None for v in bounds):
        return "no interval", None
    lo_a, hi_a, lo_b, hi_b = bounds  # type: ignore[misc]
    if lo_a == hi_a or lo_b == hi_b:
        # every bootstrap resample gave one value: no standard error, no verdict (a change
        # between two such values is not "beyond noise": nothing says how much it could vary)
        return "degenerate interval", None
    z = NormalDist().inv_cdf(0.5 + level / 2)
    se = math.hypot((hi_a - lo_a) / (2 * z), (hi_b - lo_b) / (2 * z))  # type: ignore[operator]
    score = (b - a) / se
    return ("beyond noise" if abs(score) > z else "within noise"), score


def diff_summaries(
    a: dict[str, Any], b: dict[str, Any], level: float = LEVEL, everything: bool = False
) -> list[dict[str, Any]]:
    """One row per headline metric: values, intervals, change and verdict. Interval metrics are
    always listed; other numbers when they changed (``everything``: also when not)."""
    with_ci = [k for k in dict.fromkeys([*interval_keys(a), *interval_keys(b)])]
    bounds = {f"{k}_{s}" for k in with_ci for s in ("lo", "hi")}
    out = []
    for key in dict.fromkeys([*a, *b]):
        if key in bounds:
            continue
        va, vb = a.get(key), b.get(key)
        if key in with_ci:
            a_ci, b_ci = (
                (a.get(f"{key}_lo"), a.get(f"{key}_hi")),
                (b.get(f"{key}_lo"), b.get(f"{key}_hi")),
            )
            v, z = verdict(real_number(va), a_ci, real_number(vb), b_ci, level)
        else:
            a_ci = b_ci = (None, None)
            if va == vb and not everything:
                continue
            v, z = (
                ("unchanged", None)
                if va == vb
                else (
                    (
                        "no interval"
                        if real_number(va) is not None and real_number(vb) is not None
                        else "changed"
                    ),
                    None,
                )
            )
        na, nb = real_number(va), real_number(vb)
        out.append(
            {
                "metric": key,
                "a": va,
                "a_ci": list(a_ci),
                "b": vb,
                "b_ci": list(b_ci),
                "change": round(nb - na, 4) if na is not None and nb is not None else None,
                "z": None if z is None else round(z, 2),
                "verdict": v,
            }
        )
    return out


def flat_estimates(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Every ``Estimate`` in a detail metrics file as summary-style keys: ``path``,
    ``path_lo``, ``path_hi`` (values as stored; a dotted path names each), so
    ``diff_summaries`` reads them like the headline."""
    from implicit_bench.protocol.estimate import is_estimate

    out: dict[str, Any] = {}
    if is_estimate(obj):
        ci = obj.get("ci") or [None, None]
        key = prefix.rstrip(".")
        out.update({key: obj.get("value"), f"{key}_lo": ci[0], f"{key}_hi": ci[1]})
    elif isinstance(obj, dict):
        for k, v in obj.items():
            out.update(flat_estimates(v, f"{prefix}{k}."))
    return out


def _cell(value: Any, ci: list[Any]) -> str:
    if value is None:
        return "-"
    text = f"{value:.4g}" if isinstance(value, float) else str(value)
    lo, hi = (real_number(x) for x in ci)
    if lo is not None and hi is not None:
        text += f" [{lo:.4g}, {hi:.4g}]"
    return text


def format_diff(rows: list[dict[str, Any]], rev_a: str, rev_b: str, notes: list[str]) -> str:
    """A plain-text table (one line per metric), notes first."""
    header = ["Metric", rev_a, rev_b, "Change", "Verdict"]
    lines = [
        [
            r["metric"],
            _cell(r["a"], r["a_ci"]),
            _cell(r["b"], r["b_ci"]),
            "-" if r["change"] is None else f"{r['change']:+g}",
            r["verdict"],
        ]
        for r in rows
    ]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *lines, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    text = [*notes, fmt.format(*header), *(fmt.format(*line) for line in lines)]
    return "\n".join(s.rstrip() for s in text)
