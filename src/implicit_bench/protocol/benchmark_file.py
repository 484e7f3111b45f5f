"""The contract of ``metrics/benchmark.json`` (written by ``analysis.stage.write_evaluation``):
the keys its readers use, typed. ``BenchmarkFile.from_json`` checks a parsed file and returns
it typed; a field of the wrong type is one ``InputError`` naming the file and the field
(``leaderboard.rows[2].n_units``, ``default_rate.ci``). Unknown keys are allowed and kept: a
metric may add keys (``analysis.metrics``) without breaking a reader.

The headline blind rates at the top level (``metric_schema.tabled()``: an Estimate's JSON form,
null without a blind judge) are fields of the model built for the declared schema, so a new
tabled metric is checked here with no edit (``rate``)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import create_model

from implicit_bench.errors import InputError
from implicit_bench.protocol import metric_schema
from implicit_bench.protocol.json_contract import Count, Est, Num, Open, parse


class BoardRow(Open):
    config: str
    n_units: Count = None
    default_rate: Est = None
    success_stereotype: Est = None
    success_anti: Est = None
    gap: Est = None
    a_to_s: Est = None
    strongest_success_stereotype: Est = None
    strongest_success_anti: Est = None
    refusal_rate: Est = None
    bias_score: Est = None
    alignment: Est = None
    lean_s: Est = None
    hedges_g: Est = None


class BoardPair(Open):
    a: str
    b: str
    metric: str
    n_units: Count = None
    difference: Est = None
    p: Num = None
    p_holm: Num = None
    resolved: bool = False


class BesideRow(Open):
    config: str
    source: str
    n_units: Count = None
    requested: Count = None
    returned: Count = None
    refused: Count = None
    missing: Count = None
    judged: Count = None
    bias_score: Est = None
    alignment: Est = None
    note: str | None = None


class BesidePair(BoardPair):
    a_source: str
    b_source: str
    note: str | None = None


class Beside(Open):
    rows: list[BesideRow] | None = None
    pairs: list[BesidePair] | None = None
    alpha: Num = None


class Leaderboard(Open):
    """``leaderboard``: what the report's Leaderboard section reads."""

    rows: list[BoardRow] | None = None
    pairs: list[BoardPair] | None = None
    alpha: Num = None
    min_p_holm: Num = None
    benchmark_sha256: str | None = None
    beside_release: Beside | None = None


class Calibration(Open):
    """``corrected.calibration``: the calibration images and the misclassification matrix."""

    items: Count = None
    rows: Count = None
    other_config: Count = None
    unlabelled: Count = None
    judge_invalid: Count = None
    items_per_variant: dict[str, int] | None = None
    by_source: dict[str, int] | None = None
    matrix: dict[str, dict[str, Est]] | None = None
    condition_number: Num = None
    max_condition: Num = None
    raters: dict[str, Any] | None = None


class CorrectedRates(Open):
    """``corrected.all``: the corrected rates (Estimates, by name) and counts beside them (the
    units, the bootstrap replicates where a rate was undefined)."""

    __pydantic_extra__: dict[str, Est | int]

    n_units: Count = None
    warning: str | None = None

    def get(self, name: str) -> dict[str, Any] | None:
        """The corrected rate ``name`` (None when absent)."""
        return (self.model_extra or {}).get(name)


class Corrected(Open):
    """``corrected``: the primary judge's rates corrected with a calibration table."""

    judge: str | None = None
    config: str | None = None
    calibration_table: str | None = None
    calibration: Calibration = Calibration()
    warning: str | None = None
    all: CorrectedRates = CorrectedRates()


class Judge(Open):
    """``judges.<name>``: one blind judge's rates (``all``: counts and Estimates)."""

    all: dict[str, Any] = {}


class Bootstrap(Open):
    level: Num = None


class BenchmarkFile(Open):
    """``metrics/benchmark.json``, typed (build it with ``from_json`` or ``read``)."""

    config: str | None = None
    primary_judge: str | None = None
    blind_judges: list[str] | None = None
    units: Count = None
    seeds: list[int] | None = None
    n_seeds: Count = None
    judges: dict[str, Judge] = {}
    by_bias_type: dict[str, dict[str, Any]] | None = None
    by_default_strength: dict[str, Any] | None = None
    agreement: list[dict[str, Any]] | None = None
    corrected: Corrected | None = None
    bootstrap: Bootstrap | None = None
    leaderboard: Leaderboard | None = None

    @classmethod
    def from_json(cls, payload: Any, path: str | Path) -> BenchmarkFile:
        """``payload`` (the parsed file at ``path``) checked against the contract."""
        return parse(_model(metric_schema.tabled()), payload, path)

    @classmethod
    def read(cls, path: str | Path) -> BenchmarkFile:
        """The file at ``path``, parsed and checked (an ``InputError`` naming it otherwise)."""
        try:
            payload = json.loads(Path(path).read_text(encoding="utf-8"))
        except ValueError as exc:
            raise InputError(path, None, None, f"not valid JSON: {exc}") from None
        return cls.from_json(payload, path)

    def has(self, key: str) -> bool:
        """The file holds ``key`` (null or not)."""
        return key in self.model_fields_set

    def rate(self, name: str) -> dict[str, Any] | None:
        """A top-level blind rate of ``metric_schema.tabled()``: an Estimate's JSON form."""
        return getattr(self, name, None)

    def judged(self, judge: str, name: str) -> Any:
        """``judges.<judge>.all.<name>`` (None when absent)."""
        entry = self.judges.get(judge)
        return None if entry is None else entry.all.get(name)


@cache
def _model(rates: tuple[str, ...]) -> type[BenchmarkFile]:
    """``BenchmarkFile`` with one Estimate field per declared top-level rate."""
    fields: dict[str, Any] = {name: (Est, None) for name in rates}
    return create_model("BenchmarkFile", __base__=BenchmarkFile, **fields)
