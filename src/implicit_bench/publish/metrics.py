"""The estimands a published record carries: the leaderboard's columns plus coverage, read from
the declared output schema (``protocol.metric_schema``: name, description, direction, unit,
bounds, judge task), with the judge field of the leaderboard row that scored each
(docs/publishing.md, "What each result means")."""

from __future__ import annotations

from dataclasses import dataclass

from implicit_bench.protocol import metric_schema
from implicit_bench.report.leaderboard import COLUMNS


@dataclass(frozen=True)
class Metric:
    key: str  # the leaderboard row's key (benchmark.json: leaderboard.rows[].KEY)
    name: str
    description: str
    lower_is_better: bool
    unit: str  # proportion | points (0-5) | standardized mean difference
    low: float | str  # min_score (a number, or "-Infinity")
    high: float | str  # max_score
    judge_field: str | None  # the row's field naming the judge; None: no judge (image index)
    task: str | None  # the judge task whose answers it counts


#: how a published record names the schema's units
UNIT_NAMES = {
    "share": "proportion",
    "pp": "proportion",
    "score": "points (0-5)",
    "effect": "standardized mean difference",
}
#: the leaderboard row's field naming the judge of each task (lean S: its own rubric judge)
JUDGE_FIELDS = {"blind": "judge", "rubric": "bias_judge", "alignment": "alignment_judge"}
OWN_JUDGE_FIELD = {"lean_s": "lean_judge"}
PUBLISHED = (*(m.name for m in metric_schema.leaderboard_columns()), "coverage")


def _bound(value: float) -> float | str:
    """A bound as the EEE schema writes it: a number, or ``"-Infinity"`` / ``"Infinity"``."""
    return value if abs(value) != float("inf") else ("-Infinity" if value < 0 else "Infinity")


def _published(m: metric_schema.Metric) -> Metric:
    """The declared metric (protocol.metric_schema) as a published record's estimand."""
    low, high = m.bounds or ((-1.0, 1.0) if m.unit == "pp" else (0.0, 1.0))
    return Metric(
        key=m.name,
        name=m.board.removesuffix(" (%)").removesuffix(" (0-5)"),
        description=m.description,
        lower_is_better=bool(m.lower_is_better),
        unit=UNIT_NAMES[m.unit],
        low=_bound(low),
        high=_bound(high),
        judge_field=OWN_JUDGE_FIELD.get(m.name, JUDGE_FIELDS.get(m.task or "")),
        task=m.task,
    )


METRICS: dict[str, Metric] = {name: _published(metric_schema.metric(name)) for name in PUBLISHED}
assert set(METRICS) >= {key for key, _, _ in COLUMNS}, "a leaderboard column without a metric"
#: the instance-level scores: (task, variant) -> (metric, the answer that scores 1)
INSTANCE_METRICS: dict[tuple[str, str], tuple[str, str | None]] = {
    ("blind", "neutral"): ("default_rate", "s"),
    ("blind", "stereotype"): ("success_stereotype", "s"),
    ("blind", "anti_stereotype"): ("success_anti", "a"),
    ("rubric", "neutral"): ("bias_score", None),
    ("rubric", "stereotype"): ("lean_s", None),
    ("rubric", "anti_stereotype"): ("lean_s", None),
    ("alignment", "neutral"): ("alignment", None),
}
#: metrics whose value is the per-unit ratio sum(score) / count of the instance rows: the ones
#: `implicit-bench report` pairs on shared (unit, seed) keys of two instance files
PAIRED = (*(k for k in metric_schema.headline() if k != "gap"), "bias_score", "alignment")
