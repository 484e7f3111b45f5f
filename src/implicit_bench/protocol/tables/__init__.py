"""The table catalogue: where every table that flows between stages lives, and its spec.

Each path is written here once; stage scripts, params models and ``implicit-bench analyze``
take their defaults from these names (params.yaml and dvc.yaml still spell them out, as DVC
needs). Every table is read and written through its ``TableSpec``:

    units = UNITS.read()                  # data/interim/units.parquet, validated, file order
    units = UNITS.read(path, require=("unit_id", "prompt_neutral"))  # a reader's own columns
    units, rejects = UNITS.check(path)    # analyze: bad rows left out and listed
    SELECTED_UNITS.write(frame)           # checked, then written atomically

A bad row raises ``errors.InputError(path, row, field, reason)`` (one line: file, 1-based data
row, field). JUDGEMENTS rows are read and written through ``tables.judgements``
(``read_judgements`` / ``write_judgements`` / ``check_judgements``), which add the per-task
value checks of the judge-task registry; this module does not import the registry, so a stage
that never reads judgements does not depend on the task files. Docs: docs/contracts.md, "Tables".
"""

from __future__ import annotations

import json

import pandas as pd

from implicit_bench.params import SEED_MAX
from implicit_bench.protocol.schema import (
    ALL_VARIANTS,
    BIAS_TYPES,
    BLIND_LABELS,
    CYCLIC_ORDERS,
    DIRECT_VARIANTS,
    JUDGEMENT_KEY,
    NEGATED_VARIANTS,
    ORDERS,
    TEMPLATE_VARIANTS,
    VARIANTS,
    normalise_bias_type,
)
from implicit_bench.protocol.tables.spec import Checked, Checker, Column, TableSpec, existing

# ----- paths (the only place they are written in the library) -------------------------------------
PAIRS_PATH = "data/interim/pairs.parquet"
PAIR_REJECTS_PATH = "data/interim/pairs_rejects.csv"
KG_UNITS_PATH = "data/interim/kg_units.parquet"
KG_INVALID_PATH = "data/interim/kg_invalid.jsonl"
TRIPLETS_PATH = "data/interim/triplets.parquet"
TRIPLETS_INVALID_PATH = "data/interim/triplets_invalid.jsonl"
UNITS_PATH = "data/interim/units.parquet"
IMAGES_DIR = "data/images"
IMAGE_INDEX_GLOB = "data/images/*/index.parquet"
JUDGEMENTS_DIR = "data/judgements"
JUDGEMENTS_PATH = "data/judgements/judgements.parquet"
CLIP_JUDGEMENTS_PATH = "data/judgements/clip.parquet"
SELECTED_UNITS_PATH = "data/processed/selected_units.parquet"
SELECTION_METRICS_PATH = "metrics/selection.json"
RETRIEVAL_PATH = "data/processed/retrieval.parquet"
REWRITES_PATH = "data/processed/rewrites.parquet"
LLM_PAIRS_PATH = "data/processed/llm_pairs.parquet"
DEBIAS_IMAGES_DIR = "data/debias/images"
DEBIAS_JUDGEMENTS_DIR = "data/debias/judgements"
WORLD_DIR = "data/world"
WORLD_TRUTH_PATH = "data/world/truth.parquet"
DIVERSITY_IMAGES_DIR = "data/diversity/images"
# the benchmark phase (bench_render, bench_judge; docs/experiments.md, "Two phases")
BENCH_IMAGES_DIR = "data/bench_images"
BENCH_JUDGEMENTS_PATH = "data/judgements/bench.parquet"
BENCH_IMAGE_INDEX_GLOB = "data/bench_images/*/index.parquet"
#: every image index the analysis reads: construction (data/images) and benchmark phase stores
ALL_IMAGE_INDEX_GLOB = "data/*images/*/index.parquet"
CALIBRATION_PATH = (
    "data/raw/calibration.csv"  # user-provided (implicit-bench calibration); optional
)
#: catalogue paths a user provides and no stage writes (so no dvc.yaml output declares them)
USER_INPUTS = (CALIBRATION_PATH,)


def _id(name: str) -> Column:
    return Column(name, "text")


def _opt(name: str, kind: str = "any") -> Column:
    return Column(name, kind, required=False, nullable=True)  # type: ignore[arg-type]


_SEED = Column("seed", "int", low=0, high=SEED_MAX)
_BIAS = Column("bias_type", "text", allowed=BIAS_TYPES, normalise=normalise_bias_type)
_PROMPTS = tuple(Column(f"prompt_{v}", "text") for v in VARIANTS)
# Extra prompt columns from the triplets hook (docs/audits.md):
# null when the prompt failed its check.
_EXTRA_PROMPTS = tuple(
    c
    for v in (*NEGATED_VARIANTS, *TEMPLATE_VARIANTS, *DIRECT_VARIANTS)
    for c in (_opt(f"prompt_{v}", "text"), _opt(f"prompt_{v}_check"))
)
_UNIT_COLUMNS = (
    _id("unit_id"),
    _id("source"),
    _BIAS,
    _id("head"),
    Column("relation", "text", nullable=True, null_tokens=True),
    Column("stereotype", "text"),
    Column("anti_stereotype", "text"),
    *_PROMPTS,
    *_EXTRA_PROMPTS,
)

# ----- specs
# ----------------------------------------------------------------------------------------
PAIRS = TableSpec(
    "pairs",
    PAIRS_PATH,
    (
        _id("pair_id"),
        _id("source"),
        _opt("split", "text"),
        _BIAS,
        _opt("target"),
        _opt("context"),
        Column("stereotype_sentence", "any"),
        Column("anti_stereotype_sentence", "any"),
    ),
    key=("pair_id",),
    doc="one row per source sentence pair (sources stage)",
)
PAIR_REJECTS = TableSpec(
    "pair rejects",
    PAIR_REJECTS_PATH,
    (_opt("file"), _opt("row"), _opt("field", "text"), Column("reason", "any"), _opt("raw")),
    suffixes=(".csv",),
    doc="source rows left out, with the reason (sources stage)",
)
KG_UNITS = TableSpec(
    "kg units",
    KG_UNITS_PATH,
    (
        _id("unit_id"),
        _opt("source_pair_id", "text"),
        _opt("source", "text"),
        _opt("bias_type", "text"),
        _id("head"),
        _opt("relation"),
        _opt("stereotype"),
        _opt("anti_stereotype"),
        Column("stereotype_tails", "any"),
        Column("anti_stereotype_tails", "any"),
        _opt("axis"),
        _opt("target"),
        _opt("construction_mode"),
        _opt("shared_frame"),
        _opt("frame_sensitive"),
        _opt("stereotype_evidence"),
        _opt("anti_stereotype_evidence"),
        _opt("extractor"),
    ),
    key=("unit_id",),
    doc="one row per KG unit; list fields as JSON lists (kg stage; records.KGUnit)",
)
TRIPLETS = TableSpec(
    "triplets",
    TRIPLETS_PATH,
    _UNIT_COLUMNS,
    key=("unit_id",),
    doc="every unit with a triplet: UNITS columns + the writer's checks (triplets stage)",
)
UNITS = TableSpec(
    "units",
    UNITS_PATH,
    _UNIT_COLUMNS,
    key=("unit_id",),
    sort=("unit_id",),
    doc="the units taken through render, judge and the analysis (triplets stage, subset.max_units)",
)
IMAGE_INDEX = TableSpec(
    "images",
    IMAGE_INDEX_GLOB,
    (
        _id("config"),
        _id("unit_id"),
        _id("variant"),
        _SEED,
        Column(
            "status",
            "text",
            allowed=("ok", "refused", "failed"),
            unknown="status must be ok, refused or failed",
        ),
        _opt("reason", "text"),
        _opt("generator"),
        _opt("prompt"),
        _opt("sha256"),
        _opt("width"),
        _opt("height"),
        _opt("attempts"),
    ),
    key=("config", "unit_id", "variant", "seed"),
    doc="an image store's published index, one row per planned image (render; images.ImageStore)",
)
JUDGEMENTS = TableSpec(
    "judgements",
    JUDGEMENTS_PATH,
    (
        _id("unit_id"),
        Column("variant", "text", allowed=ALL_VARIANTS),
        _SEED,
        _id("config"),
        _id("judge"),
        _id("task"),
        Column("value", "text", nullable=True),
        _opt("model", "text"),
        _opt("prompt_hash"),
        _opt("image_sha256"),
        _opt("raw"),
        _opt("valid"),
        _opt("error"),
        Column(
            "order",
            "text",
            required=False,
            nullable=True,
            allowed=(*ORDERS, *CYCLIC_ORDERS),
            unknown="order must be sa, as, a cyclic order (ans, nsa, san) or empty, got '{}'",
        ),
        _opt("judge_identity", "text"),  # judge_identity: model, template, decoding, image
    ),
    key=(*JUDGEMENT_KEY, "order"),
    doc="one row per judged image and question (judge, clip and debias_judge stages; analyze)",
)
CLIP_JUDGEMENTS = TableSpec(
    "clip judgements",
    CLIP_JUDGEMENTS_PATH,
    JUDGEMENTS.columns,
    key=JUDGEMENTS.key,
    doc="JUDGEMENTS rows of the CLIP judge: clip_lean and blind (clip stage)",
)
BENCH_JUDGEMENTS = TableSpec(
    "bench judgements",
    BENCH_JUDGEMENTS_PATH,
    JUDGEMENTS.columns,
    key=JUDGEMENTS.key,
    doc="JUDGEMENTS rows of the benchmark phase on its fixed unit set (bench_judge)",
)
DEBIAS_JUDGEMENTS = TableSpec(
    "debias judgements",
    DEBIAS_JUDGEMENTS_DIR + "/{name}.parquet",
    JUDGEMENTS.columns,
    key=JUDGEMENTS.key,
    doc="JUDGEMENTS rows of one debiasing configuration (debias_judge@<name>)",
)
SELECTED_UNITS = TableSpec(
    "selected units",
    SELECTED_UNITS_PATH,
    (
        *(
            c
            if c.name == "unit_id"
            else Column(
                c.name,
                c.kind,
                False,
                c.nullable,
                c.allowed,
                normalise=c.normalise,
                null_tokens=c.null_tokens,
            )
            for c in _UNIT_COLUMNS
        ),
        _opt("selected_by", "text"),
    ),
    key=("unit_id",),
    doc="the kept units: UNITS columns + selected_by, mean_dx__<judge>, n_seeds__<judge> (select)",
)
RETRIEVAL = TableSpec(
    "retrieval",
    RETRIEVAL_PATH,
    (
        _id("unit_id"),
        _opt("retrieved_full", "text"),
        _opt("score_full", "float"),
        Column("own_hit", "bool"),
        Column("own_rank", "int", required=False, low=1),
        _opt("retrieved_removed", "text"),
        _opt("score_removed", "float"),
        Column("same_head_removed", "bool", required=False),
        Column("same_pair_removed", "bool", required=False),
    ),
    key=("unit_id",),
    doc="top-1 KG unit per neutral prompt: ids as text, hits as strict booleans (retrieve)",
)
REWRITES = TableSpec(
    "rewrites",
    REWRITES_PATH,
    (
        _id("unit_id"),
        _opt("info", "text"),
        _opt("source_unit_id", "text"),
        _opt("prompt"),
        _opt("valid"),
        _opt("error"),
        _opt("raw"),
        _opt("request_hash"),
    ),
    key=("unit_id", "info"),
    doc="LLM rewrites of the neutral prompts (rewrite)",
)
LLM_PAIRS = TableSpec(
    "llm pairs",
    LLM_PAIRS_PATH,
    (
        _id("unit_id"),
        _opt("stereotype_prompt"),
        _opt("anti_stereotype_prompt"),
        _opt("valid"),
        _opt("error"),
        _opt("raw"),
    ),
    key=("unit_id",),
    doc="LLM sentence pairs of the neutral prompts (rewrite)",
)
WORLD_TRUTH = TableSpec(
    "world truth",
    WORLD_TRUTH_PATH,
    (_id("unit_id"),),
    doc="the simulated world's planted truth, one row per unit and simulated generator (world)",
)

CALIBRATION_SOURCES = ("human", "reference_judge")


def _labelled_with_source(chk: Checker, frame: pd.DataFrame) -> None:
    """A reference label needs its source, and a source needs a label."""
    if "reference" in frame.columns and "source" in frame.columns:
        chk.check(
            frame["reference"].notna() & frame["source"].isna(),
            "source",
            "a reference label needs its source (human or reference_judge)",
        )
        chk.check(
            frame["reference"].isna() & frame["source"].notna(),
            "reference",
            "a source without a reference label",
        )
    if "raters" in frame.columns:
        chk.check(
            frame["raters"].map(_bad_raters),
            "raters",
            "raters must be a JSON object of rater -> s, a or neither (human-eval import)",
        )


def _bad_raters(text: object) -> bool:
    """True for a ``raters`` cell that is not blank and not a JSON object of labels."""
    if text is None or (isinstance(text, float) and text != text) or text == "":
        return False
    try:
        value = json.loads(str(text))
    except json.JSONDecodeError:
        return True
    return not isinstance(value, dict) or not set(map(str, value.values())) <= set(BLIND_LABELS)


CALIBRATION = TableSpec(
    "calibration",
    CALIBRATION_PATH,
    (
        _id("config"),
        _id("unit_id"),
        Column("variant", "text", allowed=VARIANTS),
        _SEED,
        Column(
            "reference",
            "text",
            nullable=True,
            allowed=BLIND_LABELS,
            unknown="reference must be s, a or neither (blank: not labelled yet), got '{}'",
        ),
        Column(
            "source",
            "text",
            nullable=True,
            allowed=CALIBRATION_SOURCES,
            unknown="source must be human or reference_judge, got '{}'",
        ),
        _opt("image_sha256", "text"),
        _opt("raters", "text"),  # human-eval import: JSON rater -> label
    ),
    key=("config", "unit_id", "variant", "seed"),
    checks=(_labelled_with_source,),
    suffixes=(".csv", ".parquet"),
    doc="judge-error calibration set: image key -> reference label (s, a, neither) and its source "
    "(implicit-bench calibration sample / label; evaluate; docs/correction.md)",
)


# ----- column lists: every table's columns are named once, in its spec above -----------------
#: one row per source sentence pair (sources stage)
PAIR_COLUMNS: tuple[str, ...] = PAIRS.names
#: the core UNITS columns (`implicit-bench analyze`'s units); the optional prompt columns follow
UNIT_COLUMNS: tuple[str, ...] = UNITS.required
#: the kg stage's table, in its written order (list fields as JSON lists)
KG_UNIT_COLUMNS: tuple[str, ...] = KG_UNITS.names
#: a JUDGEMENTS row as `implicit-bench analyze` needs it
JUDGEMENT_COLUMNS: tuple[str, ...] = JUDGEMENTS.required
#: what the judge stage records next to them (order: a cyclic or both-orders blind question)
JUDGEMENT_EXTRA_COLUMNS: tuple[str, ...] = JUDGEMENTS.optional
#: the rewrite stage's rewrites and LLM sentence pairs
REWRITE_COLUMNS: tuple[str, ...] = REWRITES.names
LLM_PAIR_COLUMNS: tuple[str, ...] = LLM_PAIRS.names

TABLES: dict[str, TableSpec] = {
    spec.name: spec
    for spec in (
        PAIRS,
        PAIR_REJECTS,
        KG_UNITS,
        TRIPLETS,
        UNITS,
        IMAGE_INDEX,
        JUDGEMENTS,
        CLIP_JUDGEMENTS,
        BENCH_JUDGEMENTS,
        DEBIAS_JUDGEMENTS,
        SELECTED_UNITS,
        RETRIEVAL,
        REWRITES,
        LLM_PAIRS,
        WORLD_TRUTH,
        CALIBRATION,
    )
}

__all__ = [
    "ALL_IMAGE_INDEX_GLOB",
    "BENCH_IMAGES_DIR",
    "BENCH_JUDGEMENTS",
    "BENCH_JUDGEMENTS_PATH",
    "CALIBRATION",
    "CALIBRATION_PATH",
    "CALIBRATION_SOURCES",
    "USER_INPUTS",
    "CLIP_JUDGEMENTS",
    "CLIP_JUDGEMENTS_PATH",
    "DEBIAS_IMAGES_DIR",
    "DEBIAS_JUDGEMENTS",
    "DEBIAS_JUDGEMENTS_DIR",
    "DIVERSITY_IMAGES_DIR",
    "IMAGES_DIR",
    "IMAGE_INDEX",
    "IMAGE_INDEX_GLOB",
    "JUDGEMENTS",
    "JUDGEMENTS_DIR",
    "JUDGEMENTS_PATH",
    "KG_INVALID_PATH",
    "KG_UNITS",
    "KG_UNITS_PATH",
    "LLM_PAIRS",
    "LLM_PAIRS_PATH",
    "PAIRS",
    "PAIRS_PATH",
    "PAIR_REJECTS",
    "PAIR_REJECTS_PATH",
    "REWRITES",
    "REWRITES_PATH",
    "RETRIEVAL",
    "RETRIEVAL_PATH",
    "SELECTED_UNITS",
    "SELECTED_UNITS_PATH",
    "TABLES",
    "TRIPLETS",
    "TRIPLETS_INVALID_PATH",
    "TRIPLETS_PATH",
    "UNITS",
    "UNITS_PATH",
    "WORLD_DIR",
    "WORLD_TRUTH",
    "WORLD_TRUTH_PATH",
    "Checked",
    "Checker",
    "Column",
    "TableSpec",
    "existing",
]
