"""Param sections ``select`` and ``evaluate`` (pydantic, unknown keys rejected)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from implicit_bench.params import SEEDS_MAX, BootstrapParams, PositiveInt, Seeds, StrictModel
from implicit_bench.protocol.schema import BIAS_TYPES, DIAGNOSTIC_BIAS_TYPES, normalise_bias_type
from implicit_bench.protocol.tables import (
    CLIP_JUDGEMENTS_PATH,
    IMAGE_INDEX_GLOB,
    IMAGES_DIR,
    JUDGEMENTS_PATH,
    KG_UNITS_PATH,
    PAIRS_PATH,
    SELECTED_UNITS_PATH,
    SELECTION_METRICS_PATH,
    UNITS_PATH,
)

Share = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class InputParams(StrictModel):
    """How bad input is handled (shared by both stages and ``analyze``)."""

    on_bad_row: Literal["reject", "error"] = "reject"  # reject: count + report and go on
    on_duplicate: Literal["drop", "error"] = "drop"  # drop: every row of a duplicated key
    primary_order: Literal["hash", "sa", "as"] = "hash"  # blind images asked under both orders


class HeldOutSample(StrictModel):
    """App. C.3: held-out seeds on a uniformly random sample of kept and of rejected units."""

    kept: PositiveInt = 300
    rejected: PositiveInt = 300
    seed: int = 42


class SelectParams(InputParams):
    units: str = UNITS_PATH
    judgements: list[str] = Field(
        default_factory=lambda: [JUDGEMENTS_PATH, CLIP_JUDGEMENTS_PATH]
    )  # clip's: when the clip stage ran
    pairs: str | None = PAIRS_PATH  # raw upstream counts of Table 9 (optional)
    extracted: str | None = (
        KG_UNITS_PATH  # post-extraction units of Table 9 (optional: every unit the KG stage wrote)
    )
    config: str | None = None  # generator configuration used for selection (None: the only one)
    judges: list[str] | None = None  # rubric judges (None: every rubric judge of that config)
    rule: Literal["union", "intersection"] = "union"
    # complete seeds a unit needs to have a mean dx; "all": every selection seed (the paper's
    # "positive mean dx over the three seeds", Section 3.3)
    min_seeds: Annotated[PositiveInt, Field(le=SEEDS_MAX)] | Literal["all"] = 1
    seeds: Seeds | None = None  # None: every seed present except held_out_seeds
    held_out_seeds: Seeds | None = None  # Table 23: kept vs rejected units on new seeds
    # Table 23's sample (C.3: 300 kept + 300 rejected at random, a smaller group whole; the
    # ids in selection.json held_out_sample, Table 23 on them); null: every unit
    held_out_sample: HeldOutSample | None = Field(default_factory=lambda: HeldOutSample())
    # with a sample and held-out seeds rendered beyond it: Table 23 also over every unit
    held_out_every_unit: bool = True
    # C.3: kept vs rejected lean on generators not used for selection (SD3: 50.4% vs 17.5%);
    # null: every other configuration with rubric judgements, []: none
    other_configs: list[str] | None = None
    bootstrap: BootstrapParams = Field(default_factory=lambda: BootstrapParams())


class GroupingParams(StrictModel):
    """An extra default-strength grouping: units grouped by another config / judge / seeds."""

    name: str
    config: str | None = None  # None: the analysed config
    judge: str | None = None  # None: the labelling judge
    seeds: Seeds | None = None  # None: the analysed seeds


class EvaluateInputs(StrictModel):
    """The construction outputs the ``evaluate`` stage depends on besides ``units`` (dvc.yaml
    names them as its deps: DVC cannot take a list param as deps). A run on a fixed unit set
    (``implicit-bench run --benchmark`` / ``--units-file``) points each at a file of its own
    benchmark phase, so its evaluation does not depend on construction (docs/experiments.md,
    "Run only what the job needs")."""

    selection: str = SELECTED_UNITS_PATH
    selection_metrics: str = SELECTION_METRICS_PATH  # read only where selected_units is set
    judgements: str = JUDGEMENTS_PATH
    clip: str = CLIP_JUDGEMENTS_PATH
    images: str = IMAGES_DIR


class EvaluateParams(InputParams):
    units: str = UNITS_PATH
    inputs: EvaluateInputs = Field(default_factory=EvaluateInputs)
    selected_units: str | None = SELECTED_UNITS_PATH  # None: every unit
    judgements: list[str] = Field(
        default_factory=lambda: [JUDGEMENTS_PATH, CLIP_JUDGEMENTS_PATH]
    )  # clip's: when the clip stage ran
    image_index_glob: str | None = IMAGE_INDEX_GLOB  # refusals (Table 4), if present
    config: str | None = None  # configuration analysed (None: the only one with blind labels)
    blind_judges: list[str] | None = None  # first = primary (None: every blind judge, sorted)
    rubric_judges: list[str] | None = None  # lean scorers and Hedges' g (None: every one)
    seeds: Seeds | None = None  # seeds analysed (None: every seed present)
    # seeds per unit: the default-strength scale "k of n"; null: the seeds in the judgements
    n_seeds: Annotated[PositiveInt, Field(le=SEEDS_MAX)] | None = 3
    agreement_units: Literal["complete", "all"] = "complete"
    diagnostic_types: list[str] = Field(default_factory=lambda: list(DIAGNOSTIC_BIAS_TYPES))
    recoverability_both_max: Share = 0.12  # a type "fails" check 1 when both-succeed <= this
    recoverability_neither_min: Share = 0.70  # and check 2 when "neither" on neutral > this
    groupings: list[GroupingParams] = Field(default_factory=list)
    bootstrap: BootstrapParams = Field(default_factory=BootstrapParams)
    # registered metrics to run (analysis.metrics.METRICS; with those they require); null: all
    metrics: list[str] | None = None
    # judge-error calibration table (tables.CALIBRATION; docs/correction.md): corrected rates beside
    # the judged ones when the file exists; null or absent: none (benchmark.json unchanged)
    calibration: str | None = None
    # a checkout or .zip of the authors' release: the leaderboard puts its Table 4 generators
    # beside this run's, paired on units and seeds (release/beside.py); null: none
    beside_release: str | None = None

    @field_validator("diagnostic_types")
    @classmethod
    def _known_types(cls, types: list[str]) -> list[str]:
        unknown = [t for t in types if normalise_bias_type(t) not in BIAS_TYPES]
        if unknown:
            raise ValueError(f"unknown bias type(s) {unknown}; known: {', '.join(BIAS_TYPES)}")
        return [str(normalise_bias_type(t)) for t in types]
