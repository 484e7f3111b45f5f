"""The metric registry of the ``evaluate`` stage and ``implicit-bench analyze``.

A metric is one function ``compute(ctx: EvalContext) -> dict[str, Any]``: it reads the
validated tables, the params and the shared bootstrap from ``ctx``, and returns the keys it
adds to its output file (``metrics/benchmark.json`` or ``metrics/lean.json``); every
statistic with an interval in them is an ``Estimate`` (docs/metrics.md). A metric that also
writes a table or a plot hands it to ``ctx.table`` / ``ctx.plot``. ``METRICS`` lists every
metric as a lazily imported ``"module:function"`` string, in the order of the output keys;
``evaluate`` is a loop over it. Adding a metric is its function plus one line here
(docs/extending.md, "Adding a metric").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from implicit_bench._util.timings import phase
from implicit_bench.analysis.context import EvalContext
from implicit_bench.errors import ConfigError
from implicit_bench.runtime.registry import import_target

Output = Literal["benchmark", "lean"]


@dataclass(frozen=True)
class MetricSpec:
    """A registered metric: its ``"module:function"``, output file, and the metrics whose keys
    it reads from ``ctx.results`` (run first, also when params select only this one)."""

    target: str
    output: Output = "benchmark"
    requires: tuple[str, ...] = ()


#: name -> metric, in the order of their keys in the output files
METRICS: dict[str, MetricSpec] = {
    "blind_rates": MetricSpec("implicit_bench.analysis.builtin_metrics:blind_rates"),
    "by_config": MetricSpec("implicit_bench.analysis.builtin_metrics:by_config"),
    "strength": MetricSpec(
        "implicit_bench.analysis.builtin_metrics:strength", requires=("blind_rates",)
    ),
    "headline": MetricSpec(
        "implicit_bench.analysis.builtin_metrics:headline", requires=("blind_rates",)
    ),
    "recoverability": MetricSpec(
        "implicit_bench.analysis.builtin_metrics:recoverability", requires=("blind_rates",)
    ),
    "agreement": MetricSpec("implicit_bench.analysis.builtin_metrics:agreement_metrics"),
    "generators": MetricSpec("implicit_bench.analysis.builtin_metrics:generators"),
    "refusal_rate": MetricSpec("implicit_bench.analysis.refusal_rate:refusal_rate"),
    "leaderboard": MetricSpec(
        "implicit_bench.analysis.leaderboard:leaderboard", requires=("by_config", "refusal_rate")
    ),
    "corrected": MetricSpec("implicit_bench.analysis.calibration:corrected"),
    "benchmark_plots": MetricSpec(
        "implicit_bench.analysis.builtin_metrics:benchmark_plots",
        requires=("blind_rates", "strength", "headline", "agreement"),
    ),
    "lean": MetricSpec("implicit_bench.analysis.builtin_metrics:lean", output="lean"),
    "hedges_g": MetricSpec("implicit_bench.analysis.builtin_metrics:hedges", output="lean"),
    "judge_scale": MetricSpec("implicit_bench.analysis.builtin_metrics:judge_scale", output="lean"),
}

Metric = Callable[[EvalContext], dict[str, Any]]


def load_metric(name: str, registry: dict[str, MetricSpec] | None = None) -> Metric:
    """The function of a registered metric (imported on first use)."""
    spec = (METRICS if registry is None else registry)[name]
    return import_target(spec.target)


def selected_metrics(
    names: Sequence[str] | None, registry: dict[str, MetricSpec] | None = None
) -> list[str]:
    """``names`` (None: every metric) with the metrics they require, in registry order."""
    registry = METRICS if registry is None else registry
    if names is None:
        return list(registry)
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise ConfigError(
            f"evaluate.metrics: unknown metric(s) {unknown}; registered: {list(registry)}"
        )
    wanted: set[str] = set()
    stack = list(names)
    while stack:
        name = stack.pop()
        if name not in wanted:
            wanted.add(name)
            stack.extend(registry[name].requires)
    return [n for n in registry if n in wanted]


def run_metrics(
    ctx: EvalContext,
    names: Sequence[str] | None = None,
    registry: dict[str, MetricSpec] | None = None,
) -> EvalContext:
    """Run the selected metrics (``names``; None: all) in registry order, merging each one's
    keys into its output file; a key written twice is a bug in the registry."""
    registry = METRICS if registry is None else registry
    for name in selected_metrics(names, registry):
        spec = registry[name]
        out = ctx.results[spec.output]
        with phase(f"evaluate.{name}"):
            values = load_metric(name, registry)(ctx)
        for key, value in values.items():
            if key in out:
                raise ConfigError(
                    f"metric '{name}' writes '{key}' of metrics/{spec.output}.json, already written"
                )
            out[key] = value
    return ctx
