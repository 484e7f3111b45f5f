"""The metric registry of the ``evaluate`` stage and ``implicit-bench analyze``.

A metric is one function ``compute(ctx: EvalContext) -> dict[str, Any]``: it reads the
validated tables, the params and the shared bootstrap from ``ctx``, and returns the keys it
adds to its output file (``metrics/benchmark.json`` or ``metrics/lean.json``); every
statistic with an interval in them is an ``Estimate`` (docs/metrics.md). A metric that also
writes a table or a plot hands it to ``ctx.table`` / ``ctx.plot``. ``METRICS`` lists every
metric as a lazily imported ``"module:function"`` string, in the order of the output keys;
``evaluate`` is a loop over it. Adding a metric is its function plus one line here
(docs/architecture.md, "Adding a metric").
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pandas as pd

from implicit_bench.analysis.blind import LabelCounts, label_counts
from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.analysis.config import EvaluateParams
from implicit_bench.analysis.load import Tables
from implicit_bench.analysis.views import resolve_config, resolve_judges
from implicit_bench.errors import ConfigError
from implicit_bench.schema import BIAS_TYPES

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
    "strength": MetricSpec("implicit_bench.analysis.builtin_metrics:strength", requires=("blind_rates",)),
    "headline": MetricSpec("implicit_bench.analysis.builtin_metrics:headline", requires=("blind_rates",)),
    "recoverability": MetricSpec("implicit_bench.analysis.builtin_metrics:recoverability", requires=("blind_rates",)),
    "agreement": MetricSpec("implicit_bench.analysis.builtin_metrics:agreement_metrics"),
    "generators": MetricSpec("implicit_bench.analysis.builtin_metrics:generators"),
    "refusal_rate": MetricSpec("implicit_bench.analysis.refusal_rate:refusal_rate"),
    "benchmark_plots": MetricSpec(
        "implicit_bench.analysis.builtin_metrics:benchmark_plots", requires=("blind_rates", "strength", "headline", "agreement")
    ),
    "lean": MetricSpec("implicit_bench.analysis.builtin_metrics:lean", output="lean"),
    "hedges_g": MetricSpec("implicit_bench.analysis.builtin_metrics:hedges", output="lean"),
    "judge_scale": MetricSpec("implicit_bench.analysis.builtin_metrics:judge_scale", output="lean"),
}

Metric = Callable[["EvalContext"], dict[str, Any]]


def load_metric(name: str, registry: dict[str, MetricSpec] | None = None) -> Metric:
    """The function of a registered metric (imported on first use)."""
    spec = (METRICS if registry is None else registry)[name]
    module_name, _, attr = spec.target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def selected_metrics(names: Sequence[str] | None, registry: dict[str, MetricSpec] | None = None) -> list[str]:
    """``names`` (None: every metric) with the metrics they require, in registry order."""
    registry = METRICS if registry is None else registry
    if names is None:
        return list(registry)
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise ConfigError(f"evaluate.metrics: unknown metric(s) {unknown}; registered: {list(registry)}")
    wanted: set[str] = set()
    stack = list(names)
    while stack:
        name = stack.pop()
        if name not in wanted:
            wanted.add(name)
            stack.extend(registry[name].requires)
    return [n for n in registry if n in wanted]


def n_seeds_of(judgements: pd.DataFrame, config: str, seeds: list[int] | None, n_seeds: int | None) -> int:
    """k of the "k of n" scale: the analysed seeds, else ``evaluate.n_seeds``, else (null) the
    seeds present in the configuration's judgements, so k follows ``render.seeds``."""
    if seeds:
        return len(seeds)
    if n_seeds is not None:
        return n_seeds
    return max(1, int(judgements.loc[judgements["config"] == config, "seed"].nunique()))


@dataclass
class EvalContext:
    """What every metric reads: the tables, the analysed units (sorted by id), the params, the
    one ``Bootstrap`` (its draws are shared by every metric of the same unit set), the resolved
    configuration and judges, and the results of the metrics that ran before."""

    tables: Tables
    analysed: pd.DataFrame
    params: EvaluateParams
    boot: Bootstrap
    results: dict[str, dict[str, Any]] = field(default_factory=lambda: {"benchmark": {}, "lean": {}})
    tables_out: dict[str, pd.DataFrame] = field(default_factory=dict)
    plots: dict[str, pd.DataFrame] = field(default_factory=dict)
    shared: dict[str, Any] = field(default_factory=dict)  # values a metric hands to later ones
    _counts: dict[tuple[str, str, tuple[int, ...] | None], LabelCounts] = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, tables: Tables, analysed: pd.DataFrame, params: EvaluateParams) -> EvalContext:
        boot = Bootstrap(params.bootstrap.n, params.bootstrap.seed, params.bootstrap.level)
        return cls(tables, analysed.sort_values("unit_id").reset_index(drop=True), params, boot)

    # ---- the analysed units and the resolved run ------------------------------------------
    @property
    def judgements(self) -> pd.DataFrame:
        return self.tables.judgements

    @cached_property
    def unit_ids(self) -> list[str]:
        return self.analysed["unit_id"].tolist()

    @cached_property
    def types(self) -> np.ndarray:
        """The bias type of each analysed unit (aligned on ``unit_ids``)."""
        return self.analysed["bias_type"].to_numpy()

    @property
    def seeds(self) -> list[int] | None:
        return self.params.seeds

    @property
    def diagnostic(self) -> list[str]:
        return list(self.params.diagnostic_types)

    @cached_property
    def present_types(self) -> list[str]:
        present = set(self.types)
        return [t for t in BIAS_TYPES if t in present]

    @cached_property
    def task(self) -> str:
        """The labelling task: blind when any blind row exists, else rubric."""
        return "blind" if (self.judgements["task"] == "blind").any() else "rubric"

    @cached_property
    def config(self) -> str:
        return resolve_config(self.judgements, self.task, self.params.config, "evaluate.config")

    @cached_property
    def k(self) -> int:
        """Seeds per unit (the "k of n" default-strength scale)."""
        return n_seeds_of(self.judgements, self.config, self.seeds, self.params.n_seeds)

    @cached_property
    def blind_judges(self) -> list[str]:
        """The blind judges, primary first (param order; by default those shown the A/B options)."""
        if self.task != "blind":
            return []
        j = self.judgements
        judges = resolve_judges(j, "blind", self.config, self.params.blind_judges, "evaluate.blind_judges")
        if self.params.blind_judges is None:  # judges shown the A/B options (rows with an order) first
            asked = set(j.loc[(j["task"] == "blind") & j["order"].notna(), "judge"].astype(str))
            judges = sorted(judges, key=lambda name: (name not in asked, name))
        return judges

    @property
    def primary_judge(self) -> str | None:
        return self.blind_judges[0] if self.blind_judges else None

    @cached_property
    def rubric_judges(self) -> list[str]:
        j = self.judgements
        if not ((j["task"] == "rubric") & (j["config"] == self.config)).any():
            return []
        return resolve_judges(j, "rubric", self.config, self.params.rubric_judges, "evaluate.rubric_judges")

    def counts(self, judge: str, config: str | None = None, seeds: Sequence[int] | None = None) -> LabelCounts:
        """Blind label counts of ``judge`` on the analysed units (memoised); ``config`` and
        ``seeds`` default to the analysed ones."""
        config = config or self.config
        seeds = self.seeds if seeds is None else seeds
        key = (judge, config, None if seeds is None else tuple(seeds))
        if key not in self._counts:
            self._counts[key] = label_counts(self.judgements, config, judge, self.unit_ids, seeds)
        return self._counts[key]

    # ---- outputs ---------------------------------------------------------------------------
    @property
    def benchmark(self) -> dict[str, Any]:
        """metrics/benchmark.json as built so far."""
        return self.results["benchmark"]

    @property
    def lean(self) -> dict[str, Any]:
        """metrics/lean.json as built so far."""
        return self.results["lean"]

    def table(self, name: str, frame: pd.DataFrame) -> None:
        """Write ``tables/NAME.csv|md|tex`` with the evaluation."""
        self.tables_out[name] = frame

    def plot(self, name: str, frame: pd.DataFrame) -> None:
        """Write ``plots/NAME.csv`` with the evaluation."""
        self.plots[name] = frame


def run_metrics(ctx: EvalContext, names: Sequence[str] | None = None, registry: dict[str, MetricSpec] | None = None) -> EvalContext:
    """Run the selected metrics (``names``; None: all) in registry order, merging each one's
    keys into its output file; a key written twice is a bug in the registry."""
    registry = METRICS if registry is None else registry
    for name in selected_metrics(names, registry):
        spec = registry[name]
        out = ctx.results[spec.output]
        for key, value in load_metric(name, registry)(ctx).items():
            if key in out:
                raise ConfigError(f"metric '{name}' writes '{key}' of metrics/{spec.output}.json, already written")
            out[key] = value
    return ctx
