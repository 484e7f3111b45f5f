"""The authors' release as a benchmark: its 1,831 units as the unit set of the benchmark phase.

``benchmark_units(path)`` reads ``data/benchmark_prompts.csv`` of a checkout or ``.zip`` of
ydai94/IMPLICIT-Bench (read at run time from the user's copy: the release has no licence and
is never vendored) and returns the units in the UNITS table's columns with the release's exact
prompt text, ids, bias types and sources, the SHA-256 of the benchmark file (so a result names
the benchmark it ran on) and the seed map 42 / 1042 / 2042 -> the release's seed index 0 / 1 / 2
(docs/import.md, "The release as a benchmark").
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict

from implicit_bench.errors import InputError
from implicit_bench.params import section
from implicit_bench.protocol.schema import BIAS_TYPES, VARIANTS, normalise_bias_type
from implicit_bench.release import layout
from implicit_bench.release.importer import PROMPTS, Release, read_units

#: the files whose bytes define the benchmark (hashed in this order)
BENCHMARK_FILES: tuple[str, ...] = (PROMPTS,)
#: the release's seed indices (benchmark_scores.csv, cache/eval_results: ``seed`` 0, 1, 2)
SEED_INDICES: tuple[int, ...] = (0, 1, 2)
#: the column of the units table naming the benchmark (every row: the same SHA-256)
BENCHMARK_COLUMN = "benchmark_sha256"


@dataclass(frozen=True)
class BenchmarkUnits:
    """The release's unit set: ``units`` (UNITS columns + ``target``, ``axis``, the ``*_tails``
    JSON lists and ``benchmark_sha256``), ``sha256`` of the benchmark file(s), ``seeds``
    (pipeline seed -> release seed index) and the SHA-256 of each file read."""

    units: pd.DataFrame
    sha256: str
    seeds: dict[int, int]
    source: str
    files: dict[str, str] = field(default_factory=dict)

    @property
    def n_units(self) -> int:
        return int(len(self.units))

    def seed_index(self, seed: int) -> int:
        """The release's seed index of a pipeline seed; a seed the release never used is an
        error (its images have no counterpart in the release)."""
        if seed not in self.seeds:
            raise InputError(
                self.source,
                None,
                "seed",
                f"seed {seed} is not a seed of the release "
                f"(its seeds: {', '.join(map(str, self.seeds))})",
            )
        return self.seeds[seed]


def seed_map() -> dict[int, int]:
    """Pipeline seed -> release seed index: 42 -> 0, 1042 -> 1, 2042 -> 2 (layout.seed_of)."""
    return {layout.seed_of(i): i for i in SEED_INDICES}


def benchmark_sha256(release: Release) -> tuple[str, dict[str, str]]:
    """(SHA-256 over the benchmark files' bytes, per-file SHA-256). With one file (the
    default) the benchmark hash is that file's SHA-256, so ``sha256sum`` reproduces it."""
    per_file = {rel: hashlib.sha256(release.read_bytes(rel)).hexdigest() for rel in BENCHMARK_FILES}
    if len(per_file) == 1:
        return next(iter(per_file.values())), per_file
    joined = "\n".join(f"{rel} {digest}" for rel, digest in per_file.items())
    return hashlib.sha256(joined.encode()).hexdigest(), per_file


def benchmark_units(path: str | Path) -> BenchmarkUnits:
    """The release's units (checkout or .zip of ydai94/IMPLICIT-Bench) as a benchmark.

    Raises ``InputError`` (file, row, field) for a missing file, a missing column, a duplicate
    id, a blank prompt or an unknown source or bias type."""
    release = Release(path)
    if not release.exists(PROMPTS):
        raise InputError(
            release.where(PROMPTS), None, None, "missing: not a copy of the authors' release"
        )
    units = read_units(release)
    where = release.where(PROMPTS)
    units["bias_type"] = units["bias_type"].map(normalise_bias_type)
    for row, (uid, bias) in enumerate(
        zip(units["unit_id"], units["bias_type"], strict=True), start=1
    ):
        if not uid:
            raise InputError(where, row, "id", "empty")
        if bias not in BIAS_TYPES:
            raise InputError(
                where,
                row,
                "bias_type",
                f"unknown bias type {bias!r}; expected one of {', '.join(BIAS_TYPES)}",
            )
    for col in ("head", "stereotype", "anti_stereotype", *_prompt_columns()):
        blank = units[col].fillna("").str.strip() == ""
        if blank.any():
            row = int(blank.to_numpy().nonzero()[0][0]) + 1
            raise InputError(where, row, _release_column(col), "empty")
    digest, files = benchmark_sha256(release)
    units[BENCHMARK_COLUMN] = digest
    return BenchmarkUnits(
        units=units.reset_index(drop=True),
        sha256=digest,
        seeds=seed_map(),
        source=str(path),
        files=files,
    )


def _prompt_columns() -> tuple[str, ...]:
    return ("prompt_neutral", "prompt_stereotype", "prompt_anti_stereotype")


def _release_column(col: str) -> str:
    """The release's name of a UNITS column (for error messages)."""
    return {"stereotype": "stereotype_tails", "anti_stereotype": "anti_stereotype_tails"}.get(
        col, col
    )


# ----- the `benchmark` params key (profile key; `plan --benchmark PATH`, `run --benchmark PATH`)
#: the variants the release has prompts for; the Table 4 row renders the neutral ones only
RELEASE_VARIANTS: tuple[str, ...] = VARIANTS
TABLE4_VARIANTS: tuple[str, ...] = ("neutral",)


class BenchmarkParams(BaseModel):
    """``benchmark:`` in params (or a profile): the release copy whose units are the benchmark
    phase's unit set (null: the project's own construction). ``variants``: the prompts rendered
    (null: render.variants that the release has; ``[neutral]``: the Table 4 row)."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = None
    variants: list[Literal["neutral", "stereotype", "anti_stereotype"]] | None = None


def benchmark_params(params: dict[str, Any]) -> BenchmarkParams:
    """The ``benchmark`` key (a mapping; absent or null: no benchmark)."""
    return section(params, "benchmark", BenchmarkParams)


def benchmark_variants(bench: BenchmarkParams, render_variants: list[str]) -> list[str]:
    """The variants a benchmark run renders: ``benchmark.variants``, else render.variants the
    release has prompts for (negated and template variants have none in the release)."""
    if bench.variants is not None:
        return list(bench.variants)
    return [v for v in render_variants if v in RELEASE_VARIANTS]


def benchmark_counts(bench: BenchmarkUnits, seeds: list[int]) -> dict[str, Any]:
    """What a benchmark run holds: units, the seeds it renders that pair with the release (and
    those that do not), and per generator the images of the Table 4 row (neutral prompts on the
    release's seeds) and of every table (the three prompts on those seeds)."""
    paired = [s for s in seeds if s in bench.seeds]
    n_seeds = len(bench.seeds)
    return {
        "path": bench.source,
        "sha256": bench.sha256,
        "units": bench.n_units,
        "seeds": list(seeds),
        "seed_index": {str(s): bench.seeds[s] for s in paired},
        "seeds_without_release_counterpart": [s for s in seeds if s not in bench.seeds],
        "table4_images_per_generator": bench.n_units * n_seeds * len(TABLE4_VARIANTS),
        "all_tables_images_per_generator": bench.n_units * n_seeds * len(RELEASE_VARIANTS),
    }


#: where ``run --benchmark`` writes the release's units (a user input, like the calibration
#: table: read from the user's copy at run time, never committed; bench.units points here)
BENCHMARK_UNITS_PATH = "data/raw/benchmark_units.parquet"


def write_benchmark_units(
    path: str | Path, out: str | Path = BENCHMARK_UNITS_PATH
) -> BenchmarkUnits:
    """Read the release at ``path`` and write its units as a UNITS table (``out``; every row
    carries ``benchmark_sha256``) and ``out`` + ``.json`` (sha256, per-file sha256, seed map,
    unit count, source path): the unit set of the benchmark phase (``bench.units``)."""
    import json

    from implicit_bench._util.files import atomic_write_text
    from implicit_bench.protocol.tables import UNITS

    bench = benchmark_units(path)
    out = Path(out)
    UNITS.write(bench.units, out)
    atomic_write_text(
        out.with_suffix(out.suffix + ".json"),
        json.dumps(
            {
                "benchmark_sha256": bench.sha256,
                "files": bench.files,
                "seed_index": {str(k): v for k, v in bench.seeds.items()},
                "units": bench.n_units,
                "source": str(path),
            },
            indent=2,
        )
        + "\n",
    )
    return bench
