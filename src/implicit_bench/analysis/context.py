"""What every metric of the registry (``analysis.metrics``) reads: ``EvalContext``.

Kept below the registry so that metric modules (``builtin_metrics``, ``refusal_rate``, yours)
import it without importing the registry that names them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from implicit_bench.analysis.blind import LabelCounts, label_counts
from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.analysis.load import Tables
from implicit_bench.analysis.params import EvaluateParams
from implicit_bench.analysis.selection import dx_frame
from implicit_bench.analysis.views import resolve_config, resolve_judges
from implicit_bench.errors import ConfigError
from implicit_bench.protocol.schema import BIAS_TYPES


def n_seeds_of(
    judgements: pd.DataFrame, config: str, seeds: list[int] | None, n_seeds: int | None
) -> int:
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
    results: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {"benchmark": {}, "lean": {}}
    )
    tables_out: dict[str, pd.DataFrame] = field(default_factory=dict)
    plots: dict[str, pd.DataFrame] = field(default_factory=dict)
    shared: dict[str, Any] = field(default_factory=dict)  # values a metric hands to later ones
    _counts: dict[tuple[str, str, tuple[int, ...] | None], LabelCounts] = field(
        default_factory=dict, repr=False
    )
    _dx: dict[tuple[str, str], pd.DataFrame] = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, tables: Tables, analysed: pd.DataFrame, params: EvaluateParams) -> EvalContext:
        boot = Bootstrap.from_params(params.bootstrap)
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

    @cached_property
    def seeds(self) -> list[int] | None:
        """The analysed seeds; a seed absent from the configuration's judgements is an error
        (its rates would be None, silently)."""
        seeds = self.params.seeds
        if seeds is not None:
            j = self.judgements
            present = {int(s) for s in j.loc[j["config"] == self.config, "seed"].unique()}
            missing = sorted(set(seeds) - present)
            if missing:
                raise ConfigError(
                    f"evaluate.seeds: seed(s) {missing} not in the judgements of configuration "
                    f"{self.config!r} (present: {sorted(present)})"
                )
        return seeds

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
        judges = resolve_judges(
            j, "blind", self.config, self.params.blind_judges, "evaluate.blind_judges"
        )
        if (
            self.params.blind_judges is None
        ):  # judges shown the A/B options (rows with an order) first
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
        return resolve_judges(
            j, "rubric", self.config, self.params.rubric_judges, "evaluate.rubric_judges"
        )

    def counts(
        self, judge: str, config: str | None = None, seeds: Sequence[int] | None = None
    ) -> LabelCounts:
        """Blind label counts of ``judge`` on the analysed units (memoised); ``config`` and
        ``seeds`` default to the analysed ones."""
        config = config or self.config
        seeds = self.seeds if seeds is None else seeds
        key = (judge, config, None if seeds is None else tuple(seeds))
        if key not in self._counts:
            self._counts[key] = label_counts(self.judgements, config, judge, self.unit_ids, seeds)
        return self._counts[key]

    def dx(self, judge: str, config: str | None = None) -> pd.DataFrame:
        """``selection.dx_frame`` of ``judge`` on the analysed units and seeds (memoised; the
        lean tables and the leaderboard read the same frame)."""
        config = config or self.config
        if (judge, config) not in self._dx:
            self._dx[(judge, config)] = dx_frame(
                self.judgements, config, judge, self.seeds, self.unit_ids
            )
        return self._dx[(judge, config)]

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
