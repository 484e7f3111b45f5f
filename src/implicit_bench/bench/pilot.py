"""A pilot of a fixed unit set: ``implicit-bench run --benchmark REL --units N`` (or
``--units-file F --units N``) evaluates N units of the set, not all of them.

The N units are the first N of one seeded order stratified by bias type in proportion
(``triplets.subset.stratified_subset``, ``order: proportional``): each bias type keeps its share
of the whole set, and the order is fixed by the seed, so a larger pilot holds every unit of a
smaller one and renders only the units it adds (a store keeps every image it ever rendered).
The pilot is written as a UNITS table beside its source, with a JSON sidecar naming the source,
its SHA-256, N and the seed; the benchmark phase and the evaluation read it as ``bench.units``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from implicit_bench._util.files import atomic_write_text
from implicit_bench.construction.triplets.subset import stratified_subset
from implicit_bench.errors import ConfigError
from implicit_bench.protocol.tables import UNITS

#: where ``run --units N`` writes the pilot of a fixed unit set (an input file, like the
#: release's units: written by ``run``, read by the stages through ``bench.units``)
PILOT_UNITS_PATH = "data/raw/pilot_units.parquet"


@dataclass(frozen=True)
class Pilot:
    """The pilot written: ``n_units`` of ``of_units`` units of ``source``."""

    path: str
    n_units: int
    of_units: int
    source: str
    seed: int


def write_pilot_units(source: str | Path, n: int, seed: int, out: str = PILOT_UNITS_PATH) -> Pilot:
    """Write the first ``n`` units of ``source`` (a UNITS table) in the proportional stratified
    order of ``seed`` to ``out`` (and ``out``.json); ``n`` at least the set's size: every unit."""
    if n < 1:
        raise ConfigError(f"--units {n}: a pilot needs at least one unit (0: every unit)")
    source = Path(source)
    table = UNITS.read(source)
    chosen = stratified_subset(table, n, seed, order="proportional")
    UNITS.write(chosen, out)
    atomic_write_text(
        Path(f"{out}.json"),
        json.dumps(
            {
                "source": str(source),
                "source_sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
                "units": len(chosen),
                "of_units": len(table),
                "seed": seed,
                "order": "proportional by bias type (triplets.subset.stratified_subset)",
            },
            indent=2,
        )
        + "\n",
    )
    return Pilot(out, len(chosen), len(table), str(source), seed)


__all__ = ["PILOT_UNITS_PATH", "Pilot", "write_pilot_units"]
