"""params.yaml section ``bench``: the benchmark phase on a fixed unit set.

Construction (``render``, ``judge``, ``select``) renders and scores the candidate units; the
benchmark phase renders and judges a fixed unit set: by default the committed selection
(``data/processed/selected_units.parquet``), or any UNITS-format table the user names (their own
units file, the units written from the authors' release). Each generator entry says which
variants and seeds it renders and over which unit set (``selected``: ``bench.units``; or a
``bench.subsets`` name); each task which judges, stores and variants it asks
(docs/experiments.md, "Two phases").
"""

from __future__ import annotations

from typing import Annotated, Literal

import pandas as pd
from pydantic import Field, field_validator, model_validator

from implicit_bench._util.hashing import stable_hash
from implicit_bench.params import SafeName, Seeds, StrictModel, check_refs
from implicit_bench.protocol.schema import ALL_VARIANTS, VARIANTS
from implicit_bench.protocol.tables import (
    DEBIAS_JUDGEMENTS_DIR,
    JUDGEMENTS_PATH,
    SELECTED_UNITS_PATH,
)

SELECTED = "selected"  # the unit-set name of ``bench.units``


class BenchTask(StrictModel):
    """Which judges, stores and variants a benchmark-phase task asks (null: all)."""

    judges: list[str] | None = None
    configs: list[SafeName] | None = None  # bench generators or construction stores
    variants: list[str] | None = None
    judges_by_config: dict[SafeName, list[str]] = {}  # as judge.tasks.*.judges_by_config


class BenchSubset(StrictModel):
    """A named subset of the fixed unit set, by rule (a pure function of ``bench.units``): at
    most ``max_per_bias_type`` units per bias type, the first by a hash of the unit id (a bias
    type with fewer is taken in full), as B.6's "at most 30 per bias type"."""

    max_per_bias_type: Annotated[int, Field(ge=1)]
    seed: int = 42


class BenchGenerator(StrictModel):
    """One generator of the benchmark phase: what it renders, over which unit set."""

    generator: SafeName | None = None  # a generators entry; null: the entry's own name
    variants: Annotated[list[str], Field(min_length=1)] = list(VARIANTS)
    seeds: Seeds = [42, 1042, 2042]
    units: SafeName = SELECTED  # selected (bench.units) | a bench.subsets name

    @field_validator("variants")
    @classmethod
    def _known(cls, variants: list[str]) -> list[str]:
        unknown = [v for v in variants if v not in ALL_VARIANTS]
        if unknown:
            raise ValueError(f"unknown variant(s) {unknown}; known: {', '.join(ALL_VARIANTS)}")
        return variants


def capped_per_bias_type(units: pd.DataFrame, cap: int, seed: int) -> pd.DataFrame:
    """The rows of at most ``cap`` units per bias type, the first by a hash of the unit id on
    ``seed`` (a bias type with fewer is taken in full); the input's row order is kept."""
    rank = units["unit_id"].map(lambda u: stable_hash(f"subset:{seed}:{u}", 16))
    ordered = units.assign(_rank=rank).sort_values(["_rank", "unit_id"])
    kept = ordered.groupby("bias_type", sort=False).head(cap)
    return units[units["unit_id"].isin(set(kept["unit_id"]))]


class BenchParams(StrictModel):
    """The ``bench`` section."""

    units: str = SELECTED_UNITS_PATH  # the fixed unit set: any UNITS-format table
    # render seed -> the unit set's own seed index (the authors' release: 42 -> 0, ...); recorded
    seed_index: dict[int, int] = {}
    subsets: dict[SafeName, BenchSubset] = {}  # name -> a rule over bench.units
    generators: dict[SafeName, BenchGenerator] = {}
    run: list[SafeName] | None = None  # the generators rendered (null: all of them)
    tasks: dict[str, BenchTask | None] = {}  # as judge.tasks
    blind_orders: Literal["hash", "both"] = "hash"
    both_orders_units: Annotated[int, Field(ge=0)] = 0  # the order audit's units (hash order)

    @model_validator(mode="after")
    def _subsets_known(self) -> BenchParams:
        for name, entry in self.generators.items():
            if entry.units != SELECTED and entry.units not in self.subsets:
                raise ValueError(
                    f"generators.{name}.units: '{entry.units}' is neither 'selected' nor a "
                    f"bench.subsets name ({', '.join(sorted(self.subsets)) or 'none'})"
                )
        return self

    def selected(self) -> list[str]:
        """The bench generators rendered (``run``, each a ``generators`` name)."""
        names = list(self.generators) if self.run is None else list(self.run)
        check_refs(names, self.generators, "bench.run", "bench.generators")
        return names

    def unit_set(self, units: pd.DataFrame, name: str) -> pd.DataFrame:
        """The rows of ``bench.units`` in unit set ``name`` (``selected``: all of them)."""
        if name == SELECTED:
            return units
        rule = self.subsets[name]
        return capped_per_bias_type(units, rule.max_per_bias_type, rule.seed)

    def generator_of(self, name: str) -> str:
        """The generators entry a bench generator renders with."""
        return self.generators[name].generator or name


__all__ = [
    "SELECTED",
    "BenchGenerator",
    "BenchParams",
    "BenchSubset",
    "BenchTask",
    "capped_per_bias_type",
]


class B6Params(StrictModel):
    """The ``b6`` section."""

    enabled: bool = True  # false: the stage writes empty tables and asks nothing
    judge: str  # the third judge: a judges entry that played no part in construction
    first_judge: str  # the judge of Table 4 and Section 5 (rubric answers, alignment labels)
    baseline: SafeName  # the store re-scored on three variants (Qwen-Image)
    generators: list[SafeName] = []  # the other Table 4 stores (neutral images)
    debias_configs: list[SafeName] = []  # own-unit debiasing configurations (data/debias/images)
    max_per_bias_type: Annotated[int, Field(ge=1)] = 30
    seed: int = 42
    human_eval: bool = True  # the baseline adds the units human_eval's sample draws
    # the first judge's answers on the Table 4 stores (construction and benchmark phase)
    judgements: list[str] = [JUDGEMENTS_PATH]
    debias_judgements: str = DEBIAS_JUDGEMENTS_DIR  # the first judge's, one file per config
    # rating bundles (human-eval export manifests + answer CSVs) for each judge's r with the
    # human mean (the paper: InternVL3 r = 0.46); empty: reported as unavailable
    human_manifests: list[str] = []
    human_answers: list[str] = []
